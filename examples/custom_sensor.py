"""A sensor of your own, outside the package: the concentration difference across the agent.

    python examples/custom_sensor.py

A model is a frozen dataclass deriving from its family's base class (here ``Sensor``) plus
compiled functions of one fixed signature, given as ``kernels``. The step driver calls them and
Numba inlines them, so a sensor of your own runs as fast as the package's.
"""

from collections import namedtuple
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numba import njit

from plume_multi import Scenario, Simulator, sensors
from plume_multi.engine.api import sample_at
from plume_multi.models import Sensor, SensorKernels

# Numba freezes module-level globals into compiled code when it compiles. plume_multi keys its
# cache on this file's source, so after an edit of SCALE the next run compiles again and uses
# the new value: never a stale one.
SCALE = 1.0

GradientParams = namedtuple("GradientParams", "offset")


@njit(inline="always")
def observe_agent(P, S, obs, col, plume, agent, inner):
    ahead = sample_at(plume, agent.x + P.offset, agent.y)
    behind = sample_at(plume, agent.x - P.offset, agent.y)
    obs[agent.i, col] = SCALE * (ahead - behind)


@dataclass(frozen=True)
class GradientX(Sensor):
    """One column: ``SCALE * (C(x + offset, y) - C(x - offset, y))``."""

    offset: float = 1.0

    kernels: ClassVar = SensorKernels(observe_agent=observe_agent)

    def columns(self, ctx):
        return ["gradient_x"]

    def bounds(self, ctx):
        return np.full(1, -np.inf, np.float32), np.full(1, np.inf, np.float32)

    def params(self, ctx):
        return GradientParams(float(self.offset))


sim = Simulator(Scenario(n_agents=2, sensors=(sensors.Concentration(), GradientX())), num_worlds=2)
sim.reset(seed=0)
for _ in range(3):
    obs, reward, terminated, truncated = sim.step(np.zeros(sim.total_agents, np.int64))
print(sim.scenario.observation_layout)
print(obs[:, 1].tolist())
