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
    # agent.point: the cell for grid bodies, the float position for continuous ones
    for c in range(len(agent.point)):
        obs[agent.i, col + c] = agent.point[c] * scale(agent.shape[c])


@dataclass(frozen=True)
class Position(Sensor):
    """Two columns: ``x / (W - 1)`` and ``y / (H - 1)`` (0 on a side of one cell), float32. In
    3-D three: ``x / (W - 1)``, ``y / (H - 1)``, ``z / (D - 1)``."""

    kernels: ClassVar = SensorKernels(observe_agent=observe_agent)
    dimensions: ClassVar[tuple] = (2, 3)

    def columns(self, ctx) -> list:
        return ["x", "y", "z"] if dims_of(ctx) == 3 else ["x", "y"]
