"""``Moore()``: the eight neighbouring cells and staying put (the 26 neighbours and staying put in 3-D)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .cardinal import Cardinal


@dataclass(frozen=True)
class Moore(Cardinal):
    """``Discrete(9)``: the eight neighbours clockwise from UP ``(0, +1)``, then 8 = stay; clamped.

    In 3-D ``Discrete(27)``: 0..7 the eight 2-D neighbours in the plane (``dz = 0``), 8..16 the
    nine cells of the plane above (``dz = +1``: the eight in the same order, then straight up),
    17..25 those of the plane below (``dz = -1``), 26 = stay."""

    MOVES: ClassVar[tuple] = ((0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1), (0, 0))
    ACTION_NAMES: ClassVar[tuple] = ("UP", "UP-RIGHT", "RIGHT", "DOWN-RIGHT", "DOWN", "DOWN-LEFT", "LEFT",
                                     "UP-LEFT", "STAY")
    MOVES_3D: ClassVar[tuple] = (tuple((dx, dy, 0) for dx, dy in MOVES[:8])
                                 + tuple((dx, dy, 1) for dx, dy in MOVES)
                                 + tuple((dx, dy, -1) for dx, dy in MOVES) + ((0, 0, 0),))
    ACTION_NAMES_3D: ClassVar[tuple] = (ACTION_NAMES[:8] + tuple(f"RISE-{n}" for n in ACTION_NAMES[:8]) + ("RISE",)
                                        + tuple(f"SINK-{n}" for n in ACTION_NAMES[:8]) + ("SINK", "STAY"))
