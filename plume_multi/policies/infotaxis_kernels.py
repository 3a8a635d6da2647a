"""Infotaxis decisions, compiled (the policy; the plume's draws and belief updates are in
``plume_multi.models.plumes.poisson_hits.kernels``, whose tables these read).

One function per role for 2-D beliefs ``(H, W)`` and 3-D ones ``(D, H, W)``, cells ``(x, y)`` or
``(x, y, z)`` tuples: ``decide`` marks the moves it may make, takes a move onto a cell that holds
the source almost surely at once, and scores the others with ``infotaxis_scores.score_moves``
(the window sums, whose loop is specialized by dimension: the figures are there). Infotaxis
(Vergassola et al. 2007) without logarithms in the inner loops; the space-aware value of Loisy &
Eloy (2022), whose distances run along free paths among walls.

A move is allowed when its cell lies on the grid and is not solid (``solid``: None without walls):
a body's move into a wall is refused by the step (the agent stays), so a decision never makes one.
"""

from __future__ import annotations

import numpy as np

from ..engine.jit import njit
from ..models.plumes.poisson_hits.kernels import hit_mass, inside, moved, solid_at, update_belief
from .infotaxis_scores import INV_LN2, NEGLIGIBLE_P, ROWS_FROM, score_moves  # noqa: F401 (re-exported)

__all__ = ["RULE_INDEPENDENT", "RULE_BELIEVER", "TIE_TOL", "FOUND_TOL", "all_probabilities", "decide", "believe",
           "blocked"]

TIE_TOL = 1e-10  # scores within this of the best are ties; the lowest action index wins
FOUND_TOL = 1e-10  # a move whose cell holds the source with probability > 1 - this is taken at once

# How agents that share one belief choose their moves.
RULE_INDEPENDENT = 0  # each agent runs infotaxis on the shared belief, ignoring the others' moves
RULE_BELIEVER = 1  # in agent order, each agent assumes the earlier ones receive their most likely hit


@njit(cache=True, inline="always")
def blocked(p, cell, solid):
    """Whether a move to ``cell`` is refused: off the grid of ``p``, or into a solid cell."""
    return not inside(p, cell) or solid_at(solid, cell)


# pasted where it is called (a call per agent with these arrays as its arguments cost up to 0.1 us
# per decision on 19 x 19: their reference counts)
@njit(cache=True, error_model="numpy")
def decide(p, scratch, tables, moves, cell, space_aware, scores, solid):
    """Infotaxis action of an agent at ``cell`` with belief ``p`` (``(H, W)`` or ``(D, H, W)``,
    C-contiguous).

    ``tables``: a ``BeliefTables`` (``likelihood_log`` must hold ``n_hits + 1`` planes);
    ``moves`` ``(K, dims)`` int32; ``scratch`` ``(R, (cells / W) * (2W-1))`` float64, overwritten
    (``score_moves``); ``solid`` None or the world's solid cells (the belief's shape, bool);
    ``scores`` ``(K,)`` float64 out: the expected entropy in bits (or the space-aware value) of each
    move, ``inf`` for moves off the grid or into a wall, ``-inf`` for a move onto a cell holding the
    source with probability ``> 1 - 1e-10`` (then taken at once, the other moves unscored).
    Returns the allowed action with the lowest score, ties within ``1e-10`` to the lowest index (-1
    if no move is allowed).
    """
    if tables.likelihood_log.shape[0] != tables.likelihood.shape[0] + 1:
        raise ValueError("infotaxis decide: llogl must hold n_hits + 1 planes (centred_likelihood_log)")
    k_moves = moves.shape[0]
    forced = -1
    n_allowed = 0
    for m in range(k_moves):
        target = moved(cell, moves, m)
        if blocked(p, target, solid):
            scores[m] = np.inf
        elif p[target[::-1]] > 1.0 - FOUND_TOL:
            scores[m] = -np.inf
            if forced < 0:
                forced = m
        else:
            scores[m] = 0.0  # allowed: scored below
            n_allowed += 1
    if forced >= 0:
        return forced
    if n_allowed == 0:
        return -1
    score_moves(p, scratch, tables, moves, cell, space_aware, scores, solid)
    best = np.inf
    for m in range(k_moves):
        if scores[m] < best:
            best = scores[m]
    if best == np.inf:
        return -1
    for m in range(k_moves):
        if scores[m] < best + TIE_TOL:
            return m
    return -1


# reassociation only (the sums vectorize); no 'nnan': the range test must see NaN
@njit(cache=True, fastmath={"reassoc"})
def all_probabilities(values, totals):
    """Whether every value of the contiguous float64 array ``values`` ``(G, ...)`` lies in
    ``[0, 1]`` (NaN does not), and each belief's sum written into ``totals`` ``(G,)``: one pass, no
    temporary (``Infotaxis.decide`` checks its beliefs with it; a separate NumPy sum cost 0.9 us
    more per 81 x 41 belief, 12 % of a decision)."""
    g = values.shape[0]
    flat = values.reshape(values.size)
    n = flat.shape[0] // g if g else 0
    ok = True
    for j in range(g):
        row = flat[j * n:(j + 1) * n]  # a slice per belief: the loop below vectorizes (0.89 us, not 1.22)
        s = 0.0
        for i in range(n):
            v = row[i]
            ok &= (v >= 0.0) & (v <= 1.0)
            s += v
        totals[j] = s
    return ok


@njit(cache=True)
def believe(p, lik, cell):
    """Update ``p`` with the most likely hit at ``cell`` (ties to the lowest hit): the believer
    rule's guess of what an earlier agent of a team receives there."""
    best_hit = 0
    best = -1.0
    for hit in range(lik.shape[0]):
        a = hit_mass(p, lik, hit, cell)
        if a > best:
            best = a
            best_hit = hit
    if best > 0.0:
        update_belief(p, lik, cell, best_hit)
