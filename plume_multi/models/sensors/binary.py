"""``Binary(threshold)``: a detection: 1 when the concentration at the agent exceeds a threshold."""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...engine.api import is_on, sample_at, sample_cell, static_flag
from ...engine.jit import njit
from ..base import Sensor, SensorKernels, check_real

BinaryParams = namedtuple("BinaryParams", "threshold at_point")


@njit(inline="always")
def observe_agent(P, S, obs, col, plume, agent, inner):
    if is_on(P.at_point):
        c = sample_at(plume, agent.point)
    else:
        c = sample_cell(plume, agent.cell)
    obs[agent.i, col] = np.float32(1.0) if c > P.threshold else np.float32(0.0)


@dataclass(frozen=True)
class Binary(Sensor):
    """One column: 1.0 if the concentration where the agent is (as ``Concentration`` reads it) is
    strictly above ``threshold``, else 0.0 (in 2-D and 3-D)."""

    threshold: float = 0.5

    kernels: ClassVar = SensorKernels(observe_agent=observe_agent)
    dimensions: ClassVar[tuple] = (2, 3)

    def __post_init__(self):
        self._set("threshold", check_real("Binary", "threshold", self.threshold, 0.0, 1e30))

    def columns(self, ctx) -> list:
        return ["detection"]

    def params(self, ctx) -> tuple:
        return BinaryParams(np.float32(self.threshold), static_flag(ctx.continuous))
