"""``SparseGoal()``: 1.0 on the step an agent reaches the source, else 0.0."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...kernels.jit import njit
from ..base import Model


@dataclass(frozen=True)
class SparseGoal(Model):
    """Reward 1.0 on arrival (distance to the source ``<= goal_radius``), 0.0 on every other step."""

    family: ClassVar[str] = "reward"
    kernel_module: ClassVar[str] = __name__

    def values(self) -> tuple:
        """Every reward this model can give: (on arrival, on another step)."""
        return 1.0, 0.0

    def params(self, ctx) -> tuple:
        return (np.float32(1.0), np.float32(0.0))


# P = (goal reward float32, reward of any other step float32); shared with StepPenalty.

@njit(inline="always")
def goal(P):
    return P[0]


@njit(inline="always")
def step(P):
    return P[1]
