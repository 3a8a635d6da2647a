"""Walls: the solid cells of a scenario's grid (``Scenario(walls=...)``).

A mask is a boolean array of the grid's shape, ``(H, W)`` in 2-D or ``(D, H, W)`` in 3-D (indexed
``[y, x]`` / ``[z, y, x]``, as fields are), True where a cell is solid. A scenario has one mask, or
several: then each world draws one at every reset from its own counter-based stream (``mask_index``),
so the draw depends on the world's seed and episode only, never on the batch or the threads.

What walls do in a step (``docs/walls.md``):

* a grid body never enters a solid cell: a move whose destination is solid is refused and the
  agent stays on its cell (its heading, for a body with one, turns as the action says); only the
  destination is tested, so a body that jumps (``Oriented(step=2)``, a diagonal ``Moore`` move)
  may pass a wall it does not land in;
* a continuous body stops at the face of the first solid cell on its straight path, on the free
  side;
* start cells are drawn on free cells only (a solid cell is drawn again, from the same stream);
  fixed starts and sources must be free in every mask;
* every sensor reads 0 for a point inside a solid cell (the plume readers of
  ``plume_multi.engine.api`` do it); ``Neighbours`` ignore walls;
* puffs (``plumes.Puffs``) reflect off walls, or are absorbed by them (``Puffs(walls="absorb")``).

The masks go into JSON (``Scenario.metadata()``) packed: 8 cells a byte, zlib-compressed, base64
(``Walls.metadata``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import math
import zlib

import numpy as np

from .checks import check_memory, shown
from .errors import ValidationError

__all__ = ["Walls", "WALLS_STREAM", "MAX_MASK_CELLS", "mask_index", "mask_indices"]

WALLS_STREAM = 0x1F83D9AB  # the stream of the per-episode mask draw (rng.stream_key)
MAX_MASK_CELLS = 1 << 30  # every mask's cells together: a GiB of bools at most
_ENCODING = "packbits-zlib-base64"


def _axes(dims: int) -> str:
    return "(height, width)" if dims == 2 else "(depth, height, width)"


class Walls:
    """The solid cells of a grid: ``K`` boolean masks of the grid's shape, True where solid.

    Made by ``Scenario(walls=...)`` from one mask (``K = 1``) or a sequence of masks (each world
    draws one per episode); ``Walls.of(value, grid_size)`` checks a value the same way.

    Attributes:
        masks: ``(K, H, W)`` (``(K, D, H, W)`` in 3-D) bool, read-only, indexed ``[k, y, x]``
            (``[k, z, y, x]``).
    """

    __slots__ = ("masks", "_digest")

    def __init__(self, masks):
        arr = np.asarray(masks)
        if arr.dtype != np.bool_ or arr.ndim not in (3, 4) or 0 in arr.shape:
            raise ValidationError(f"Walls.masks: got shape {arr.shape} dtype {arr.dtype}; expected a (K, H, W) or "
                                  "(K, D, H, W) bool array, K >= 1 (Scenario(walls=...) accepts one mask too)")
        self._adopt(np.array(arr, dtype=np.bool_, order="C", copy=True))

    def _adopt(self, arr: np.ndarray) -> None:
        """Keep ``arr`` (a C-ordered bool array no one else holds) as the masks, read-only."""
        arr.flags.writeable = False
        self.masks = arr
        self._digest = hashlib.sha256(np.packbits(arr, bitorder="little").tobytes()
                                      + repr(arr.shape).encode()).hexdigest()

    # ----------------------------------------------------------------------- made from a value
    @classmethod
    def of(cls, value, grid_size, name: str = "Scenario.walls") -> "Walls":
        """``value`` (one mask of the grid's shape, a sequence of them, a ``Walls``, or
        ``Walls.metadata()``'s dict) checked against ``grid_size`` ``(W, H)`` or ``(W, H, D)``: bool
        masks of shape ``(H, W)`` (``(D, H, W)``), each with at least one free cell,
        ``K * cells <= 2**30``. A dict's masks are inflated only when their shape is the grid's."""
        dims = len(grid_size)
        shape = tuple(reversed(tuple(grid_size)))
        grid = "x".join(str(c) for c in grid_size)
        rule = (f"a bool array of shape {_axes(dims)} = {shape} (the {grid} grid; True where solid), a "
                f"non-empty sequence of such masks, or Walls.metadata()'s dict of them")
        single = False
        if isinstance(value, dict):  # Walls.metadata()'s: inflated only when its shape is the grid's
            value = _PackedWalls(value, name).inflate(grid_size)
        if isinstance(value, Walls):
            arr = value.masks
        else:
            if isinstance(value, (str, bytes)) or value is None or np.isscalar(value):
                raise ValidationError(f"{name}: got {shown(value, typed=True)}; expected {rule}")
            try:
                arr = np.asarray(value)
            except (TypeError, ValueError):  # ragged sequences
                raise ValidationError(f"{name}: got {type(value).__name__} of masks of different shapes; expected "
                                      f"{rule}") from None
            if arr.dtype == object:
                raise ValidationError(f"{name}: got {type(value).__name__} of masks of different shapes or types; "
                                      f"expected {rule}")
            single = arr.ndim == dims
            if single:
                arr = arr[None]
        if arr.dtype != np.bool_:
            raise ValidationError(f"{name}: got dtype {arr.dtype}; expected {rule} (convert with mask != 0)")
        if arr.ndim != dims + 1 or arr.shape[1:] != shape or arr.shape[0] == 0:
            got = f"shape {arr.shape[1:]}" if single else (f"{arr.shape[0]} masks of shape {arr.shape[1:]}"
                                                           if arr.ndim == dims + 1 else f"shape {arr.shape}")
            raise ValidationError(f"{name}: got {got}; expected {rule}")
        if arr.size > MAX_MASK_CELLS:
            raise ValidationError(f"{name}: got {arr.shape[0]} masks of {math.prod(shape)} cells; expected at most "
                                  f"{MAX_MASK_CELLS} cells in all")
        full = np.flatnonzero(arr.reshape(arr.shape[0], -1).all(axis=1))
        if full.size:
            raise ValidationError(f"{name}: mask {int(full[0])} is solid everywhere; expected at least one free "
                                  "cell in every mask")
        return value if isinstance(value, Walls) else cls(arr)

    # ----------------------------------------------------------------------- what they are
    @property
    def n_masks(self) -> int:
        """``K``: the masks a world draws from (1: every world has the same)."""
        return self.masks.shape[0]

    @property
    def shape(self) -> tuple:
        """A mask's shape: ``(H, W)``, or ``(D, H, W)`` in 3-D."""
        return self.masks.shape[1:]

    @property
    def dims(self) -> int:
        return self.masks.ndim - 1

    def mask(self, k: int = 0) -> np.ndarray:
        """Mask ``k``, read-only ``(H, W)`` (``(D, H, W)``)."""
        if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not 0 <= k < self.n_masks:
            raise ValidationError(f"k: got {shown(k)}; expected an integer in 0..{self.n_masks - 1}")
        return self.masks[int(k)]

    def solid_in(self, cell) -> list:
        """The masks in which ``cell`` ``(x, y)`` (``(x, y, z)``) is solid (empty: free in all)."""
        index = tuple(int(c) for c in reversed(tuple(cell)))
        return [int(k) for k in np.flatnonzero(self.masks[(slice(None), *index)])]

    def check_sources_free(self, owner: str, cells) -> None:
        """Raise ``ValidationError`` naming ``owner.source`` when one of ``cells`` (``(x, y)``
        points in cells, floats allowed: their cell is ``floor(c + 0.5)``) is solid in a mask."""
        for k, point in enumerate(cells):
            cell = tuple(int(math.floor(float(c) + 0.5)) for c in point)
            solid = self.solid_in(cell)
            if solid:
                raise ValidationError(f"{owner}.source: got source {k} at {tuple(point)} (cell {cell}), which is solid "
                                      f"in wall mask {solid[0]}; expected sources on cells free in every mask")

    def masks_full_in(self, lo, hi) -> list:
        """The masks with no free cell in the box of corners ``lo`` and ``hi`` (``(x, y)`` pairs or
        triples, included)."""
        box = tuple(slice(a, b + 1) for a, b in zip(reversed(tuple(lo)), reversed(tuple(hi))))
        inside = self.masks[(slice(None), *box)]
        return [int(k) for k in np.flatnonzero(inside.reshape(inside.shape[0], -1).all(axis=1))]

    def solid_fraction(self) -> float:
        return float(self.masks.mean())

    # ----------------------------------------------------------------------- JSON
    def metadata(self) -> dict:
        """JSON-able: ``{"shape": [K, ...], "encoding": "packbits-zlib-base64", "data": "..."}``
        (the masks in C order, 8 cells a byte, least significant bit first)."""
        packed = zlib.compress(np.packbits(self.masks, bitorder="little").tobytes(), 9)
        return {"shape": list(self.masks.shape), "encoding": _ENCODING, "data": base64.b64encode(packed).decode()}

    @classmethod
    def from_metadata(cls, meta, name: str = "Scenario.walls", grid_size=None) -> "Walls":
        """The ``Walls`` of ``metadata()``'s dict (``ValidationError`` naming ``name`` when it is not
        one); with ``grid_size``, masks of another shape are refused before anything is inflated
        (``_PackedWalls``)."""
        return _PackedWalls(meta, name).inflate(grid_size)

    # ----------------------------------------------------------------------- identity
    def __eq__(self, other):
        return isinstance(other, Walls) and self._digest == other._digest

    def __hash__(self):
        return hash(self._digest)

    def __repr__(self):
        grid = "x".join(str(c) for c in reversed(self.shape))
        return f"Walls({self.n_masks} mask{'s' if self.n_masks > 1 else ''} of {grid}, {self.solid_fraction():.1%} solid)"


class _PackedWalls:
    """``Walls.metadata()``'s dict, its header checked and its data not yet inflated: what a
    scenario file gives before its grid is known. ``Walls.of`` (``Scenario``) inflates it against
    the grid: masks of another shape are refused before a byte is inflated, and the inflated bytes
    are bounded by the declared shape while they are inflated (a small file that claims a huge
    shape, or inflates beyond its shape, costs nothing)."""

    __slots__ = ("shape", "data", "name")

    def __init__(self, meta, name: str = "Scenario.walls"):
        rule = f"None or a dict {{'shape': [K, ...], 'encoding': '{_ENCODING}', 'data': base64 text}} (Walls.metadata())"
        if not isinstance(meta, dict) or set(meta) != {"shape", "encoding", "data"}:
            raise ValidationError(f"{name}: got {shown(meta)}; expected {rule}")
        shape, data = meta["shape"], meta["data"]
        if (meta["encoding"] != _ENCODING or not isinstance(shape, list) or len(shape) not in (3, 4)
                or not all(isinstance(c, int) and not isinstance(c, bool) and 1 <= c <= MAX_MASK_CELLS for c in shape)
                or not isinstance(data, str) or math.prod(shape) > MAX_MASK_CELLS):
            raise ValidationError(f"{name}: got {shown(meta)}; expected {rule} of at most {MAX_MASK_CELLS} cells")
        self.shape, self.data, self.name = tuple(shape), data, name

    def inflate(self, grid_size=None) -> Walls:
        """The ``Walls``; with ``grid_size`` ``(W, H[, D])``, refused unless each mask is that grid's."""
        name, shape = self.name, self.shape
        if grid_size is not None:
            grid = tuple(reversed(tuple(grid_size)))
            if shape[1:] != grid:
                raise ValidationError(f"{name}: got {shape[0]} mask(s) of shape {shape[1:]}; expected masks of shape "
                                      f"{_axes(len(grid))} = {grid} (the {'x'.join(map(str, grid_size))} grid)")
        cells = math.prod(shape)
        size = (cells + 7) // 8
        check_memory(name, cells + size, f"{shape[0]} mask(s) of shape {shape[1:]}", "Use fewer or smaller masks.")
        try:
            inflater = zlib.decompressobj()
            # max_length: never more than the declared shape holds (and one byte to tell "more")
            packed = inflater.decompress(base64.b64decode(self.data, validate=True), size + 1)
        except (binascii.Error, ValueError, zlib.error):
            raise ValidationError(f"{name}: its data is not {_ENCODING} text; expected the masks of shape "
                                  f"{list(shape)}, packed 8 a byte, zlib-compressed, base64") from None
        if len(packed) != size or not inflater.eof:
            held = (f"more than {size * 8} cells" if len(packed) > size else f"{len(packed) * 8} cells" if
                    inflater.eof else f"a cut zlib stream ({len(packed) * 8} cells)")
            raise ValidationError(f"{name}: its data holds {held}; expected {cells} cells (shape {list(shape)}), "
                                  f"packed 8 a byte")
        bits = np.unpackbits(np.frombuffer(packed, np.uint8), count=cells, bitorder="little")
        walls = Walls.__new__(Walls)
        walls._adopt(bits.view(np.bool_).reshape(shape))  # 0 and 1 bytes are bools: no copy
        return walls


# ----------------------------------------------------------------------------- the mask draw
def mask_index(seed: int, episode: int, n_masks: int) -> int:
    """The mask a world seeded ``seed`` draws for episode ``episode`` among ``n_masks``: 0 for one
    mask, else ``floor(u * K)`` of the uniform ``u`` at counters ``(0, 0)`` of the stream
    ``rng.stream_key(seed, episode, WALLS_STREAM)`` (what the compiled step draws)."""
    from .engine.walls import mask_index as compiled

    return int(compiled(np.int64(seed), np.int64(episode), np.int64(n_masks)))


def mask_indices(seeds: np.ndarray, episodes: np.ndarray, n_masks: int) -> np.ndarray:
    """``(B,)`` int64: ``mask_index`` of each world's seed and episode."""
    from .engine.walls import mask_indices as compiled

    out = np.zeros(len(seeds), np.int64)
    compiled(np.ascontiguousarray(seeds, np.int64), np.ascontiguousarray(episodes, np.int64), np.int64(n_masks), out)
    return out
