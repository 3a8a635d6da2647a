"""``Movie(frames_or_path, ...)``: a recorded plume, one frame per step, shared by every world.

The frames ``(T, H, W)`` (or, in a 3-D scenario, volumes ``(T, D, H, W)``) are stored once,
read-only, as float32, uint16 or uint8; every world runs its own frame clock over them, so 4096
worlds over a 262 MB movie add no memory per world. A stored value ``v`` reads
``clip((v - offset) * scale, 0, 1)`` (``movie_values.py``: the normalisation and NaN policy);
files are read by ``movie_files.py`` (formats, layout, safety), described for users in
docs/recorded-data.md. The clock, the value rule, the files and the compiled functions are the same
in 2-D and 3-D; only the interpolation differs (bilinear, trilinear: ``_stored_between``).
"""

from __future__ import annotations

import math
import os
from collections import namedtuple
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
from numba.extending import overload

from ...checks import check_bool, check_point, check_real, refuse
from ...engine import rng
from ...engine.api import grid_point
from ...engine.jit import njit
from ...engine.tuples import as_float, cell_of, clamp_cell, row, take
from ...errors import StateError
from ..units import Units
from ..base import Plume, PlumeKernels, StateArray, check_int, fail
from . import movie_files as files
from .interpolation import bilinear_cells, trilinear_cells
from .movie_values import resolve, scan

STREAM = 0xBB67AE85
MAX_WIND = 1e6  # cells per step: a wind reading stays finite in float32, noise included
# frames (T, H, W) (volumes (T, D, H, W)); n_frames T; wrap (else clamp); start: the fixed first
# frame, < 0 for a random one; wind (Tw, Hw, Ww, 2) ((Tw, Dw, Hw, Ww, 3)); the source point (source_z
# 0 in 2-D); a stored value v reads clip((v - offset) * scale, 0, 1), or fill when v is not finite
# (fill_raw: the stored value that reads fill, for interpolation)
MovieParams = namedtuple("MovieParams", "frames scale n_frames wrap start wind source_x source_y source_z offset fill "
                                        "fill_raw")


# --------------------------------------------------------------------- compiled functions
# S = (start frame per world (B,) int64,); every function serves both dimensions

@njit(inline="always")
def reset_world(P, S, b, seed, episode, pos, base, n_agents):
    if P.start >= 0:
        S[0][b] = P.start
    else:
        S[0][b] = np.int64(rng.uniform(rng.stream_key(seed, episode, STREAM), 0, 0) * P.n_frames)


@njit(inline="always")
def frame_index(P, S, b, t):
    f = S[0][b] + t
    if P.wrap:
        return f % P.n_frames
    return min(f, P.n_frames - 1)


@njit(inline="always")
def view(P, S, b, t):
    return frame_index(P, S, b, t)


@njit(inline="always")
def source(P, S, b, shape):
    return take((P.source_x, P.source_y, P.source_z), shape)


@njit(inline="always")
def concentration(P, v):
    """The float32 concentration of a stored value (the rule of the module docstring): every
    read, so a value written into the frames after loading still reads a number in [0, 1]."""
    if math.isnan(v) or math.isinf(v):  # float frames only: for integer frames Numba compiles False
        return P.fill
    c = (np.float32(v) - P.offset) * P.scale
    return min(max(c, np.float32(0.0)), np.float32(1.0))


@njit(inline="always")
def stored(P, frame, iy, ix):
    """A stored value as float64; ``fill_raw`` where it is not finite."""
    v = frame[iy, ix]
    if math.isnan(v) or math.isinf(v):
        return P.fill_raw
    return np.float64(v)


@njit(inline="always")
def bilinear_stored(P, frame, x0, y0, x1, y1, fx, fy):
    """Bilinear between the four stored values (``stored``) of an ``(H, W)`` frame, float64."""
    top = (1.0 - fx) * stored(P, frame, y0, x0) + fx * stored(P, frame, y0, x1)
    bottom = (1.0 - fx) * stored(P, frame, y1, x0) + fx * stored(P, frame, y1, x1)
    return (1.0 - fy) * top + fy * bottom


