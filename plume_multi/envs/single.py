"""``PlumeSearchEnv``: the single-agent Gymnasium env (the docs' "Single-agent contract" page), on the engine.

One world of one agent: the front-end core's ``Simulator(scenario, num_worlds=1,
autoreset="disabled")`` does the moving, the goal test, the counting and the sensing; this module
maps the contract (its state machine, arguments, components, infos) onto it.
"""

from __future__ import annotations

import math
import numbers
import sys
import warnings
from collections.abc import Mapping
from enum import Enum

import gymnasium
import numpy as np
from gymnasium import logger

from ..checks import shown
from ..models.bodies import Cardinal
from ..models.base import Model
from ..models.plumes import Gaussian
from ..models.rewards import SparseGoal
from ..models.sensors import Concentration, Position
from ..errors import ComponentError, StateError, ValidationError
from ..viz.render import HumanWindow
from ..scenario import Scenario
from ..simulator import Simulator
from ._core import Core, CoreViews, action_value, scenario_from, sigma_of
from .components import (
    ENV_STATE_KEYS,
    AgentState,
    CompactObservation,
    DiscreteGridActions,
    FullFieldObservation,
    GridSize,
    SparseGoalReward,
    StaticGaussianPlume,
    check_component,
    required_state_keys,
)

__all__ = ["PlumeSearchEnv", "PlumeSearchCompactEnv", "EnvironmentState", "MAX_SEED", "compact_env"]

# Seeds are 0 <= seed < 2**31: the stricter of the two bounds the original env's documents gave.
MAX_SEED = 2**31 - 1
_RENDER_MODES = (None, "rgb_array", "human")
# The constructor's keyword arguments (besides config), which a dict ``config`` may also hold.
_ARGUMENTS = ("plume_model", "reward_fn", "observation_model", "action_processor", "grid_size",
              "source_location", "max_steps", "goal_radius", "render_mode", "plume_params")
# The "moore" action model's last action is "stay": the protocol path uses it to let the engine
# test the goal at a cell chosen by a user's action processor.
_STAY = 8


class EnvironmentState(Enum):
    """Lifecycle of a ``PlumeSearchEnv``: CREATED -> READY -> TERMINATED | TRUNCATED -> (reset) READY; any -> CLOSED."""

    CREATED = "created"        # after __init__: reset() before step()
    READY = "ready"            # an episode is running
    TERMINATED = "terminated"  # the agent reached the source
    TRUNCATED = "truncated"    # max_steps reached
    CLOSED = "closed"          # closed for good


_CREATED = EnvironmentState.CREATED
_READY = EnvironmentState.READY
_TERMINATED = EnvironmentState.TERMINATED
_TRUNCATED = EnvironmentState.TRUNCATED
_CLOSED = EnvironmentState.CLOSED


