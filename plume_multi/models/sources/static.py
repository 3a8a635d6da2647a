"""``Static()``: sources stay where they start (the default of every plume)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...engine.jit import njit
from .motion import MotionKernels, SourceMotion


@njit(inline="always")
def stay(M, MS, xy, b, k, t, shape, seed, episode, lattice):
    """A source that does not move."""


@dataclass(frozen=True)
class Static(SourceMotion):
    """Sources that do not move. A plume given ``Static()`` (its default) runs exactly as a plume
    without source motions: no record, no state, nothing compiled for it."""

    kernels: ClassVar = MotionKernels(move=stay)
    lattice_ok: ClassVar[bool] = True
    # every plume's default, 3-D ones included: nothing moves, so nothing depends on the dimension
    dimensions: ClassVar[tuple] = (2, 3)
