"""Bilinear and trilinear interpolation on a grid of cells, the float reads of the gridded plumes."""

from __future__ import annotations

import numpy as np
from numba.extending import overload

from ...engine.jit import njit

__all__ = ["bilinear_cells", "bilinear", "trilinear_cells", "trilinear", "interpolate"]


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


@njit(inline="always")
def trilinear_cells(d, h, w, x, y, z):
    """For ``(x, y, z)`` inside ``[0, w-1] x [0, h-1] x [0, d-1]``: ``bilinear_cells`` of the plane,
    then the plane ``z0`` at or below ``z``, the next one ``z1`` (the same at the last) and ``fz``."""
    x0, y0, x1, y1, fx, fy = bilinear_cells(h, w, x, y)
    z0 = min(int(z), d - 1)
    return x0, y0, z0, x1, y1, min(z0 + 1, d - 1), fx, fy, z - z0


@njit(inline="always")
def trilinear(field, x, y, z):
    """Trilinear interpolation of a ``(D, H, W)`` field at ``(x, y, z)`` inside
    ``[0, W-1] x [0, H-1] x [0, D-1]``, in float64: the bilinear values of the planes ``z0`` and
    ``z1`` around ``z`` (as ``bilinear``), weighted ``(1 - fz, fz)``."""
    d, h, w = field.shape
    x0, y0, z0, x1, y1, z1, fx, fy, fz = trilinear_cells(d, h, w, x, y, z)
    top = (1.0 - fx) * field[z0, y0, x0] + fx * field[z0, y0, x1]
    bottom = (1.0 - fx) * field[z0, y1, x0] + fx * field[z0, y1, x1]
    below = (1.0 - fy) * top + fy * bottom
    top = (1.0 - fx) * field[z1, y0, x0] + fx * field[z1, y0, x1]
    bottom = (1.0 - fx) * field[z1, y1, x0] + fx * field[z1, y1, x1]
    above = (1.0 - fy) * top + fy * bottom
    return np.float32((1.0 - fz) * below + fz * above)


def interpolate(field, point):
    """In compiled code: ``bilinear`` of a ``(H, W)`` field at a point ``(x, y)``, ``trilinear`` of a
    ``(D, H, W)`` one at ``(x, y, z)`` (the point inside the grid)."""


# One function that picks by dimension: a loop over the axes would keep its partial sums in a scratch
# array (an allocation per read, which the step never makes) or change their order (every recorded
# episode holds these sums, bit for bit), so each dimension keeps its written-out form.
@overload(interpolate)
def _interpolate(field, point):
    if len(point) == 2:
        return lambda field, point: bilinear(field, point[0], point[1])
    return lambda field, point: trilinear(field, point[0], point[1], point[2])
