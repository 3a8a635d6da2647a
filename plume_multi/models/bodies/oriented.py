"""``Oriented(turn_degrees=90, step=1)``: a grid body with a heading that moves forward or turns.

Headings are in degrees, 0 = +x, 90 = +y (counter-clockwise), in [0, 360); one convention for
every body, sensor and picture.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import numpy as np

from ...engine import rng
from ...engine.jit import njit
from ...engine.shared import first_invalid_action
from ..base import Body, BodyKernels, StateArray, check_heading, check_int, check_real

STREAM = 0x3C6EF372
# initial_heading < 0: drawn per agent among the n_headings lattice headings. heading_table: every
# heading an agent can have (as the float arithmetic below produces them), index k at
# round(h * index_scale) (NaN where none); move_x, move_y: grid_step of each, in cells; left,
# right: each turned by +-turn_degrees.
OrientedParams = namedtuple("OrientedParams", "turn_degrees step initial_heading n_headings heading_table "
                                              "index_scale move_x move_y left right")
MIN_TURN = 0.01  # degrees
# at most this many lattice headings in the table (turns that drift in floating point reach more:
# then the table holds the drawn headings, and the others are computed)
MAX_TABLE = 4096


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
    return lattice_heading(k, P.turn_degrees)


@njit(inline="always")
def lattice_heading(k, turn_degrees):
    """The drawn heading of lattice index ``k`` (a float)."""
    return (k * turn_degrees) % 360.0


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
def shift(i, dx, dy, pos, shape):
    """Move agent ``i`` by ``(dx, dy)`` cells, clamped into the grid of ``shape``."""
    x = pos[i, 0] + dx
    y = pos[i, 1] + dy
    pos[i, 0] = min(max(x, 0), shape[0] - 1)
    pos[i, 1] = min(max(y, 0), shape[1] - 1)


@njit(inline="always")
def forward(P, S, i, pos, shape):
    """A forward move along the heading, computed (``RunTumble``: any heading)."""
    dx, dy = grid_step(S[0][i], P.step)
    shift(i, dx, dy, pos, shape)


@njit(inline="always")
def turned(h, degrees):
    """Heading ``h`` turned by ``degrees``, in [0, 360)."""
    h = (h + degrees) % 360.0
    return h if h < 360.0 else 0.0


@njit(inline="always")
def moved(a, h, x, y, k, table, step, degrees, shape):
    """Heading and cell after action ``a``; ``table = (dx, dy, left, right)``: the forward move
    and the turned headings when ``k >= 0`` (else computed from ``step`` and ``degrees``: the same
    numbers). Without a branch on the action (random actions would mispredict it). Numbers only:
    a record of arrays read in a branch here would count its arrays' references per agent."""
    dx, dy, left, right = table
    if k < 0:
        if a == 0:
            dx, dy = grid_step(h, step)
        elif a == 1:
            left = turned(h, degrees)
        else:
            right = turned(h, -degrees)
    forward = a == 0
    nx = min(max(x + dx, 0), shape[0] - 1)
    ny = min(max(y + dy, 0), shape[1] - 1)
    h_turned = left if a == 1 else right
    return (h if forward else h_turned), (nx if forward else x), (ny if forward else y)


@njit(inline="always")
def move(P, S, i, actions, pos, shape, seed, episode, t):
    # Arrays are read before any branch and written after the last, whatever the action (the
    # same values when unchanged), and the branches between touch numbers only: then Numba prunes
    # the counting of references to the arrays (P's tables, S, pos), which costs more than the
    # sines when it is left in (atomic operations, several per agent and step).
    a = actions[i]
    h = S[0][i]
    x = pos[i, 0]
    y = pos[i, 1]
    k = table_index(P.heading_table, P.index_scale, h)
    row = max(k, 0)
    table = (P.move_x[row], P.move_y[row], P.left[row], P.right[row])
    h, x, y = moved(a, h, x, y, k, table, P.step, P.turn_degrees, shape)
    S[0][i] = h
    pos[i, 0] = x
    pos[i, 1] = y


@njit(inline="always")
def heading(P, S, i):
    return S[0][i]


@njit(inline="always")
def table_index(table, index_scale, h):
    """``k`` where ``table[k] == h`` (bit for bit), else -1. Without a branch (see ``move``):
    ``k`` clamped into the table (NaN: 0) is read, and kept where it holds ``h``."""
    k = np.int64(min(max(0.0, h * index_scale + 0.5), table.shape[0] - 1.0))
    return (table[k] == h) * (k + 1) - 1


@njit(inline="always")
def heading_index(P, S, i):
    return table_index(P.heading_table, P.index_scale, S[0][i])


