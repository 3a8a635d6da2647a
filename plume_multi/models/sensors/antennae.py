"""``Antennae(angles=(45, -45), distance=1.0)``: concentration sampled at points around the agent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...kernels.jit import njit
from ..base import check_real, fail
from .base import Sensor


@dataclass(frozen=True)
class Antennae(Sensor):
    """One column per antenna: the concentration, bilinearly interpolated, at ``distance`` cells
    from the agent's position in the direction ``heading + angle`` (degrees; counter-clockwise
    positive, so ``(45, -45)`` is left then right). Points off the grid read 0. Bodies without a
    heading use heading 0 (+x)."""

    angles: tuple = (45.0, -45.0)
    distance: float = 1.0

    kernel_module: ClassVar[str] = __name__

    def __post_init__(self):
        if not isinstance(self.angles, (tuple, list)) or not 1 <= len(self.angles) <= 64:
            fail("Antennae", "angles", self.angles, "a tuple of 1..64 angles in degrees")
        self._set("angles", tuple(check_real("Antennae", "angles", a, -360.0, 360.0) for a in self.angles))
        self._set("distance", check_real("Antennae", "distance", self.distance, 0.0, 2048.0))

    def columns(self, ctx) -> list:
        return [f"antenna_{j}" for j in range(len(self.angles))]

    def bounds(self, ctx) -> tuple:
        lo, hi = ctx.plume.concentration_bounds()
        n = len(self.angles)
        return np.full(n, lo, np.float32), np.full(n, hi, np.float32)

    def params(self, ctx) -> tuple:
        return (np.array(self.angles, dtype=np.float64), self.distance)

    def emit_agent(self, ctx) -> str:
        return ("for j in range(SP{k}[0].shape[0]):\n"
                "    px, py = s{k}.point(ax, ay, hd + SP{k}[0][j], SP{k}[1])\n"
                "    obs[i, {col} + j] = plume.sample_at(PP, PS, pw, px, py)")


@njit(inline="always")
def point(x, y, degrees, distance):
    """The point ``distance`` cells from ``(x, y)`` in the direction ``degrees``."""
    rad = degrees * (np.pi / 180.0)
    return x + distance * np.cos(rad), y + distance * np.sin(rad)
