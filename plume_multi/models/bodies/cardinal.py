"""``Cardinal()``: four unit moves, the single-agent contract's action space."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..base import Body
from . import table


@dataclass(frozen=True)
class Cardinal(Body):
    """``Discrete(4)``: 0 UP ``(0, +1)``, 1 RIGHT ``(+1, 0)``, 2 DOWN ``(0, -1)``, 3 LEFT ``(-1, 0)``;
    the moved cell is clamped into the grid."""

    kernels: ClassVar = table.KERNELS
    MOVES: ClassVar[tuple] = ((0, 1), (1, 0), (0, -1), (-1, 0))
    ACTION_NAMES: ClassVar[tuple] = ("UP", "RIGHT", "DOWN", "LEFT")

    @property
    def n_actions(self) -> int:
        return len(self.MOVES)

    def moves(self) -> np.ndarray:
        return np.array(self.MOVES, dtype=np.int32)

    def params(self, ctx) -> tuple:
        return table.TableParams(self.moves(), self.n_actions)
