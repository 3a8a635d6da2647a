"""What the policies that read a ``sensors.Belief`` share.

* ``simulator_of(target)``: the ``Simulator`` behind a front-end (``parallel_env``,
  ``multi_agent_vector_env``, anything with a ``simulator`` attribute) or the simulator itself;
* ``shaped_for(target, actions)``: actions ``(B*N,)`` as that front-end's ``step`` takes them
  (a dict ``{agent: action}`` of its live agents for a PettingZoo env, else the array);
* ``belief_view(sim)``: the beliefs in a simulator's state and what deciding on them needs;
* ``decision_inputs(...)``: the checked arguments of a ``decide(beliefs, positions, ...)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import is_int
from ..errors import StateError, ValidationError
from ..models.plumes.poisson_hits import PoissonHits
from ..models.plumes.poisson_hits.moving import predicted

__all__ = ["simulator_of", "shaped_for", "BeliefView", "belief_view", "DecisionInputs", "decision_inputs"]

MAX_MOVES = 8  # the decision kernels keep one score per move on the stack of a group's loop


def simulator_of(target, who: str):
    """The ``Simulator`` of ``target`` (a simulator, or a front-end exposing ``.simulator``)."""
    from ..simulator import Simulator

    if isinstance(target, Simulator):
        return target
    sim = getattr(target, "simulator", None)
    if isinstance(sim, Simulator):
        return sim
    raise ValidationError(f"{who}: got a {type(target).__name__}; expected a plume_multi Simulator or a front-end "
                          "with a .simulator (parallel_env(), multi_agent_vector_env())")


def shaped_for(target, actions: np.ndarray):
    """``actions`` ``(B*N,)`` for ``target``'s ``step``: a PettingZoo env (it has
    ``agent_name_mapping``) takes ``{agent: action}`` for its live ``agents``; the others the array."""
    mapping = getattr(target, "agent_name_mapping", None)
    if isinstance(mapping, dict) and hasattr(target, "agents"):
        return {agent: actions[mapping[agent]] for agent in target.agents}
    return actions


@dataclass(frozen=True)
class BeliefView:
    """The beliefs of a simulator's state (views, valid until its next step; for a moving target
    the beliefs one step ahead, a new array) and their layout.

    Attributes:
        beliefs: ``(G, H, W)`` float64: one per world (shared, ``G = B``) or per agent (``G = B*N``).
        groups: ``N`` when a world's agents share one belief, else ``None``.
        plume: the scenario's ``PoissonHits``.
        moves: ``(K, 2)`` int32, the body's moves.
        positions: ``(B*N, 2)`` int32 cells.
        active: ``(B*N,)`` bool.
    """

    beliefs: np.ndarray
    groups: int | None
    plume: PoissonHits
    moves: np.ndarray
    positions: np.ndarray
    active: np.ndarray


def belief_view(sim, who: str) -> BeliefView:
    """The ``BeliefView`` of ``sim``; ``ValidationError`` naming ``who`` when its scenario has no
    ``PoissonHits`` plume, no ``sensors.Belief`` or a body without a table of moves."""
    from ..models.sensors.belief import Belief

    sc = sim.scenario
    ks = [k for k, s in enumerate(sc.sensors) if isinstance(s, Belief)]
    if not isinstance(sc.plume, PoissonHits) or not ks:
        raise ValidationError(f"{who}: the simulator's scenario (plume {sc.plume.name}, sensors "
                              f"{[s.name for s in sc.sensors]}) needs a PoissonHits plume and a sensors.Belief "
                              "(e.g. presets.poisson_search(...))")
    if not hasattr(sc.action_model, "moves"):
        raise ValidationError(f"{who}: the body {sc.action_model.name} has no table of moves; expected a grid "
                              "body with one (cardinal, moore)")
    beliefs = sim.state.models[f"sensor{ks[0]}.belief"]
    shared = beliefs.shape[0] != sim.state.pos.shape[0]
    # a moving target: decide on where it will be when the move is made (the belief one step ahead)
    beliefs = predicted(sc.plume, beliefs)
    return BeliefView(beliefs, sc.n_agents if shared else None, sc.plume, sc.moves(), sim.state.pos,
                      sim.state.active)


@dataclass(frozen=True)
class DecisionInputs:
    """Checked, contiguous arguments of the decision kernels (see ``decision_inputs``)."""

    beliefs: np.ndarray  # (G, H, W) float64
    starts: np.ndarray  # (G+1,) int64: agents starts[g]..starts[g+1]-1 share beliefs[g]
    positions: np.ndarray  # (M, 2) int32
    moves: np.ndarray  # (K, 2) int32
    group_active: np.ndarray  # (G,) bool


def decision_inputs(who: str, plume, beliefs, positions, groups=None, moves=None, active=None) -> DecisionInputs:
    """Check the arguments of ``who`` (``"Infotaxis.decide"``, ...) and make them contiguous.

    Args:
        plume: the ``PoissonHits`` model the beliefs follow (``StateError`` when None).
        beliefs: ``(G, H, W)``, finite and non-negative (``(H, W)`` = ``plume.shape``).
        positions: ``(M, 2)`` integer ``(x, y)`` cells inside the grid.
        groups: ``None`` (``G == M``), a team size ``n`` (``M == G * n``) or ``(G+1,)``
            increasing offsets from 0.
        moves: ``(K, 2)`` integers, ``1 <= K <= 8`` (default ``plume.moves``).
        active: ``(M,)`` bool or None (all active).
    """
    if not isinstance(plume, PoissonHits):
        raise StateError(f"{who}: no plume model; pass plume=PoissonHits(...) here or at construction")
    b = np.ascontiguousarray(beliefs, dtype=np.float64)
    if b.ndim != 3 or b.shape[1:] != plume.shape:
        raise ValidationError(f"{who}: beliefs has shape {np.shape(beliefs)}; expected (G, {plume.shape[0]}, {plume.shape[1]})")
    if not np.all(np.isfinite(b)) or np.any(b < 0):
        raise ValidationError(f"{who}: beliefs must be finite and non-negative")
    pos = np.asarray(positions)
    if pos.ndim != 2 or pos.shape[1] != 2 or not np.issubdtype(pos.dtype, np.integer):
        raise ValidationError(f"{who}: positions has shape {pos.shape} and dtype {pos.dtype}; expected (M, 2) integers")
    h, w = plume.shape
    if pos.size and (pos[:, 0].min() < 0 or pos[:, 0].max() >= w or pos[:, 1].min() < 0 or pos[:, 1].max() >= h):
        raise ValidationError(f"{who}: positions outside the {w} x {h} grid")
    g, m = b.shape[0], pos.shape[0]
    if groups is None:
        starts = np.arange(g + 1, dtype=np.int64)
    elif is_int(groups):
        if groups < 1:
            raise ValidationError(f"{who}: groups={groups!r}; expected a team size >= 1")
        starts = np.arange(g + 1, dtype=np.int64) * int(groups)
    else:
        starts = np.asarray(groups, dtype=np.int64)
        if starts.shape != (g + 1,) or starts[0] != 0 or np.any(np.diff(starts) < 1):
            raise ValidationError(f"{who}: groups must be (G+1,) = ({g + 1},) increasing offsets from 0")
    if starts[-1] != m:
        raise ValidationError(f"{who}: {m} positions for groups covering {int(starts[-1])} agents")
    moves = np.ascontiguousarray(plume.moves if moves is None else moves, dtype=np.int32)
    if moves.ndim != 2 or moves.shape[1] != 2 or not 1 <= moves.shape[0] <= MAX_MOVES:
        raise ValidationError(f"{who}: moves has shape {moves.shape}; expected (K, 2) with K in 1..{MAX_MOVES}")
    if active is None:
        group_active = np.ones(g, dtype=np.bool_)
    else:
        act = np.asarray(active)
        if act.shape != (m,) or act.dtype != np.bool_:
            raise ValidationError(f"{who}: active has shape {act.shape} and dtype {act.dtype}; expected ({m},) bool")
        group_active = np.logical_or.reduceat(act, starts[:-1]) if m else np.zeros(g, dtype=np.bool_)
    return DecisionInputs(b, starts, np.ascontiguousarray(pos, dtype=np.int32), moves, group_active)
