"""The static Gaussian plume."""

from __future__ import annotations

import numpy as np

from ..errors import ValidationError


def gaussian_field(grid_size, source_location, sigma: float) -> np.ndarray:
    """``C(x, y) = exp(-((x - xs)^2 + (y - ys)^2) / (2 sigma^2))``.

    Computed in float64, stored as float32, clipped to ``[0, 1]``; 1.0 at the source.

    Returns:
        ``(height, width)`` float32, C-contiguous, indexed ``[y, x]``.
    """
    w, h = grid_size
    xs, ys = source_location
    x = np.arange(w, dtype=np.float64) - xs
    y = np.arange(h, dtype=np.float64) - ys
    d2 = y[:, None] ** 2 + x[None, :] ** 2
    field = np.exp(-d2 / (2.0 * float(sigma) ** 2))
    return np.ascontiguousarray(np.clip(field, 0.0, 1.0).astype(np.float32))


def validate_field(field, grid_size) -> np.ndarray:
    """Check a user-supplied field and return it as a C-contiguous float32 ``(h, w)`` array."""
    w, h = grid_size
    arr = np.asarray(field)
    if arr.shape != (h, w) or arr.dtype.kind != "f":
        raise ValidationError(
            f"field: got shape {arr.shape} dtype {arr.dtype}; expected a float array of shape "
            f"(height, width) = ({h}, {w})"
        )
    if not np.isfinite(arr).all() or arr.min() < 0 or arr.max() > 1:
        raise ValidationError("field: got values outside [0, 1] or not finite; expected finite values in [0, 1]")
    return np.ascontiguousarray(arr, dtype=np.float32)