def _copy_obs(value):
    """A copy of an observation deep enough that it shares no array with ``value``."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, dict):
        return {k: _copy_obs(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_copy_obs(v) for v in value)
    if isinstance(value, list):
        return [_copy_obs(v) for v in value]
    return value


class PlumeSearchEnv(CoreViews, gymnasium.Env):
    """Find the source of a static odor plume on a grid, one cell per step.

    ## Description
    An agent starts on a random cell of a ``width x height`` grid and moves one cell per step
    towards the source of a static Gaussian plume,
    ``C(x, y) = exp(-((x - xs)^2 + (y - ys)^2) / (2 sigma^2))`` (float64, stored float32,
    1.0 at the source). The episode ends when the agent is within ``goal_radius`` of the
    source, or after ``max_steps`` steps. The simulation runs on the compiled engine of
    ``plume_multi`` (one world of one agent), so a step costs a few microseconds.

    ## Action Space
    ``Discrete(4)``: 0 UP ``(0, +1)``, 1 RIGHT ``(+1, 0)``, 2 DOWN ``(0, -1)``, 3 LEFT ``(-1, 0)``;
    the moved position is clamped into the grid. Actions must be integers (Python ``int``, NumPy
    integer, 0-d integer array) in 0..3; anything else raises ``ValidationError``.

    ## Observation Space
    ``Dict``, every array freshly allocated on every call:

    | key                   | space                                 | meaning                      |
    |-----------------------|---------------------------------------|------------------------------|
    | `agent_position`      | `Box(0, max(w,h)-1, (2,), int32)`     | agent cell `(x, y)`          |
    | `concentration_field` | `Box(0, 1, (h, w), float32)`          | the field, indexed `[y, x]`  |
    | `source_location`     | `Box(0, max(w,h)-1, (2,), int32)`     | source cell `(x, y)`         |

    Another ``observation_model`` replaces it (``CompactObservation()``: ``Box(0, 1, (3,),
    float32)`` = ``[C at the agent, x / (w-1), y / (h-1)]``).

    ## Rewards
    ``1.0`` (a Python ``float``) on a step that ends with the Euclidean distance to the source
    ``<= goal_radius``, else ``0.0``.

    ## Starting State
    ``rng = numpy.random.default_rng(seed)``; ``x = rng.integers(0, width)``, then
    ``y = rng.integers(0, height)`` (seed 42 on 128x128 gives (11, 99)). ``reset()`` without a
    seed draws one from ``self.np_random`` in ``[0, 2**31)`` and reports it in ``info["seed"]``,
    so every episode can be replayed. Any seed Gymnasium accepts (a non-negative integer) is
    taken: one of ``2**31`` or more (Stable-Baselines3 draws them in ``[0, 2**32)``) is folded
    into the contract's range, ``seed % 2**31``, and the env behaves exactly as with that seed,
    which ``info["seed"]`` reports.

    ## Episode End
    * Termination: the agent is within ``goal_radius`` of the source.
    * Truncation: ``step_count >= max_steps``. Both may be true on the same step (then the state
      is ``TERMINATED``).
    Stepping on after the end is allowed (Gymnasium lets episodes over-run): it warns once per
    episode and the state stays terminal until ``reset``. The engine's rules apply: an agent
    that reached the source stays there and earns 0; a truncated one keeps moving.

    ## States
    ``env.state`` (read-only) is an ``EnvironmentState``: ``CREATED`` → ``reset`` → ``READY`` →
    ``TERMINATED`` | ``TRUNCATED`` → ``reset`` → ``READY``; ``close`` from anywhere → ``CLOSED``.
    ``step`` before the first ``reset``, and ``reset``/``step``/``render`` after ``close``,
    raise ``StateError`` naming the call, the state and the way out. ``close`` never raises.

    ## Info
    ``reset``: ``seed``, ``episode`` (1, 2, ...), ``step_count`` (0), ``total_reward`` (0.0),
    ``goal_reached``, ``agent_xy``, ``plume_peak_xy``, ``distance_to_source``.
    ``step``: the same without ``episode``, plus ``concentration_at_agent``.

    ## Arguments (keyword-only)
    * ``grid_size=(128, 128)``: ``(width, height)``, integers 1..2048.
    * ``source_location=(width // 2, height // 2)``: ``(x, y)`` inside the grid.
    * ``max_steps=1000``: integer > 0.
    * ``goal_radius``: finite > 0; default the smallest positive float32 (only the source cell).
    * ``plume_params={"sigma": 12.0}``: ``0.1 <= sigma <= 100``.
    * ``render_mode=None``: ``None``, ``"rgb_array"`` (``(h, w, 3)`` uint8) or ``"human"``
      (a matplotlib window, the ``viz`` extra).
    * ``config``: a ``plume_multi.Scenario`` (one agent, ``"cardinal"`` actions, drawn starts)
      giving grid, source, sigma, goal radius and max steps; or a dict of any of the keyword
      arguments above. Keyword arguments given explicitly (not ``None``) win over it.
    * ``action_processor``, ``observation_model``, ``reward_fn``, ``plume_model``: components
      (see ``plume_multi.envs.components``); a missing protocol member raises
      ``ComponentError``.

    ## Components: the compiled path and the protocol path
    The built-ins (``DiscreteGridActions``, ``FullFieldObservation`` of this grid,
    ``CompactObservation``, ``SparseGoalReward`` with this source and goal radius) are recognised
    by exact type and run as one kernel call. Anything else is honoured through its protocol,
    around the same engine step, without a second copy of the physics:

    * a user's action processor chooses the next cell (``process_action``); the engine puts the
      agent there and tests the goal, counts and senses as usual (an agent that has reached the
      source no longer moves);
    * a user's reward function replaces the reward (termination stays the engine's goal test);
      it is not called on steps over-running a terminated episode, which earn 0.0;
    * a user's observation model gets ``env_state`` with the keys of
      ``components.ENV_STATE_KEYS``; its result is copied, so observations never share memory;
    * a plume with ``field_array`` feeds the engine directly; one without is sampled cell by
      cell. Either is read again after ``plume.reset(seed)`` at every reset, and the engine is
      given the new field if it changed. The field is static within an episode.

    ## Example
    >>> import plume_multi
    >>> env = plume_multi.PlumeSearchEnv(grid_size=(64, 32))
    >>> obs, info = env.reset(seed=42)
    >>> obs, reward, terminated, truncated, info = env.step(1)   # RIGHT
    >>> env.close()

    ## Version History
    * v0: the ``plume_nav_sim`` contract of 2025-10-01, on the ``plume_multi`` engine.
    """

    metadata = {"render_modes": ["rgb_array", "human"], "render_fps": 30}

    def __init__(self, *, plume_model=None, reward_fn=None, observation_model=None, action_processor=None,
                 config=None, grid_size=None, source_location=None, max_steps=None, goal_radius=None,
                 render_mode=None, plume_params=None):
        args = _merge_config(config, dict(
            plume_model=plume_model, reward_fn=reward_fn, observation_model=observation_model,
            action_processor=action_processor, grid_size=grid_size, source_location=source_location,
            max_steps=max_steps, goal_radius=goal_radius, render_mode=render_mode, plume_params=plume_params))

        render_mode = args["render_mode"]
        if render_mode is not None and not (isinstance(render_mode, str) and render_mode in _RENDER_MODES):
            raise ValidationError(f"render_mode: got {render_mode!r}; expected one of {list(_RENDER_MODES)}")
        if args["plume_model"] is not None and args["plume_params"] is not None:
            raise ValidationError("plume_params and plume_model were both given; give plume_params "
                                  "(for the built-in Gaussian) or plume_model, not both")
        sc = _scenario(args)
        self.scenario = sc
        self.render_mode = render_mode
        w, h = sc.grid_size
        self._grid = GridSize(w, h)
        self._source = sc.source_location

        # Components: the given ones checked against their protocols, the rest built-in.
        ap = args["action_processor"]
        om = args["observation_model"]
        rf = args["reward_fn"]
        pm = args["plume_model"]
        if ap is None:
            ap = DiscreteGridActions()
        if isinstance(ap, Model):  # a built-in body of the model library: compiled, no protocol
            if ap.family != "action" or ap.continuous:
                raise ComponentError(f"action_processor: got {ap!r}; expected an action processor or a grid "
                                     "body of plume_multi.actions (Cardinal, Moore, Oriented, RunTumble)")
            sc = sc.replace(action_model=ap)
            self.scenario = sc
        if om is None:
            om = FullFieldObservation((w, h))
        if rf is None:
            rf = SparseGoalReward(sc.source_location, sc.goal_radius)
        if pm is None:
            pm = StaticGaussianPlume((w, h), sc.source_location, sc.sigma)
        self._action_proc = ap if isinstance(ap, Model) else check_component("action_processor", ap)
        self._obs_model = check_component("observation_model", om)
        self._reward_fn = check_component("reward_fn", rf)
        self._plume = check_component("plume_model", pm)
        if type(om) is FullFieldObservation and tuple(om.grid_size) != (w, h):
            raise ComponentError(
                f"observation_model: {om!r} observes a {om.grid_size.width}x{om.grid_size.height} grid; this "
                f"environment's grid is {w}x{h}. Use FullFieldObservation(grid_size=({w}, {h}))")

        # Which parts run compiled: built-ins (exact types, so an override is never skipped)
        # whose parameters are the scenario's.
        self._builtin_actions = type(ap) is DiscreteGridActions or isinstance(ap, Model)
        self._n_actions = sc.n_actions
        self._builtin_reward = (type(rf) is SparseGoalReward and rf.source_location == sc.source_location
                                and rf.goal_radius == sc.goal_radius)
        self._obs_kind = ("full" if type(om) is FullFieldObservation else
                          "compact" if type(om) is CompactObservation else "protocol")
        if self._obs_kind == "full":
            _warn_flat_trainer()
        self._obs_keys = required_state_keys(om) if self._obs_kind == "protocol" else ()
        self._fast = self._builtin_actions and self._builtin_reward and self._obs_kind != "protocol"
        self._static_plume = (type(pm) is StaticGaussianPlume and pm.source_location == sc.source_location
                              and tuple(pm.grid_size) == (w, h) and pm.sigma == sc.sigma)

        # Spaces are the components' own objects, built once (C5, C6).
        self.action_space = (gymnasium.spaces.Discrete(sc.n_actions) if isinstance(ap, Model)
                             else self._action_proc.action_space)
        self.observation_space = om.observation_space

        # The engine. A user's action processor needs the "moore" model's "stay" action.
        self._engine_scenario = sc if self._builtin_actions else sc.replace(action_model="moore")
        self._never_free = np.zeros(1, dtype=np.bool_)  # action_masks() is asked only while READY
        self._new_core(self._plume_field() if not self._static_plume else None)

        self._source_arr = np.array(sc.source_location, dtype=np.int32)
        self._window = None

        self._state = _CREATED
        self._episode_count = 0
        self._step_count = 0
        self._total_reward = 0.0
        self._seed = None
        self._overrun_warned = False

    # ------------------------------------------------------------------ engine plumbing
    # The core's simulator, the views of its buffers and the render window are rebuilt in a copy
    # (CoreViews), which continues exactly as the original.
    _UNCOPIED = ("_sim", "_field", "_pos_row", "_obs_row", "_reward_buf", "_term_buf", "_trunc_buf", "_act",
                 "_masks", "_window")

    def _new_core(self, field) -> None:
        """The one-world, one-agent core (with ``field``, or the scenario's Gaussian)."""
        try:
            self._core = Core(self._engine_scenario, 1, autoreset="disabled", field=field, max_seed=MAX_SEED)
        except ValidationError as exc:
            raise ComponentError(f"plume_model: {type(self._plume).__name__} gave an unusable field: {exc}") from exc
        self._bind()

    def _bind(self) -> None:
        """The views of the core's buffers that the step reads (a copy's window starts closed)."""
        self._sim = sim = self._core.sim
        self._window = getattr(self, "_window", None)
        s = sim.state
        self._field = sim.field          # (h, w) float32, read-only
        self._pos_row = s.pos[0]         # (2,) int32 view: (x, y)
        self._obs_row = s.obs[0]         # (3,) float32 view: [C, x/(w-1), y/(h-1)]
        self._reward_buf = s.reward
        self._term_buf = s.terminated
        self._trunc_buf = s.truncated
        self._act = np.zeros(1, dtype=np.int64)
        # The moves behind action_masks(): only a built-in grid body's displacements are known.
        self._masks = self._core.masker(self._never_free) if self._builtin_actions else None

    def _plume_field(self) -> np.ndarray:
        """The plume's field as the engine needs it: ``field_array``, else sampled at every cell."""
        plume = self._plume
        w, h = self._grid
        name = type(plume).__name__
        field = getattr(plume, "field_array", None)
        if field is not None:
            field = np.asarray(field)
            if field.shape != (h, w):
                raise ComponentError(f"plume_model: {name}.field_array has shape {field.shape}; "
                                     f"expected (height, width) = ({h}, {w})")
            return field
        out = np.empty((h, w), dtype=np.float32)
        for y in range(h):
            for x in range(w):
                out[y, x] = plume.sample(x, y)
        return out

    def _refresh_plume(self, seed: int) -> None:
        """``plume.reset(seed)``; give the engine the plume's field again if it changed."""
        self._plume.reset(seed)
        if self._static_plume:
            return
        field = self._plume_field()
        if not np.array_equal(np.asarray(field, dtype=np.float32), self._field):
            self._new_core(field)

    def _agent_state(self) -> AgentState:
        x, y = self._pos_row.tolist()
        return AgentState(position=(x, y), orientation=0.0, step_count=self._step_count,
                          total_reward=self._total_reward, goal_reached=self._term_buf.item(0))

    # ------------------------------------------------------------------ read-only views
    @property
    def state(self) -> EnvironmentState:
        """The lifecycle state (read-only)."""
        return self._state

    @property
    def agent_state(self):
        """The agent as an ``AgentState``, or ``None`` before the first reset and after close."""
        if self._state is _CREATED or self._state is _CLOSED:
            return None
        return self._agent_state()

    @property
    def simulator(self) -> Simulator:
        """The one-world, one-agent ``Simulator`` underneath (its arrays are live views: read only)."""
        return self._sim

    @property
    def episode_count(self) -> int:
        """Episodes started by ``reset`` (0 before the first)."""
        return self._episode_count

    @property
    def step_count(self) -> int:
        """Steps taken in the current episode."""
        return self._step_count

    @property
    def episode_seed(self):
        """The seed of the current episode (``None`` before the first reset)."""
        return self._seed

    @property
    def action_processor(self):
        return self._action_proc

    @property
    def observation_model(self):
        return self._obs_model

    @property
    def reward_fn(self):
        return self._reward_fn

    @property
    def plume_model(self):
        return self._plume

    def action_masks(self) -> np.ndarray:
        """``(K,)`` bool, a new array: the actions that move the agent off its cell now.

        For sb3-contrib's ``MaskablePPO`` (it calls this method). A move into a wall is masked;
        once the episode has ended, or where the moves are not known (a user's action
        processor, a body without a displacement table), every action is allowed. Reading the
        masks changes nothing (the contract's observations and infos stay as they are).

        Raises:
            StateError: before the first ``reset`` or after ``close``.
        """
        if self._state is _CREATED or self._state is _CLOSED:
            self._refuse("action_masks()")
        if self._masks is None or self._state is not _READY:
            return np.ones(self.action_space.n, dtype=np.bool_)
        return self._masks()[0]

    # ------------------------------------------------------------------ reset
    def reset(self, *, seed=None, options=None):
        """Start an episode; return ``(observation, info)``.

        Args:
            seed: ``None`` (a seed is drawn from ``self.np_random`` and reported) or an integer
                ``>= 0``; one of ``2**31`` or more is folded into ``[0, 2**31)`` (``seed % 2**31``).
            options: ``None`` or an empty dict (the contract defines no options).

        Raises:
            StateError: the environment is closed.
            ValidationError: bad seed or options; nothing changed.
        """
        if self._state is _CLOSED:
            raise StateError("Cannot reset: the environment is closed; create a new one")
        seed = self._core.fold_seed(seed)
        if options is not None:
            if not isinstance(options, Mapping):
                raise ValidationError(f"options: got {shown(options)}; expected None or a dict")
            if options:
                raise ValidationError(f"options: got keys {sorted(map(str, options))}; PlumeSearchEnv takes no "
                                      "options (pass None or {})")

        if self.render_mode == "human" and self._window is None:
            self._window = HumanWindow(title="PlumeSearchEnv", fps=self.metadata["render_fps"])  # RenderingError first

        super().reset(seed=seed)
        if seed is None:
            seed = int(self.np_random.integers(0, MAX_SEED + 1))
        self.action_space.seed(seed)
        self._refresh_plume(seed)
        self._sim.reset(seed=seed)

        self._seed = seed
        self._episode_count += 1
        self._step_count = 0
        self._total_reward = 0.0
        self._overrun_warned = False
        self._state = _READY

        # As the reference does: a start within goal_radius of the source counts as reached.
        info = self._info(goal_reached=None)
        info["episode"] = self._episode_count
        obs = self._observe()
        if self.render_mode == "human":
            self.render()
        return obs, info

    # ------------------------------------------------------------------ step
    def step(self, action):
        """Advance one step: validate the action, move, reward, count, set the flags, observe.

        Returns:
            ``(observation, reward: float, terminated: bool, truncated: bool, info: dict)``.

        Raises:
            StateError: before the first ``reset`` or after ``close``.
            ValidationError: the action is not valid; nothing changed.
        """
        state = self._state
        if state is not _READY and (state is _CREATED or state is _CLOSED):
            self._refuse("step")
        if not self._fast:
            return self._step_protocol(action)
        if type(action) is not int or not 0 <= action < 4:
            checked = action_value(action, self._n_actions)
            if checked < 0:
                self._bad_action(action)
            action = checked
        if state is not _READY:
            self._warn_overrun()

        act = self._act
        act[0] = action
        self._sim.step(act)
        self._step_count += 1
        return self._conclude_step(self._reward_buf.item(0), self._term_buf.item(0), self._trunc_buf.item(0))

    def _step_protocol(self, action):
        """``step`` with at least one user component, called through its protocol."""
        state = self._state
        if self._builtin_actions:
            a = action_value(action, self._n_actions)
            if a < 0:
                self._bad_action(action)
        else:
            try:
                valid = self._action_proc.validate_action(action)
            except Exception as exc:
                raise ComponentError(f"action_processor: {type(self._action_proc).__name__}.validate_action "
                                     f"raised {exc!r}; it must return a bool") from exc
            if not valid:
                raise ValidationError(f"action: got {action!r}; {type(self._action_proc).__name__} says it is not "
                                      f"in its action space {self.action_space}")
        if state is not _READY:
            self._warn_overrun()

        prev = self._agent_state()
        if self._builtin_actions:
            self._act[0] = a
        else:
            self._act[0] = _STAY
            if not prev.goal_reached:
                # An agent at the source stays put (the engine's rule); others go where the
                # processor says, and the engine's "stay" step then tests the goal there.
                self._pos_row[:] = self._processed_position(action, prev)
        self._sim.step(self._act)

        terminated = self._term_buf.item(0)
        truncated = self._trunc_buf.item(0)
        self._step_count += 1
        if self._builtin_reward or prev.goal_reached:
            # The engine's reward; once the agent has reached the source it earns nothing more
            # (the engine's rule for a finished agent), whatever the reward function.
            reward = self._reward_buf.item(0)
        else:
            nxt = AgentState(position=tuple(self._pos_row.tolist()), orientation=prev.orientation, step_count=self._step_count,
                             total_reward=self._total_reward, goal_reached=terminated)
            reward = self._user_reward(prev, action, nxt)
        return self._conclude_step(reward, terminated, truncated)

    def _conclude_step(self, reward: float, terminated: bool, truncated: bool):
        """After the engine's step: count the reward, move the state machine, observe, inform."""
        self._total_reward += reward
        if terminated:
            self._state = _TERMINATED
        elif truncated:
            self._state = _TRUNCATED
        info = self._info(goal_reached=terminated)
        info["concentration_at_agent"] = self._obs_row.item(0)
        obs = self._observe()
        if self.render_mode == "human":
            self.render()
        return obs, reward, terminated, truncated, info

    def _info(self, goal_reached) -> dict:
        """The info keys that ``reset`` and ``step`` share.

        ``goal_reached=None``: whether the agent is within ``goal_radius`` of the source now.
        """
        x, y = self._pos_row.tolist()
        sx, sy = self._source
        dx = x - sx
        dy = y - sy
        distance = math.sqrt(dx * dx + dy * dy)
        if goal_reached is None:
            goal_reached = distance <= self.scenario.goal_radius
        return {
            "seed": self._seed,
            "step_count": self._step_count,
            "total_reward": self._total_reward,
            "goal_reached": goal_reached,
            "agent_xy": (x, y),
            "plume_peak_xy": (sx, sy),
            "distance_to_source": distance,
        }

    def _processed_position(self, action, prev: AgentState) -> tuple:
        proc = self._action_proc
        name = type(proc).__name__
        new = proc.process_action(action, prev, self._grid)
        pos = getattr(new, "position", None)
        try:
            x, y = pos
        except (TypeError, ValueError):
            raise ComponentError(f"action_processor: {name}.process_action returned {new!r}; expected an "
                                 "AgentState with position (x, y)") from None
        if not (isinstance(x, numbers.Integral) and isinstance(y, numbers.Integral)) or not self._grid.contains((x, y)):
            raise ComponentError(f"action_processor: {name}.process_action moved the agent to {pos!r}; expected "
                                 f"an integer cell inside the {self._grid.width}x{self._grid.height} grid")
        return int(x), int(y)

    def _user_reward(self, prev, action, nxt) -> float:
        value = self._reward_fn.compute_reward(prev, action, nxt, self._plume)
        if not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)) or not math.isfinite(value):
            raise ComponentError(f"reward_fn: {type(self._reward_fn).__name__}.compute_reward returned {value!r}; "
                                 "expected a finite float")
        return float(value)

    def _observe(self):
        """The observation of the current state, freshly allocated."""
        kind = self._obs_kind
        if kind == "full":
            return {
                "agent_position": self._pos_row.copy(),
                "concentration_field": self._field.copy(),
                "source_location": self._source_arr.copy(),
            }
        if kind == "compact":
            return self._obs_row.copy()
        available = {
            "agent_state": self._agent_state,
            "plume_field": lambda: self._field,
            "source_location": lambda: self._source,
            "grid_size": lambda: self._grid,
            "step_count": lambda: self._step_count,
            "goal_radius": lambda: self.scenario.goal_radius,
        }
        keys = self._obs_keys or ENV_STATE_KEYS
        env_state = {k: available[k]() for k in keys}
        return _copy_obs(self._obs_model.get_observation(env_state))

    def _bad_action(self, action):
        body = self.scenario.action_model
        names = ", ".join(f"{k} {name}" for k, name in enumerate(body.ACTION_NAMES))
        raise ValidationError(f"action: got {shown(action, typed=True)}; expected an integer in "
                              f"0..{self._n_actions - 1} ({names}). Nothing was changed.")

    def _refuse(self, call: str):
        if self._state is _CLOSED:
            raise StateError(f"Cannot {call}: the environment is closed; create a new one")
        raise StateError(f"Cannot {call} before reset(): call reset() first")

    def _warn_overrun(self):
        if not self._overrun_warned:
            self._overrun_warned = True
            warnings.warn(
                f"step() called in state {self._state.name}: episode {self._episode_count} has already ended. "
                "The step runs, but call reset() to start a new episode (warned once per episode).",
                UserWarning, stacklevel=3)

    # ------------------------------------------------------------------ render / close
    def render(self):
        """``"rgb_array"``: the ``(h, w, 3)`` uint8 frame; ``"human"``: show it, return ``None``.

        Raises:
            StateError: before the first ``reset`` or after ``close``.
            RenderingError: ``"human"`` without matplotlib installed.
        """
        if self._state is _CREATED or self._state is _CLOSED:
            self._refuse("render")
        if self.render_mode is None:
            logger.warn("render() was called with render_mode=None; pass render_mode='rgb_array' or 'human' "
                        "to PlumeSearchEnv(...) or gymnasium.make(...)")
            return None
        frame = self._core.frame(0)
        if self.render_mode == "rgb_array":
            return frame
        if self._window is None:
            self._window = HumanWindow(title="PlumeSearchEnv", fps=self.metadata["render_fps"])
        self._window.show(frame)
        return None

    def close(self):
        """Release the window (if any) and enter ``CLOSED``. Idempotent; never raises."""
        try:
            if self._window is not None:
                self._window.close()
        except Exception:  # close must never raise (contract); the window is gone either way
            pass
        self._window = None
        self._state = _CLOSED

    def __repr__(self) -> str:
        sc = self.scenario
        return (f"PlumeSearchEnv(grid_size={sc.grid_size}, source_location={sc.source_location}, "
                f"max_steps={sc.max_steps}, goal_radius={sc.goal_radius!r}, sigma={sc.sigma!r}, "
                f"state={self._state.name})")


