"""The static Gaussian plume: ``C(x, y) = exp(-((x - xs)^2 + (y - ys)^2) / (2 sigma^2))``.

Computed in float64, stored as float32, 1.0 at the source. With a fixed source the field is
computed once, ``(H, W)``, shared by every world. With ``source="random"`` each world draws its
source cell uniformly over the grid at every reset and the concentration is evaluated where
sensors read it (no field per world). An optional constant wind ``(u, v)`` (cells per step) is
what ``sensors.Wind`` reads. Several sources, drawn ones (``n_sources``) and moving ones
(``source_motion``) are ``gaussian_sources.py``'s (2-D).

In 3-D (``grid_size=(W, H, D)``) the same plume in a volume, from the same compiled functions:
``C(r) = exp(-|r - r_s|^2 / (2 sigma^2))`` with ``r = (x, y, z)``; a fixed source's field is
``(D, H, W)``, read trilinearly at float positions; a random source draws ``(x, y, z)``; the wind
``(u, v)`` or ``(u, v, w)`` is what a sensor reads through ``wind_at`` (``w`` = 0 when a pair is
given).
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from ...engine import rng
from ...engine.api import grid_point, is_on, static_flag
from ...engine.jit import njit
from ...engine.tuples import as_float, row, take
from .gaussian_sources import STREAM  # this model's random stream (several sources draw from it too)
from .interpolation import interpolate
from ..base import Plume, PlumeKernels, StateArray, check_int, check_point, check_real, fail, grid_high

# |u|, |v| at most this (cells per step): a Wind reading (float32, rotated, with noise) stays finite
MAX_WIND = 1e6

# field: the shared (H, W) float32 field ((D, H, W) in 3-D; (1, 1) or (1, 1, 1) unused with a random
# source); random_source: a compile-time flag (static_flag), so the fixed-source path carries no
# branch. In 2-D source_z and wind_w are 0 and depth 1 (never read: the tuples are two long).
GaussianParams = namedtuple("GaussianParams", "field two_sigma2 source_x source_y source_z wind_u wind_v wind_w "
                                              "width height depth random_source")


def gaussian_field(grid_size, source, sigma: float) -> np.ndarray:
    """``(H, W)`` float32 field of a source at cell ``source = (x, y)``, clipped to [0, 1]
    (``(D, H, W)`` for a 3-D ``grid_size`` and a source ``(x, y, z)``)."""
    if len(grid_size) == 3:
        return gaussian_volume(grid_size, source, sigma)
    w, h = grid_size
    xs, ys = source
    x = np.arange(w, dtype=np.float64) - xs
    y = np.arange(h, dtype=np.float64) - ys
    d2 = y[:, None] ** 2 + x[None, :] ** 2
    field = np.exp(-d2 / (2.0 * float(sigma) ** 2))
    return np.ascontiguousarray(np.clip(field, 0.0, 1.0).astype(np.float32))


def gaussian_volume(grid_size, source, sigma: float) -> np.ndarray:
    """``(D, H, W)`` float32 field of a source at cell ``source = (x, y, z)``, clipped to [0, 1]."""
    w, h, d = grid_size
    xs, ys, zs = source
    x = np.arange(w, dtype=np.float64) - xs
    y = np.arange(h, dtype=np.float64) - ys
    z = np.arange(d, dtype=np.float64) - zs
    d2 = z[:, None, None] ** 2 + y[None, :, None] ** 2 + x[None, None, :] ** 2
    field = np.exp(-d2 / (2.0 * float(sigma) ** 2))
    return np.ascontiguousarray(np.clip(field, 0.0, 1.0).astype(np.float32))


# --------------------------------------------------------------------- compiled functions
# S = (sources (B, D) float64,)  (zero rows when the source is fixed)

@njit(inline="always")
def reset_world(P, S, b, seed, episode, pos, base, n_agents):
    if is_on(P.random_source):
        # one draw per axis, at counters (0, 0), (0, 1) (and (0, 2) for z)
        key = rng.stream_key(seed, episode, STREAM)
        sides = (P.width, P.height, P.depth)
        for c in range(S[0].shape[1]):
            S[0][b, c] = np.floor(rng.uniform(key, 0, c) * sides[c])


@njit(inline="always")
def source(P, S, b, shape):
    if is_on(P.random_source):
        return row(S[0], b, shape)
    return take((P.source_x, P.source_y, P.source_z), shape)


@njit(inline="always")
def _analytic(P, S, b, point):
    d2 = 0.0
    for c in range(len(point)):
        d = point[c] - S[0][b, c]
        d2 += d * d
    return np.float32(np.exp(-d2 / P.two_sigma2))


@njit(inline="always")
def sample_cell(P, S, pw, cell):
    if is_on(P.random_source):
        return _analytic(P, S, pw, as_float(cell))
    return P.field[cell[::-1]]


@njit(inline="always")
def sample_at(P, S, pw, point):
    """Concentration at a float position: within half a cell of a 2-D grid, at the nearest point of
    ``[0, W-1] x [0, H-1]``; 0 farther out (``engine.api.grid_point``). ``P`` is read before the
    branch on ``inside``: a record of arrays still in use after a branch has its arrays'
    references counted at each call (twice per agent and step for two antennae: the antennae row
    ran at half speed)."""
    field = P.field
    inside, point = grid_point(point, take((P.width, P.height, P.depth), point))
    if is_on(P.random_source):
        if not inside:
            return np.float32(0.0)
        return _analytic(P, S, pw, point)
    if not inside:
        return np.float32(0.0)
    return interpolate(field, point)


@njit(inline="always")
def wind_at(P, S, pw, point):
    return take((P.wind_u, P.wind_v, P.wind_w), point)


KERNELS = PlumeKernels(source=source, sample_cell=sample_cell, sample_at=sample_at, reset_world=reset_world,
                       wind_at=wind_at)


@dataclass(frozen=True)
class Gaussian(Plume):
    """Static Gaussian plume.

    Args:
        source: ``(x, y)`` cell of the source (default: the grid's centre ``(W // 2, H // 2)``), or
            ``"random"``: each world draws its source uniformly over the grid at every reset. In
            3-D: ``(x, y, z)`` (default ``(W // 2, H // 2, D // 2)``). In 2-D also a list of 2 to
            16 ``(x, y)`` cells: several sources, the concentration the sum of their plumes
            clipped to 1 (``gaussian_sources.py``).
        sigma: spread in cells, 0.1..100.
        wind: constant wind ``(u, v)`` in cells per step, each within +-1e6, read by ``sensors.Wind``
            (default calm); in 3-D also ``(u, v, w)``.
        n_sources: with ``source="random"``, how many sources each world draws (1..16; default 1;
            2-D).
        source_motion: how the sources move, a ``plume_multi.sources`` model (default
            ``sources.Static()``: they stay where they start; others 2-D).
    """

    source: object = None
    sigma: float = 12.0
    wind: tuple = (0.0, 0.0)
    n_sources: object = None
    source_motion: object = None

    dimensions: ClassVar[tuple] = (2, 3)
    moving_sources: ClassVar = (2,)  # several or moving sources: gaussian_sources.py's 2-D functions
    several_sources: ClassVar = (2,)

    def __post_init__(self):
        from ..sources.source_set import MAX_SOURCES, motion_of, parse_source

        several = (isinstance(self.source, (list, tuple)) and bool(self.source) and
                   isinstance(self.source[0], (list, tuple, np.ndarray))) or \
            (isinstance(self.source, np.ndarray) and self.source.ndim == 2)
        if several:  # a list of (x, y): several sources (a list of one is refused)
            self._set("source", parse_source("Gaussian", self.source, allow_random=False, integer=True))
        elif not (self.source is None or (isinstance(self.source, str) and self.source == "random")):
            self._set("source", check_point("Gaussian", "source", self.source, integer=True, length=(2, 3),
                                            expected="None, 'random' or (x, y) integer cells ((x, y, z) in 3-D)"))
        self._set("sigma", check_real("Gaussian", "sigma", self.sigma, 0.1, 100.0))
        self._set("wind", check_point("Gaussian", "wind", self.wind, limit=MAX_WIND, length=(2, 3),
                                      expected=f"(u, v) or, in 3-D, (u, v, w): finite numbers in cells per step "
                                               f"within +-{MAX_WIND:g}"))
        if self.n_sources is not None:
            if not self.random_source:
                fail("Gaussian", "n_sources", self.n_sources,
                     "None unless source='random' (several fixed sources: source=[(x1, y1), (x2, y2), ...])")
            self._set("n_sources", check_int("Gaussian", "n_sources", self.n_sources, 1, MAX_SOURCES))
        self._set("source_motion", motion_of("Gaussian", self.source_motion))

    # ----------------------------------------------------------------- engine interface
    @property
    def random_source(self) -> bool:
        return self.source == "random"

    @property
    def several(self) -> bool:
        """Several, or moving, sources: ``gaussian_sources.py``'s compiled functions."""
        return self.source_count() > 1 or self.source_motion.moves

    @property
    def kernels(self):
        if self.several:
            from .gaussian_sources import KERNELS as SOURCES_KERNELS

            return SOURCES_KERNELS
        return KERNELS

    def source_count(self) -> int:
        if self.random_source:
            return self.n_sources or 1
        return max(1, len(self._cells()))

    def _cells(self) -> list:
        # imported here: the one-source plume's compiled code (its cache key) owes nothing to sources/
        from ..sources.source_set import source_cells

        return source_cells(self.source)

    def bind(self, grid_size) -> "Gaussian":
        """This plume on a grid: the default source becomes the centre; a given one must fit (a
        pair in 2-D, a triple in 3-D); a wind ``(u, v, w)`` needs a 3-D grid."""
        dims = len(grid_size)
        grid = "x".join(str(c) for c in grid_size)
        if len(self.wind) > dims:
            fail("Gaussian", "wind", self.wind, f"(u, v) on the 2-D {grid} grid ((u, v, w) needs a 3-D grid)")
        if self.source is None:
            return replace(self, source=tuple(c // 2 for c in grid_size)).bind(grid_size)
        if self.several:
            if dims == 3:
                what = "n_sources" if self.n_sources is not None else \
                    ("source" if self.source_count() > 1 else "source_motion")
                fail("Gaussian", what, getattr(self, what), f"one source that stays on the 3-D {grid} grid (several "
                     "or moving sources are 2-D)")
            for x, y in self._cells():
                if not (0 <= x < grid_size[0] and 0 <= y < grid_size[1]):
                    fail("Gaussian", "source", self.source, f"cells inside the {grid} grid")
            self.source_motion.check_grid(grid_size, "Gaussian")
            return self
        if not self.random_source:
            cell = "(x, y)" if dims == 2 else "(x, y, z)"
            if len(self.source) != dims or not all(0 <= c < n for c, n in zip(self.source, grid_size)):
                fail("Gaussian", "source", self.source, f"a cell {cell} inside the {grid} grid")
        return self

    def fixed_source(self):
        return None if self.random_source or self.several else self.source

    def check_walls(self, walls) -> None:
        """Several fixed sources may be among walls, each on a free cell of every mask (drawn or
        moving sources may not: ``among_walls``)."""
        if self.several and not self.random_source and not self.source_motion.moves:
            walls.check_sources_free("Gaussian", self._cells())

    def sources_drawn(self) -> bool:
        return self.random_source

    def on_cells(self) -> bool:
        return not self.source_motion.moves

    def concentration_bounds(self) -> tuple:
        return 0.0, 1.0

    def field(self, grid_size) -> np.ndarray | None:
        """The shared field, or None when each world has its own sources (drawn or moving), or
        several (their summed field is in the parameters)."""
        if self.random_source or self.several:
            return None
        return gaussian_field(grid_size, self.source, self.sigma)

    def metadata(self) -> dict:
        out = super().metadata()
        if self.n_sources is None:
            del out["n_sources"]
        if not self.source_motion.moves:
            del out["source_motion"]
        return out

    def params(self, scenario) -> tuple:
        if self.several:
            from .gaussian_sources import sources_params

            return sources_params(self, scenario.grid_size, self._cells())
        sides = (*scenario.grid_size, 1)[:3]
        dims = len(scenario.grid_size)
        if self.random_source:
            field = np.zeros((1,) * dims, np.float32)
            field.flags.writeable = False  # the shared field's Numba type: one compiled driver for both
        else:
            field = scenario.field
        sx, sy, sz = (*((0,) * dims if self.random_source else self.source), 0)[:3]
        u, v, w = (*self.wind, 0.0)[:3]
        return GaussianParams(field, 2.0 * self.sigma ** 2, float(sx), float(sy), float(sz), u, v, w,
                              *(int(n) for n in sides), static_flag(self.random_source))

    def state_spec(self, scenario) -> dict:
        if self.several:
            from ..sources.source_set import source_state_spec

            return source_state_spec(self.source_count(), self.source_motion, scenario.grid_size)
        if not self.random_source:
            return {}
        high = grid_high(scenario)  # a cell of the grid (drawn by reset_world)
        return {"source": StateArray(np.float64, "world", (len(high),), 0.0, high, integral=True)}

    def state_tuple(self, arrays: dict) -> tuple:
        if self.several:
            return (arrays["source"], arrays["found"], arrays["motion"])
        if self.random_source:
            return (arrays["source"],)
        return (np.zeros((0, 3 if self.source is not None and len(self.source) == 3 else 2)),)

    def image(self, params, state, b: int, t: int) -> np.ndarray:
        """``(H, W)`` float32 concentration of world ``b`` (``(D, H, W)`` in 3-D), for pictures."""
        if self.several:
            if params.shared_field:
                return params.field
            from .gaussian_sources import summed_field

            return summed_field((params.width, params.height), state[0][b], self.sigma)
        if not self.random_source:
            return params.field
        size = (params.width, params.height, params.depth)[:len(state[0][b])]
        return gaussian_field(size, state[0][b], self.sigma)

    def sources(self, params, state, num_worlds: int) -> np.ndarray:
        if self.several:
            return state[0][:, 0].copy()
        if self.random_source:
            return state[0].copy()
        cell = [params.source_x, params.source_y, params.source_z][:params.field.ndim]
        return np.tile(np.array(cell), (num_worlds, 1))

    def source_positions(self, params, state, num_worlds: int) -> np.ndarray:
        if self.several:
            return state[0].copy()
        return super().source_positions(params, state, num_worlds)

    def sources_found(self, params, state, num_worlds: int):
        return state[1].copy() if self.source_count() > 1 else None
