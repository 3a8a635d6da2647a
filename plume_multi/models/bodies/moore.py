"""``Moore()``: the eight neighbouring cells and staying put."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .cardinal import Cardinal


@dataclass(frozen=True)
class Moore(Cardinal):
    """``Discrete(9)``: the eight neighbours clockwise from UP ``(0, +1)``, then 8 = stay; clamped."""

    MOVES: ClassVar[tuple] = ((0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1), (0, 0))
    ACTION_NAMES: ClassVar[tuple] = ("UP", "UP-RIGHT", "RIGHT", "DOWN-RIGHT", "DOWN", "DOWN-LEFT", "LEFT",
                                     "UP-LEFT", "STAY")