# ---------------------------------------------------------------------------------- construction
# Trainers whose default networks take flat observations: made by one of them, the contract's Dict
# observation (the whole field) ends in the trainer's own error, which does not name our ids.
_FLAT_TRAINERS = {"stable_baselines3": "Stable-Baselines3 (MlpPolicy; MultiInputPolicy trains on the whole field, "
                                       "about 20 steps/s)",
                  "ray.rllib": "RLlib (its default encoders take no Dict observation)"}


def _warn_flat_trainer() -> None:
    """Warn, naming the flat id, when a trainer of ``_FLAT_TRAINERS`` is making this Dict-observation env."""
    frame = sys._getframe(2)
    for _ in range(40):  # the trainer's make call is a few frames up (gymnasium.make, the env's own)
        if frame is None:
            return
        module = frame.f_globals.get("__name__", "")
        for package, what in _FLAT_TRAINERS.items():
            if module == package or module.startswith(package + "."):
                warnings.warn(
                    f"PlumeSearch-v0 (PlumeSearchEnv) observes the contract's Dict with the whole concentration field; "
                    f"{what} needs a flat observation. Use the id 'plume_multi:PlumeSearchCompact-v0' (Box(3): "
                    "concentration, x, y), or a plume_multi.vector_env for speed; see the Integrations page.",
                    UserWarning, stacklevel=2)
                return
        frame = frame.f_back


