"""Bilinear interpolation on a grid of cells, the float reads of the gridded plumes."""

from __future__ import annotations

import numpy as np

from ...engine.jit import njit

__all__ = ["bilinear_cells", "bilinear"]


@njit(inline="always")
def bilinear_cells(h, w, x, y):
    """For ``(x, y)`` inside ``[0, w-1] x [0, h-1]``: the cell ``(x0, y0)`` at or below it, the next
    one ``(x1, y1)`` (the same at the last row or column) and the fractions ``(fx, fy)``."""
    x0 = min(int(x), w - 1)
    y0 = min(int(y), h - 1)
    return x0, y0, min(x0 + 1, w - 1), min(y0 + 1, h - 1), x - x0, y - y0


@njit(inline="always")
def bilinear(field, x, y):
    """Bilinear interpolation of a ``(H, W)`` field at ``(x, y)`` inside ``[0, W-1] x [0, H-1]``."""
    h, w = field.shape
    x0, y0, x1, y1, fx, fy = bilinear_cells(h, w, x, y)
    top = (1.0 - fx) * field[y0, x0] + fx * field[y0, x1]
    bottom = (1.0 - fx) * field[y1, x0] + fx * field[y1, x1]
    return np.float32((1.0 - fy) * top + fy * bottom)
