"""``Position()``: where the agent is, normalized to [0, 1] (two columns, three in 3-D)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...engine.jit import njit
from ..base import Sensor, SensorKernels, dims_of


@njit(inline="always")
def scale(side):
    """``1 / (side - 1)`` as float32, 0 for a side of one cell."""
    return np.float32(1.0 / (side - 1)) if side > 1 else np.float32(0.0)


@njit(inline="always")
def observe_agent(P, S, obs, col, plume, agent, inner):
    # agent.x, agent.y: the cell for grid bodies, the float position for continuous ones
    obs[agent.i, col] = agent.x * scale(agent.width)
    obs[agent.i, col + 1] = agent.y * scale(agent.height)


@njit(inline="always")
def observe_agent3(P, S, obs, col, plume, agent, inner):
    obs[agent.i, col] = agent.x * scale(agent.width)
    obs[agent.i, col + 1] = agent.y * scale(agent.height)
    obs[agent.i, col + 2] = agent.z * scale(agent.depth)


@dataclass(frozen=True)
class Position(Sensor):
    """Two columns: ``x / (W - 1)`` and ``y / (H - 1)`` (0 on a side of one cell), float32. In
    3-D three: ``x / (W - 1)``, ``y / (H - 1)``, ``z / (D - 1)``."""

    kernels: ClassVar = SensorKernels(observe_agent=observe_agent)
    kernels_3d: ClassVar = SensorKernels(observe_agent=observe_agent3)

    def columns(self, ctx) -> list:
        return ["x", "y", "z"] if dims_of(ctx) == 3 else ["x", "y"]
