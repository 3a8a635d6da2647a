"""``Hits()``: the number of odor hits the agent received (``plumes.PoissonHits``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..base import fail
from .base import Sensor


@dataclass(frozen=True)
class Hits(Sensor):
    """One column: the hits ``0..n_hits-1`` the agent received this step, a draw from
    ``Pr(h | distance to the source)`` (``plumes.PoissonHits``). After a reset: the world's first
    hit, for every agent. 0 for an agent on the source (it found it: no hit is drawn) and for
    agents that have finished."""

    kernel_module: ClassVar[str] = __name__

    def check(self, ctx) -> None:
        from ..plumes.poisson_hits import PoissonHits

        if not isinstance(ctx.plume, PoissonHits):
            fail("Hits", "plume", ctx.plume, "a plumes.PoissonHits plume (hits are its observation)")

    def columns(self, ctx) -> list:
        return ["hits"]

    def bounds(self, ctx) -> tuple:
        return np.zeros(1, np.float32), np.array([ctx.plume.n_hits - 1], np.float32)

    def emit_agent(self, ctx) -> str:
        return ("if first:\n"
                "    obs[i, {col}] = plume.first_hit(PP, PS, b)\n"
                "elif active[i]:\n"
                "    obs[i, {col}] = plume.hit(PP, PS, b, t, i - b * n_agents, seed, episode, cx, cy)\n"
                "else:\n"
                "    obs[i, {col}] = 0.0")
