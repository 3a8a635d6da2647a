"""Argument checks shared by the front-ends, run before anything changes.

Each raises ``ValidationError`` naming the argument, the value given (its repr, shortened) and what
is expected.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import ValidationError

__all__ = ["shown", "is_integer", "check_seed", "check_action_model"]


def shown(value, limit: int = 80, typed: bool = False) -> str:
    """``repr(value)`` shortened to about ``limit`` characters for a message; with ``typed``,
    followed by its type name in brackets."""
    try:
        text = repr(value)
    except Exception:  # a user object whose repr fails still gets a message
        text = f"<{type(value).__name__} object>"
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"{text} ({type(value).__name__})" if typed else text


def is_integer(value) -> bool:
    """Python int or NumPy integer; not bool (``True`` is not a seed, an action or a count)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def check_seed(seed, *, max_seed: int, num_worlds: int = 1, name: str = "seed"):
    """``None``, or ``seed`` as a Python int with ``0 <= seed`` and ``seed + num_worlds - 1 <= max_seed``.

    Every integer type is accepted (Python ``int``, NumPy integers); ``bool`` is not.
    """
    if seed is None:
        return None
    if not is_integer(seed):
        raise ValidationError(f"{name}: got {shown(seed, typed=True)}; expected None or an integer with 0 <= {name} <= "
                              f"{max_seed - num_worlds + 1}")
    value = int(seed)
    if value < 0 or value + num_worlds - 1 > max_seed:
        extra = f" (world i is seeded {name} + i, for {num_worlds} worlds)" if num_worlds > 1 else ""
        raise ValidationError(f"{name}: got {value}; expected None or an integer with 0 <= {name} <= "
                              f"{max_seed - num_worlds + 1}{extra}")
    return value


def check_action_model(value) -> None:
    """``value`` names an action model (checked here: the Scenario would look an unhashable value up)."""
    from ..models.base import Model
    from ..scenario import ACTION_MODELS

    if isinstance(value, Model) and value.family == "action":
        return
    if not isinstance(value, str) or value not in ACTION_MODELS:
        raise ValidationError(f"action_model: got {shown(value)}; expected one of {sorted(ACTION_MODELS)} "
                              "or a plume_multi.actions model")
