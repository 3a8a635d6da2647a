"""``Hits()``: the number of odor hits the agent received (``plumes.PoissonHits``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...engine.jit import njit
from ..base import Need, Sensor, SensorKernels
from ..plumes.poisson_hits.plume import PoissonHitPlume, first_hit, hit


@njit(inline="always")
def observe_agent(P, S, obs, col, plume, agent, inner):
    if agent.first:
        obs[agent.i, col] = first_hit(plume.params, plume.state, agent.b)
    elif agent.active:
        obs[agent.i, col] = hit(plume.params, plume.state, agent.b, agent.t, agent.n, agent.seed, agent.episode,
                                agent.cell)
    else:
        obs[agent.i, col] = 0.0


@dataclass(frozen=True)
class Hits(Sensor):
    """One column: the hits ``0..n_hits-1`` the agent received this step, a draw from
    ``Pr(h | distance to the source)`` (``plumes.PoissonHits``). After a reset: the world's first
    hit, for every agent. 0 for an agent on the source (it found it: no hit is drawn) and for
    agents that have finished."""

    kernels: ClassVar = SensorKernels(observe_agent=observe_agent)
    dimensions: ClassVar[tuple] = (2, 3)
    needs: ClassVar[tuple] = (Need("plume", PoissonHitPlume, "a Poisson-hit plume, plumes.PoissonHits or plumes.WindyPoissonHits",
                                   "hits are its observation"),)

    def columns(self, ctx) -> list:
        return ["hits"]

    def bounds(self, ctx) -> tuple:
        return np.zeros(1, np.float32), np.array([ctx.plume.n_hits - 1], np.float32)
