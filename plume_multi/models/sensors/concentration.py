"""``Concentration()``: the plume's concentration where the agent is."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .base import Sensor


@dataclass(frozen=True)
class Concentration(Sensor):
    """One column: the concentration at the agent's cell (grid bodies) or, bilinearly
    interpolated, at its float position (continuous bodies)."""

    kernel_module: ClassVar[str] = __name__

    def columns(self, ctx) -> list:
        return ["concentration"]

    def bounds(self, ctx) -> tuple:
        lo, hi = ctx.plume.concentration_bounds()
        return np.array([lo], np.float32), np.array([hi], np.float32)

    def emit_agent(self, ctx) -> str:
        if ctx.continuous:
            return "obs[i, {col}] = plume.sample_at(PP, PS, pw, ax, ay)"
        return "obs[i, {col}] = plume.sample_cell(PP, PS, pw, cx, cy)"
