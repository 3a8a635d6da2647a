"""``Oriented(turn_degrees=90, step=1)``: a grid body with a heading that moves forward or turns.

Headings are in degrees, 0 = +x, 90 = +y (counter-clockwise), in [0, 360); one convention for
every body, sensor and picture.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...engine import rng
from ...engine.jit import njit
from ...engine.shared import first_invalid_action
from ..base import Body, BodyKernels, StateArray, check_heading, check_int, check_real

STREAM = 0x3C6EF372
# initial_heading < 0: drawn per agent among the n_headings lattice headings
OrientedParams = namedtuple("OrientedParams", "turn_degrees step initial_heading n_headings")


# S = (heading (B*N,) float64 degrees,)

@njit(inline="always")
def first_invalid(P, actions):
    return first_invalid_action(actions, 3)


@njit(inline="always")
def draw_heading(P, i, n, seed, episode):
    if P.initial_heading >= 0.0:
        return P.initial_heading
    key = rng.stream_key(seed, episode, STREAM)
    k = np.floor(rng.uniform(key, 0, n) * P.n_headings)
    return (k * P.turn_degrees) % 360.0


@njit(inline="always")
def reset_agent(P, S, i, n, pos, seed, episode):
    S[0][i] = draw_heading(P, i, n, seed, episode)


@njit(inline="always")
def _round_half_away(v):
    v = np.floor(v * 1e9 + 0.5) / 1e9  # 0.5000000000000001 -> 0.5: symmetric rounding below
    return np.floor(v + 0.5) if v >= 0.0 else -np.floor(-v + 0.5)


@njit(inline="always")
def grid_step(heading, step):
    """``(dx, dy)`` cells of a forward move of ``step`` cells along ``heading`` degrees."""
    rad = heading * (np.pi / 180.0)
    return np.int64(_round_half_away(step * np.cos(rad))), np.int64(_round_half_away(step * np.sin(rad)))


@njit(inline="always")
def forward(P, S, i, pos, width, height):
    dx, dy = grid_step(S[0][i], P.step)
    x = pos[i, 0] + dx
    y = pos[i, 1] + dy
    pos[i, 0] = min(max(x, 0), width - 1)
    pos[i, 1] = min(max(y, 0), height - 1)


@njit(inline="always")
def turn(S, i, degrees):
    h = (S[0][i] + degrees) % 360.0
    S[0][i] = h if h < 360.0 else 0.0


@njit(inline="always")
def move(P, S, i, actions, pos, width, height, seed, episode, t):
    a = actions[i]
    if a == 0:
        forward(P, S, i, pos, width, height)
    elif a == 1:
        turn(S, i, P.turn_degrees)
    else:
        turn(S, i, -P.turn_degrees)




@njit(inline="always")
def heading(P, S, i):
    return S[0][i]


KERNELS = BodyKernels(first_invalid=first_invalid, move=move, reset_agent=reset_agent, heading=heading)


@dataclass(frozen=True)
class Oriented(Body):
    """``Discrete(3)``: 0 forward ``step`` cells along the heading, 1 turn left (``+turn_degrees``,
    counter-clockwise, no move), 2 turn right.

    Forward moves ``(round(step cos h), round(step sin h))`` cells (cos and sin first rounded to
    9 decimals, halves away from zero), clamped into the grid. ``initial_heading``: degrees, or
    ``None`` for a multiple of ``turn_degrees`` drawn uniformly per agent from the world's stream.
    """

    turn_degrees: float = 90.0
    step: int = 1
    initial_heading: float | None = None

    kernels: ClassVar = KERNELS
    oriented: ClassVar[bool] = True
    ACTION_NAMES: ClassVar[tuple] = ("FORWARD", "LEFT", "RIGHT")

    def __post_init__(self):
        self._set("turn_degrees", check_real(self.name, "turn_degrees", self.turn_degrees, 0.0, 180.0, low_open=True))
        self._set("step", check_int(self.name, "step", self.step, 1, 2048))
        if self.initial_heading is not None:
            self._set("initial_heading", check_heading(self.name, "initial_heading", self.initial_heading))

    @property
    def n_actions(self) -> int:
        return 3

    def params(self, ctx) -> tuple:
        start = -1.0 if self.initial_heading is None else self.initial_heading
        n_dirs = max(1, int(round(360.0 / self.turn_degrees)))
        return OrientedParams(self.turn_degrees, self.step, start, n_dirs)

    def state_spec(self, ctx) -> dict:
        return {"heading": StateArray(np.float64, "agent", (), 0.0, 360.0)}
