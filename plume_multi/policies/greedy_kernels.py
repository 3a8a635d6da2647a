"""The greedy (most-likely-source) decision, compiled: move toward the maximum of the belief.

The target is the most likely cell: among the cells whose probability is within a relative
``TIE_RTOL`` of the belief's maximum (``p >= max p * (1 - TIE_RTOL)``, ``p > 0``), the one nearest
to the agent (squared Euclidean distance in cells), then the first in row-major order (lowest
``y``, then lowest ``x``). The move is the one whose cell is nearest to the target (squared
Euclidean distance), moves off the grid excluded, ties to the lowest action index: with cardinal
moves the agent closes the longer of its two offsets first, so its path hugs the straight line.
"""

from __future__ import annotations

import numpy as np

from ..engine.jit import njit

__all__ = ["TIE_RTOL", "most_likely_cell", "decide"]

# Cells within this relative distance of the belief's maximum are tied: symmetric beliefs (a
# team at one start cell, the first hit's rings) differ there by rounding only.
TIE_RTOL = 1e-9


@njit(cache=True)
def most_likely_cell(p, x, y):
    """``(tx, ty)``: the most likely cell of the belief ``p`` ``(H, W)`` for an agent at ``(x, y)``
    (see the module docstring); ``(-1, -1)`` when ``p`` has no positive entry."""
    h, w = p.shape
    top = 0.0
    for yy in range(h):
        for xx in range(w):
            if p[yy, xx] > top:
                top = p[yy, xx]
    if top <= 0.0:
        return -1, -1
    floor = top * (1.0 - TIE_RTOL)
    tx = -1
    ty = -1
    best = np.iinfo(np.int64).max
    for yy in range(h):
        for xx in range(w):
            if p[yy, xx] >= floor:
                d = (xx - x) * (xx - x) + (yy - y) * (yy - y)
                if d < best:  # strict: the first in row-major order keeps a tie
                    best = d
                    tx = xx
                    ty = yy
    return tx, ty


@njit(cache=True)
def decide(p, moves, x, y, scores):
    """Greedy action of an agent at ``(x, y)`` with belief ``p`` ``(H, W)`` float64.

    ``moves`` ``(K, 2)`` int32 ``(dx, dy)``; ``scores`` ``(K,)`` float64 out: the squared distance
    (cells^2) from each move's cell to the most likely cell, ``inf`` off the grid. Returns the
    allowed move of lowest score, ties to the lowest index (-1 if no move is allowed).
    """
    h, w = p.shape
    tx, ty = most_likely_cell(p, x, y)
    best = np.inf
    action = -1
    for m in range(moves.shape[0]):
        nx = x + moves[m, 0]
        ny = y + moves[m, 1]
        if nx < 0 or nx >= w or ny < 0 or ny >= h:
            scores[m] = np.inf
            continue
        s = float((nx - tx) * (nx - tx) + (ny - ty) * (ny - ty))
        scores[m] = s
        if s < best:
            best = s
            action = m
    return action
