"""From stored values to concentration: a recorded plume's values, every one checked once, and the
policies that load real recordings (``Movie(nan=..., normalize=..., scale=...)``).

A movie reads ``clip((stored - offset) * scale, 0, 1)``; a stored value that is not finite (NaN,
+inf, -inf: masked pixels) reads ``fill``. ``resolve`` chooses ``offset``, ``scale`` and ``fill``
from the options and the values, or refuses them with how many values are bad, where, and which
option to pass. The kernels apply the same rule to every read, so a frame that changes after
loading (an array written to by its owner) still reads finite values in [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass

import math

import numpy as np

from ...checks import check_real, fail, is_real, refuse

__all__ = ["Scan", "scan", "resolve", "percentiles", "ROBUST", "MIN_SCALE", "MAX_SCALE"]

CHUNK = 1 << 24  # values per pass over the frames: bounded memory for a memory-mapped movie
ROBUST = (5.0, 95.0)  # normalize="robust": the data zoo's percentiles (plume_nav_sim's load_plume)
EXACT_PERCENTILES = 1 << 26  # float movies up to this many values get exact percentiles
MIN_SCALE, MAX_SCALE = 1e-30, 1e30  # float32 keeps every product finite and non-zero


@dataclass(frozen=True)
class Scan:
    """What one pass over every value found.

    ``nonfinite``: how many values are NaN or infinite, ``first_bad`` the ``(t, y, x)`` of the
    first (``(t, z, y, x)`` in volumes), ``bad_frames`` how many frames hold one; ``low`` / ``high``: the finite extremes (NaN
    when no value is finite)."""

    values: int
    nonfinite: int
    first_bad: tuple | None
    bad_frames: int
    low: float
    high: float


def _chunks(frames):
    step = max(1, CHUNK // max(1, math.prod(frames.shape[1:])))
    for t0 in range(0, frames.shape[0], step):
        yield t0, np.asarray(frames[t0:t0 + step])


def scan(frames: np.ndarray) -> Scan:
    """Every value of ``(T, H, W)`` frames (``(T, D, H, W)`` volumes) once, a chunk of frames at a time."""
    nonfinite, bad_frames, first = 0, 0, None
    low, high = np.inf, -np.inf
    for t0, chunk in _chunks(frames):
        if chunk.dtype.kind == "f":
            finite = np.isfinite(chunk)
            n_bad = chunk.size - int(np.count_nonzero(finite))
            if n_bad:
                nonfinite += n_bad
                bad_frames += int(np.count_nonzero(~finite.reshape(chunk.shape[0], -1).all(axis=1)))
                if first is None:
                    t, *cell = np.unravel_index(int(np.argmin(finite)), chunk.shape)
                    first = (t0 + int(t), *(int(c) for c in cell))
                chunk = chunk[finite]
        if chunk.size:
            low, high = min(low, float(chunk.min())), max(high, float(chunk.max()))
    if not np.isfinite(low):
        low = high = float("nan")
    return Scan(int(frames.size), nonfinite, first, bad_frames, low, high)


def percentiles(frames: np.ndarray, lo: float, hi: float) -> tuple:
    """The ``lo`` and ``hi`` percentiles (NumPy's linear rule) of the finite values. Exact for
    integer frames (a histogram) and float movies of up to 2**26 values; above, of every k-th
    value (at least 2**24 of them)."""
    if frames.dtype.kind == "u":
        counts = np.zeros(np.iinfo(frames.dtype).max + 1, np.int64)
        for _, chunk in _chunks(frames):
            counts += np.bincount(chunk.ravel(), minlength=counts.size)
        cum = np.cumsum(counts)
        return tuple(_from_histogram(cum, q) for q in (lo, hi))
    flat = frames.reshape(-1)
    if flat.size > EXACT_PERCENTILES:
        flat = flat[:: flat.size // (EXACT_PERCENTILES // 4)]
    flat = flat[np.isfinite(flat)]
    return tuple(float(v) for v in np.percentile(flat, (lo, hi)))


def _from_histogram(cum: np.ndarray, q: float) -> float:
    """NumPy's linear percentile of the values a cumulative histogram counts (value = bin)."""
    pos = q / 100.0 * (cum[-1] - 1)
    k = int(np.floor(pos))
    below = float(np.searchsorted(cum, k, side="right"))
    above = float(np.searchsorted(cum, min(k + 1, cum[-1] - 1), side="right"))
    return below + (pos - k) * (above - below)


def place(index) -> str:
    """``frame t, row y, column x`` of a value at ``(t, y, x)`` (``frame t, plane z, row y, column
    x`` at ``(t, z, y, x)``)."""
    names = ("frame", "row", "column") if len(index) == 3 else ("frame", "plane", "row", "column")
    return ", ".join(f"{name} {int(i)}" for name, i in zip(names, index))


def _where(frames, mask_fn) -> str:
    """Where (``place``) the first value is at which ``mask_fn(chunk)`` holds."""
    for t0, chunk in _chunks(frames):
        mask = mask_fn(chunk)
        if mask.any():
            t, *cell = np.unravel_index(int(np.argmax(mask)), chunk.shape)
            return place((t0 + int(t), *cell))
    return "nowhere"


def _count(frames, mask_fn) -> int:
    return sum(int(np.count_nonzero(mask_fn(chunk))) for _, chunk in _chunks(frames))


def resolve(frames: np.ndarray, found: Scan, what: str, *, nan=None, normalize=None, scale=None) -> tuple:
    """``(offset, scale, fill)`` (float32) that map the stored values to concentration.

    Args:
        frames: the ``(T, H, W)`` (``(T, D, H, W)``) stored values.
        found: ``scan(frames)``.
        what: how messages name the frames (``"the file 'm.zarr'"``).
        nan: None (refuse non-finite values) or the concentration in [0, 1] they read.
        normalize: None (the values are concentrations, times ``scale``), ``"minmax"`` (min -> 0,
            max -> 1), ``"robust"`` (the 5th and 95th percentiles -> 0 and 1, clipped) or
            ``(lo, hi)`` percentiles.
        scale: with ``normalize=None``: the factor from stored values to concentration (default
            1 for float frames, ``1 / dtype max`` for integer frames).
    Returns:
        ``(offset, scale, fill)``, float32 scalars.
    """
    T = frames.shape[0]
    fill = 0.0 if nan is None else check_real("Movie", "nan", nan, 0.0, 1.0)
    if found.nonfinite and nan is None:
        refuse("Movie", "frames", f"{found.nonfinite} of {found.values} values of {what} that are not finite (NaN or "
               f"infinite) in {found.bad_frames} of {T} frames, the first at {place(found.first_bad)}",
               "finite values, or the option nan=0.0 to read them as concentration 0 (nan=c for another "
               "concentration c in [0, 1])")
    if found.nonfinite == found.values:
        refuse("Movie", "frames", f"{what} with no finite value", "a recording with at least one finite value")
    if normalize is not None:
        if scale is not None:
            fail("Movie", "scale", scale, f"None with normalize={normalize!r} (the normalisation sets the scale)")
        lo, hi = _normalisation(frames, found, normalize)
        if not hi > lo:
            fail("Movie", "normalize", normalize, f"a normalisation of values that vary ({what} maps both "
                 f"ends to {lo:g}: a constant movie); use normalize=None with scale= instead")
        offset, factor = np.float32(lo), np.float32(1.0 / (hi - lo))
        if not np.isfinite(factor) or factor == 0:
            fail("Movie", "normalize", normalize, f"values whose spread {hi - lo:g} has a finite float32 inverse")
        return offset, factor, np.float32(fill)
    default = 1.0 if frames.dtype.kind == "f" else 1.0 / np.iinfo(frames.dtype).max
    factor = default if scale is None else check_real("Movie", "scale", scale, MIN_SCALE, MAX_SCALE)
    factor32 = np.float32(factor)
    low, high = np.float32(found.low) * factor32, np.float32(found.high) * factor32
    if low < 0 or high > 1:
        def outside(chunk):
            c = chunk.astype(np.float32) * factor32
            return (c < 0) | (c > 1)

        n = _count(frames, outside)
        scaled = "" if factor == 1.0 else f" times the scale {factor:g}"
        low_at = _where(frames, lambda c: c == found.low)
        high_at = _where(frames, lambda c: c == found.high)
        refuse("Movie", "frames" if scale is None else "scale", f"{n} of {found.values} values of {what}{scaled} "
               f"outside [0, 1] (min {found.low:g} at {low_at}, max {found.high:g} at {high_at})",
               "concentrations in [0, 1]: pass normalize='minmax' (min -> 0, max -> 1), normalize='robust' "
               "(5th and 95th percentiles -> 0 and 1, clipped) or scale= (stored value x scale = concentration)")
    return np.float32(0.0), factor32, np.float32(fill)


def _normalisation(frames, found: Scan, normalize) -> tuple:
    """The stored values that map to concentrations 0 and 1."""
    if isinstance(normalize, str):
        if normalize == "minmax":
            return found.low, found.high
        if normalize == "robust":
            return percentiles(frames, *ROBUST)
    elif isinstance(normalize, (tuple, list)) and len(normalize) == 2 and all(is_real(q) for q in normalize):
        lo, hi = (float(q) for q in normalize)
        if 0.0 <= lo < hi <= 100.0:
            return percentiles(frames, lo, hi)
    fail("Movie", "normalize", normalize, "None, 'minmax', 'robust' or (lo, hi) percentiles with 0 <= lo < hi <= 100")
