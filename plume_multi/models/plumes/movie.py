"""``Movie(frames_or_path, ...)``: a recorded plume, one frame per step, shared by every world.

The frames ``(T, H, W)`` are stored once, read-only, as float32, uint16 or uint8 (integer frames
with the scale that maps them to [0, 1]); every world runs its own frame clock over them, so
4096 worlds over a 262 MB movie add no memory per world. Loaders: NumPy ``.npy`` (memory-mapped),
``.npz``, HDF5 (``h5py``) and Zarr (``xarray`` + ``zarr``, the ``plume-multi[data]`` extra) in the
layout plume data zoos write: a variable ``concentration`` with dims ``(t, y, x)`` and attributes
``fps``, ``source_dtype``, ``pixel_to_grid``, ``origin``, ``extent``, ``schema_version`` (and
``source_location`` when known); ``u`` / ``v`` variables give the wind.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from ...errors import ValidationError
from ...engine import rng
from ...engine.jit import njit
from ...engine.api import grid_point
from ..base import Plume, PlumeKernels, StateArray, check_int, check_real, fail
from .gaussian import bilinear

STREAM = 0xBB67AE85
# frames (T, H, W); scale float32 (stored value -> concentration); n_frames T; wrap (else clamp);
# start: the fixed first frame, < 0 for a random one; wind (Tw, Hw, Ww, 2); the source cell
MovieParams = namedtuple("MovieParams", "frames scale n_frames wrap start wind source_x source_y")
_DTYPES = (np.float32, np.uint16, np.uint8)


def load_frames(path, key: str | None = None):
    """``(frames, attrs, wind)`` read from a ``.npy``, ``.npz``, ``.h5``/``.hdf5`` or ``.zarr`` path."""
    p = Path(path)
    if not p.exists():
        raise ValidationError(f"Movie.frames: got the path {str(path)!r}, which does not exist; expected a "
                              ".npy, .npz, .h5 or .zarr movie")
    suffix = p.suffix.lower()
    name = key or "concentration"
    attrs, wind = {}, None
    if suffix == ".npy":
        frames = np.load(p, mmap_mode="r")
    elif suffix == ".npz":
        with np.load(p) as data:
            if name not in data.files:
                raise ValidationError(f"Movie.key: {str(path)!r} has arrays {data.files}; expected {name!r}")
            frames = data[name]
    elif suffix in (".h5", ".hdf5"):
        try:
            import h5py
        except ImportError:
            raise ValidationError("Movie: reading HDF5 needs h5py: pip install 'plume-multi[data]'") from None
        with h5py.File(p, "r") as f:
            if name not in f:
                raise ValidationError(f"Movie.key: {str(path)!r} has datasets {list(f)}; expected {name!r}")
            frames = f[name][...]
            attrs = dict(f[name].attrs)
    elif suffix == ".zarr":
        try:
            import xarray as xr
        except ImportError:
            raise ValidationError("Movie: reading Zarr needs xarray and zarr: pip install 'plume-multi[data]'") from None
        ds = xr.open_zarr(p)
        if name not in ds:
            raise ValidationError(f"Movie.key: {str(path)!r} has variables {list(ds.data_vars)}; expected {name!r}")
        var = ds[name]
        if tuple(var.dims) != ("t", "y", "x"):
            raise ValidationError(f"Movie: {name!r} has dims {var.dims}; expected ('t', 'y', 'x')")
        frames = var.values
        attrs = {**ds.attrs, **var.attrs}
        if "u" in ds and "v" in ds:
            wind = np.stack([ds["u"].values, ds["v"].values], axis=-1)
    else:
        raise ValidationError(f"Movie.frames: got {str(path)!r}; expected a .npy, .npz, .h5/.hdf5 or .zarr path")
    return frames, attrs, wind


# --------------------------------------------------------------------- compiled functions
# S = (start frame per world (B,) int64,)

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
def source(P, S, b):
    return P.source_x, P.source_y


@njit(inline="always")
def sample_cell(P, S, pw, ix, iy):
    return np.float32(P.frames[pw, iy, ix]) * P.scale


@njit(inline="always")
def sample_at(P, S, pw, x, y):
    frame = P.frames[pw]
    h, w = frame.shape
    inside, x, y = grid_point(x, y, w, h)  # within half a cell of the grid: its nearest point
    if not inside:
        return np.float32(0.0)
    return np.float32(bilinear(frame, x, y) * P.scale)


@njit(inline="always")
def wind_at(P, S, pw, x, y):
    wind = P.wind
    f = pw if wind.shape[0] > 1 else 0
    iy = min(max(int(np.floor(y + 0.5)), 0), wind.shape[1] - 1)
    ix = min(max(int(np.floor(x + 0.5)), 0), wind.shape[2] - 1)
    return np.float64(wind[f, iy, ix, 0]), np.float64(wind[f, iy, ix, 1])


KERNELS = PlumeKernels(source=source, sample_cell=sample_cell, sample_at=sample_at, reset_world=reset_world,
                       view=view, wind_at=wind_at)


@dataclass(frozen=True)
class Movie(Plume):
    """A recorded plume.

    Args:
        frames: an array ``(T, H, W)`` (float in [0, 1], uint8 or uint16) or a path (see module doc).
        source: ``(x, y)`` of the source in cells; default the dataset's ``source_location``
            attribute (an error when neither is there).
        start: ``"random"`` (each world draws its first frame per episode from its stream) or a frame.
        end: ``"wrap"`` (frame ``(start + t) % T``) or ``"clamp"`` (the last frame repeats).
        wind: ``None`` (calm, or the dataset's ``u``/``v``), a constant ``(u, v)``, per frame
            ``(T, 2)`` or per cell ``(T, H, W, 2)``, in cells per step.
        fps: frames per second of the recording (metadata only: one frame per step).
        scale: the factor from stored integers to concentration (default ``1 / dtype max``).
        key: the array / dataset / variable name in a file (default ``"concentration"``).

    Conventions: after a reset a world shows frame ``start``, after k steps frame ``start + k``.
    ``Scenario.grid_size`` defaults to the movie's ``(W, H)``; a given one must equal it.
    """

    frames: object = None
    source: tuple | None = None
    start: object = "random"
    end: str = "wrap"
    wind: object = None
    fps: float | None = None
    scale: float | None = None
    key: str | None = None

    kernels: ClassVar = KERNELS

    def __post_init__(self):
        attrs, file_wind, path = {}, None, None
        frames = self.frames
        if isinstance(frames, (str, Path)):
            path = str(frames)
            frames, attrs, file_wind = load_frames(frames, self.key)
        if not isinstance(frames, np.ndarray):
            fail("Movie", "frames", type(frames).__name__, "an array (T, H, W) or a path to a movie file")
        if frames.ndim != 3 or min(frames.shape) < 1:
            fail("Movie", "frames", f"array of shape {frames.shape}", "shape (T, H, W) with T, H, W >= 1")
        if frames.dtype.kind == "f":
            frames = np.asarray(frames, dtype=np.float32)
            if frames.size <= 50_000_000 and (not np.isfinite(frames).all() or frames.min() < 0 or frames.max() > 1):
                fail("Movie", "frames", "float frames with values outside [0, 1] or not finite",
                     "finite values in [0, 1] (or integer frames with a scale)")
            scale = 1.0
        elif frames.dtype in (np.uint8, np.uint16):
            scale = 1.0 / np.iinfo(frames.dtype).max
        else:
            fail("Movie", "frames", f"dtype {frames.dtype}", "float32/float64 in [0, 1], uint8 or uint16")
        if self.scale is not None:
            if frames.dtype.kind == "f":
                fail("Movie", "scale", self.scale, "None for float frames (they are already in [0, 1])")
            scale = check_real("Movie", "scale", self.scale, 0.0, 1.0 / np.iinfo(frames.dtype).max, low_open=True)
        frames = np.ascontiguousarray(frames)
        if frames.flags.writeable:
            frames = frames.view()
            frames.flags.writeable = False
        self._set("frames", frames)
        self._set("_scale", np.float32(scale))
        self._set("_path", path)
        T, H, W = frames.shape

        source = self.source if self.source is not None else attrs.get("source_location")
        if source is None:
            fail("Movie", "source", None, "(x, y) in cells (the movie's file names none)")
        try:
            sx, sy = (float(c) for c in source)
        except (TypeError, ValueError):
            fail("Movie", "source", source, "(x, y) numbers in cells")
        if not (0 <= sx <= W - 1 and 0 <= sy <= H - 1):
            fail("Movie", "source", source, f"a point inside the {W}x{H} frames")
        self._set("source", (sx, sy))
        if isinstance(self.start, str):
            if self.start != "random":
                fail("Movie", "start", self.start, "'random' or a frame index")
        else:
            self._set("start", check_int("Movie", "start", self.start, 0, T - 1))
        if self.end not in ("wrap", "clamp"):
            fail("Movie", "end", self.end, "'wrap' or 'clamp'")
        wind = self.wind if self.wind is not None else file_wind
        self._set("_wind", self._check_wind(wind, T, H, W))
        if self.wind is not None and not isinstance(self.wind, np.ndarray):
            self._set("wind", tuple(float(v) for v in np.ravel(self.wind)))
        fps = self.fps if self.fps is not None else attrs.get("fps")
        if fps is not None:
            fps = check_real("Movie", "fps", fps, 0.0, 1e6, low_open=True)
        self._set("fps", fps)

    @staticmethod
    def _check_wind(wind, T, H, W) -> np.ndarray:
        """Wind as ``(Tw, Hw, Ww, 2)`` float32 with each of Tw, Hw, Ww either 1 or the movie's."""
        if wind is None:
            return np.zeros((1, 1, 1, 2), np.float32)
        try:
            arr = np.asarray(wind, dtype=np.float64)
        except (TypeError, ValueError):
            fail("Movie", "wind", wind, "None, (u, v), (T, 2) or (T, H, W, 2) numbers")
        shapes = {(2,): (1, 1, 1, 2), (T, 2): (T, 1, 1, 2), (T, H, W, 2): (T, H, W, 2)}
        if arr.shape not in shapes or not np.isfinite(arr).all():
            fail("Movie", "wind", f"shape {arr.shape}", f"finite (2,), ({T}, 2) or ({T}, {H}, {W}, 2)")
        return np.ascontiguousarray(arr.reshape(shapes[arr.shape]), dtype=np.float32)

    def __repr__(self) -> str:
        what = self._path or f"array{self.frames.shape} {self.frames.dtype}"
        return f"Movie({what}, source={self.source}, start={self.start!r}, end={self.end!r})"

    def metadata(self) -> dict:
        T, H, W = self.frames.shape
        return {"family": "plume", "model": "Movie", "frames": self._path or {"shape": [T, H, W],
                "dtype": str(self.frames.dtype)}, "source": list(self.source), "start": self.start,
                "end": self.end, "wind": None if self.wind is None else (
                    list(self.wind) if isinstance(self.wind, tuple) else {"shape": list(np.shape(self.wind))}),
                "fps": self.fps, "scale": float(self._scale), "key": self.key}

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return id(self)

    # ----------------------------------------------------------------- engine interface
    def natural_grid_size(self) -> tuple:
        return int(self.frames.shape[2]), int(self.frames.shape[1])

    def bind(self, grid_size) -> "Movie":
        return self

    def fixed_source(self):
        return self.source

    def concentration_bounds(self) -> tuple:
        return 0.0, 1.0

    def params(self, ctx) -> tuple:
        T = self.frames.shape[0]
        start = -1 if self.start == "random" else int(self.start)
        return MovieParams(self.frames, self._scale, T, self.end == "wrap", start, self._wind, self.source[0], self.source[1])

    def state_spec(self, ctx) -> dict:
        return {"start": StateArray(np.int64, "world", (), 0, self.frames.shape[0] - 1)}

    def image(self, params, state, b: int, t: int) -> np.ndarray:
        f = frame_index(params, state, b, t)
        return self.frames[f].astype(np.float32) * self._scale

    def sources(self, params, state, num_worlds: int) -> np.ndarray:
        return np.tile(np.array(self.source, dtype=np.float64), (num_worlds, 1))
