"""``StepPenalty(goal_reward=1.0, step_penalty=0.01)``: a cost for every step of the search."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..base import Reward, check_real
from . import sparse_goal


@dataclass(frozen=True)
class StepPenalty(Reward):
    """``-step_penalty`` on each step without arrival, exactly ``goal_reward`` on arrival."""

    goal_reward: float = 1.0
    step_penalty: float = 0.01

    kernels: ClassVar = sparse_goal.KERNELS

    def __post_init__(self):
        self._set("goal_reward", check_real("StepPenalty", "goal_reward", self.goal_reward, -1e6, 1e6))
        self._set("step_penalty", check_real("StepPenalty", "step_penalty", self.step_penalty, 0.0, 1e6))

    def values(self) -> tuple:
        return float(np.float32(self.goal_reward)), float(np.float32(-self.step_penalty))

    def params(self, ctx) -> tuple:
        return sparse_goal.RewardParams(np.float32(self.goal_reward), np.float32(-self.step_penalty))
