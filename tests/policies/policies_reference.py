"""Plain NumPy references of the belief searchers' decisions: greedy, and teams whose agents run
different policies on one shared belief. In 2-D and 3-D; infotaxis and the Bayes update come from
the Poisson references of the model tests (tests/models/plumes/poisson_reference.py and
poisson_reference_3d.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models" / "plumes"))
import poisson_reference as nv  # noqa: E402
import poisson_reference_3d as r3  # noqa: E402

TIE_RTOL = 1e-9  # as documented by policies.Greedy


def greedy_target(p, cell):
    """The most likely cell ``(tx, ty)`` of ``p`` ``(H, W)``, or ``(tx, ty, tz)`` of ``p`` ``(D, H, W)``,
    for an agent at ``cell``: cells within a relative 1e-9 of the maximum are tied; the nearest
    to ``cell`` wins, then the first in row-major order ((y, x), or (z, y, x))."""
    floor = p.max() * (1.0 - TIE_RTOL)
    coords = np.nonzero(p >= floor)[::-1]  # row-major order; (xs, ys[, zs])
    d = sum((c - v) ** 2 for c, v in zip(coords, cell))
    j = int(np.argmin(d))  # the first of the nearest
    return tuple(int(c[j]) for c in coords)


def greedy_decide(p, cell, moves):
    """(action, scores): the move whose cell is nearest to the target, off-grid moves excluded,
    ties to the lowest index; scores = squared distances (inf off the grid)."""
    target = greedy_target(p, cell)
    sides = p.shape[::-1]  # (W, H[, D])
    scores = np.full(len(moves), np.inf)
    for m, step in enumerate(moves):
        new = [c + s for c, s in zip(cell, step)]
        if all(0 <= n < side for n, side in zip(new, sides)):
            scores[m] = float(sum((n - t) ** 2 for n, t in zip(new, target)))
    return (int(np.argmin(scores)) if np.isfinite(scores).any() else -1), scores


def most_likely_hit(p, like, cell):
    """argmax_h sum_x p(x) Pr(h | x - cell) (lowest h on ties), in 2-D or 3-D."""
    return int(np.argmax([(p * like(h, *cell)).sum() for h in range(like.n_hits)]))


def mixed_team_decide(p, positions, kinds, moves, like, given=None, rule="believer", solid=None):
    """Actions of agents sharing belief ``p`` (``(H, W)`` with ``nv.Likelihood``, or ``(D, H, W)``
    with ``r3.Likelihood3``), in order, each with its own kind ("infotaxis", "space_aware",
    "greedy" or "given": ``given[i]``); under "believer" each decides on the belief updated with
    every earlier agent's move (clamped into the grid; among the walls ``solid`` a move into a
    solid cell leaves the agent where it was) and most likely hit."""
    sides = p.shape[::-1]
    q = p.copy()
    out = []
    for i, (cell, kind) in enumerate(zip(positions, kinds)):
        cell = tuple(int(c) for c in cell)
        if kind == "greedy":
            a, _ = greedy_decide(q, cell, moves) if solid is None else greedy_decide_among_walls(q, cell, moves, solid)
        elif kind == "given":
            a = int(given[i])
        elif solid is not None:
            a, _ = infotaxis_decide(q, cell, moves, like, solid, space_aware=kind == "space_aware")
        elif p.ndim == 2:
            a, _ = nv.decide(q, *cell, moves, like, space_aware=kind == "space_aware")
        else:
            a, _ = r3.decide(q, cell, moves, like, space_aware=kind == "space_aware")
        out.append(a)
        if rule == "believer" and i + 1 < len(positions):
            t = tuple(min(max(c + s, 0), side - 1) for c, s, side in zip(cell, moves[a], sides))
            if solid is not None and solid[t[::-1]]:
                t = cell
            hit = most_likely_hit(q, like, t)
            q = (nv.update if p.ndim == 2 else r3.update)(q, like(hit, *t), *t)
    return out


# -- among walls ------------------------------------------------------------------------------------
def free_path_distances(solid, start):
    """Fewest unit steps (one cell along one axis) from ``start`` ``(x, y[, z])`` to every cell of
    ``solid``'s grid (``(H, W)`` or ``(D, H, W)``, True where solid) through free cells, by a plain
    breadth-first search; the Manhattan distance where no free path leads, 0 on solid cells."""
    from collections import deque

    dist = np.full(solid.shape, -1, dtype=np.int64)
    first = tuple(start)[::-1]
    dist[first] = 0
    queue = deque([first])
    while queue:
        here = queue.popleft()
        for axis in range(solid.ndim):
            for step in (-1, 1):
                there = list(here)
                there[axis] += step
                there = tuple(there)
                if 0 <= there[axis] < solid.shape[axis] and not solid[there] and dist[there] < 0:
                    dist[there] = dist[here] + 1
                    queue.append(there)
    grids = np.indices(solid.shape)
    manhattan = sum(np.abs(g - c) for g, c in zip(grids, first))
    out = np.where(dist >= 0, dist, manhattan).astype(np.float64)
    out[solid] = 0.0
    return out


def _blocked(cell, sides, solid):
    return not all(0 <= c < n for c, n in zip(cell, sides)) or (solid is not None and solid[tuple(cell)[::-1]])


def first_belief(like, cell, first_hit, solid=None):
    """The first belief: uniform over the free cells but ``cell``, times ``Pr(first_hit | .)``,
    normalized (``like(h, *cell)`` a grid of the belief's shape)."""
    grid = like(first_hit, *cell)
    free = np.ones(grid.shape, bool) if solid is None else ~solid
    p = np.where(free, 1.0 / (free.sum() - 1), 0.0)
    p[tuple(cell)[::-1]] = 0.0
    p = p * grid
    return p / p.sum()


def infotaxis_decide(p, cell, moves, like, solid=None, space_aware=False):
    """Infotaxis as specified, in 2-D or 3-D, among walls: a move off the grid or into a solid cell
    is not allowed (score inf); space-aware infotaxis measures ``D`` along free paths
    (``free_path_distances`` from the move's cell; the Manhattan distance without walls).
    ``like(h, *cell)``: ``Pr(h | source at each cell)``. Returns ``(action, scores)``."""
    sides = p.shape[::-1]
    scores = np.full(len(moves), np.inf)
    grids = np.indices(p.shape)
    for m, step in enumerate(moves):
        t = tuple(c + s for c, s in zip(cell, step))
        if _blocked(t, sides, solid):
            continue
        p_end = p[t[::-1]]
        if p_end > 1 - nv.EPS:
            scores[m] = -np.inf
            return m, scores
        q = p.copy()
        q[t[::-1]] = 0.0
        q /= q.sum()
        if solid is None:
            dist = sum(np.abs(g - c) for g, c in zip(grids, t[::-1]))
        else:
            dist = free_path_distances(solid, t)
        value = 0.0
        for h in range(like.n_hits):
            post = q * like(h, *t)
            P = post.sum()
            if P <= 0:
                continue
            r = post / P
            S = nv.entropy_bits(r)
            if space_aware:
                v = float((r * dist).sum()) + 2 ** (S - 1) - 0.5
                value += (1 - p_end) * P * (np.log2(v) if v > 0 else v)
            else:
                value += (1 - p_end) * P * S
        scores[m] = value
    allowed = scores < np.inf
    if not allowed.any():
        return -1, scores
    best = scores[allowed].min()
    return int(np.flatnonzero(allowed & (np.abs(scores - best) < nv.EPS))[0]), scores


def greedy_decide_among_walls(p, cell, moves, solid):
    """Greedy among walls: the target as ``greedy_target``; the allowed move (on the grid, not
    solid) whose cell is fewest free-path steps from the target, ties to the lowest squared
    Euclidean distance, then the lowest index. Scores: the free-path distances (inf when not
    allowed)."""
    target = greedy_target(p, cell)
    dist = free_path_distances(solid, target)
    sides = p.shape[::-1]
    scores = np.full(len(moves), np.inf)
    best, action = (np.inf, np.inf), -1
    for m, step in enumerate(moves):
        new = tuple(c + s for c, s in zip(cell, step))
        if _blocked(new, sides, solid):
            continue
        scores[m] = dist[new[::-1]]
        key = (scores[m], float(sum((a - b) ** 2 for a, b in zip(new, target))))
        if key < best:
            best, action = key, m
    return action, scores
