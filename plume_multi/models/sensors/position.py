"""``Position()``: where the agent is, normalized to [0, 1]."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...kernels.jit import njit
from .base import Sensor


@dataclass(frozen=True)
class Position(Sensor):
    """Two columns: ``x / (W - 1)`` and ``y / (H - 1)`` (0 on a side of one cell), float32."""

    kernel_module: ClassVar[str] = __name__

    def columns(self, ctx) -> list:
        return ["x", "y"]

    def emit_agent(self, ctx) -> str:
        x, y = ("ax", "ay") if ctx.continuous else ("cx", "cy")
        return (f"obs[i, {{col}}] = {x} * s{{k}}.scale(width)\n"
                f"obs[i, {{col}} + 1] = {y} * s{{k}}.scale(height)")


@njit(inline="always")
def scale(side):
    """``1 / (side - 1)`` as float32, 0 for a side of one cell."""
    return np.float32(1.0 / (side - 1)) if side > 1 else np.float32(0.0)
