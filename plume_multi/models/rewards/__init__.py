"""Reward models. ``plume_multi.rewards``."""

from ..base import Reward
from .sparse_goal import SparseGoal
from .step_penalty import StepPenalty

__all__ = ["Reward", "SparseGoal", "StepPenalty"]
