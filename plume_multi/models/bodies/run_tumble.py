"""``RunTumble(step=1)``: run forward, or tumble to a random heading and run (bacterial chemotaxis)."""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...engine import rng
from ...engine.jit import njit
from ...engine.shared import first_invalid_action
from ..base import Body, BodyKernels, StateArray, check_heading, check_int
from .oriented import forward, heading

STREAM = 0xA54FF53A
# step: cells per run; initial_heading < 0: drawn; n_agents: agents per world (a tumble draws at
# the agent's index in its world, so world b seeded s draws what world 0 seeded s draws)
RunTumbleParams = namedtuple("RunTumbleParams", "step initial_heading n_agents")


@njit(inline="always")
def first_invalid(P, actions):
    return first_invalid_action(actions, 2)


@njit(inline="always")
def reset_agent(P, S, i, n, pos, seed, episode):
    if P.initial_heading >= 0.0:
        S[0][i] = P.initial_heading
    else:
        S[0][i] = rng.uniform(rng.stream_key(seed, episode, STREAM), 0, n) * 360.0


@njit(inline="always")
def move(P, S, i, actions, pos, shape, seed, episode, t):
    if actions[i] == 1:
        S[0][i] = rng.uniform(rng.stream_key(seed, episode, STREAM), t, i % P.n_agents) * 360.0
    forward(P, S, i, pos, shape)





KERNELS = BodyKernels(first_invalid=first_invalid, move=move, reset_agent=reset_agent, heading=heading)


@dataclass(frozen=True)
class RunTumble(Body):
    """``Discrete(2)``: 0 run ``step`` cells along the heading; 1 tumble to a heading drawn
    uniformly in [0, 360) from the world's stream, then run. Moves are rounded to cells as
    ``Oriented``'s and clamped. ``initial_heading``: degrees, or ``None`` (uniform)."""

    step: int = 1
    initial_heading: float | None = None

    kernels: ClassVar = KERNELS
    dimensions: ClassVar[tuple] = (2,)  # a heading in the plane (Oriented's moves)
    oriented: ClassVar[bool] = True
    ACTION_NAMES: ClassVar[tuple] = ("RUN", "TUMBLE")

    def __post_init__(self):
        self._set("step", check_int(self.name, "step", self.step, 1, 2048))
        if self.initial_heading is not None:
            self._set("initial_heading", check_heading(self.name, "initial_heading", self.initial_heading))

    @property
    def n_actions(self) -> int:
        return 2

    def params(self, ctx) -> tuple:
        return RunTumbleParams(self.step, -1.0 if self.initial_heading is None else self.initial_heading, ctx.n_agents)

    def state_spec(self, ctx) -> dict:
        return {"heading": StateArray(np.float64, "agent", (), 0.0, 360.0)}
