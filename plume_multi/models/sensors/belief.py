"""``Belief()``: the agent's posterior over the source cell, centred on the agent: of a Poisson-hit
plume's hits (``plumes.PoissonHits``, ``plumes.WindyPoissonHits``), or of any plume's detections
through a likelihood (``models.likelihoods``)."""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numba.extending import overload

from numba import types

from ...checks import fail
from ...engine.api import is_on, sample_cell, static_flag
from ...engine.jit import njit
from ..base import Need, Sensor, SensorKernels, StateArray, check_bool
from ..plumes.poisson_hits import kernels as _kp
from ..plumes.poisson_hits.moving import predict
from ..plumes.poisson_hits.plume import SUM_TOL, PoissonHitPlume, first_hit, hit, likelihood

# moving: a compile-time flag (the plume's target moves: predict before each step's updates);
# table: None (the Poisson plume's own likelihood) or a likelihood's centred table (K, 2H-1, 2W-1)
# float64; thresholds: None (the plume's hits are the outcomes) or (K-1,) float32 detection thresholds
BeliefParams = namedtuple("BeliefParams", "shared moving table thresholds")


def _given(P, name: str) -> bool:
    """At compile time: whether the field ``name`` of the parameters' type ``P`` holds a value (not None)."""
    return not isinstance(P.types[P.fields.index(name)], types.NoneType)


def table_of(P, plume):
    """In compiled code: the centred likelihood the belief follows: ``P.table``, or the Poisson
    plume's own when it is None."""


@overload(table_of, inline="always")
def _table_of(P, plume):
    if not _given(P, "table"):
        return lambda P, plume: likelihood(plume.params)
    return lambda P, plume: P.table


def outcome_at(P, plume, b, t, n, seed, episode, cell):
    """In compiled code: the outcome of agent ``n`` of world ``b`` at ``cell`` at step ``t``: the
    Poisson plume's hit (``P.thresholds`` None), else the number of thresholds the concentration at
    ``cell`` is strictly above (``sensors.Concentration``'s reading, ``Binary``'s comparison)."""


@overload(outcome_at, inline="always")
def _outcome_at(P, plume, b, t, n, seed, episode, cell):
    if not _given(P, "thresholds"):
        return lambda P, plume, b, t, n, seed, episode, cell: hit(plume.params, plume.state, b, t, n, seed, episode, cell)

    def impl(P, plume, b, t, n, seed, episode, cell):
        c = sample_cell(plume, cell)
        k = 0
        for j in range(P.thresholds.shape[0]):
            k += c > P.thresholds[j]
        return k
    return impl


def _predict(P, plume, belief, scratch):
    """In compiled code: ``predict`` of a moving Poisson target (compiled away without one: other
    plumes' parameters have no motion to read)."""


@overload(_predict, inline="always")
def _predict_impl(P, plume, belief, scratch):
    if not _given(P, "moving"):
        return lambda P, plume, belief, scratch: None
    return lambda P, plume, belief, scratch: predict(plume.params, belief, scratch)


@njit(inline="always")
def observe_agent(P, S, obs, col, plume, agent, inner):
    # a moving target: the belief first follows its motion, once per step (before the world's
    # first update for a shared belief, before the agent's own otherwise)
    if is_on(P.moving) and not agent.first and (agent.n == 0 if P.shared else agent.active):
        g = agent.b if P.shared else agent.i
        _predict(P, plume, S[0][g], S[1][g])
    # each active agent's hit updates its belief (or its world's shared one)
    if not agent.first and agent.active:
        g = agent.b if P.shared else agent.i
        _kp.update_belief(S[0][g], table_of(P, plume), agent.cell,
                          outcome_at(P, plume, agent.b, agent.t, agent.n, agent.seed, agent.episode, agent.cell))


def solid_cells(plume):
    """In compiled code: the world's solid cells, ``(H, W)`` (``(D, H, W)``) bool, from a
    ``WalledPlumeView``; None without walls (the view's type says which)."""


@overload(solid_cells, inline="always")
def _solid_cells(plume):
    if "walls" in getattr(plume, "fields", ()):
        return lambda plume: plume.walls[plume.wall]  # at a reset only: a view costs nothing there
    return lambda plume: None


def first_outcome(P, plume, world):
    """In compiled code: the outcome a world's belief starts from: the Poisson plume's first hit
    (``P.thresholds`` None), else the outcome at the first agent's start cell; -1 when the world
    is not at a reset."""


@overload(first_outcome, inline="always")
def _first_outcome(P, plume, world):
    if not _given(P, "thresholds"):
        return lambda P, plume, world: first_hit(plume.params, plume.state, world.b) if world.first else -1

    def impl(P, plume, world):
        if not world.first:
            return -1
        p = P.table[0]
        return outcome_at(P, plume, world.b, 0, 0, world.seed, world.episode, _kp.cell_of(world.pos, world.base, p))
    return impl


