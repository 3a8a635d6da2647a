"""What the policies that read a ``sensors.Belief`` share.

* ``simulator_of(target)``: the ``Simulator`` behind a front-end (``parallel_env``,
  ``multi_agent_vector_env``, anything with a ``simulator`` attribute) or the simulator itself;
* ``shaped_for(target, actions)``: actions ``(B*N,)`` as that front-end's ``step`` takes them
  (a dict ``{agent: action}`` of its live agents for a PettingZoo env, else the array);
* ``belief_view(sim)``: the beliefs in a simulator's state and what deciding on them needs;
* ``decision_inputs(...)``: the checked arguments of a ``decide(beliefs, positions, ...)``;
* ``tables_of(plume)``, ``scratch_for(shape, walls)``: what the compiled decisions read and write.

Walls reach the decisions as a ``team_kernels.WallMasks``: the scenario's masks and the mask of
each belief's world (``belief_view`` reads them from the simulator; ``decide(..., walls=)`` takes
one mask or one per belief).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import is_int, shown
from ..errors import StateError, ValidationError
from ..models.plumes.poisson_hits import PoissonHitPlume
from ..models.plumes.poisson_hits.kernels import BeliefTables
from ..models.likelihoods import Likelihood
from ..models.plumes.poisson_hits.moving import predicted
from .team_kernels import Scratch, WallMasks

__all__ = ["simulator_of", "shaped_for", "BeliefView", "belief_view", "DecisionInputs", "decision_inputs",
           "checked_moves", "tables_of", "scratch_for", "walls_for", "scenario_with_belief"]

MAX_MOVES = 8  # the decision kernels keep one score per move on the stack of a group's loop
BELIEF_TOLERANCE = 1e-6  # a belief's sum may differ from 1 by the rounding of its updates, not more
# Rows of a decision's scratch: the padded belief, p log p and the runs; among walls, the paths'
# queue and one free-path distance array per move scored in one pass (six in 3-D, four in 2-D).
SCRATCH_ROWS = 3
SCRATCH_ROWS_WALLS = 3 + 1 + 6


def tables_of(plume) -> BeliefTables:
    """The plume's (or a likelihood's, ``models.likelihoods``) tables as the compiled decisions read
    them (contiguous, read-only)."""
    if isinstance(plume, Likelihood):
        return plume.tables
    return BeliefTables(np.ascontiguousarray(plume.centred_likelihood),
                        np.ascontiguousarray(plume.centred_likelihood_log),
                        np.ascontiguousarray(plume.centred_manhattan), np.ascontiguousarray(plume.first_hit_cdf))


def scratch_for(shape: tuple, walls: bool, copies: int | None = None) -> Scratch:
    """Per-thread scratch of the decisions for beliefs of ``shape``: ``work`` (a belief) and
    ``scratch`` (rows padded to ``2W - 1``; more of them among walls); one per thread, so that it
    stays in cache (``copies`` threads, default ``numba.config.NUMBA_NUM_THREADS``)."""
    import numba

    t = numba.config.NUMBA_NUM_THREADS if copies is None else copies
    padded = int(np.prod(shape[:-1])) * (2 * shape[-1] - 1)
    rows = SCRATCH_ROWS_WALLS if walls else SCRATCH_ROWS
    return Scratch(np.empty((t,) + tuple(shape)), np.empty((t, rows, padded)))


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
        plume: the model the beliefs follow: the Belief sensor's likelihood (``models.likelihoods``),
            or the scenario's Poisson-hit plume (``PoissonHits``, ``WindyPoissonHits``).
        moves: ``(K, dims)`` int32, the body's moves.
        positions: ``(B*N, dims)`` int32 cells.
        active: ``(B*N,)`` bool.
        walls: None, or the scenario's wall masks and the mask of each belief's world (a
            ``team_kernels.WallMasks``).
    """

    beliefs: np.ndarray
    groups: int | None
    plume: PoissonHitPlume
    moves: np.ndarray
    positions: np.ndarray
    active: np.ndarray
    walls: WallMasks | None = None


