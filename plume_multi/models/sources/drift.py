"""``Drift(velocity=(vx, vy))``: sources move at a constant velocity, reflected at the grid's edges."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...engine.jit import njit
from ..base import check_real, fail
from .motion import MotionKernels, SourceMotion, motion_record, reflect

MAX_SPEED = 1000.0  # cells per step
RECORD = np.dtype([("drift_vx", np.float64), ("drift_vy", np.float64)], align=True)


@njit(inline="always")
def start(M, MS, xy, b, k, seed, episode, lattice):
    MS[b, k, 0] = M.drift_vx
    MS[b, k, 1] = M.drift_vy


@njit(inline="always")
def move(M, MS, xy, b, k, t, shape, seed, episode, lattice):
    x, flip_x = reflect(xy[b, k, 0] + MS[b, k, 0], shape[0] - 1.0)
    y, flip_y = reflect(xy[b, k, 1] + MS[b, k, 1], shape[1] - 1.0)
    xy[b, k, 0] = x
    xy[b, k, 1] = y
    if flip_x:
        MS[b, k, 0] = -MS[b, k, 0]
    if flip_y:
        MS[b, k, 1] = -MS[b, k, 1]


@dataclass(frozen=True)
class Drift(SourceMotion):
    """Every source moves by ``velocity = (vx, vy)`` cells per step, reflected at the grid's edges
    (a mirror: the position folds back and that component of the velocity changes sign).
    State: ``(vx, vy)``, each source's current velocity."""

    velocity: tuple = (0.5, 0.0)

    kernels: ClassVar = MotionKernels(move=move, start=start)
    RECORD: ClassVar = RECORD
    STATE: ClassVar[tuple] = ("vx", "vy")

    def __post_init__(self):
        try:
            vx, vy = self.velocity
        except (TypeError, ValueError):
            fail("Drift", "velocity", self.velocity, f"(vx, vy), finite numbers in [-{MAX_SPEED:g}, {MAX_SPEED:g}] "
                 "cells per step")
        self._set("velocity", (check_real("Drift", "velocity", vx, -MAX_SPEED, MAX_SPEED),
                               check_real("Drift", "velocity", vy, -MAX_SPEED, MAX_SPEED)))

    def record(self):
        return motion_record(RECORD, drift_vx=self.velocity[0], drift_vy=self.velocity[1])
