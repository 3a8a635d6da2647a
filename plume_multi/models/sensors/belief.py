"""``Belief()``: the agent's posterior over the source cell, centred on the agent (``plumes.PoissonHits``)."""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...engine.api import is_on, static_flag
from ...engine.jit import njit
from ..base import Sensor, SensorKernels, StateArray, check_bool, fail
from ..plumes.poisson_hits import kernels as _kp
from ..plumes.poisson_hits.model import first_hit, hit, likelihood
from ..plumes.poisson_hits.moving import predict

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
        _kp.update_belief(S[0][g], likelihood(plume.params), agent.cx, agent.cy,
                          hit(plume.params, plume.state, agent.b, agent.t, agent.n, agent.seed, agent.episode,
                              agent.cx, agent.cy))


@njit(inline="always")
def observe_world(P, S, obs, col, plume, world, inner):
    _kp.observe_beliefs(S[0], likelihood(plume.params), world.b, world.n_agents, P.shared, world.first,
                        world.was_done, first_hit(plume.params, plume.state, world.b), world.pos, obs, col)


_NO_SCRATCH = np.zeros((1, 1, 1))


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

    A target that moves (``PoissonHits(source_motion=...)``): before each step's updates the belief
    follows the target's motion (the Bayes filter's prediction, ``MotionKernels.predict``), so
    that it is the posterior of where the target is now (``scratch`` is its work space).
    """

    shared: object = None

    kernels: ClassVar = SensorKernels(observe_agent=observe_agent, observe_world=observe_world)
    recomputable: ClassVar[bool] = False  # the belief is the history of hits

    def __post_init__(self):
        if self.shared is not None:
            self._set("shared", check_bool("Belief", "shared", self.shared))

    def is_shared(self, ctx) -> bool:
        return bool(ctx.scenario.team) if self.shared is None else self.shared

    def check(self, ctx) -> None:
        from ..plumes.poisson_hits import PoissonHits

        if not isinstance(ctx.plume, PoissonHits):
            fail("Belief", "plume", ctx.plume, "a plumes.PoissonHits plume (the belief follows its likelihood)")

    def columns(self, ctx) -> list:
        w, h = ctx.grid_size
        return [f"belief_{dy}_{dx}" for dy in range(1 - h, h) for dx in range(1 - w, w)]

    def params(self, ctx) -> tuple:
        return BeliefParams(self.is_shared(ctx), static_flag(self._moving(ctx)))

    @staticmethod
    def _moving(ctx) -> bool:
        motion = getattr(ctx.plume, "source_motion", None)
        return motion is not None and motion.moves

    def state_spec(self, ctx) -> dict:
        w, h = ctx.grid_size
        per = "world" if self.is_shared(ctx) else "agent"
        spec = {"belief": StateArray(np.float64, per, (h, w), 0.0, 1.0)}
        if self._moving(ctx):  # the prediction's scratch, one per belief (worlds never share one)
            spec["scratch"] = StateArray(np.float64, per, (h, w), 0.0, 1.0)
        return spec

    def state_tuple(self, arrays: dict) -> tuple:
        # a placeholder of the scratch's type without a moving target: one compiled type for both
        return (arrays["belief"], arrays.get("scratch", _NO_SCRATCH))