def belief_view(sim, who: str) -> BeliefView:
    """The ``BeliefView`` of ``sim``; ``ValidationError`` naming ``who`` when its scenario has no
    Poisson-hit plume, no ``sensors.Belief`` or a body without a table of moves."""
    from ..models.sensors.belief import Belief

    sc = sim.scenario
    ks = [k for k, s in enumerate(sc.sensors) if isinstance(s, Belief)]
    if not ks:
        raise ValidationError(f"{who}: the simulator's scenario (plume {sc.plume.name}, sensors "
                              f"{[s.name for s in sc.sensors]}) needs a sensors.Belief (e.g. scenarios.poisson_search(...), "
                              "or policy.scenario_for(scenario), which adds one with the plume's likelihood)")
    model = sc.sensors[ks[0]].likelihood or sc.plume  # the Belief sensor refused a plume without one
    if not hasattr(sc.action_model, "moves"):
        raise ValidationError(f"{who}: the body {sc.action_model.name} has no table of moves; expected a grid "
                              "body with one (cardinal, moore)")
    beliefs = sim.state.models[f"sensor{ks[0]}.belief"]
    shared = beliefs.shape[0] != sim.state.pos.shape[0]
    # a moving target: decide on where it will be when the move is made (the belief one step ahead)
    beliefs = predicted(sc.plume, beliefs)
    walls = None
    if sc.walls is not None:  # each belief's world's mask: a shared belief is its world's, else its agent's
        index = sim.wall_index if shared else np.repeat(sim.wall_index, sc.n_agents)
        walls = WallMasks(sc.walls.masks, np.ascontiguousarray(index, dtype=np.int64))
    return BeliefView(beliefs, sc.n_agents if shared else None, model, sc.moves(), sim.state.pos,
                      sim.state.active, walls)


@dataclass(frozen=True)
class DecisionInputs:
    """Checked, contiguous arguments of the decision kernels (see ``decision_inputs``)."""

    beliefs: np.ndarray  # (G, H, W) float64 ((G, D, H, W) in 3-D)
    starts: np.ndarray  # (G+1,) int64: agents starts[g]..starts[g+1]-1 share beliefs[g]
    positions: np.ndarray  # (M, dims) int32
    moves: np.ndarray  # (K, dims) int32
    group_active: np.ndarray  # (G,) bool
    dims: int  # 2 (1-D and 2-D searches: cells (x, y)) or 3
    walls: WallMasks | None = None  # the masks and each group's


def walls_for(who: str, plume, walls, n_beliefs: int) -> WallMasks | None:
    """``walls`` as the decisions read them: None, a ``WallMasks`` (kept), or masks as
    ``Scenario(walls=...)`` takes them (a ``Walls``, one bool mask of the plume's grid, or a
    sequence of them): one mask is every belief's, ``n_beliefs`` masks one per belief."""
    if walls is None or isinstance(walls, WallMasks):
        return walls
    from ..walls import Walls

    masks = Walls.of(walls, plume.natural_grid_size(), name=f"{who}: walls")
    k = masks.n_masks
    if k == 1:
        index = np.zeros(n_beliefs, dtype=np.int64)
    elif k == n_beliefs:
        index = np.arange(n_beliefs, dtype=np.int64)
    else:
        raise ValidationError(f"{who}: walls holds {k} masks for {n_beliefs} beliefs; expected one mask (every "
                              "belief's) or one per belief")
    return WallMasks(masks.masks, index)


