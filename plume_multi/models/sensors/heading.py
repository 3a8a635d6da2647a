"""``Heading()``: the agent's heading as ``(cos, sin)``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...engine.jit import njit
from ..base import Sensor, SensorKernels


@njit(inline="always")
def unit(degrees):
    rad = degrees * (np.pi / 180.0)
    return np.float32(np.cos(rad)), np.float32(np.sin(rad))


@njit(inline="always")
def observe_agent(P, S, obs, col, plume, agent, inner):
    obs[agent.i, col], obs[agent.i, col + 1] = unit(agent.heading)


@dataclass(frozen=True)
class Heading(Sensor):
    """Two columns, ``cos h`` and ``sin h`` of the heading ``h`` (degrees, 0 = +x, 90 = +y); bodies
    without a heading read ``(1, 0)``."""

    kernels: ClassVar = SensorKernels(observe_agent=observe_agent)

    def columns(self, ctx) -> list:
        return ["heading_cos", "heading_sin"]

    def bounds(self, ctx) -> tuple:
        return np.full(2, -1.0, np.float32), np.ones(2, np.float32)
