"""Distances along free paths among walls: what the belief searchers measure instead of straight
lines when a scenario has walls (``docs/walls.md``).

A free path is a sequence of cells, each a unit step (one cell along one axis) from the one
before, none of them solid. Its length is the number of steps: without walls the shortest is the
Manhattan distance, so among walls the free-path distance is the Manhattan distance of the
original policies wherever the walls are not in the way. Cells that no free path reaches from
the start keep the Manhattan distance (a lower bound of any path's length: a source there cannot
be reached, whatever the move, so its weight is the same for every move).
"""

from __future__ import annotations

import numpy as np

from ..engine.jit import njit

__all__ = ["free_path_distances"]


@njit(cache=True)
def free_path_distances(solid, start, out, queue, layout):
    """The length of the shortest free path from the cell ``start`` (``(x, y)`` or ``(x, y, z)``,
    free) to every cell of ``solid``'s grid (``(H, W)`` or ``(D, H, W)`` bool, True where solid),
    by a breadth-first search over unit steps.

    Written into ``out`` (float64) laid out as ``layout = (plane, row)`` says: cell ``(x, y[, z])``
    at ``z * plane + y * row + x``; the entries between rows (``row > W``) and solid cells get 0,
    cells no free path reaches the Manhattan distance from ``start``. ``queue``: int64 scratch of
    at least ``H * W`` (``D * H * W``) entries.
    """
    shape = solid.shape
    plane, row = layout
    n = solid.size
    walls = solid.reshape(n)
    # the grid's sides and strides, x first (a 2-D grid is one plane deep)
    if solid.ndim == 2:  # a compile-time constant: one branch is compiled
        sides = (shape[1], shape[0], np.int64(1))
        s = start[1] * shape[1] + start[0]
        z0 = 0
    else:
        sides = (shape[2], shape[1], shape[0])
        s = (start[2] * shape[1] + start[1]) * shape[2] + start[0]
        z0 = start[2]
    strides = (1, sides[0], sides[0] * sides[1])
    dims = solid.ndim
    out[:] = 0.0
    for i in range(n):  # -1: not reached yet (free cells)
        if not walls[i]:
            x = i % sides[0]
            y = (i // sides[0]) % sides[1]
            z = i // (sides[0] * sides[1])
            out[z * plane + y * row + x] = -1.0
    out[z0 * plane + start[1] * row + start[0]] = 0.0
    queue[0] = s
    head = 0
    tail = 1
    while head < tail:
        i = queue[head]
        head += 1
        x = i % sides[0]
        y = (i // sides[0]) % sides[1]
        z = i // (sides[0] * sides[1])
        d = out[z * plane + y * row + x] + 1.0
        for k in range(dims):
            c = x if k == 0 else (y if k == 1 else z)
            for step in range(-1, 2, 2):
                if c + step < 0 or c + step >= sides[k]:
                    continue
                j = i + step * strides[k]
                if walls[j]:
                    continue
                nx = x + step if k == 0 else x
                ny = y + step if k == 1 else y
                nz = z + step if k == 2 else z
                f = nz * plane + ny * row + nx
                if out[f] < 0.0:
                    out[f] = d
                    queue[tail] = j
                    tail += 1
    # cells no free path reaches: the Manhattan distance
    for i in range(n):
        x = i % sides[0]
        y = (i // sides[0]) % sides[1]
        z = i // (sides[0] * sides[1])
        f = z * plane + y * row + x
        if out[f] < 0.0:
            out[f] = abs(x - start[0]) + abs(y - start[1]) + abs(z - z0)