def decision_inputs(who: str, plume, beliefs, positions, groups=None, moves=None, active=None,
                    walls=None) -> DecisionInputs:
    """Check the arguments of ``who`` (``"Infotaxis.decide"``, ...) and make them contiguous.

    Args:
        plume: the Poisson-hit plume the beliefs follow (``StateError`` when None).
        beliefs: ``(G, H, W)`` (``(G, D, H, W)`` in 3-D) real numbers, probabilities: finite, in
            ``[0, 1]``, each belief of a group with an active agent summing to 1 (within 1e-6)
            (``(H, W)`` = ``plume.shape``).
        positions: ``(M, 2)`` integer ``(x, y)`` cells inside the grid (``(M, 3)`` in 3-D).
        groups: ``None`` (``G == M``), a team size ``n`` (``M == G * n``) or ``(G+1,)``
            increasing offsets from 0.
        moves: ``(K, dims)`` integer steps, finite, ``1 <= K <= 8`` (default ``plume.moves``).
        active: ``(M,)`` bool or None (all active).
        walls: None, or the solid cells of each belief's world (``walls_for``): no agent may stand
            on one, no given belief may put mass on one (walls hold no source).
    """
    from .infotaxis_kernels import all_probabilities

    if not isinstance(plume, (PoissonHitPlume, Likelihood)):
        raise StateError(f"{who}: no plume model; pass plume=PoissonHits(...) (or a likelihood of "
                         "plume_multi.models.likelihoods) here or at construction")
    try:
        given = np.asarray(beliefs)
    except (TypeError, ValueError):
        given = None
    if given is None or given.dtype.kind not in "iuf":  # strings of numbers, bools, objects: not beliefs
        got = f"an array of dtype {given.dtype}" if given is not None else shown(beliefs, typed=True)
        raise ValidationError(f"{who}: beliefs: got {got}; expected a real (G, "
                              f"{', '.join(str(n) for n in plume.shape)}) array of probabilities")
    # C-contiguous and writable (one compiled type: a read-only one compiled every decision again)
    b = np.require(given, dtype=np.float64, requirements=["C", "W"])
    if b.shape[1:] != plume.shape:
        raise ValidationError(f"{who}: beliefs has shape {np.shape(beliefs)}; expected "
                              f"(G, {', '.join(str(n) for n in plume.shape)})")
    totals = np.empty(b.shape[0])
    if not all_probabilities(b, totals):  # one compiled pass: NaN, inf and negatives fail
        raise ValidationError(f"{who}: beliefs must hold probabilities, finite numbers in [0, 1]")
    dims = len(plume.shape)
    pos = np.asarray(positions)
    if pos.ndim != 2 or pos.shape[1] != dims or not np.issubdtype(pos.dtype, np.integer):
        raise ValidationError(f"{who}: positions has shape {pos.shape} and dtype {pos.dtype}; expected (M, {dims}) "
                              "integers")
    sides = plume.shape[::-1]
    if pos.size and ((pos < 0).any() or (pos >= np.array(sides)).any()):
        raise ValidationError(f"{who}: positions outside the {' x '.join(map(str, sides))} grid")
    g, m = b.shape[0], pos.shape[0]
    if groups is None:
        starts = np.arange(g + 1, dtype=np.int64)
    elif is_int(groups):
        if groups < 1:
            raise ValidationError(f"{who}: groups={groups!r}; expected a team size >= 1")
        starts = np.arange(g + 1, dtype=np.int64) * int(groups)
    else:
        try:
            offsets = np.asarray(groups)
        except (TypeError, ValueError):
            offsets = None
        if offsets is None or offsets.dtype.kind not in "iu" or offsets.shape != (g + 1,) or offsets[0] != 0 \
                or np.any(np.diff(offsets.astype(np.int64)) < 1):
            raise ValidationError(f"{who}: groups: got {shown(groups, typed=True)}; expected None, a team size "
                                  f"(an integer >= 1) or ({g + 1},) increasing integer offsets from 0")
        starts = offsets.astype(np.int64)
    if starts[-1] != m:
        raise ValidationError(f"{who}: {m} positions for groups covering {int(starts[-1])} agents")
    moves = plume.moves if moves is None else checked_moves(who, moves, plume.shape)
    if active is None:
        group_active = np.ones(g, dtype=np.bool_)
    else:
        act = np.asarray(active)
        if act.shape != (m,) or act.dtype != np.bool_:
            raise ValidationError(f"{who}: active has shape {act.shape} and dtype {act.dtype}; expected ({m},) bool")
        group_active = np.logical_or.reduceat(act, starts[:-1]) if m else np.zeros(g, dtype=np.bool_)
    pos = np.ascontiguousarray(pos, dtype=np.int32)
    wm = walls_for(who, plume, walls, g)
    if wm is not None and not isinstance(walls, WallMasks):  # the caller's masks: checked against its beliefs
        solid = wm.masks[wm.index]  # (G, *shape)
        if (b[solid] > 0.0).any():
            g0 = int(np.flatnonzero((b * solid).reshape(g, -1).max(axis=1) > 0.0)[0])
            raise ValidationError(f"{who}: beliefs[{g0}] puts mass on solid cells of its wall mask; expected "
                                  "beliefs with no mass inside walls (walls hold no source)")
        world = np.repeat(wm.index, np.diff(starts))
        inside = wm.masks[(world,) + tuple(pos[:, k] for k in range(dims - 1, -1, -1))] if m else np.zeros(0, bool)
        if inside.any():
            i = int(np.flatnonzero(inside)[0])
            raise ValidationError(f"{who}: agent {i} at {tuple(int(v) for v in pos[i])} stands on a solid cell of its "
                                  "wall mask; expected positions on free cells")
    # a belief that does not sum to 1 (all zeros: nothing left to believe) has no entropy to
    # reduce: the kernels would score every move alike and return action 0 without a word
    off = group_active & ~(np.abs(totals - 1.0) <= BELIEF_TOLERANCE)
    if off.any():
        k = int(np.flatnonzero(off)[0])
        raise ValidationError(f"{who}: beliefs[{k}] sums to {float(totals[k])!r} ({int(off.sum())} such beliefs of groups with "
                              f"an active agent); expected each belief to sum to 1 (within {BELIEF_TOLERANCE:g})")
    return DecisionInputs(b, starts, pos, moves, group_active, dims, wm)


