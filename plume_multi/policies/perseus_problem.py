"""What the Perseus policy, its solver and its files share: the problem a scenario poses (``fit_problem``:
why alpha vectors over offsets cannot hold for it), the default discount, the value floor, and the
batched valuation of beliefs against a set of vectors (``best_values``)."""

from __future__ import annotations

import math

import numpy as np

from ..checks import shown
from ..engine.threads import PARALLEL_LOCK
from . import perseus_kernels as pk

__all__ = ["DEFAULT_DISCOUNT", "fit_problem", "belief_model", "same_model", "three_axes", "best_values", "floor_value"]

DEFAULT_DISCOUNT = 0.98  # otto-benchmark's Perseus and Sarsop policies (converter-pbvi-to-otto)

def belief_model(scenario):
    """The model ``scenario``'s belief follows: its ``sensors.Belief``'s likelihood
    (``models.likelihoods``), else a Poisson-hit plume's own closed form (the plume), else None."""
    from ..models.plumes.poisson_hits import PoissonHitPlume
    from ..models.sensors.belief import Belief

    for sensor in scenario.sensors:
        if isinstance(sensor, Belief) and sensor.likelihood is not None:
            return sensor.likelihood
    return scenario.plume if isinstance(scenario.plume, PoissonHitPlume) else None


def fit_problem(scenario, *, model: bool = True) -> str | None:
    """Why alpha vectors over offsets cannot hold for ``scenario`` (a sentence), or None.

    ``model=False`` asks only what no likelihood changes (one source that stays, on a cell, no
    walls, the source's cell as the goal): what ``Perseus.solve`` refuses before it calibrates one;
    ``model=True`` asks too for a grid body and a belief model (``belief_model``)."""
    from ..scenario import Scenario

    if not isinstance(scenario, Scenario):
        return f"got {shown(scenario, typed=True)}; expected a plume_multi.Scenario"
    plume = scenario.plume
    if plume.sources_move() or getattr(getattr(plume, "motion", None), "moves", False):
        motion = getattr(plume, "motion", None) or getattr(plume, "source_motion", None)
        return (f"the scenario's target moves ({motion!r}); expected sources.Static() (the offset "
                "formulation holds for a source that stays)")
    if plume.source_count() > 1:
        return (f"the scenario's plume {plume.name} has {plume.source_count()} sources; expected one (the belief is "
                "over one source's cell)")
    if scenario.walls is not None:
        return ("the scenario has walls; expected none (walls break the translation invariance that lets one "
                "alpha vector serve every cell)")
    if not plume.on_cells():
        return (f"the scenario's source {plume.fixed_source()} lies between cells; expected a source on a cell (the "
                "POMDP's state is the source's cell)")
    if scenario.goal_d2() != 0:
        return (f"the scenario's goal_radius is {scenario.goal_radius}; expected the default (only the source's cell "
                "ends the search, as in the POMDP)")
    if not model:
        return None
    if not hasattr(scenario.action_model, "moves"):
        return f"the body {scenario.action_model.name} has no table of moves; expected a grid body (cardinal, moore)"
    if belief_model(scenario) is None:
        return (f"the scenario's plume is {plume.name} and its sensors {[s.name for s in scenario.sensors]} hold no "
                "sensors.Belief(likelihood=...); expected a belief that follows a likelihood (Perseus.solve(scenario) "
                "calibrates one, Perseus.scenario_for(scenario) adds the one solved for), or a Poisson-hit plume "
                "(PoissonHits, WindyPoissonHits), whose likelihood is known in closed form")
    return None


def same_model(a, b) -> bool:
    """Whether two belief models (``belief_model``) give the same tables: the same outcomes
    (thresholds), grid and centred likelihood, compared by value (not identity)."""
    if a is b:
        return True
    if getattr(a, "thresholds", None) != getattr(b, "thresholds", None) or tuple(a.shape) != tuple(b.shape):
        return False
    return np.array_equal(np.asarray(a.centred_likelihood), np.asarray(b.centred_likelihood))


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