def _merge_config(config, explicit: dict) -> dict:
    """Keyword arguments with ``config`` filled in under the explicit (non-None) ones."""
    if config is None:
        return explicit
    if isinstance(config, Scenario):
        sc = config
        problems = []
        if sc.n_agents != 1:
            problems.append(f"n_agents={sc.n_agents} (expected 1)")
        if type(sc.action_model) is not Cardinal:
            problems.append(f"action_model={sc.action_model!r} (expected 'cardinal'; give another grid body "
                            "as action_processor=)")
        if type(sc.plume) is not Gaussian or sc.plume.random_source:
            problems.append(f"plume={sc.plume!r} (expected the static Gaussian)")
        if type(sc.reward) is not SparseGoal or sc.sensors != (Concentration(), Position()) or sc.start_region:
            problems.append("custom sensors, reward or start_region (the contract fixes them)")
        if sc.start_positions is not None:
            problems.append("fixed start_positions (PlumeSearchEnv draws the start from the seed)")
        if sc.n_neighbours or sc.team:
            problems.append("n_neighbours/team (single-agent)")
        if problems:
            raise ValidationError(f"config: a Scenario for PlumeSearchEnv must describe one agent with the "
                                  f"contract's moves; got {', '.join(problems)}")
        base = dict(grid_size=sc.grid_size, source_location=sc.source_location, max_steps=sc.max_steps,
                    goal_radius=sc.goal_radius, plume_params={"sigma": sc.sigma})
        if explicit["plume_model"] is not None:
            base.pop("plume_params")  # the plume model gives the field
    elif isinstance(config, Mapping):
        unknown = sorted(str(k) for k in config if k not in _ARGUMENTS)
        if unknown:
            raise ValidationError(f"config: got unknown keys {unknown}; expected keys among {list(_ARGUMENTS)}")
        base = dict(config)
    else:
        raise ValidationError(f"config: got {type(config).__name__}; expected None, a plume_multi.Scenario "
                              "or a dict of PlumeSearchEnv keyword arguments")
    merged = dict(explicit)
    for key, value in base.items():
        if merged.get(key) is None:
            merged[key] = value
    return merged


