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

Among walls (``solid``) a move into a solid cell is excluded too, and "nearest to the target" is
measured along free paths (``paths.free_path_distances``: unit steps around the walls), ties by the
squared Euclidean distance, then the lowest index: the agent walks around a wall instead of
pressing against it. Without walls in the way the free-path distance is the Manhattan distance,
whose ties the Euclidean one breaks as in open space.
"""

from __future__ import annotations

import numpy as np

from ..engine.jit import njit
from ..models.plumes.poisson_hits.kernels import inside, moved, solid_at
from . import paths

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
def _target_cell(p, t):
    """The cell of the row-major flat index ``t`` of ``p`` (``(-1, -1[, -1])`` for ``t < 0``)."""
    h, w = p.shape[-2], p.shape[-1]
    tz = t // (h * w) if t >= 0 else -1
    ty = (t // w) % h if t >= 0 else -1
    tx = t % w if t >= 0 else -1
    if p.ndim == 3:
        return (tx, ty, tz)
    return (tx, ty)


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
def _squared(a, b):
    """The squared Euclidean distance of two cells (cells^2)."""
    s = 0
    for k in range(len(a)):
        s += (a[k] - b[k]) * (a[k] - b[k])
    return float(s)


@njit(cache=True)
def decide(p, moves, cell, scores, solid, scratch):
    """Greedy action of an agent at ``cell`` (``(x, y)`` or ``(x, y, z)`` integers) with belief
    ``p`` (``(H, W)`` or ``(D, H, W)`` float64).

    ``moves`` ``(K, p.ndim)`` int32 steps ``(dx, dy[, dz])``; ``solid`` None or the world's solid
    cells (bool, ``p``'s shape); ``scratch`` ``(R, n)`` float64 with ``R >= 5`` and ``n`` at least
    the cells among walls (rows 3 and 4: the paths' queue and distances; unread without walls);
    ``scores`` ``(K,)`` float64 out: the squared distance (cells^2) from each move's cell to the most
    likely cell, among walls the free-path distance (steps), ``inf`` off the grid or into a wall
    (without a positive entry the target is ``(-1, -1[, -1])``, at squared distances). Returns the
    allowed move of lowest score, ties to the lowest index (among walls: to the lowest squared
    distance first; -1 if no move is allowed).
    """
    target = _target_cell(p, most_likely_cell(p, cell))
    paths_known = False
    if solid is not None:
        if target[0] >= 0:
            # distances from the target, laid out row-major (rows W apart, planes H W apart)
            w = p.shape[p.ndim - 1]
            paths.free_path_distances(solid, target, scratch[4], scratch[3].view(np.int64),
                                      (p.shape[p.ndim - 2] * w, w))
            paths_known = True
    best = np.inf
    best_e = np.inf
    action = -1
    for m in range(moves.shape[0]):
        new = moved(cell, moves, m)
        if not inside(p, new) or solid_at(solid, new):
            scores[m] = np.inf
            continue
        e = _squared(new, target)
        if paths_known:
            s = scratch[4, _flat(p, new)]
            if s < best or (s == best and e < best_e):
                best = s
                best_e = e
                action = m
        else:
            s = e
            if s < best:
                best = s
                action = m
        scores[m] = s
    return action


@njit(cache=True)
def _flat(p, cell):
    """The row-major flat index of ``cell`` on ``p``'s grid."""
    i = 0
    for k in range(len(cell) - 1, -1, -1):
        i = i * p.shape[len(cell) - 1 - k] + cell[k]
    return i