@njit(inline="always")
def observe_world(P, S, obs, col, plume, world, inner):
    lik = table_of(P, plume)
    solid = solid_cells(plume)
    if is_on(P.thresholds) and world.first and not P.shared:
        # each agent's own belief starts from the outcome at its own start cell
        for i in range(world.base, world.base + world.n_agents):
            p = S[0][i]
            cell = _kp.cell_of(world.pos, i, p)
            _kp.init_belief(p, lik, cell, outcome_at(P, plume, world.b, 0, i - world.base, world.seed,
                                                     world.episode, cell), solid)
        _kp.write_beliefs(S[0], world, P.shared, obs, col)
        return
    _kp.observe_beliefs(S[0], lik, world, P.shared, first_outcome(P, plume, world), obs, col, solid)


_NO_SCRATCH = {2: np.zeros((1, 1, 1)), 3: np.zeros((1, 1, 1, 1))}


@dataclass(frozen=True)
class Belief(Sensor):
    """``(2H-1) * (2W-1)`` columns: the Bayesian posterior of the source cell given the hits
    received, as an image centred on the agent (row-major ``(2H-1, 2W-1)``, entry
    ``[dy + H-1, dx + W-1]`` for the cell at offset ``(dx, dy)``; 0 outside the grid): the input
    of the deep-RL policies of the 2023 olfactory-search benchmark.

    After a reset the belief is uniform over the cells but the first agent's, updated with the
    world's first hit; after each step, with every active agent's hit (``p(x_a) = 0``,
    ``p *= Pr(h | |x - x_a|)``, normalized). ``shared=True`` pools the hits of a world's agents
    into one belief; ``None`` (default) follows ``Scenario.team``. The beliefs are kept in the
    world state (``belief``: ``(B, H, W)`` shared, else ``(B*N, H, W)`` float64).

    In 3-D (``PoissonHits(dims=3)``): ``(2D-1) * (2H-1) * (2W-1)`` columns, the posterior volume
    centred on the agent (row-major ``(2D-1, 2H-1, 2W-1)``); the beliefs ``(B or B*N, D, H, W)``.

    Among walls (``Scenario(walls=...)``) the first belief is uniform over the free cells only
    (walls hold no source; hits keep their free-space law, ``docs/walls.md``), so no belief ever
    puts mass on a solid cell.

    A target that moves (``PoissonHits(source_motion=...)``): before each step's updates the belief
    follows the target's motion (the Bayes filter's prediction, ``MotionKernels.predict``), so
    that it is the posterior of where the target is now (``scratch`` is its work space).
    """

    shared: object = None
    likelihood: object = None

    kernels: ClassVar = SensorKernels(observe_agent=observe_agent, observe_world=observe_world)
    dimensions: ClassVar[tuple] = (2, 3)
    needs: ClassVar[tuple] = (Need("plume", PoissonHitPlume, "a Poisson-hit plume, plumes.PoissonHits or plumes.WindyPoissonHits",
                                   "the belief follows its hits", unless="likelihood"),)
    recomputable: ClassVar[bool] = False  # the belief is the history of hits

    def __post_init__(self):
        from ..likelihoods import Likelihood

        if self.shared is not None:
            self._set("shared", check_bool("Belief", "shared", self.shared))
        if self.likelihood is not None and not isinstance(self.likelihood, Likelihood):
            if isinstance(self.likelihood, dict):  # read back from a scenario's JSON
                from ..likelihoods import likelihood_from_metadata

                self._set("likelihood", likelihood_from_metadata(self.likelihood))
            else:
                fail("Belief", "likelihood", self.likelihood, "None (a Poisson-hit plume's own) or a likelihood of "
                     "plume_multi.models.likelihoods (calibrate(scenario), PoissonLikelihood(plume))")

    def metadata(self) -> dict:
        out = super().metadata()
        out["likelihood"] = None if self.likelihood is None else self.likelihood.metadata()
        return out

    def check(self, ctx) -> None:
        """Without a likelihood, the plume must be a Poisson-hit one; with one, the likelihood must be
        of the scenario's grid, with thresholds unless the plume has hits, and of one source that
        stays (the belief is of one fixed source)."""
        plume = ctx.plume
        poisson = isinstance(plume, PoissonHitPlume)
        if self.likelihood is None:
            if not poisson:
                fail("Belief", "likelihood", None, f"a likelihood of {plume.name} (Belief(likelihood=likelihoods."
                     "calibrate(scenario))): without one the belief follows a Poisson-hit plume's hits "
                     "(plumes.PoissonHits, WindyPoissonHits)")
            return
        self.likelihood.check_grid("Belief", ctx.grid_size)
        if self.likelihood.thresholds is None and not poisson:
            fail("Belief", "likelihood", self.likelihood, f"a likelihood with detection thresholds: {plume.name} has no "
                 "hits of its own")
        if self.likelihood.thresholds is None and self.likelihood.n_outcomes != plume.n_hits:
            fail("Belief", "likelihood", self.likelihood, f"{plume.n_hits} outcomes, the plume's hits 0..{plume.n_hits - 1}")
        if not poisson and (plume.sources_move() or plume.source_count() > 1):
            fail("Belief", "likelihood", self.likelihood, "a plume with one source that stays (the likelihood is of the "
                 f"offset to one fixed source; {plume.name} has {'moving' if plume.sources_move() else 'several'} sources)")

    def is_shared(self, ctx) -> bool:
        return bool(ctx.scenario.team) if self.shared is None else self.shared

    def columns(self, ctx) -> list:
        if len(ctx.grid_size) == 3:
            w, h, d = ctx.grid_size
            return [f"belief_{dz}_{dy}_{dx}" for dz in range(1 - d, d) for dy in range(1 - h, h) for dx in range(1 - w, w)]
        w, h = ctx.grid_size
        return [f"belief_{dy}_{dx}" for dy in range(1 - h, h) for dx in range(1 - w, w)]

    def params(self, ctx) -> tuple:
        table = thresholds = None
        if self.likelihood is not None:
            table = np.ascontiguousarray(self.likelihood.centred_likelihood)
            if self.likelihood.thresholds is not None:
                thresholds = np.array(self.likelihood.thresholds, dtype=np.float32)
        return BeliefParams(self.is_shared(ctx), static_flag(self._moving(ctx)), table, thresholds)

    @staticmethod
    def _moving(ctx) -> bool:
        if not isinstance(ctx.plume, PoissonHitPlume):  # only a Poisson target's motion is predicted
            return False
        motion = getattr(ctx.plume, "source_motion", None)
        return motion is not None and motion.moves

    def state_spec(self, ctx) -> dict:
        per = "world" if self.is_shared(ctx) else "agent"
        spec = {"belief": StateArray(np.float64, per, tuple(ctx.grid_size[::-1]), 0.0, 1.0)}
        if self._moving(ctx):  # the prediction's scratch, one per belief (worlds never share one)
            spec["scratch"] = StateArray(np.float64, per, tuple(ctx.grid_size[::-1]), 0.0, 1.0)
        return spec

    def state_tuple(self, arrays: dict) -> tuple:
        # a placeholder of the scratch's type without a moving target: one compiled type for both
        belief = arrays["belief"]
        return (belief, arrays.get("scratch", _NO_SCRATCH[belief.ndim - 1]))

    def check_state(self, ctx, arrays: dict, world=None) -> list:
        """Once reset, a belief is the posterior of the hits received: a probability distribution
        (sums to 1 within ``1e-9``), 0 on the cells its searching agents stand on (each update
        removes the agent's cell; at a reset, the first agent's cell of a shared belief, each
        agent's own otherwise), positive on the world's source while someone searches for it
        (every hit was drawn from the source's likelihood) and, among walls, 0 on solid cells."""
        if world is None:
            return []
        beliefs, state, sources = arrays["belief"], world.state, world.sources
        shared = self.is_shared(ctx)
        n = state.n_agents
        problems = []
        totals = beliefs.reshape(beliefs.shape[0], -1).sum(axis=1)
        bad = np.flatnonzero(np.abs(totals - 1.0) > SUM_TOL)
        if bad.size:
            problems.append(("belief", f"{bad.size} beliefs that do not sum to 1 (first: row {bad[0]}, sum "
                                       f"{totals[bad[0]]!r}); expected probability distributions"))
        rows = np.arange(state.pos.shape[0])
        world_of = rows // n
        first_row = rows % n == 0
        t = state.world_t[world_of]
        searching = state.active & ((t > 0) | first_row | (not shared))
        g = world_of if shared else rows
        cells = tuple(state.pos[:, k] for k in range(state.pos.shape[1] - 1, -1, -1))  # [z,] y, x
        held = searching & (beliefs[(g,) + cells] != 0.0)
        if held.any():
            i = int(np.flatnonzero(held)[0])
            problems.append(("belief", f"{int(held.sum())} searching agents whose cell has a non-zero belief (first: "
                                       f"row {i}); a searching agent's cell is ruled out by its last update"))
        src = tuple(sources[:, k].astype(np.int64) for k in range(sources.shape[1] - 1, -1, -1))  # [z,] y, x
        if shared:
            live = np.flatnonzero(state.active.reshape(-1, n).any(axis=1))
            lost = live[beliefs[(live,) + tuple(c[live] for c in src)] <= 0.0]
        else:
            act = np.flatnonzero(state.active)
            w_of = act // n
            lost = np.unique(w_of[beliefs[(act,) + tuple(c[w_of] for c in src)] <= 0.0])
        if lost.size:
            problems.append(("belief", f"{lost.size} worlds whose belief rules out their source (first: world "
                                       f"{lost[0]}); expected a posterior of hits drawn from that source"))
        walls = ctx.scenario.walls
        index = state.models.get("walls.index")  # the Simulator's WALL_INDEX: each world's mask
        if walls is not None and index is not None and ((index >= 0) & (index < walls.n_masks)).all():
            solid = walls.masks[index if shared else np.repeat(index, n)]
            inside = np.flatnonzero((beliefs * solid).reshape(beliefs.shape[0], -1).max(axis=1) > 0.0)
            if inside.size:
                problems.append(("belief", f"{inside.size} beliefs with mass on solid cells of their world's wall mask "
                                           f"(first: row {inside[0]}); walls hold no source"))
        return problems
