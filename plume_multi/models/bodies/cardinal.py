"""``Cardinal()``: four unit moves, the single-agent contract's action space (six in 3-D)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..base import Body, dims_of
from . import table


@dataclass(frozen=True)
class Cardinal(Body):
    """``Discrete(4)``: 0 UP ``(0, +1)``, 1 RIGHT ``(+1, 0)``, 2 DOWN ``(0, -1)``, 3 LEFT ``(-1, 0)``;
    the moved cell is clamped into the grid.

    In 3-D ``Discrete(6)``: 0..3 as in 2-D (with ``dz = 0``), then 4 RISE ``(0, 0, +1)`` and
    5 SINK ``(0, 0, -1)``."""

    kernels: ClassVar = table.KERNELS
    dimensions: ClassVar[tuple] = (2, 3)
    MOVES: ClassVar[tuple] = ((0, 1), (1, 0), (0, -1), (-1, 0))
    ACTION_NAMES: ClassVar[tuple] = ("UP", "RIGHT", "DOWN", "LEFT")
    MOVES_3D: ClassVar[tuple] = ((0, 1, 0), (1, 0, 0), (0, -1, 0), (-1, 0, 0), (0, 0, 1), (0, 0, -1))
    ACTION_NAMES_3D: ClassVar[tuple] = ("UP", "RIGHT", "DOWN", "LEFT", "RISE", "SINK")

    @property
    def n_actions(self) -> int:
        return len(self.MOVES)

    def n_actions_for(self, dims: int) -> int:
        return len(self.MOVES if dims == 2 else self.MOVES_3D)

    def moves(self, dims: int = 2) -> np.ndarray:
        """``(K, dims)`` int32: the displacement of each action."""
        return np.array(self.MOVES if dims == 2 else self.MOVES_3D, dtype=np.int32)

    def params(self, ctx) -> tuple:
        dims = dims_of(ctx)
        return table.TableParams(self.moves(dims), self.n_actions_for(dims))
