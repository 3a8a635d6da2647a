"""Plain NumPy references of the belief searchers' decisions: greedy, and teams whose agents run
different policies on one shared belief. Infotaxis and the believer's hit come from the Poisson
reference of the model tests (tests/models/plumes/poisson_reference.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models" / "plumes"))
import poisson_reference as nv  # noqa: E402

TIE_RTOL = 1e-9  # as documented by policies.Greedy


def greedy_target(p, x, y):
    """The most likely cell ``(tx, ty)``: cells within a relative 1e-9 of the maximum are tied;
    the nearest to ``(x, y)`` wins, then the first in row-major order."""
    floor = p.max() * (1.0 - TIE_RTOL)
    ys, xs = np.nonzero(p >= floor)  # row-major order
    d = (xs - x) ** 2 + (ys - y) ** 2
    j = int(np.argmin(d))  # the first of the nearest
    return int(xs[j]), int(ys[j])


def greedy_decide(p, x, y, moves):
    """(action, scores): the move whose cell is nearest to the target, off-grid moves excluded,
    ties to the lowest index; scores = squared distances (inf off the grid)."""
    h, w = p.shape
    tx, ty = greedy_target(p, x, y)
    scores = np.full(len(moves), np.inf)
    for m, (dx, dy) in enumerate(moves):
        nx, ny = x + dx, y + dy
        if 0 <= nx < w and 0 <= ny < h:
            scores[m] = float((nx - tx) ** 2 + (ny - ty) ** 2)
    return (int(np.argmin(scores)) if np.isfinite(scores).any() else -1), scores


def mixed_team_decide(p, positions, kinds, moves, like, given=None, rule="believer"):
    """Actions of agents sharing belief ``p``, in order, each with its own kind ("infotaxis",
    "space_aware", "greedy" or "given": ``given[i]``); under "believer" each decides on the belief
    updated with every earlier agent's move (clamped into the grid) and most likely hit."""
    h, w = p.shape
    q = p.copy()
    out = []
    for i, ((x, y), kind) in enumerate(zip(positions, kinds)):
        if kind == "greedy":
            a, _ = greedy_decide(q, x, y, moves)
        elif kind == "given":
            a = int(given[i])
        else:
            a, _ = nv.decide(q, x, y, moves, like, space_aware=kind == "space_aware")
        out.append(a)
        if rule == "believer" and i + 1 < len(positions):
            tx = min(max(x + moves[a][0], 0), w - 1)
            ty = min(max(y + moves[a][1], 0), h - 1)
            hit = nv.most_likely_hit(q, like, tx, ty)
            q = nv.update(q, like(hit, tx, ty), tx, ty)
    return out
