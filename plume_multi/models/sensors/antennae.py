"""``Antennae(angles=(45, -45), distance=1.0)``: concentration sampled at points around the agent."""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...engine.api import body_heading_table, sample_at
from ...engine.jit import njit
from ..base import Sensor, SensorKernels, check_real, fail

# dx, dy: (K, J) float64, ``offset`` of antenna j for each heading k of the body's heading_table
AntennaeParams = namedtuple("AntennaeParams", "angles distance dx dy")


@njit(inline="always")
def offset(degrees, distance):
    """``(dx, dy)``: ``distance`` cells in the direction ``degrees``."""
    rad = degrees * (np.pi / 180.0)
    return distance * np.cos(rad), distance * np.sin(rad)


@njit(inline="always")
def point(x, y, degrees, distance):
    """The point ``distance`` cells from ``(x, y)`` in the direction ``degrees``."""
    dx, dy = offset(degrees, distance)
    return x + dx, y + dy


@njit(inline="always")
def observe_agent(P, S, obs, col, plume, agent, inner):
    k = agent.heading_index
    rows = P.dx.shape[0]
    on_table = k >= 0 and k < rows
    row = min(max(k, 0), rows - 1)
    x, y = agent.point
    for j in range(P.angles.shape[0]):
        if on_table:
            px = x + P.dx[row, j]
            py = y + P.dy[row, j]
        else:
            px, py = point(x, y, agent.heading + P.angles[j], P.distance)
        obs[agent.i, col + j] = sample_at(plume, (px, py))


def offset_table(headings: np.ndarray, angles: np.ndarray, distance: float) -> tuple:
    """``offset`` of ``heading + angle`` per heading and angle (NaN headings: 0), read-only (one
    row at least)."""
    dx = np.zeros((max(1, len(headings)), len(angles)))
    dy = np.zeros((max(1, len(headings)), len(angles)))
    for k, h in enumerate(headings):
        if h == h:
            for j, a in enumerate(angles):
                dx[k, j], dy[k, j] = offset(float(h) + float(a), distance)
    dx.flags.writeable = False
    dy.flags.writeable = False
    return dx, dy


@dataclass(frozen=True)
class Antennae(Sensor):
    """One column per antenna: the concentration, bilinearly interpolated, at ``distance`` cells
    from the agent's position in the direction ``heading + angle`` (degrees; counter-clockwise
    positive, so ``(45, -45)`` is left then right). Points off the grid read 0. Bodies without a
    heading use heading 0 (+x)."""

    angles: tuple = (45.0, -45.0)
    distance: float = 1.0

    kernels: ClassVar = SensorKernels(observe_agent=observe_agent)
    dimensions: ClassVar[tuple] = (2,)  # angles from a heading in the plane

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
        angles = np.array(self.angles, dtype=np.float64)
        return AntennaeParams(angles, self.distance, *offset_table(body_heading_table(ctx), angles, self.distance))
