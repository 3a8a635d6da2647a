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


@njit(cache=True, inline="always")
def _axis(index, shape, k):
    """Coordinate ``k`` (0: ``x``, the last axis; 1: ``y``; 2: ``z``) of the row-major flat
    ``index`` of an array of ``shape``; -1 for ``index == -1`` (no cell)."""
    if index < 0:
        return -1
    for j in range(k):
        index //= shape[len(shape) - 1 - j]
    return index % shape[len(shape) - 1 - k]


@njit(cache=True)
def most_likely_cell(p, cell):
    """Row-major flat index of the most likely cell of the belief ``p`` (``(H, W)`` or
    ``(D, H, W)``) for an agent at ``cell`` (``(x, y)`` or ``(x, y, z)``; see the module
    docstring); -1 when ``p`` has no positive entry."""
    top = 0.0
    for v in p.flat:
        if v > top:
            top = v
    if top <= 0.0:
        return -1
    floor = top * (1.0 - TIE_RTOL)
    target = -1
    best = np.iinfo(np.int64).max
    index = 0
    for v in p.flat:
        if v >= floor:
            d = 0
            for k in range(p.ndim):
                e = _axis(index, p.shape, k) - cell[k]
                d += e * e
            if d < best:  # strict: the first in row-major order keeps a tie
                best = d
                target = index
        index += 1
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
    target = most_likely_cell(p, cell)
    best = np.inf
    action = -1
    for m in range(moves.shape[0]):
        s = 0
        inside = True
        for k in range(p.ndim):
            n = cell[k] + moves[m, k]
            if n < 0 or n >= p.shape[p.ndim - 1 - k]:
                inside = False
                break
            e = n - _axis(target, p.shape, k)
            s += e * e
        if not inside:
            scores[m] = np.inf
            continue
        scores[m] = float(s)
        if scores[m] < best:
            best = scores[m]
            action = m
    return action
