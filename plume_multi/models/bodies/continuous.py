"""``Continuous(max_speed=1.0, max_turn_degrees=30)``: a body with a float position and heading
(in 3-D: a float position moved by a velocity)."""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...engine import rng
from ...engine.api import is_on, static_flag
from ...engine.jit import njit
from ...engine.shared import first_nonfinite_row
from ...engine.tuples import row
from ..base import Body, BodyKernels, StateArray, check_heading, check_real, dims_of, grid_high

STREAM = 0x510E527F
# initial_heading < 0: drawn uniformly per agent; max_speed2: max_speed squared; velocity: a
# compile-time flag, on in 3-D, where an action is a velocity (in 2-D a (speed, turn) pair)
ContinuousParams = namedtuple("ContinuousParams", "max_speed max_turn_degrees initial_heading max_speed2 velocity")


# S = (heading (B*N,) degrees, positions (B*N, D) float): in 3-D the heading is an empty array,
# never read (a velocity has no heading)

@njit(inline="always")
def first_invalid(P, actions):
    return first_nonfinite_row(actions)


@njit(inline="always")
def reset_agent(P, S, i, n, pos, seed, episode):
    if not is_on(P.velocity):
        if P.initial_heading >= 0.0:
            S[0][i] = P.initial_heading
        else:
            S[0][i] = rng.uniform(rng.stream_key(seed, episode, STREAM), 0, n) * 360.0
    for c in range(S[1].shape[1]):
        S[1][i, c] = pos[i, c]


@njit(inline="always")
def place(P, S, i, pos, point):
    """Put agent ``i`` at the float ``point`` (cells) and on its cell."""
    for c in range(len(point)):
        S[1][i, c] = point[c]
        pos[i, c] = np.int32(np.floor(point[c] + 0.5))


@njit(inline="always")
def clipped_velocity(P, vx, vy, vz):
    """``(vx, vy, vz)``, scaled by ``max_speed / |v|`` when ``|v| > max_speed``."""
    n2 = vx * vx + vy * vy + vz * vz
    if n2 > P.max_speed2:
        f = P.max_speed / np.sqrt(n2)
        return vx * f, vy * f, vz * f
    return vx, vy, vz


@njit(inline="always")
def move(P, S, i, actions, pos, shape, seed, episode, t):
    # Each branch writes the new float position into S[1], clamped into the grid; then the cell.
    if is_on(P.velocity):  # 3-D: a velocity, scaled down to max_speed
        v = clipped_velocity(P, actions[i, 0], actions[i, 1], actions[i, 2])
        for c in range(3):
            S[1][i, c] = min(max(S[1][i, c] + v[c], 0.0), shape[c] - 1.0)
    else:  # 2-D: turn, then move speed along the new heading
        speed = min(max(actions[i, 0], 0.0), P.max_speed)
        dturn = min(max(actions[i, 1], -P.max_turn_degrees), P.max_turn_degrees)
        h = (S[0][i] + dturn) % 360.0
        h = h if h < 360.0 else 0.0
        S[0][i] = h
        rad = h * (np.pi / 180.0)
        S[1][i, 0] = min(max(S[1][i, 0] + speed * np.cos(rad), 0.0), shape[0] - 1.0)
        S[1][i, 1] = min(max(S[1][i, 1] + speed * np.sin(rad), 0.0), shape[1] - 1.0)
    place(P, S, i, pos, row(S[1], i, shape))


@njit(inline="always")
def location(P, S, i, cell):
    return row(S[1], i, cell)


@njit(inline="always")
def heading(P, S, i):
    if is_on(P.velocity):
        return 0.0
    return S[0][i]


KERNELS = BodyKernels(first_invalid=first_invalid, move=move, reset_agent=reset_agent, location=location,
                      heading=heading, place=place)
_NO_HEADING = np.zeros(0, np.float64)