# Scenario field -> the argument a user gave it as (for the error messages).
_ARG_NAMES = {"grid_size": "grid_size", "source_location": "source_location", "max_steps": "max_steps",
              "goal_radius": "goal_radius", "sigma": "plume_params['sigma']"}


def _scenario(args: dict) -> Scenario:
    """The validated one-agent Scenario; a ValidationError names the argument as given."""
    sigma = sigma_of(args["plume_params"])
    kwargs = dict(sigma=12.0 if sigma is None else sigma)
    for key in ("grid_size", "source_location", "max_steps", "goal_radius"):
        if args[key] is not None:
            kwargs[key] = args[key]
    size = kwargs.get("grid_size")
    # a length, not np.ndim: a ragged value such as (None, []) is Scenario's to refuse, by name
    if (isinstance(size, (tuple, list)) or isinstance(size, np.ndarray) and size.ndim == 1) and len(size) == 3:
        expected = ("(width, height): the single-agent environment is 2-D (its contract). For 3-D worlds use "
                    "Simulator, vector_env, multi_agent_vector_env or parallel_env")
        raise ValidationError(f"PlumeSearchEnv grid_size: got {tuple(size)!r}; expected {expected}",
                              owner="PlumeSearchEnv", field="grid_size", got=repr(tuple(size)), expected=expected)
    return scenario_from(kwargs, owner="PlumeSearchEnv", labels=_ARG_NAMES, prefix="PlumeSearchEnv ")