def checked_moves(who: str, moves, shape) -> np.ndarray:
    """``moves`` as ``(K, dims)`` int32 steps: finite integers within the grid's size (a NaN cast to
    an integer became a huge move and the action -1), ``1 <= K <= MAX_MOVES``."""
    try:
        arr = np.asarray(moves)
    except (TypeError, ValueError):
        arr = None
    dims = len(shape)
    if arr is None or arr.ndim != 2 or arr.shape[1] != dims or not 1 <= arr.shape[0] <= MAX_MOVES:
        raise ValidationError(f"{who}: moves has shape {getattr(arr, 'shape', None)}; expected (K, {dims}) with K in "
                              f"1..{MAX_MOVES}")
    if arr.dtype.kind not in "iuf" or (arr.dtype.kind == "f" and not np.all(np.isfinite(arr))) \
            or not np.all(arr == np.round(arr)) or np.abs(arr).max() > max(shape):
        raise ValidationError(f"{who}: moves {arr.tolist()!r}; expected integer steps, finite, each within the "
                              f"grid's {max(shape)} cells")
    # read-only, as every plume's own ``moves``: mutability is part of a compiled signature, and
    # the decision kernels are large (a writable copy compiled each of them again, 10-20 s)
    out = np.array(arr, dtype=np.int32, order="C")
    out.flags.writeable = False
    return out


def scenario_with_belief(who: str, scenario, likelihood=None):
    """``scenario`` as a Bayesian searcher (``who``) acts in it: its sensors replaced by one
    ``sensors.Belief`` following ``likelihood`` (default: the Poisson-hit plume's closed form, or a
    likelihood calibrated from the plume, ``calibration.likelihood_for``, cached on disk), unless it
    already has a ``Belief`` and no likelihood is given. A body without a table of moves (a
    continuous one) is replaced by ``bodies.Cardinal()``, with a warning: the searcher scores grid
    moves. Everything else (plume, grid, walls, starts, team, reward) is kept."""
    import warnings

    from ..models import bodies
    from ..calibration import likelihood_for
    from ..models.sensors.belief import Belief
    from ..scenario import Scenario

    if not isinstance(scenario, Scenario):
        raise ValidationError(f"{who}.scenario_for: got {shown(scenario, typed=True)}; expected a Scenario")
    has = [s for s in scenario.sensors if isinstance(s, Belief)]
    changes = {}
    if not hasattr(scenario.action_model, "moves"):
        warnings.warn(f"{who}: the body {scenario.action_model.name} has no table of moves; the searcher moves on the "
                      "grid with bodies.Cardinal() instead", UserWarning, stacklevel=3)
        changes["action_model"] = bodies.Cardinal()
    if likelihood is not None or not has:
        if likelihood is None:
            likelihood = likelihood_for(scenario)
        elif not isinstance(likelihood, Likelihood):
            raise ValidationError(f"{who}.likelihood: got {shown(likelihood, typed=True)}; expected a likelihood of "
                                  "plume_multi.models.likelihoods (calibrate(scenario), PoissonLikelihood(plume)) or None")
        shared = has[0].shared if has else None
        if isinstance(likelihood, Likelihood) and isinstance(scenario.plume, PoissonHitPlume) \
                and getattr(likelihood, "plume", None) is scenario.plume and likelihood.thresholds is None:
            likelihood = None  # the plume's own closed form: the Belief as it always was
        changes["sensors"] = (Belief(shared=shared, likelihood=likelihood),)
    return scenario.replace(**changes) if changes else scenario