@dataclass(frozen=True)
class Continuous(Body):
    """``Box(2)``: ``(speed, turn)``, speed in ``[0, max_speed]`` cells per step, turn in
    ``[-max_turn_degrees, +max_turn_degrees]``; values outside the box are clipped, NaN and
    infinities are refused. Each step turns first, then moves ``speed`` along the new heading.

    The position ``(x, y)`` is a float in ``[0, W-1] x [0, H-1]`` (clamped), in cell units: cell
    ``(i, j)`` is centred on ``(i, j)`` and the agent's cell is ``(round(x), round(y))``. Sensors
    read the plume bilinearly at the float position. Agents start on their start cell's centre.

    In 3-D: ``Box(3)``, a velocity ``(vx, vy, vz)`` in cells per step, each component in
    ``[-max_speed, max_speed]``; a velocity longer than ``max_speed`` is scaled to that length
    (each component times ``max_speed / sqrt(vx^2 + vy^2 + vz^2)``), NaN and infinities are
    refused. The float position ``(x, y, z)`` moves by it, clamped into ``[0, W-1] x [0, H-1] x
    [0, D-1]``; the cell is ``floor(c + 0.5)`` per axis; sensors read the plume trilinearly. No
    heading (``max_turn_degrees`` and ``initial_heading`` are not used). The state is
    ``body.xyz`` ``(B*N, 3)``.

    Among walls (``Scenario(walls=...)``) the body moves straight from its position toward the new
    one and stops at the face of the first solid cell on the way, on the free side (in 2-D it has
    turned all the same).
    """

    max_speed: float = 1.0
    max_turn_degrees: float = 30.0
    initial_heading: float | None = None

    kernels: ClassVar = KERNELS
    dimensions: ClassVar[tuple] = (2, 3)
    continuous: ClassVar[bool] = True
    oriented: ClassVar[bool] = True

    def __post_init__(self):
        self._set("max_speed", check_real(self.name, "max_speed", self.max_speed, 0.0, 2048.0, low_open=True))
        self._set("max_turn_degrees", check_real(self.name, "max_turn_degrees", self.max_turn_degrees, 0.0, 180.0))
        if self.initial_heading is not None:
            self._set("initial_heading", check_heading(self.name, "initial_heading", self.initial_heading))

    @property
    def low(self) -> np.ndarray:
        return np.array([0.0, -self.max_turn_degrees], np.float32)

    @property
    def high(self) -> np.ndarray:
        return np.array([self.max_speed, self.max_turn_degrees], np.float32)

    def action_box(self, dims: int = 2) -> tuple:
        """2-D: ``(speed, turn)``; 3-D: the velocity ``(vx, vy, vz)``, each in ``[-max_speed, max_speed]``."""
        if dims == 2:
            return self.low, self.high
        return np.full(3, -self.max_speed, np.float32), np.full(3, self.max_speed, np.float32)

    def params(self, ctx) -> tuple:
        return ContinuousParams(self.max_speed, self.max_turn_degrees,
                                -1.0 if self.initial_heading is None else self.initial_heading,
                                self.max_speed * self.max_speed, static_flag(dims_of(ctx) == 3))

    def state_spec(self, ctx) -> dict:
        high = grid_high(ctx) if ctx is not None else (None, None, None)[:dims_of(ctx)]  # within the grid's own shape
        if dims_of(ctx) == 3:
            return {"xyz": StateArray(np.float64, "agent", (3,), 0.0, None if ctx is None else high)}
        return {"heading": StateArray(np.float64, "agent", (), 0.0, 360.0),
                "xy": StateArray(np.float64, "agent", (2,), 0.0, None if ctx is None else high)}

    def state_tuple(self, arrays: dict) -> tuple:
        if "xyz" in arrays:  # 3-D: no heading (the functions never read it)
            return (_NO_HEADING, arrays["xyz"])
        return (arrays["heading"], arrays["xy"])

    def locations(self, params, state, pos) -> np.ndarray:
        return state[-1].copy()  # xy (2-D) or xyz (3-D)