@njit(inline="always")
def sample_cell(P, S, pw, cell):
    return concentration(P, P.frames[(pw,) + cell[::-1]])


@njit(inline="always")
def sample_at(P, S, pw, point):
    """Between the stored values around ``point`` (bilinear in 2-D, trilinear in 3-D:
    ``_stored_between``), then the rule; within half a cell of a 2-D grid its nearest point
    (``engine.api.grid_point``); 0 farther out (in 3-D: off ``[0, W-1] x [0, H-1] x [0, D-1]``)."""
    frame = P.frames[pw]
    inside, point = grid_point(point, frame.shape[::-1])
    if not inside:
        return np.float32(0.0)
    return concentration(P, np.float32(_stored_between(P, frame, point)))


def _stored_between(P, frame, point):
    """The stored values around ``point`` (inside the grid) interpolated, float64: bilinear between
    the four of a frame ``(H, W)``; trilinear between the eight of a volume ``(D, H, W)`` (the
    bilinear values of the planes ``z0`` and ``z1``, weighted ``(1 - fz, fz)``)."""


# One function that picks by dimension, for the reason of ``interpolation.interpolate``.
@overload(_stored_between)
def _stored_between_impl(P, frame, point):
    if len(point) == 2:
        def between(P, frame, point):
            h, w = frame.shape
            x0, y0, x1, y1, fx, fy = bilinear_cells(h, w, point[0], point[1])
            return bilinear_stored(P, frame, x0, y0, x1, y1, fx, fy)
        return between

    def between3(P, frame, point):
        d, h, w = frame.shape
        x0, y0, z0, x1, y1, z1, fx, fy, fz = trilinear_cells(d, h, w, point[0], point[1], point[2])
        below = bilinear_stored(P, frame[z0], x0, y0, x1, y1, fx, fy)
        above = bilinear_stored(P, frame[z1], x0, y0, x1, y1, fx, fy)
        return (1.0 - fz) * below + fz * above
    return between3


@njit(inline="always")
def wind_at(P, S, pw, point):
    """The wind of the nearest cell (clamped into the grid) of the frame, or the constant."""
    wind = P.wind
    f = pw if wind.shape[0] > 1 else 0
    cell = clamp_cell(cell_of(point), wind.shape[1:-1][::-1])
    return as_float(row(wind, (f,) + cell[::-1], point))


KERNELS = PlumeKernels(source=source, sample_cell=sample_cell, sample_at=sample_at, reset_world=reset_world,
                       view=view, wind_at=wind_at)


def _components(wind) -> str:
    """``"u, v"`` or ``"u, v, w"``: the components of a wind array ``(..., k)`` or of ``k`` of them."""
    n = wind if isinstance(wind, int) else wind.shape[-1]
    return ", ".join("uvw"[:n])


