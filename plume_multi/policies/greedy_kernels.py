"""The greedy (most-likely-source) decision, compiled: move toward the maximum of the belief.

One formulation for 2-D beliefs ``(H, W)`` and 3-D ones ``(D, H, W)``: an agent's cell is ``(x, y)``
or ``(x, y, z)`` (``cell[k]`` indexes the belief's axis ``ndim - 1 - k``).

The target is the most likely cell: among the cells whose probability is within a relative
``TIE_RTOL`` of the belief's maximum (``p >= max p * (1 - TIE_RTOL)``, ``p > 0``), the one nearest
to the agent (squared Euclidean distance in cells), then the first in row-major order (lowest
``y`` then lowest ``x`` in 2-D; lowest ``z``, then ``y``, then ``x`` in 3-D). The move is the one
whose cell is nearest to the target (squared Euclidean distance), moves off the grid excluded,
ties to the lowest action index: with cardinal moves the agent closes its longest offset first, so
its path hugs the straight line.
"""

from __future__ import annotations

import numpy as np

from ..engine.jit import njit

__all__ = ["TIE_RTOL", "most_likely_cell", "decide"]

# Cells within this relative distance of the belief's maximum are tied: symmetric beliefs (a
# team at one start cell, the first hit's rings) differ there by rounding only.
TIE_RTOL = 1e-9


@njit(cache=True)
def _at(p, x, y, z):
    """``p[z, y, x]`` of a 3-D belief, ``p[y, x]`` of a 2-D one (``z`` is 0)."""
    if p.ndim == 3:  # a compile-time constant: one branch is compiled
        return p[z, y, x]
    return p[y, x]


@njit(cache=True)
def _depth_and_z(p, cell):
    """``(D, z)``: the belief's depth and the agent's ``z`` (``(1, 0)`` in 2-D)."""
    if p.ndim == 3:
        return p.shape[0], cell[2]
    return 1, 0


@njit(cache=True)
def most_likely_cell(p, cell):
    """Row-major flat index of the most likely cell of the belief ``p`` (``(H, W)`` or
    ``(D, H, W)``) for an agent at ``cell`` (``(x, y)`` or ``(x, y, z)``; see the module
    docstring); -1 when ``p`` has no positive entry."""
    d, z = _depth_and_z(p, cell)
    h, w = p.shape[-2], p.shape[-1]
    x, y = cell[0], cell[1]
    top = 0.0
    for zz in range(d):
        for yy in range(h):
            for xx in range(w):
                v = _at(p, xx, yy, zz)
                if v > top:
                    top = v
    if top <= 0.0:
        return -1
    floor = top * (1.0 - TIE_RTOL)
    target = -1
    best = np.iinfo(np.int64).max
    for zz in range(d):
        for yy in range(h):
            for xx in range(w):
                if _at(p, xx, yy, zz) >= floor:
                    e = (xx - x) * (xx - x) + (yy - y) * (yy - y) + (zz - z) * (zz - z)
                    if e < best:  # strict: the first in row-major order keeps a tie
                        best = e
                        target = (zz * h + yy) * w + xx
    return target


@njit(cache=True)
def decide(p, moves, cell, scores):
    """Greedy action of an agent at ``cell`` (``(x, y)`` or ``(x, y, z)`` integers) with belief
    ``p`` (``(H, W)`` or ``(D, H, W)`` float64).

    ``moves`` ``(K, p.ndim)`` int32 steps ``(dx, dy[, dz])``; ``scores`` ``(K,)`` float64 out: the
    squared distance (cells^2) from each move's cell to the most likely cell, ``inf`` off the grid
    (without a positive entry the target is ``(-1, -1[, -1])``). Returns the allowed move of lowest
    score, ties to the lowest index (-1 if no move is allowed).
    """
    d, z = _depth_and_z(p, cell)
    h, w = p.shape[-2], p.shape[-1]
    x, y = cell[0], cell[1]
    t = most_likely_cell(p, cell)
    tz = t // (h * w) if t >= 0 else -1
    ty = (t // w) % h if t >= 0 else -1
    tx = t % w if t >= 0 else -1
    best = np.inf
    action = -1
    for m in range(moves.shape[0]):
        nx = x + moves[m, 0]
        ny = y + moves[m, 1]
        nz = z + moves[m, 2] if p.ndim == 3 else z
        if nx < 0 or nx >= w or ny < 0 or ny >= h or nz < 0 or nz >= d:
            scores[m] = np.inf
            continue
        s = float((nx - tx) * (nx - tx) + (ny - ty) * (ny - ty))
        if p.ndim == 3:
            s += float((nz - tz) * (nz - tz))
        scores[m] = s
        if s < best:
            best = s
            action = m
    return action