KERNELS = BodyKernels(first_invalid=first_invalid, move=move, reset_agent=reset_agent, heading=heading,
                      heading_index=heading_index)


@lru_cache(maxsize=64)
def lattice(turn_degrees: float, initial_heading: float, n_headings: int):
    """``(heading_table, index_scale)``: every heading reachable from the initial ones (the given
    heading, else the drawn ``lattice_heading(k)``) by turns, found with the compiled arithmetic
    of the step (``turned``), so the values are the agents' bit for bit. When turns drift (more
    than ``MAX_TABLE`` values), the initial headings only. Read-only arrays."""
    if initial_heading >= 0.0:
        start = [float(initial_heading)]
    else:
        start = [float(lattice_heading(float(k), turn_degrees)) for k in range(n_headings)]
    seen = dict.fromkeys(start)
    todo = list(seen)
    while todo and len(seen) <= MAX_TABLE:
        h = todo.pop()
        for d in (turn_degrees, -turn_degrees):
            g = float(turned(h, d))
            if g not in seen:
                seen[g] = None
                todo.append(g)
    values = list(seen) if len(seen) <= MAX_TABLE else list(dict.fromkeys(start))
    # K values evenly spaced (turns without rounding errors) fall at distinct k = round(h K / 360)
    # in 0..K (one slot more: a lattice offset from 0 reaches K just below 360)
    size = len(values)
    scale = size / 360.0 if size > 1 else 0.0
    table = np.full(size + 1, np.nan)
    for h in sorted(values):
        k = int(np.int64(h * scale + 0.5))  # as table_index
        if 0 <= k < len(table) and np.isnan(table[k]):
            table[k] = h  # a second heading at the same k (irregular lattices) is computed
    table.flags.writeable = False
    return table, scale


@lru_cache(maxsize=64)
def moves(table: bytes, step: int, turn_degrees: float):
    """``(move_x, move_y, left, right)``: ``grid_step`` (int64) and the headings ``turned`` by
    ``+-turn_degrees`` (float64) of each heading of the table (NaN: 0). Read-only."""
    headings = np.frombuffer(table, np.float64)
    mx = np.zeros(len(headings), np.int64)
    my = np.zeros(len(headings), np.int64)
    left = np.zeros(len(headings))
    right = np.zeros(len(headings))
    for k, h in enumerate(headings):
        if h == h:
            mx[k], my[k] = grid_step(float(h), step)
            left[k] = turned(float(h), turn_degrees)
            right[k] = turned(float(h), -turn_degrees)
    for a in (mx, my, left, right):
        a.flags.writeable = False
    return mx, my, left, right


@dataclass(frozen=True)
class Oriented(Body):
    """``Discrete(3)``: 0 forward ``step`` cells along the heading, 1 turn left (``+turn_degrees``,
    counter-clockwise, no move; 0.01..180 degrees), 2 turn right.

    Forward moves ``(round(step cos h), round(step sin h))`` cells (cos and sin first rounded to
    9 decimals, halves away from zero), clamped into the grid. ``initial_heading``: degrees, or
    ``None`` for a multiple of ``turn_degrees`` drawn uniformly per agent from the world's stream.
    """

    turn_degrees: float = 90.0
    step: int = 1
    initial_heading: float | None = None

    kernels: ClassVar = KERNELS
    dimensions: ClassVar[tuple] = (2,)  # a heading in the plane: no 3-D turns (pitch) are defined
    oriented: ClassVar[bool] = True
    ACTION_NAMES: ClassVar[tuple] = ("FORWARD", "LEFT", "RIGHT")

    def __post_init__(self):
        # at least MIN_TURN: a random start draws among 360 / turn_degrees lattice headings, listed
        # once (36,000 at most; 5e-324 degrees would list infinitely many)
        self._set("turn_degrees", check_real(self.name, "turn_degrees", self.turn_degrees, MIN_TURN, 180.0))
        self._set("step", check_int(self.name, "step", self.step, 1, 2048))
        if self.initial_heading is not None:
            self._set("initial_heading", check_heading(self.name, "initial_heading", self.initial_heading))

    @property
    def n_actions(self) -> int:
        return 3

    def params(self, ctx) -> tuple:
        start = -1.0 if self.initial_heading is None else self.initial_heading
        n_dirs = max(1, int(round(360.0 / self.turn_degrees)))
        table, scale = lattice(float(self.turn_degrees), float(start), n_dirs)
        tables = moves(table.tobytes(), int(self.step), float(self.turn_degrees))
        return OrientedParams(self.turn_degrees, self.step, start, n_dirs, table, scale, *tables)

    def state_spec(self, ctx) -> dict:
        return {"heading": StateArray(np.float64, "agent", (), 0.0, 360.0)}