@dataclass(frozen=True)
class Movie(Plume):
    """A recorded plume.

    Args:
        frames: an array ``(T, H, W)`` (float, uint8 or uint16), or ``(T, D, H, W)`` volumes for
            a 3-D scenario, or the path of a movie file: ``.npy``, ``.npz``, HDF5 or a Zarr store
            (the layout: docs/recorded-data.md; a Zarr volume has dims ``("t", "z", "y", "x")``).
        source: ``(x, y)`` of the source in cells (``(x, y, z)`` for volumes); default the file's
            ``source_location`` (cells) or ``source_location_px`` (pixels), an error when none is there.
        start: ``"random"`` (each world draws its first frame per episode from its stream) or a frame.
        end: ``"wrap"`` (frame ``(start + t) % T``) or ``"clamp"`` (the last frame repeats).
        wind: ``None`` (calm, or the file's ``u``/``v``), a constant ``(u, v)``, per frame
            ``(T, 2)`` or per cell ``(T, H, W, 2)``, in cells per step, ``|u|, |v| <= 1e6``. For
            volumes ``(u, v, w)`` (a pair: ``w = 0``), ``(T, 3)`` or ``(T, D, H, W, 3)`` (the file's
            ``u``, ``v`` and ``w``, ``w`` 0 when absent).
        fps: frames per second of the recording (default the file's ``fps``): one frame per step,
            so a step lasts ``1 / fps`` seconds (``units()``).
        scale: with ``normalize=None``, the factor from stored values to concentration, in
            ``[1e-30, 1e30]`` (default 1 for float frames, ``1 / dtype max`` for integer frames);
            every stored value times ``scale`` must lie in [0, 1].
        key: the array / dataset / variable name in a file (default ``"concentration"``).
        nan: None (refuse values that are not finite: NaN, infinities) or the concentration in
            [0, 1] they read (``nan=0.0`` for masked pixels).
        normalize: None (the values are concentrations, times ``scale``), ``"minmax"`` (the
            smallest finite value reads 0, the largest 1), ``"robust"`` (the 5th and 95th
            percentiles read 0 and 1, values beyond are clipped: the data zoo's rule) or a pair
            ``(lo, hi)`` of percentiles.
        origin: ``"lower"`` (row 0 is the bottom: y up, the simulation's convention) or ``"upper"``
            (row 0 is the top, as in images: the rows are flipped on load). Default the file's
            ``origin`` when it is one of these words, else ``"lower"``.
        cell_size: the length of a cell (the file's length unit); default from its
            ``pixel_to_grid`` or ``extent`` (square pixels only: give this for others).
        mmap: how a ``.npy`` file is read: None (into memory up to 256 MiB, memory-mapped above),
            True (memory-mapped: the file is checked before every step and must not change), False
            (into memory). Other formats are always read into memory.
        checksum: ``"sha256:<hex>"`` the file must have (a saved scenario's), or None.
        allow_external: False (default): only the named file (or store) is read; a dataset whose
            bytes are elsewhere (HDF5 external storage, an external link, a virtual dataset over
            other files, a Zarr entry that is a symbolic link out of the store) is refused. True:
            read it there (only for files you trust). Given in code or on the command line only:
            a scenario file never opts in (``save_scenario`` refuses such a movie).

    Conventions: after a reset a world shows frame ``start``, after k steps frame ``start + k``.
    ``Scenario.grid_size`` defaults to the movie's ``(W, H)`` (``(W, H, D)`` for volumes); a given
    one must equal it. Cell ``(x, y)`` is ``frames[t, y, x]`` (``(x, y, z)`` is
    ``frames[t, z, y, x]``) after any flip of ``origin`` / ``extent``; the file's wind and source
    follow the flip, ``source=`` and ``wind=`` are the simulation's. Float positions read
    bilinearly in 2-D (within half a cell of the grid: its edge), trilinearly in 3-D (off the grid
    ``[0, W-1] x [0, H-1] x [0, D-1]``: 0, as every 3-D plume).
    """

    frames: object = None
    source: tuple | None = None
    start: object = "random"
    end: str = "wrap"
    wind: object = None
    fps: float | None = None
    scale: float | None = None
    key: str | None = None
    nan: float | None = None
    normalize: object = None
    origin: str | None = None
    cell_size: float | None = None
    mmap: bool | None = None
    checksum: str | None = None
    allow_external: bool = False

    kernels: ClassVar = KERNELS
    dimensions: ClassVar[tuple] = (2, 3)  # frames in 2-D, volumes in 3-D (check_dims)
    moving_sources: ClassVar = False  # the recording's source stays where it was filmed
    several_sources: ClassVar = False

    def __post_init__(self):
        if self.mmap is not None:
            self._set("mmap", check_bool("Movie", "mmap", self.mmap))
        self._set("allow_external", check_bool("Movie", "allow_external", self.allow_external))
        recording = None
        if isinstance(self.frames, (str, os.PathLike)):
            recording = files.read_recording(self.frames, self.key, self.mmap, self.allow_external)
            frames, attrs, where = recording.frames, recording.attrs, f"the file {str(recording.path)!r}"
        else:
            for name in ("key", "mmap", "checksum"):
                if getattr(self, name) is not None:
                    fail("Movie", name, getattr(self, name), "None for frames given as an array (it is for files)")
            if self.allow_external:
                fail("Movie", "allow_external", True, "False for frames given as an array (it is for files)")
            frames, attrs, where = self._array(self.frames), {}, "the frames"
        geo = files.geometry(attrs, frames.shape, where, origin=self.origin, cell_size=self.cell_size)
        if geo.flip_rows or geo.flip_cols:
            frames = np.ascontiguousarray(frames[..., ::-1 if geo.flip_rows else 1, ::-1 if geo.flip_cols else 1])
        mapped = recording is not None and recording.mapped and not (geo.flip_rows or geo.flip_cols)
        offset, scale, fill = resolve(frames, scan(frames), where, nan=self.nan, normalize=self.normalize,
                                      scale=self.scale)
        if frames.flags.writeable:
            frames = frames.view()
            frames.flags.writeable = False
        self._set("frames", frames)
        self._set("_scale", scale)
        self._set("_offset", offset)
        self._set("_fill", fill)
        self._set("_geometry", geo)
        # the file's identity (not its Recording: a flipped movie would keep both copies of the frames)
        self._set("_file", None if recording is None else files.FileIdentity(recording.path, recording.signature))
        self._set("_mapped", mapped)
        self._set("_checksum", None)
        if isinstance(self.normalize, (list, tuple)):
            self._set("normalize", tuple(float(q) for q in self.normalize))
        if self.nan is not None:
            self._set("nan", float(self.nan))
        if self.scale is not None:
            self._set("scale", float(self.scale))
        if self.origin is not None:
            self._set("origin", str(self.origin))
        if self.cell_size is not None:
            self._set("cell_size", geo.cell_size)
        T, *space = frames.shape  # space: (H, W), or (D, H, W) for volumes
        sides = space[::-1]  # (W, H[, D])
        grid = "x".join(str(n) for n in sides)
        names = "(x, y)" if len(sides) == 2 else "(x, y, z)"
        box = " x ".join(f"[0, {n - 1}]" for n in sides)
        what = "frames" if len(sides) == 2 else "volumes"
        if self.source is not None:
            inside = f"{names} in cells, {len(sides)} finite numbers inside the {grid} {what}: {box}"
            src = check_point("Movie", "source", self.source, length=len(sides), expected=inside)
            if not all(0 <= c <= n - 1 for c, n in zip(src, sides)):
                fail("Movie", "source", self.source, inside)
        else:
            src = files.source_in_cells(attrs, frames.shape, geo, where)
            if src is None:
                fail("Movie", "source", None, f"{names} in cells ({where} names no source_location)")
            if not all(0 <= c <= n - 1 for c, n in zip(src, sides)):
                refuse("Movie", "source", f"{src} from {where}", f"a point inside the {grid} {what}")
        self._set("source", src)
        if isinstance(self.start, str):
            if self.start != "random":
                fail("Movie", "start", self.start, "'random' or a frame index")
        else:
            self._set("start", check_int("Movie", "start", self.start, 0, T - 1))
        # a string, not whatever compares equal to one (np.array(["wrap"]) is "in" the tuple)
        if not isinstance(self.end, str) or self.end not in ("wrap", "clamp"):
            fail("Movie", "end", self.end, "'wrap' or 'clamp'")
        self._set_wind(recording, geo, frames.shape)
        fps = self.fps if self.fps is not None else attrs.get("fps")
        if fps is not None:
            fps = check_real("Movie", "fps", fps, 1e-6, 1e6)
        self._set("fps", fps)
        if self.checksum is not None:
            if not isinstance(self.checksum, str) or not self.checksum.startswith("sha256:"):
                fail("Movie", "checksum", self.checksum, "None or 'sha256:<hex>' (a saved scenario's)")
            found = self.file_checksum()
            if found != self.checksum:
                fail("Movie", "checksum", self.checksum, f"the checksum of {where}, which is {found}: the file "
                     "changed since the scenario was saved")

    @staticmethod
    def _array(frames) -> np.ndarray:
        """Frames given as an array: float32, uint8 and uint16 kept (not copied), other floats
        converted to float32."""
        if not isinstance(frames, np.ndarray):
            fail("Movie", "frames", frames, "an array (T, H, W), volumes (T, D, H, W) or the path of a movie file")
        if frames.ndim not in (3, 4) or min(frames.shape) < 1:
            refuse("Movie", "frames", f"array of shape {frames.shape}",
                   "shape (T, H, W), or (T, D, H, W) volumes, with every side >= 1")
        if frames.dtype.kind == "f":
            return np.ascontiguousarray(frames, dtype=np.float32)
        if frames.dtype in (np.uint8, np.uint16):
            return np.ascontiguousarray(frames, dtype=frames.dtype.newbyteorder("="))
        refuse("Movie", "frames", f"dtype {frames.dtype}", "float16/32/64, uint8 or uint16 frames")

    def _set_wind(self, recording, geo, shape) -> None:
        """``_wind`` ``(Tw, Hw, Ww, 2)`` float32 (each of Tw, Hw, Ww 1 or the movie's; for volumes
        ``(Tw, Dw, Hw, Ww, 3)``), and the ``wind`` field in a form that compares and writes to
        JSON: a pair (a triple), T of them, or an array."""
        T, *space = shape
        n = len(space)  # components: (u, v) in 2-D, (u, v, w) in 3-D
        given = self.wind
        if given is None and recording is not None and recording.wind is not None:
            arr = recording.wind  # u, v[, w] of shapes (T, *space), (T,) or ()
            if arr.shape[-1] == 2 and n == 3:  # a volume's file without w: no vertical wind
                arr = np.concatenate([arr, np.zeros(arr.shape[:-1] + (1,))], axis=-1)
            arr = arr if arr.shape in ((T, *space, n), (T, n), (n,)) else None
            if arr is None:
                refuse("Movie", "wind", f"{_components(recording.wind)} of shape {recording.wind.shape[:-1]} in "
                       f"{str(recording.path)!r}", f"{_components(n)} of shape {tuple(shape)} (per cell), ({T},) "
                       f"(per frame) or () (constant)")
            if arr.ndim == n + 2:
                arr = arr[..., ::-1 if geo.flip_rows else 1, ::-1 if geo.flip_cols else 1, :]
            self._set("_wind", self._check_wind(arr, shape, f"in {str(recording.path)!r}"))
            return
        wind = self._check_wind(given, shape, "")
        self._set("_wind", wind)
        if given is None:
            return
        values = np.asarray(given, dtype=np.float64)
        if values.shape in ((n,), (2,)):  # a pair (a triple), T of them (JSON lists of numbers), or the array
            self._set("wind", tuple(float(c) for c in wind.reshape(n)))
        elif values.shape == (T, n):
            self._set("wind", tuple(tuple(float(c) for c in row) for row in values))
        else:
            self._set("wind", wind)

    @staticmethod
    def _check_wind(wind, shape, where) -> np.ndarray:
        """Wind as ``(Tw, Hw, Ww, 2)`` float32 with each of Tw, Hw, Ww either 1 or the movie's
        (volumes: ``(Tw, Dw, Hw, Ww, 3)``; a constant pair gets ``w = 0``)."""
        T, *space = shape
        n = len(space)
        if wind is None:  # read-only like every wind (mutability is part of the compiled signature)
            calm = np.zeros((1,) * (n + 1) + (n,), np.float32)
            calm.flags.writeable = False
            return calm
        if n == 2:
            rule = f"None, (u, v), ({T}, 2) or ({T}, {space[0]}, {space[1]}, 2)"
        else:
            rule = f"None, (u, v, w) (or (u, v): w = 0), ({T}, 3) or ({T}, {', '.join(map(str, space))}, 3)"
        rule += f" finite numbers with |{'|, |'.join('uvw'[:n])}| <= {MAX_WIND:g}"
        if isinstance(wind, (str, bytes, dict, set)):
            fail("Movie", "wind", wind, rule)
        try:
            arr = np.asarray(wind)
        except (TypeError, ValueError):
            fail("Movie", "wind", wind, rule)
        if arr.dtype.kind not in "iuf":
            refuse("Movie", "wind", f"{wind!r}{' ' + where if where else ''}", rule)
        arr = arr.astype(np.float64)
        if n == 3 and arr.shape == (2,):
            arr = np.append(arr, 0.0)
        shapes = {(n,): (1,) * (n + 1) + (n,), (T, n): (T,) + (1,) * n + (n,), (T, *space, n): (T, *space, n)}
        if arr.shape not in shapes:
            refuse("Movie", "wind", f"shape {arr.shape}{' ' + where if where else ''}", rule)
        if not np.isfinite(arr).all() or np.abs(arr).max() > MAX_WIND:
            refuse("Movie", "wind", f"values up to {np.nanmax(np.abs(arr))!r}{' ' + where if where else ''}", rule)
        out = np.ascontiguousarray(arr.reshape(shapes[arr.shape]), dtype=np.float32)
        out.flags.writeable = False
        return out

    # ----------------------------------------------------------------- the file
    @property
    def path(self) -> Path | None:
        """The movie's file (absolute), or None for frames given as an array."""
        return None if self._file is None else self._file.path.resolve()

    def file_checksum(self) -> str | None:
        """``"sha256:<hex>"`` of the movie's file (computed once), or None for an array. Raises
        ``StateError`` when the file changed since it was loaded."""
        if self._file is None:
            return None
        if self._checksum is None:
            rec = self._file
            try:
                unchanged = files.file_signature(rec.path) == rec.signature
            except OSError:
                unchanged = False
            if not unchanged:
                raise StateError(f"Movie.frames: the file {str(rec.path)!r} changed (or went) since it was loaded: its "
                                 f"checksum would not describe the frames in use. Load the movie again")
            self._set("_checksum", files.checksum(rec.path))
        return self._checksum

    def saving_problem(self) -> str | None:
        if self.allow_external:
            return ("Movie.allow_external: a movie read with allow_external=True cannot be written to JSON (a "
                    "scenario file never opts in to reading outside the named file); load it in code")
        if self._file is None:
            return ("Movie.frames: frames given as an array cannot be written to JSON; save them to a file "
                    "(np.save('movie.npy', frames)) and pass its path")
        if isinstance(self.wind, np.ndarray):
            return ("Movie.wind: a per-cell wind array cannot be written to JSON; store it in the movie's file as "
                    "u and v (docs/recorded-data.md)")
        return None

    def guard(self):
        return files.FileGuard(self._file.path, self._file.signature) if self._mapped else None

    def units(self, grid_size=None) -> Units:
        geo = self._geometry
        # volumes: cubic voxels, plane 0 at z = 0 (the data zoo's attributes describe x and y)
        origin = geo.origin if self.dims == 2 else (*geo.origin, 0.0)
        return Units(cell_size=geo.cell_size, step_duration=None if self.fps is None else 1.0 / self.fps,
                     origin=origin, length_unit=geo.length_unit)

    # ----------------------------------------------------------------- identity
    def _identity(self) -> tuple:
        data = (str(self.path), self._file.signature) if self._file is not None else id(self.frames)
        wind = id(self.wind) if isinstance(self.wind, np.ndarray) else self.wind
        return (data, self.source, self.start, self.end, wind, self.fps, self.scale, self.key, self.nan,
                self.normalize, self.origin, self.cell_size, self.allow_external)

    def __eq__(self, other):
        return self is other or (type(other) is type(self) and self._identity() == other._identity())

    def __hash__(self):
        return hash(self._identity())

    def __repr__(self) -> str:
        what = repr(str(self._file.path)) if self._file is not None else \
            f"array{self.frames.shape} {self.frames.dtype}"
        return f"Movie({what}, source={self.source}, start={self.start!r}, end={self.end!r})"

    def metadata(self) -> dict:
        wind = self.wind
        if isinstance(wind, np.ndarray):
            wind = {"shape": list(wind.shape)}
        elif isinstance(wind, tuple):
            wind = [list(w) if isinstance(w, tuple) else w for w in wind]
        return {"family": "plume", "model": "Movie",
                "frames": str(self.path) if self._file is not None else {"shape": list(self.frames.shape),
                                                                              "dtype": str(self.frames.dtype)},
                "checksum": self.file_checksum(), "source": list(self.source), "start": self.start,
                "end": self.end, "wind": wind, "fps": self.fps, "scale": self.scale, "key": self.key,
                "nan": self.nan, "normalize": list(self.normalize) if isinstance(self.normalize, tuple) else
                self.normalize, "origin": self.origin, "cell_size": self.cell_size, "mmap": self.mmap}

    # ----------------------------------------------------------------- engine interface
    @property
    def dims(self) -> int:
        """2 for frames ``(T, H, W)``, 3 for volumes ``(T, D, H, W)``."""
        return self.frames.ndim - 1

    def natural_grid_size(self) -> tuple:
        """``(W, H)``, or ``(W, H, D)`` for volumes."""
        return tuple(int(n) for n in self.frames.shape[:0:-1])

    def kernels_for(self, dims: int):
        """Frames run in 2-D scenarios, volumes in 3-D ones (``check_dims`` refuses the others)."""
        return self.kernels if dims == self.dims else None

    def check_dims(self, dims: int, grid_size) -> None:
        if dims != self.dims:
            given = ("frames (T, H, W)" if self.dims == 2 else "volumes (T, D, H, W)") + f" of shape {self.frames.shape}"
            wanted = "volumes (T, D, H, W)" if dims == 3 else "frames (T, H, W)"
            refuse("Movie", "frames", given, f"{wanted} to run in the {dims}-D scenario of grid_size="
                   f"{tuple(grid_size)} (or grid_size=None: the movie's own size)")

    def bind(self, grid_size) -> "Movie":
        return self

    def fixed_source(self):
        return self.source

    def concentration_bounds(self) -> tuple:
        return 0.0, 1.0

    def params(self, ctx) -> tuple:
        T = self.frames.shape[0]
        start = -1 if self.start == "random" else int(self.start)
        fill_raw = float(self._offset) + float(self._fill) / float(self._scale)
        sx, sy, sz = (float(c) for c in (*self.source, 0.0)[:3])
        return MovieParams(self.frames, self._scale, T, self.end == "wrap", start, self._wind, sx, sy, sz, self._offset,
                           self._fill, fill_raw)

    def state_spec(self, ctx) -> dict:
        return {"start": StateArray(np.int64, "world", (), 0, self.frames.shape[0] - 1)}

    def image(self, params, state, b: int, t: int) -> np.ndarray:
        return self.concentration(self.frames[frame_index(params, state, b, t)])

    def concentration(self, stored_values) -> np.ndarray:
        """What stored values read (float32, the kernels' rule, in NumPy)."""
        v = np.asarray(stored_values).astype(np.float32)
        with np.errstate(invalid="ignore", over="ignore"):
            c = np.clip((v - self._offset) * self._scale, np.float32(0.0), np.float32(1.0))
        return np.where(np.isfinite(v), c, self._fill).astype(np.float32)

    def sources(self, params, state, num_worlds: int) -> np.ndarray:
        return np.tile(np.array(self.source, dtype=np.float64), (num_worlds, 1))

