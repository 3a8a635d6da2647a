"""What the Perseus policy, its solver and its files share: the problem a scenario poses (``fit_problem``:
why alpha vectors over offsets cannot hold for it), the default discount, the value floor, and the
batched valuation of beliefs against a set of vectors (``best_values``)."""

from __future__ import annotations

import math

import numpy as np

from ..checks import shown
from ..engine.threads import PARALLEL_LOCK
from . import perseus_kernels as pk

__all__ = ["DEFAULT_DISCOUNT", "fit_problem", "three_axes", "best_values", "floor_value"]

DEFAULT_DISCOUNT = 0.98  # otto-benchmark's Perseus and Sarsop policies (converter-pbvi-to-otto)

def fit_problem(scenario) -> str | None:
    """Why alpha vectors over offsets cannot hold for ``scenario`` (a sentence), or None."""
    from ..models.plumes.poisson_hits import PoissonHitPlume
    from ..scenario import Scenario

    if not isinstance(scenario, Scenario):
        return f"got {shown(scenario, typed=True)}; expected a plume_multi.Scenario"
    plume = scenario.plume
    if not isinstance(plume, PoissonHitPlume):
        return (f"the scenario's plume is {plume.name}; expected a Poisson-hit plume (PoissonHits, WindyPoissonHits), "
                "whose likelihood is known in closed form")
    if plume.motion.moves:
        return (f"the scenario's target moves ({plume.motion!r}); expected sources.Static() (the offset "
                "formulation holds for a source that stays)")
    if scenario.walls is not None:
        return ("the scenario has walls; expected none (walls break the translation invariance that lets one "
                "alpha vector serve every cell)")
    if not hasattr(scenario.action_model, "moves"):
        return f"the body {scenario.action_model.name} has no table of moves; expected a grid body (cardinal, moore)"
    if scenario.goal_d2() != 0:
        return (f"the scenario's goal_radius is {scenario.goal_radius}; expected the default (only the source's cell "
                "ends the search, as in the POMDP)")
    return None


def three_axes(shape: tuple) -> tuple:
    """``shape`` with leading 1s up to three axes (a 2-D ``(H, W)`` is ``(1, H, W)``)."""
    return (1,) * (3 - len(shape)) + tuple(shape)


AGENTS_PER_CALL = 256  # agents valued per kernel call: their values (agents x vectors) stay a few MB


def best_values(beliefs, owner, cells, active, alphas, count, moves3, scores, best):
    """``perseus_kernels.values`` then ``best_of`` for the active agents reading ``beliefs``
    ``(G, D, H, W)`` (agent ``m`` the belief ``owner[m]`` at ``cells[m]`` ``(M, 3)``),
    ``AGENTS_PER_CALL`` at a time: fills ``scores`` ``(M, K)`` and ``best`` ``(M,)`` (``-inf`` and
    -1 for an inactive agent)."""
    scores[:] = -np.inf
    best[:] = -1
    rows = np.flatnonzero(active)
    if rows.size == 0:
        return
    if rows.size < len(active):  # only the agents still searching are valued
        sub_scores = np.empty((rows.size, scores.shape[1]))
        sub_best = np.empty(rows.size, dtype=np.int64)
        best_values(beliefs, owner[rows], cells[rows], np.ones(rows.size, dtype=np.bool_), alphas, count, moves3,
                    sub_scores, sub_best)
        scores[rows] = sub_scores
        best[rows] = sub_best
        return
    m = len(cells)
    vals = np.empty((min(m, AGENTS_PER_CALL), count))
    shape3 = np.array(beliefs.shape[1:], dtype=np.int64)
    block = pk.block_for(int(np.prod(shape3)))
    with PARALLEL_LOCK:  # parallel kernels: one launch at a time (engine/threads.py)
        for m0 in range(0, m, AGENTS_PER_CALL):
            m1 = min(m, m0 + AGENTS_PER_CALL)
            pk.values(beliefs, owner[m0:m1], cells[m0:m1], alphas, count, block, vals[:m1 - m0])
            pk.best_of(vals[:m1 - m0], cells[m0:m1], alphas.actions, count, moves3, shape3, active[m0:m1],
                       scores[m0:m1], best[m0:m1])


def floor_value(discount: float) -> float:
    """``-1 / (1 - discount)``: the value of never finding the source, the lowest there is."""
    return -1.0 / (1.0 - discount) if discount < 1.0 else -math.inf
