"""The injectable components of ``PlumeSearchEnv``: protocols, protocol checks, built-ins.

Four roles, each a protocol (documented in the docs' "Single-agent contract" page):

* action processor: ``action_space``, ``process_action(action, state, grid_size)``,
  ``validate_action(action)``, ``get_metadata()``;
* observation model: ``observation_space``, ``get_observation(env_state)``, ``get_metadata()``
  listing ``required_state_keys``;
* reward function: ``compute_reward(prev_state, action, next_state, plume)``, ``get_metadata()``;
* plume: ``sample(x, y, t=None)``, ``reset(seed)``, optionally ``field_array`` ``(h, w)`` float32.

``check_component(role, obj)`` raises ``ComponentError`` naming every missing member.

The built-ins (``DiscreteGridActions``, ``FullFieldObservation``, ``CompactObservation``,
``SparseGoalReward``, ``StaticGaussianPlume``) implement the protocols in plain Python so that a
caller can use them on their own, but ``PlumeSearchEnv`` does not call those methods: when it
recognises a built-in (by its exact type) it runs the compiled engine instead, which applies the
same rules. The tests check that both give the same results.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple, Optional, Protocol

import numpy as np
from gymnasium import spaces

from ..errors import ComponentError, ValidationError
from ..models.plumes.gaussian import gaussian_field
from ..scenario import ACTION_MODELS, DEFAULT_GOAL_RADIUS
from ._core import action_value, contract_space

__all__ = [
    "GridSize",
    "AgentState",
    "ActionProcessor",
    "ObservationModel",
    "RewardFunction",
    "PlumeModel",
    "ENV_STATE_KEYS",
    "check_component",
    "DiscreteGridActions",
    "FullFieldObservation",
    "CompactObservation",
    "SparseGoalReward",
    "StaticGaussianPlume",
]


# ---------------------------------------------------------------------------------- value types
class GridSize(NamedTuple):
    """``(width, height)`` of the grid in cells."""

    width: int
    height: int

    def contains(self, position) -> bool:
        """Whether the cell ``(x, y)`` lies inside the grid."""
        x, y = position
        return 0 <= x < self.width and 0 <= y < self.height


@dataclass(frozen=True)
class AgentState:
    """The agent as components see it (a snapshot; changing it changes nothing).

    Attributes:
        position: cell ``(x, y)``.
        orientation: heading in degrees, ``0 <= orientation < 360``. The cardinal actions are
            absolute moves and never turn the agent, so the built-ins keep it at 0.
        step_count: steps taken in this episode.
        total_reward: reward accumulated in this episode.
        goal_reached: the agent has reached the source in this episode.
    """

    position: tuple
    orientation: float = 0.0
    step_count: int = 0
    total_reward: float = 0.0
    goal_reached: bool = False


# Keys a ``get_observation(env_state)`` call may rely on (an observation model lists the ones it
# needs in ``get_metadata()["required_state_keys"]``):
#   agent_state      AgentState after the move
#   plume_field      (h, w) float32 concentration field, read-only, indexed [y, x]
#   source_location  (x, y) of the source
#   grid_size        GridSize(width, height)
#   step_count       steps taken in this episode (0 after reset)
#   goal_radius      the goal radius in cells
ENV_STATE_KEYS = ("agent_state", "plume_field", "source_location", "grid_size", "step_count", "goal_radius")


# ---------------------------------------------------------------------------------- protocols
class ActionProcessor(Protocol):
    """Turns an action into the agent's next state, keeping it inside the grid.

    ``process_action`` must be pure (return a new state, mutate nothing), deterministic and
    in-bounds; ``validate_action`` must agree with ``action_space.contains`` and never raise.
    """

    action_space: spaces.Space

    def process_action(self, action: Any, current_state: AgentState, grid_size: GridSize) -> AgentState: ...

    def validate_action(self, action: Any) -> bool: ...

    def get_metadata(self) -> dict: ...


class ObservationModel(Protocol):
    """Builds the observation from the environment's state.

    ``get_observation`` receives a dict with (at least) the keys listed in
    ``get_metadata()["required_state_keys"]``, chosen from ``ENV_STATE_KEYS``, and must return a
    value inside ``observation_space`` without changing anything it was given.
    """

    observation_space: spaces.Space

    def get_observation(self, env_state: dict) -> Any: ...

    def get_metadata(self) -> dict: ...


class RewardFunction(Protocol):
    """The reward of one transition: a finite float, a pure function of its arguments."""

    def compute_reward(self, prev_state: AgentState, action: Any, next_state: AgentState, plume: Any) -> float: ...

    def get_metadata(self) -> dict: ...


class PlumeModel(Protocol):
    """A concentration field over the grid.

    ``sample(x, y)`` is the concentration in ``[0, 1]`` at cell ``(x, y)``; ``reset(seed)``
    starts a new episode. A plume may also have ``field_array``: the whole ``(h, w)`` float32
    field indexed ``[y, x]``, which the environment hands to the engine directly.
    """

    def sample(self, x: int, y: int, t: Optional[float] = None) -> float: ...

    def reset(self, seed: Optional[int] = None) -> None: ...


# (member, is it a method?, what it should be): the contract of each role.
_MEMBERS = {
    "action_processor": (
        ("action_space", False, "a gymnasium.spaces.Space"),
        ("process_action", True, "a method process_action(action, current_state, grid_size) -> AgentState"),
        ("validate_action", True, "a method validate_action(action) -> bool"),
        ("get_metadata", True, "a method get_metadata() -> dict"),
    ),
    "observation_model": (
        ("observation_space", False, "a gymnasium.spaces.Space"),
        ("get_observation", True, "a method get_observation(env_state: dict) -> observation"),
        ("get_metadata", True, "a method get_metadata() -> dict with 'required_state_keys'"),
    ),
    "reward_fn": (
        ("compute_reward", True, "a method compute_reward(prev_state, action, next_state, plume) -> float"),
        ("get_metadata", True, "a method get_metadata() -> dict"),
    ),
    "plume_model": (
        ("sample", True, "a method sample(x, y, t=None) -> float in [0, 1]"),
        ("reset", True, "a method reset(seed)"),
    ),
}


def check_component(role: str, component):
    """Check ``component`` against the protocol of ``role``; return it unchanged.

    Args:
        role: ``"action_processor"``, ``"observation_model"``, ``"reward_fn"`` or ``"plume_model"``.

    Raises:
        ComponentError: naming each missing or wrong member, and what the protocol asks for.
    """
    members = _MEMBERS[role]
    name = type(component).__name__
    problems = []
    for member, is_method, what in members:
        if not hasattr(component, member):
            problems.append(f"missing {member} ({what})")
            continue
        value = getattr(component, member)
        if is_method and not callable(value):
            problems.append(f"{member} is not callable ({what})")
        elif not is_method and not isinstance(value, spaces.Space):
            problems.append(f"{member} is a {type(value).__name__}, not {what}")
    if problems:
        needed = ", ".join(m for m, _, _ in members)
        raise ComponentError(f"{role}: {name} does not satisfy the protocol: {'; '.join(problems)}. "
                             f"A {role} needs {needed}.")
    if role == "observation_model":
        required_state_keys(component)
    return component


def required_state_keys(model) -> tuple:
    """The env-state keys an observation model needs, checked against ``ENV_STATE_KEYS``."""
    name = type(model).__name__
    try:
        meta = model.get_metadata()
    except Exception as exc:
        raise ComponentError(f"observation_model: {name}.get_metadata() raised {exc!r}; expected a dict") from exc
    if not isinstance(meta, dict):
        raise ComponentError(
            f"observation_model: {name}.get_metadata() returned {type(meta).__name__}; expected a dict")
    keys = meta.get("required_state_keys", ())
    if not isinstance(keys, (list, tuple, set, frozenset)) or not all(isinstance(k, str) for k in keys):
        raise ComponentError(
            f"observation_model: {name}.get_metadata()['required_state_keys'] = {keys!r}; expected a list of strings"
        )
    unknown = [k for k in keys if k not in ENV_STATE_KEYS]
    if unknown:
        raise ComponentError(
            f"observation_model: {name} requires state keys {unknown} that PlumeSearchEnv does not provide; "
            f"available keys: {list(ENV_STATE_KEYS)}"
        )
    return tuple(keys)


# ---------------------------------------------------------------------------------- built-ins
def cardinal_action(action, n_actions: int = 4) -> int:
    """``action`` as a Python int if it is an integer in ``0..n_actions-1``, else -1 (the core's
    ``action_value``: integer types only, not ``bool``)."""
    return action_value(action, n_actions)


class DiscreteGridActions:
    """The contract's four absolute moves, clamped into the grid.

    ``action_space = Discrete(4)``: 0 UP ``(0, +1)``, 1 RIGHT ``(+1, 0)``, 2 DOWN ``(0, -1)``,
    3 LEFT ``(-1, 0)``. The move table is the engine's ``"cardinal"`` action model.
    """

    MOVES = ACTION_MODELS["cardinal"]

    def __init__(self):
        self.action_space = spaces.Discrete(len(self.MOVES))

    def validate_action(self, action) -> bool:
        return cardinal_action(action, len(self.MOVES)) >= 0

    def process_action(self, action, current_state: AgentState, grid_size) -> AgentState:
        a = cardinal_action(action, len(self.MOVES))
        if a < 0:
            raise ValidationError(f"action: got {action!r}; expected an integer in 0..{len(self.MOVES) - 1}")
        w, h = grid_size
        dx, dy = self.MOVES[a]
        x = min(max(current_state.position[0] + dx, 0), w - 1)
        y = min(max(current_state.position[1] + dy, 0), h - 1)
        return AgentState(position=(x, y), orientation=current_state.orientation,
                          step_count=current_state.step_count, total_reward=current_state.total_reward,
                          goal_reached=current_state.goal_reached)

    def get_metadata(self) -> dict:
        return {"type": "discrete_grid", "modality": "absolute_cardinal",
                "parameters": {"n_actions": len(self.MOVES), "step_size": 1, "moves": [list(m) for m in self.MOVES]},
                "orientation_dependent": False}

    def __repr__(self) -> str:
        return "DiscreteGridActions()"


class FullFieldObservation:
    """The contract's observation: the agent's cell, the whole field and the source.

    ``Dict{agent_position: Box(0, max(w,h)-1, (2,), int32) (x, y),
    concentration_field: Box(0, 1, (h, w), float32) indexed [y, x],
    source_location: Box(0, max(w,h)-1, (2,), int32) (x, y)}``, every array freshly allocated.

    Args:
        grid_size: ``(width, height)`` of the environment it observes.
    """

    def __init__(self, grid_size=(128, 128)):
        w, h = int(grid_size[0]), int(grid_size[1])
        self.grid_size = GridSize(w, h)
        self.observation_space = contract_space(w, h)

    def get_observation(self, env_state: dict) -> dict:
        return {
            "agent_position": np.array(env_state["agent_state"].position, dtype=np.int32),
            "concentration_field": np.array(env_state["plume_field"], dtype=np.float32),
            "source_location": np.array(env_state["source_location"], dtype=np.int32),
        }

    def get_metadata(self) -> dict:
        return {"type": "full_field", "required_state_keys": ["agent_state", "plume_field", "source_location"],
                "grid_size": list(self.grid_size)}

    def __repr__(self) -> str:
        return f"FullFieldObservation(grid_size={tuple(self.grid_size)})"


class CompactObservation:
    """Three numbers: ``[concentration at the agent, x / (w-1), y / (h-1)]``.

    ``observation_space = Box(0, 1, (3,), float32)`` for any grid (a side of one cell gives 0).
    It is the engine's own per-agent observation, so the compiled path only copies it; use it
    where the full field is not needed (e.g. inside a ``SyncVectorEnv``).
    """

    def __init__(self):
        self.observation_space = spaces.Box(0.0, 1.0, shape=(3,), dtype=np.float32)

    def get_observation(self, env_state: dict) -> np.ndarray:
        # The kernel multiplies the int cell by the float32 reciprocal in float64, then stores
        # float32; the same arithmetic here gives bit-identical values.
        w, h = env_state["grid_size"]
        x, y = env_state["agent_state"].position
        sx = float(np.float32(1.0 / (w - 1))) if w > 1 else 0.0
        sy = float(np.float32(1.0 / (h - 1))) if h > 1 else 0.0
        return np.array([env_state["plume_field"][y, x], x * sx, y * sy], dtype=np.float32)

    def get_metadata(self) -> dict:
        return {"type": "compact", "required_state_keys": ["agent_state", "plume_field", "grid_size"]}

    def __repr__(self) -> str:
        return "CompactObservation()"


class SparseGoalReward:
    """1.0 when the agent ends a step within ``goal_radius`` of the source (inclusive), else 0.0.

    An agent that had already reached the source before the step earns 0.0 (it is finished).

    Args:
        source_location: ``(x, y)`` of the source.
        goal_radius: Euclidean radius in cells; default the smallest positive float32 (only the
            source cell counts).
    """

    def __init__(self, source_location, goal_radius: float = DEFAULT_GOAL_RADIUS):
        self.source_location = (int(source_location[0]), int(source_location[1]))
        self.goal_radius = float(goal_radius)

    def compute_reward(self, prev_state, action, next_state, plume) -> float:
        if prev_state.goal_reached:  # a finished agent earns nothing more
            return 0.0
        dx = next_state.position[0] - self.source_location[0]
        dy = next_state.position[1] - self.source_location[1]
        return 1.0 if math.sqrt(dx * dx + dy * dy) <= self.goal_radius else 0.0

    def get_metadata(self) -> dict:
        return {"type": "sparse_goal", "parameters": {"source_location": list(self.source_location),
                                                      "goal_radius": self.goal_radius}}

    def __repr__(self) -> str:
        return f"SparseGoalReward(source_location={self.source_location}, goal_radius={self.goal_radius!r})"


class StaticGaussianPlume:
    """``C(x, y) = exp(-((x - xs)^2 + (y - ys)^2) / (2 sigma^2))``, computed once.

    Args:
        grid_size: ``(width, height)``.
        source_location: ``(x, y)`` of the peak.
        sigma: spread in cells.

    ``field_array`` is the ``(h, w)`` float32 field (read-only), the engine's own Gaussian,
    computed on first use (an environment whose scenario has the same plume never asks for it:
    its engine computes the same field itself).
    """

    def __init__(self, grid_size=(128, 128), source_location=None, sigma: float = 12.0):
        w, h = int(grid_size[0]), int(grid_size[1])
        if source_location is None:
            source_location = (w // 2, h // 2)
        self.grid_size = GridSize(w, h)
        self.source_location = (int(source_location[0]), int(source_location[1]))
        self.sigma = float(sigma)
        self._field = None

    @property
    def field_array(self) -> np.ndarray:
        if self._field is None:
            field = gaussian_field(self.grid_size, self.source_location, self.sigma)
            field.flags.writeable = False
            self._field = field
        return self._field

    def sample(self, x, y, t=None) -> float:
        if not self.grid_size.contains((x, y)):
            raise ValidationError(f"sample: got cell ({x}, {y}); expected a cell inside the "
                                  f"{self.grid_size.width}x{self.grid_size.height} grid")
        return float(self.field_array[int(y), int(x)])

    def reset(self, seed=None) -> None:
        """Nothing to do: the field is static."""

    def get_metadata(self) -> dict:
        return {"type": "static_gaussian", "parameters": {"source_location": list(self.source_location),
                                                          "sigma": self.sigma, "grid_size": list(self.grid_size)}}

    def __repr__(self) -> str:
        return (f"StaticGaussianPlume(grid_size={tuple(self.grid_size)}, "
                f"source_location={self.source_location}, sigma={self.sigma!r})")
