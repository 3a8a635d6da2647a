"""``Belief()``: the agent's posterior over the source cell, centred on the agent (a Poisson-hit plume:
``plumes.PoissonHits``, ``plumes.WindyPoissonHits``)."""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numba.extending import overload

from ...engine.api import is_on, static_flag
from ...engine.jit import njit
from ..base import Need, Sensor, SensorKernels, StateArray, check_bool
from ..plumes.poisson_hits import kernels as _kp
from ..plumes.poisson_hits.moving import predict
from ..plumes.poisson_hits.plume import SUM_TOL, PoissonHitPlume, first_hit, hit, likelihood

# moving: a compile-time flag (the plume's target moves: predict before each step's updates)
BeliefParams = namedtuple("BeliefParams", "shared moving")


@njit(inline="always")
def observe_agent(P, S, obs, col, plume, agent, inner):
    # a moving target: the belief first follows its motion, once per step (before the world's
    # first update for a shared belief, before the agent's own otherwise)
    if is_on(P.moving) and not agent.first and (agent.n == 0 if P.shared else agent.active):
        g = agent.b if P.shared else agent.i
        predict(plume.params, S[0][g], S[1][g])
    # each active agent's hit updates its belief (or its world's shared one)
    if not agent.first and agent.active:
        g = agent.b if P.shared else agent.i
        _kp.update_belief(S[0][g], likelihood(plume.params), agent.cell,
                          hit(plume.params, plume.state, agent.b, agent.t, agent.n, agent.seed, agent.episode, agent.cell))


def solid_cells(plume):
    """In compiled code: the world's solid cells, ``(H, W)`` (``(D, H, W)``) bool, from a
    ``WalledPlumeView``; None without walls (the view's type says which)."""


@overload(solid_cells, inline="always")
def _solid_cells(plume):
    if "walls" in getattr(plume, "fields", ()):
        return lambda plume: plume.walls[plume.wall]  # at a reset only: a view costs nothing there
    return lambda plume: None


@njit(inline="always")
def observe_world(P, S, obs, col, plume, world, inner):
    _kp.observe_beliefs(S[0], likelihood(plume.params), world, P.shared,
                        first_hit(plume.params, plume.state, world.b), obs, col, solid_cells(plume))


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

    kernels: ClassVar = SensorKernels(observe_agent=observe_agent, observe_world=observe_world)
    dimensions: ClassVar[tuple] = (2, 3)
    needs: ClassVar[tuple] = (Need("plume", PoissonHitPlume, "a Poisson-hit plume, plumes.PoissonHits or plumes.WindyPoissonHits",
                                   "the belief follows its likelihood"),)
    recomputable: ClassVar[bool] = False  # the belief is the history of hits

    def __post_init__(self):
        if self.shared is not None:
            self._set("shared", check_bool("Belief", "shared", self.shared))

    def is_shared(self, ctx) -> bool:
        return bool(ctx.scenario.team) if self.shared is None else self.shared

    def columns(self, ctx) -> list:
        if len(ctx.grid_size) == 3:
            w, h, d = ctx.grid_size
            return [f"belief_{dz}_{dy}_{dx}" for dz in range(1 - d, d) for dy in range(1 - h, h) for dx in range(1 - w, w)]
        w, h = ctx.grid_size
        return [f"belief_{dy}_{dx}" for dy in range(1 - h, h) for dx in range(1 - w, w)]

    def params(self, ctx) -> tuple:
        return BeliefParams(self.is_shared(ctx), static_flag(self._moving(ctx)))

    @staticmethod
    def _moving(ctx) -> bool:
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
