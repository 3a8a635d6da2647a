"""``SparseGoal()``: 1.0 on the step an agent reaches the source, else 0.0."""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...engine.jit import njit
from ..base import Reward, RewardKernels

# float32 rewards on arrival and on any other step; shared with StepPenalty
RewardParams = namedtuple("RewardParams", "goal step")


@njit(inline="always")
def goal(P):
    return P.goal


@njit(inline="always")
def step(P):
    return P.step


KERNELS = RewardKernels(goal=goal, step=step)


@dataclass(frozen=True)
class SparseGoal(Reward):
    """Reward 1.0 on arrival (distance to the source ``<= goal_radius``), 0.0 on every other step."""

    kernels: ClassVar = KERNELS

    def values(self) -> tuple:
        return 1.0, 0.0

    def params(self, ctx) -> tuple:
        return RewardParams(np.float32(1.0), np.float32(0.0))
