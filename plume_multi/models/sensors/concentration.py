"""``Concentration()``: the plume's concentration where the agent is."""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...engine.api import is_on, sample_at, sample_cell, static_flag
from ...engine.jit import njit
from ..base import Sensor, SensorKernels

# at_point: a compile-time flag, on for continuous bodies (read at the float position)
ConcentrationParams = namedtuple("ConcentrationParams", "at_point")


@njit(inline="always")
def observe_agent(P, S, obs, col, plume, agent, inner):
    if is_on(P.at_point):
        obs[agent.i, col] = sample_at(plume, agent.point)
    else:
        obs[agent.i, col] = sample_cell(plume, agent.cell)


@dataclass(frozen=True)
class Concentration(Sensor):
    """One column: the concentration at the agent's cell (grid bodies) or, bilinearly
    interpolated, at its float position (continuous bodies). In 3-D likewise (trilinearly)."""

    kernels: ClassVar = SensorKernels(observe_agent=observe_agent)
    dimensions: ClassVar[tuple] = (2, 3)

    def columns(self, ctx) -> list:
        return ["concentration"]

    def bounds(self, ctx) -> tuple:
        lo, hi = ctx.plume.concentration_bounds()
        return np.array([lo], np.float32), np.array([hi], np.float32)

    def params(self, ctx) -> tuple:
        return ConcentrationParams(static_flag(ctx.continuous))
