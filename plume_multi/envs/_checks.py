"""Argument checks shared by the front-ends, run before anything changes.

Each raises ``ValidationError`` naming the argument, the value given (its repr, shortened) and what
is expected.
"""

from __future__ import annotations

from ..checks import check_seed, is_integer, shown
from ..errors import ValidationError

__all__ = ["shown", "is_integer", "check_seed", "check_action_model"]


def check_action_model(value) -> None:
    """``value`` names an action model (checked here: the Scenario would look an unhashable value up)."""
    from ..models.base import Model
    from ..scenario import ACTION_MODELS

    if isinstance(value, Model) and value.family == "action":
        return
    if not isinstance(value, str) or value not in ACTION_MODELS:
        raise ValidationError(f"action_model: got {shown(value)}; expected one of {sorted(ACTION_MODELS)} "
                              "or a plume_multi.actions model")
