"""Scenario: the frozen, validated configuration of a plume search.

A ``Scenario`` says how a world is set up (grid, source, plume, agents, motion, sensing, reward,
episode length). It holds no state: the same scenario can drive any number of simulators.
Every field is checked on construction; an invalid value raises ``ValidationError`` naming the
field, the value given and what is valid.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from .errors import ValidationError

__all__ = ["Scenario", "ACTION_MODELS", "MAX_GRID_SIDE", "DEFAULT_GOAL_RADIUS"]

MAX_GRID_SIDE = 2048
MAX_AGENTS = 1 << 24
# The smallest positive float32: only the source cell itself is within the goal radius.
DEFAULT_GOAL_RADIUS = float(np.finfo(np.float32).smallest_subnormal)

# Action models are displacement tables: action k moves an agent by ACTION_MODELS[name][k]
# (dx, dy), then the position is clamped into the grid. Adding a model is adding a table.
ACTION_MODELS = {
    # 0 UP (0,+1), 1 RIGHT (+1,0), 2 DOWN (0,-1), 3 LEFT (-1,0): the PlumeSearchEnv contract.
    "cardinal": ((0, 1), (1, 0), (0, -1), (-1, 0)),
    # The eight neighbours clockwise from UP, then 8 = stay.
    "moore": ((0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1), (0, 0)),
}


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _fail(name: str, value, expected: str):
    raise ValidationError(f"Scenario.{name}: got {value!r}; expected {expected}")


def _pair(name: str, value, expected: str) -> tuple[int, int]:
    try:
        a, b = value
    except (TypeError, ValueError):
        _fail(name, value, expected)
    if not (_is_int(a) and _is_int(b)):
        _fail(name, value, expected)
    return int(a), int(b)


@dataclass(frozen=True)
class Scenario:
    """Configuration of a plume search (immutable, validated).

    Attributes:
        grid_size: ``(width, height)`` in cells, each 1..2048.
        source_location: ``(x, y)`` of the odor source, inside the grid; default the centre
            ``(width // 2, height // 2)``.
        sigma: spread of the static Gaussian plume in cells, 0.1..100.
        n_agents: searchers per world, >= 1.
        goal_radius: an agent whose Euclidean distance to the source is ``<= goal_radius`` has
            found it. Default: the smallest positive float32, so only the source cell counts.
        max_steps: steps per episode before truncation, >= 1.
        start_positions: ``None`` to draw start cells from the seed (as ``PlumeSearchEnv``
            does), or ``n_agents`` pairs ``(x, y)`` used in every episode.
        action_model: ``"cardinal"`` (4 moves, the contract's) or ``"moore"`` (8 moves + stay).
        n_neighbours: each agent also senses the positions of its ``k`` nearest other agents,
            relative to its own and normalized by the grid size (0 = off).
        team: ``True``: the first agent to reach the source ends the episode for all agents of
            its world, and every active agent receives the goal reward.
    """

    grid_size: tuple = (128, 128)
    source_location: Optional[tuple] = None
    sigma: float = 12.0
    n_agents: int = 1
    goal_radius: float = DEFAULT_GOAL_RADIUS
    max_steps: int = 1000
    start_positions: Optional[tuple] = None
    action_model: str = "cardinal"
    n_neighbours: int = 0
    team: bool = False

    def __post_init__(self):
        size_rule = f"(width, height), integers in 1..{MAX_GRID_SIDE}"
        w, h = _pair("grid_size", self.grid_size, size_rule)
        if not (1 <= w <= MAX_GRID_SIDE and 1 <= h <= MAX_GRID_SIDE):
            _fail("grid_size", self.grid_size, size_rule)
        object.__setattr__(self, "grid_size", (w, h))

        src_rule = f"(x, y) integers with 0 <= x < {w} and 0 <= y < {h}"
        if self.source_location is None:
            src = (w // 2, h // 2)
        else:
            src = _pair("source_location", self.source_location, src_rule)
            if not (0 <= src[0] < w and 0 <= src[1] < h):
                _fail("source_location", self.source_location, src_rule)
        object.__setattr__(self, "source_location", src)

        if not _is_real(self.sigma) or not math.isfinite(self.sigma) or not 0.1 <= self.sigma <= 100:
            _fail("sigma", self.sigma, "a finite number with 0.1 <= sigma <= 100")
        object.__setattr__(self, "sigma", float(self.sigma))

        if not _is_int(self.n_agents) or not 1 <= self.n_agents <= MAX_AGENTS:
            _fail("n_agents", self.n_agents, f"an integer in 1..{MAX_AGENTS}")
        object.__setattr__(self, "n_agents", int(self.n_agents))

        if not _is_real(self.goal_radius) or not math.isfinite(self.goal_radius) or self.goal_radius <= 0:
            _fail("goal_radius", self.goal_radius, "a finite number > 0")
        object.__setattr__(self, "goal_radius", float(self.goal_radius))

        if not _is_int(self.max_steps) or not 1 <= self.max_steps < 2**31:
            _fail("max_steps", self.max_steps, "an integer >= 1 (and < 2**31)")
        object.__setattr__(self, "max_steps", int(self.max_steps))

        if self.start_positions is not None:
            rule = f"None or {self.n_agents} pairs (x, y) of integers inside the {w}x{h} grid"
            try:
                arr = np.asarray(self.start_positions)
            except (TypeError, ValueError):
                _fail("start_positions", self.start_positions, rule)
            if arr.dtype.kind not in "iu" or arr.shape != (self.n_agents, 2):
                _fail("start_positions", self.start_positions, rule)
            if (arr[:, 0] < 0).any() or (arr[:, 0] >= w).any() or (arr[:, 1] < 0).any() or (arr[:, 1] >= h).any():
                _fail("start_positions", self.start_positions, rule)
            object.__setattr__(self, "start_positions", tuple((int(x), int(y)) for x, y in arr))

        if self.action_model not in ACTION_MODELS:
            _fail("action_model", self.action_model, f"one of {sorted(ACTION_MODELS)}")

        if not _is_int(self.n_neighbours) or not 0 <= self.n_neighbours < self.n_agents:
            _fail("n_neighbours", self.n_neighbours, f"an integer in 0..{self.n_agents - 1} (n_agents - 1)")
        object.__setattr__(self, "n_neighbours", int(self.n_neighbours))

        if not isinstance(self.team, (bool, np.bool_)):
            _fail("team", self.team, "True or False")
        object.__setattr__(self, "team", bool(self.team))

    # ----------------------------------------------------------------- derived, read-only
    @property
    def width(self) -> int:
        return self.grid_size[0]

    @property
    def height(self) -> int:
        return self.grid_size[1]

    @property
    def n_actions(self) -> int:
        return len(ACTION_MODELS[self.action_model])

    @property
    def obs_dim(self) -> int:
        """Length of an agent's observation vector: concentration, x, y, then 2 per neighbour."""
        return 3 + 2 * self.n_neighbours

    def moves(self) -> np.ndarray:
        """The action model's displacement table, ``(n_actions, 2)`` int32 of ``(dx, dy)``."""
        return np.array(ACTION_MODELS[self.action_model], dtype=np.int32)

    def goal_d2(self) -> int:
        """Largest squared integer distance ``d2`` with ``sqrt(d2) <= goal_radius``.

        The kernels compare integer squared distances against this, which decides exactly as
        ``math.sqrt(dx*dx + dy*dy) <= goal_radius`` does, with no float rounding at the edge.
        """
        w, h = self.grid_size
        limit = (w - 1) ** 2 + (h - 1) ** 2
        if self.goal_radius >= math.sqrt(limit):
            return limit
        k = min(int(self.goal_radius * self.goal_radius), limit)
        while k > 0 and math.sqrt(k) > self.goal_radius:
            k -= 1
        while k < limit and math.sqrt(k + 1) <= self.goal_radius:
            k += 1
        return k

    def replace(self, **changes) -> "Scenario":
        """A copy with some fields changed (validated again)."""
        from dataclasses import replace

        return replace(self, **changes)