class PlumeSearchCompactEnv(PlumeSearchEnv):
    """``PlumeSearchEnv`` with ``CompactObservation()`` and infos that batch: what
    ``gymnasium.make("PlumeSearchCompact-v0")`` makes, for trainers and vector envs.

    The contract env (``PlumeSearch-v0``) keeps its infos exactly; this one makes ``reset`` and
    ``step`` infos of the same keys and batchable values, so that Gymnasium's vector envs and
    wrappers, and the trainers built on them, take it as it is:

    * no ``episode`` counter in the reset info (``env.episode_count`` has it): Gymnasium's
      ``RecordEpisodeStatistics`` writes its statistics under ``episode`` (CleanRL's
      ``SyncVectorEnv([... RecordEpisodeStatistics(gym.make(id)) ...])`` pattern), and TorchRL
      wants the keys of ``reset`` and ``step`` to agree;
    * ``concentration_at_agent`` in the reset info too;
    * ``agent_xy`` and ``plume_peak_xy`` are ``(2,)`` int32 arrays, not tuples, so a vector env
      stacks them into ``(n, 2)`` arrays (TorchRL's ``GymEnv(id, num_envs=n)`` reads them);
    * every info has ``action_mask``, ``(4,)`` bool (``action_masks()``).

    Everything else (observations, rewards, flags, states, errors) is ``PlumeSearchEnv``'s.
    """

    def __init__(self, **kwargs):
        if kwargs.get("observation_model") is not None:
            raise ValidationError("observation_model: PlumeSearchCompact-v0 always uses CompactObservation(); "
                                  "for another observation model use PlumeSearch-v0 or PlumeSearchEnv(...)")
        super().__init__(observation_model=CompactObservation(), **kwargs)

    def reset(self, *, seed=None, options=None):
        obs, info = super().reset(seed=seed, options=options)
        del info["episode"]
        info["concentration_at_agent"] = self._obs_row.item(0)
        return obs, info

    def _info(self, goal_reached) -> dict:
        info = super()._info(goal_reached)
        info["agent_xy"] = np.array(info["agent_xy"], dtype=np.int32)
        info["plume_peak_xy"] = np.array(info["plume_peak_xy"], dtype=np.int32)
        info["action_mask"] = self.action_masks()
        return info


def compact_env(**kwargs) -> PlumeSearchCompactEnv:
    """``PlumeSearchCompactEnv(**kwargs)``: the entry point of ``PlumeSearchCompact-v0`` (a
    ``Box(0, 1, (3,), float32)`` observation, infos that batch). ``sigma=s`` is accepted as
    ``plume_params={"sigma": s}``."""
    if "sigma" in kwargs:  # the vector env's spelling, so one set of options works in every mode
        kwargs["plume_params"] = {"sigma": sigma_of(kwargs.get("plume_params"), kwargs.pop("sigma"))}
    return PlumeSearchCompactEnv(**kwargs)
