"""Reward models. ``plume_multi.rewards``."""

from .sparse_goal import SparseGoal
from .step_penalty import StepPenalty

__all__ = ["SparseGoal", "StepPenalty"]
