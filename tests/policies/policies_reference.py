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


def mixed_team_decide(p, positions, kinds, moves, like, given=None, rule="believer"):
    """Actions of agents sharing belief ``p`` (``(H, W)`` with ``nv.Likelihood``, or ``(D, H, W)``
    with ``r3.Likelihood3``), in order, each with its own kind ("infotaxis", "space_aware",
    "greedy" or "given": ``given[i]``); under "believer" each decides on the belief updated with
    every earlier agent's move (clamped into the grid) and most likely hit."""
    sides = p.shape[::-1]
    q = p.copy()
    out = []
    for i, (cell, kind) in enumerate(zip(positions, kinds)):
        cell = tuple(int(c) for c in cell)
        if kind == "greedy":
            a, _ = greedy_decide(q, cell, moves)
        elif kind == "given":
            a = int(given[i])
        elif p.ndim == 2:
            a, _ = nv.decide(q, *cell, moves, like, space_aware=kind == "space_aware")
        else:
            a, _ = r3.decide(q, cell, moves, like, space_aware=kind == "space_aware")
        out.append(a)
        if rule == "believer" and i + 1 < len(positions):
            t = tuple(min(max(c + s, 0), side - 1) for c, s, side in zip(cell, moves[a], sides))
            hit = most_likely_hit(q, like, t)
            q = (nv.update if p.ndim == 2 else r3.update)(q, like(hit, *t), *t)
    return out
