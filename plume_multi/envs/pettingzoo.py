"""PettingZoo front-end: N searchers in one shared plume, as a ``ParallelEnv`` and its AEC form.

* ``raw_env`` — the ``ParallelEnv`` class (one world of N agents on the ``Simulator``).
* ``parallel_env(**kwargs)`` — an instance of it.
* ``env(**kwargs)`` — its AEC form: ``parallel_to_aec`` (which also enforces call order).

Agent names exist only here: agent ``n`` of the simulator is ``"searcher_{n}"``. Importing this
module registers ``"plume_multi/plume_search_v0"`` in PettingZoo's AEC and parallel registries
(PettingZoo >= 1.25 has them), so ``pettingzoo.make("parallel", "plume_multi/plume_search_v0")``
works once it has been imported.
"""

from __future__ import annotations

import inspect
import sys
import warnings
from collections.abc import Mapping
from itertools import compress

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec_wrapper
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from ..checks import is_int, shown
from ..errors import StateError, ValidationError
from ..scenario import DEFAULT_GOAL_RADIUS, Scenario
from ..simulator import Simulator
from ..viz.render import HumanWindow
from ._core import Core, CoreViews, require_grid_body, scenario_from
from .registration import PETTINGZOO_ID, register_pettingzoo

__all__ = ["raw_env", "parallel_env", "env", "PlumeAECEnv", "ENV_NAME", "REGISTRY_ID", "register_pettingzoo"]

ENV_NAME = "plume_search_v0"
# PettingZoo's registry writes versions Gymnasium-style ("-v0") and accepts "_v0" as well;
# ``import plume_multi`` registers it (plume_multi/envs/registration.py).
REGISTRY_ID = PETTINGZOO_ID
AGENT_PREFIX = "searcher_"
STATE_COLUMNS = ("concentration", "x", "y", "active")

# Action types taken by the fast path (one C-level conversion for the whole dict). Anything else
# (bools, floats, 0-d arrays, uint64, huge ints) goes through the checked per-agent path.
_FAST_ACTION_TYPES = frozenset({int, np.int64, np.int32, np.int16, np.int8, np.uint8, np.uint16, np.uint32})



# TorchRL's PettingZooWrapper ends a parallel env's episode at the first done agent; without black
# death that is the first arrival (plume_multi.integrations.torchrl names it for TorchRL users).
FIRST_ARRIVAL_WARNING = (
    "TorchRL's PettingZooWrapper ends a parallel env's episode when any agent is done (done_on_any=True, its "
    "default for parallel envs); without black death a searcher that reaches the source is done and leaves "
    "env.agents, so every episode would end at the first arrival. Make the env with "
    "plume_multi.parallel_env(..., black_death=True) (every searcher stays until the world's episode ends), or "
    "wrap it with PettingZooWrapper(env, done_on_any=False, use_mask=True)."
)


def warn_if_first_arrival_ends_episodes(env, depth: int = 2) -> None:
    """Warn (``UserWarning``, once per env) when the function ``depth`` frames up the stack (the
    caller of ``env.reset``) is a method of a TorchRL wrapper that ends episodes at the first done
    agent, and ``env`` lets arrived searchers leave (no black death, several searchers)."""
    if getattr(env, "black_death", True) or len(env.possible_agents) < 2 or getattr(env, "_warned_first_arrival", False):
        return
    if "torchrl" not in sys.modules:  # no wrapper of TorchRL's can be calling
        return
    try:
        caller = sys._getframe(depth).f_locals.get("self")
    except ValueError:  # the stack is shallower than that
        return
    if type(caller).__module__.startswith("torchrl.") and getattr(caller, "done_on_any", False) is True:
        env._warned_first_arrival = True
        warnings.warn(FIRST_ARRIVAL_WARNING, UserWarning, stacklevel=depth + 1)


def _check_max_cycles(value) -> int:
    if not is_int(value) or not 1 <= value < 2**31:
        raise ValidationError(f"max_cycles: got {shown(value)}; expected an integer >= 1 (and < 2**31)")
    return int(value)


class raw_env(CoreViews, ParallelEnv, EzPickle):
    """Plume search: N searchers look for the source of an odor plume in one shared field.

    ## Description
    A static Gaussian plume ``C(x, y) = exp(-|(x, y) - source|^2 / (2 sigma^2))`` covers a
    ``width x height`` grid. ``n_agents`` searchers (``searcher_0`` … ``searcher_{N-1}``) move on it
    at the same time; each senses the concentration at its own cell, its own position and,
    optionally, where its ``n_neighbours`` nearest fellow searchers are. Agents do not block each
    other: several may share a cell. The world is advanced by compiled kernels; this class only
    turns dicts into arrays and back.

    ## Action Space
    ``Discrete(4)`` per agent (``action_model="cardinal"``): 0 UP ``(0, +1)``, 1 RIGHT ``(+1, 0)``,
    2 DOWN ``(0, -1)``, 3 LEFT ``(-1, 0)``; ``Discrete(9)`` for ``"moore"`` (the eight neighbours
    clockwise from UP, then 8 STAY). Moves are clamped into the grid. Every searching agent must
    be given an action each step (a Python int, NumPy integer or 0-d integer array). Actions for
    agents that have finished (in ``possible_agents``, not searching any more) are checked and
    ignored, so trainers that send an action for every possible agent keep running. Missing
    actions, unknown agents, booleans, floats and out-of-range values raise ``ValidationError``
    before anything changes.

    ## Observation Space
    ``Box(low, high, (3 + 2k,), float32)`` per agent, ``k = n_neighbours``:

    | index          | meaning                                                     | range   |
    |----------------|-------------------------------------------------------------|---------|
    | 0              | concentration at the agent's cell                           | [0, 1]  |
    | 1              | x / (width - 1)  (0 when width = 1)                          | [0, 1]  |
    | 2              | y / (height - 1) (0 when height = 1)                         | [0, 1]  |
    | 3 + 2j, 4 + 2j | (dx / (width - 1), dy / (height - 1)) to the j-th nearest    | [-1, 1] |
    |                | other searcher (squared distance, ties by lower index)       |         |

    Finished searchers stay on the grid (at the source) and still count as neighbours.
    Each step returns one fresh copy of the batch; each agent's observation is a row view of
    that copy, so nothing returned shares memory with an earlier return.

    ## Global state
    ``state()`` is a ``(4 N + 1,)`` float32 vector in ``[0, 1]`` (``state_space``): for each agent in
    order, ``(concentration, x, y, active)`` (the first three equal its observation's first three;
    ``active`` is 1.0 while it searches), then the fraction of ``max_cycles`` elapsed. In a 3-D
    world (``grid_size=(W, H, D)``) ``(5 N + 1,)``: ``(concentration, x, y, z, active)`` per agent.

    ## Rewards
    ``team=False``: 1.0 to an agent on the step it comes within ``goal_radius`` of the source, else
    0.0. ``team=True``: the first arrival ends the episode for everyone and every agent still
    searching receives 1.0 on that step (the team reward is shared, not split).

    ## Starting State
    With ``start_positions=None``, ``reset(seed=s)`` draws start cells as
    ``numpy.random.default_rng(s)`` does: ``searcher_0`` takes the first ``(x, y)`` pair (x, then y),
    ``searcher_1`` the next, and so on, so ``searcher_0`` starts where the single-agent
    ``PlumeSearchEnv().reset(seed=s)`` does (for ``s < 2**31``; any non-negative integer is a seed,
    one beyond the engine's ``2**63 - 1`` taken modulo ``2**63``). ``reset()`` without a seed
    continues the env's own stream. With ``start_positions``, every episode starts there.

    ## Episode End
    * Termination: an agent that reaches the source is terminated and leaves ``agents``; with
      ``team=True`` the first arrival terminates every agent.
    * Truncation: after ``max_cycles`` steps every remaining agent is truncated.
    The episode is over when ``agents`` is empty; ``step({})`` is then allowed and returns empty
    dicts (wrappers such as SuperSuit's ``black_death_v3`` rely on it).

    ## Fixed agent sets: ``black_death=True``
    What SuperSuit's ``black_death_v3`` adds, built in, for trainers that assume every agent stays
    until the end (AgileRL, SuperSuit's vector conversion, many MARL trainers): an agent that
    reaches the source stays in ``agents`` until its world's episode ends. From the step after
    its arrival it observes zeros and earns 0.0; its actions are checked and ignored (it may also
    be left out of ``actions``). ``terminations`` and ``truncations`` are False for everyone until
    the episode ends (every agent has arrived, or ``max_cycles`` steps); on that step every agent
    gets ``terminations[a]`` = it reached the source, ``truncations[a]`` = the step limit was
    reached, and ``agents`` becomes empty. The arrival itself is reported at once in the infos:
    ``infos[a]["arrived"]`` is True from the step ``a`` reaches the source on (False before, and
    in the reset infos; with ``team=True``, every searcher's from the first arrival).

    ``terminate_on_arrival=True`` (with ``black_death=True``) reports it in the flags instead, for
    trainers that keep a fixed agent set and cut each searcher's returns at its own termination
    (AgileRL, MAPPO/IPPO implementations, TorchRL's ``PettingZooWrapper(..., done_on_any=False)``):
    ``terminations[a]`` is True from the step ``a`` arrives on, while ``a`` stays in ``agents``
    (observing zeros, earning 0.0) until the world's episode ends. This departs from PettingZoo's
    convention that a terminated agent leaves ``agents``; use it only where the trainer asks for it.

    ## Arguments
    All keyword-only; invalid values raise ``ValidationError`` naming the argument.

    | argument        | default         | meaning                                                    |
    |-----------------|-----------------|------------------------------------------------------------|
    | n_agents        | 8               | searchers N                                                |
    | grid_size       | (128, 128)      | (width, height), each 1..2048; (width, height, depth): 3-D |
    | source_location | centre          | (x, y) of the source ((x, y, z) in 3-D)                    |
    | sigma           | 12.0            | plume spread in cells, 0.1..100                            |
    | goal_radius     | tiny            | arrival distance; default: only the source cell counts     |
    | max_cycles      | 1000            | steps before truncation (assignable; from next ``reset``)  |
    | team            | False           | first arrival ends the episode for all, reward shared      |
    | n_neighbours    | 0               | k nearest other searchers sensed, 0..N-1                   |
    | action_model    | "cardinal"      | "cardinal" (4 moves) or "moore" (8 moves + stay)           |
    | start_positions | None            | N pairs (x, y) used every episode, or None to draw them    |
    | walls           | None            | solid cells, as Scenario(walls=...): (H, W) bool mask(s)   |
    | render_mode     | None            | None, "rgb_array" or "human"                               |
    | black_death     | False           | finished agents stay in ``agents`` (see above)             |
    | terminate_on_arrival | False      | with black_death: ``terminations`` True from the arrival on |

    ## Version History
    * v0: first version.

    ## Example
    >>> from plume_multi import parallel_env
    >>> env = parallel_env(n_agents=4, grid_size=(64, 48), n_neighbours=1)
    >>> observations, infos = env.reset(seed=0)
    >>> while env.agents:
    ...     actions = {agent: env.action_space(agent).sample() for agent in env.agents}
    ...     observations, rewards, terminations, truncations, infos = env.step(actions)
    >>> env.close()
    """

    metadata = {
        "name": ENV_NAME,
        "is_parallelizable": True,
        "render_modes": ["rgb_array", "human"],
        "render_fps": 30,
    }

    def __init__(self, *, n_agents: int = 8, grid_size=None, source_location=None,
                 sigma: float | None = None, goal_radius: float = DEFAULT_GOAL_RADIUS, max_cycles: int = 1000,
                 team: bool = False, n_neighbours: int = 0, action_model="cardinal",
                 start_positions=None, render_mode: str | None = None, black_death: bool = False,
                 terminate_on_arrival: bool = False, plume=None, sensors=None, reward=None, start_region=None,
                 walls=None):
        EzPickle.__init__(self, n_agents=n_agents, grid_size=grid_size, source_location=source_location,
                          sigma=sigma, goal_radius=goal_radius, max_cycles=max_cycles, team=team,
                          n_neighbours=n_neighbours, action_model=action_model,
                          start_positions=start_positions, render_mode=render_mode, black_death=black_death,
                          terminate_on_arrival=terminate_on_arrival, plume=plume, sensors=sensors, reward=reward,
                          start_region=start_region, walls=walls)
        if render_mode is not None and not (isinstance(render_mode, str)
                                            and render_mode in self.metadata["render_modes"]):
            raise ValidationError(
                f"render_mode: got {shown(render_mode)}; expected None or one of {self.metadata['render_modes']}"
            )
        if not isinstance(black_death, (bool, np.bool_)):
            raise ValidationError(f"black_death: got {shown(black_death)}; expected True or False")
        self.black_death = bool(black_death)
        if not isinstance(terminate_on_arrival, (bool, np.bool_)):
            raise ValidationError(f"terminate_on_arrival: got {shown(terminate_on_arrival)}; expected True or False")
        if terminate_on_arrival and not black_death:
            raise ValidationError("terminate_on_arrival=True needs black_death=True (without black death an arrived "
                                  "searcher is terminated and leaves env.agents anyway)")
        self.terminate_on_arrival = bool(terminate_on_arrival)
        self._max_cycles = _check_max_cycles(max_cycles)
        sc = scenario_from(dict(
            grid_size=grid_size, source_location=source_location, sigma=sigma, n_agents=n_agents,
            goal_radius=goal_radius, max_steps=self._max_cycles, start_positions=start_positions,
            action_model=action_model, n_neighbours=n_neighbours, team=team, plume=plume, sensors=sensors,
            reward=reward, start_region=start_region, walls=walls,
        ), owner="parallel_env", labels={"action_model": "action_model"})
        require_grid_body(sc, "parallel_env")
        # Disabled autoreset: a PettingZoo episode ends when `agents` is empty and only reset()
        # starts the next; finished agents stay put in the simulator and earn nothing.
        self._core = Core(sc, 1, autoreset="disabled")
        self.render_mode = render_mode
        self._bind()

        n = sc.n_agents
        self.possible_agents = [f"{AGENT_PREFIX}{i}" for i in range(n)]
        self.agent_name_mapping = dict(zip(self.possible_agents, range(n)))
        self.agents = []
        # Spaces are made on first request, then the same object is returned every time: building
        # 10^5 Box spaces up front would cost seconds for agents nobody asks about.
        self._observation_spaces = {}
        self._action_spaces = {}
        self._obs_bounds = sc.observation_bounds()  # each agent's space is made from them (the core's box)
        self.state_space = self._core.state_space()
        self._n_actions = sc.n_actions
        self._full_actions = np.zeros(n, dtype=np.int64)  # dead agents' slots stay 0 (a valid action)
        self._live_idx = None  # simulator rows of `agents`; None while all N are live (the fast path)
        self._started = False

    # The core's simulator and the render window are rebuilt in a copy (CoreViews): a copy is this
    # env from now on (EzPickle would rebuild an un-reset env from the constructor's arguments).
    _UNCOPIED = ("_sim", "_window")

    def _bind(self) -> None:
        self._sim = self._core.sim
        self._window = (HumanWindow(title=ENV_NAME, fps=self.metadata["render_fps"])
                        if self.render_mode == "human" else None)

    # ------------------------------------------------------------------ configuration
    @property
    def scenario(self) -> Scenario:
        """The ``Scenario`` of the current episode."""
        return self._core.scenario

    @property
    def simulator(self) -> Simulator:
        """The underlying ``Simulator`` (one world). Its arrays are views: read, don't keep."""
        return self._sim

    @property
    def max_cycles(self) -> int:
        """Steps per episode before truncation.

        Assigning a new value takes effect at the next ``reset``, which then rebuilds the
        simulator: an unseeded ``reset`` after a change starts a fresh random stream.
        """
        return self._max_cycles

    @max_cycles.setter
    def max_cycles(self, value) -> None:
        self._max_cycles = _check_max_cycles(value)
        self._ezpickle_kwargs["max_cycles"] = self._max_cycles  # copies made by pickling agree

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent) -> spaces.Box:
        """The observation space of ``agent`` (the same object on every call)."""
        try:
            return self._observation_spaces[agent]
        except (KeyError, TypeError):
            self._check_agent(agent)
        space = spaces.Box(*self._obs_bounds, dtype=np.float32)
        self._observation_spaces[agent] = space
        return space

    def action_space(self, agent) -> spaces.Discrete:
        """The action space of ``agent`` (the same object on every call)."""
        try:
            return self._action_spaces[agent]
        except (KeyError, TypeError):
            self._check_agent(agent)
        space = spaces.Discrete(self._n_actions)
        self._action_spaces[agent] = space
        return space

    @property
    def observation_spaces(self) -> dict:
        """``{agent: observation_space(agent)}`` for every possible agent."""
        return {agent: self.observation_space(agent) for agent in self.possible_agents}

    @property
    def action_spaces(self) -> dict:
        """``{agent: action_space(agent)}`` for every possible agent."""
        return {agent: self.action_space(agent) for agent in self.possible_agents}

    def _check_agent(self, agent) -> None:
        try:
            known = agent in self.agent_name_mapping
        except TypeError:
            known = False
        if not known:
            raise ValidationError(
                f"agent: got {agent!r}; expected one of possible_agents "
                f"({self.possible_agents[0]!r} … {self.possible_agents[-1]!r})"
            )

    # ------------------------------------------------------------------ reset / step
    def reset(self, seed=None, options=None):
        """Start an episode with every agent searching.

        Args:
            seed: ``None`` (continue this env's stream) or an int >= 0 (start cells are drawn as
                ``numpy.random.default_rng(seed)`` draws them: x then y, agent by agent; a seed
                beyond the engine's range is folded into it).
            options: accepted for API compatibility and ignored (this env has no options).

        Returns:
            ``(observations, infos)``: ``{agent: (3 + 2k,) float32}`` and ``{agent: {}}``
            (``{agent: {"arrived": False}}`` with ``black_death=True``).
        """
        # Everything is checked before anything changes.
        seed = self._core.fold_seed(seed)
        if options is not None and not isinstance(options, Mapping):
            raise ValidationError(f"options: got {shown(options)}; expected None or a dict")
        warn_if_first_arrival_ends_episodes(self)
        core = self._core
        if self._max_cycles != core.scenario.max_steps:
            core = core.replaced(core.scenario.replace(max_steps=self._max_cycles))
        obs = core.sim.reset(seed=seed)
        self._core, self._sim = core, core.sim
        self._started = True
        self.agents = self.possible_agents[:]
        self._live_idx = None
        agents = self.agents
        observations = dict(zip(agents, obs.copy()))
        if self.black_death:
            infos = {agent: {"arrived": False} for agent in agents}
        else:
            infos = {agent: {} for agent in agents}
        if self.render_mode == "human":
            self.render()
        return observations, infos

    def step(self, actions):
        """Advance every live agent one step.

        Args:
            actions: ``{agent: action}`` with exactly the agents in ``self.agents``.

        Returns:
            ``(observations, rewards, terminations, truncations, infos)``, dicts keyed by the
            agents that were live before this step: ``(3 + 2k,)`` float32 arrays (row views of one
            fresh copy), Python floats, Python bools, Python bools, empty dicts (``{"arrived":
            bool}`` with ``black_death=True``). Agents terminated or truncated by this step are
            removed from ``self.agents`` (with ``black_death=True``, all of them when the world's
            episode ends).

        Raises:
            ValidationError: ``actions`` is not a dict, misses a live agent, names a finished or
                unknown agent, or holds a non-integer or out-of-range action. Nothing changed.
            StateError: before the first ``reset``.
        """
        agents = self.agents
        n = len(agents)
        if type(actions) is not dict and not isinstance(actions, Mapping):
            raise ValidationError(
                f"actions: got {shown(actions, typed=True)}; expected a dict {{agent: action}} for the {n} agents in env.agents"
            )
        if n == 0:
            if not self._started:
                raise StateError("Cannot step before reset(): call reset() first")
            if actions:
                self._check_keys(actions)  # checks them; every agent is done, so all are ignored
            return {}, {}, {}, {}, {}

        # Fast path: the keys are exactly `agents`, in order (what parallel_to_aec and the usual
        # `{a: ... for a in env.agents}` produce), and every value is a plain integer.
        if len(actions) == n and list(actions) == agents:
            values = actions.values()
        else:
            values = self._check_keys(actions)
        if set(map(type, values)) <= _FAST_ACTION_TYPES:
            try:
                chosen = np.fromiter(values, dtype=np.int64, count=n)
            except OverflowError:
                chosen = self._coerce_actions(agents, values)
        else:
            chosen = self._coerce_actions(agents, values)

        if self.black_death:
            return self._step_black_death(agents, chosen)
        idx = self._live_idx
        if idx is None:
            full = chosen
        else:
            full = self._full_actions
            full[idx] = chosen
        try:
            obs, reward, terminated, truncated = self._sim.step(full)
        except ValidationError:
            raise self._range_error(agents, chosen) from None

        if idx is None:
            obs = obs.copy()
        else:
            obs = obs[idx]  # fancy indexing: the one copy of this step's batch
            reward = reward[idx]
            terminated = terminated[idx]
        observations = dict(zip(agents, obs))
        # All-zero / all-False columns (most steps) are built by dict.fromkeys in C.
        rewards = dict(zip(agents, reward.tolist())) if reward.any() else dict.fromkeys(agents, 0.0)
        any_terminated = bool(terminated.any())
        terminations = dict(zip(agents, terminated.tolist())) if any_terminated else dict.fromkeys(agents, False)
        # Truncation is per world (step count >= max_cycles), the same for every agent.
        is_truncated = bool(truncated[0])
        truncations = dict.fromkeys(agents, is_truncated)
        infos = {agent: {} for agent in agents}

        if is_truncated:
            self.agents = []
            self._live_idx = np.zeros(0, dtype=np.intp)
        elif any_terminated:
            keep = ~terminated
            self.agents = list(compress(agents, keep.tolist()))
            self._live_idx = np.flatnonzero(keep) if idx is None else idx[keep]
        if self.render_mode == "human":
            self.render()
        return observations, rewards, terminations, truncations, infos

    def _step_black_death(self, agents, chosen):
        """``step`` with ``black_death=True``: every agent stays in ``agents`` until the world ends."""
        try:
            obs, reward, arrived, is_truncated = self._core.step_fixed_set(chosen)
        except ValidationError:
            raise self._range_error(agents, chosen) from None
        observations = dict(zip(agents, obs))
        rewards = dict(zip(agents, reward.tolist())) if reward.any() else dict.fromkeys(agents, 0.0)
        world_over = is_truncated or bool(arrived.all())
        arrived = arrived.tolist()  # every agent that has reached the source, now or before
        if world_over:
            terminations = dict(zip(agents, arrived))
            self.agents = []
        elif self.terminate_on_arrival:
            terminations = dict(zip(agents, arrived))
        else:
            terminations = dict.fromkeys(agents, False)
        truncations = dict.fromkeys(agents, is_truncated)
        infos = {agent: {"arrived": a} for agent, a in zip(agents, arrived)}
        if self.render_mode == "human":
            self.render()
        return observations, rewards, terminations, truncations, infos

    # ------------------------------------------------------------------ action checking (error paths)
    def _check_keys(self, actions) -> list:
        """The actions in ``self.agents`` order (0 for a finished agent given none).

        Raises on an unknown agent, a searching agent without an action, or a bad value given to
        a finished agent (those are otherwise ignored).
        """
        mapping = self.agent_name_mapping
        for key in actions:
            try:
                known = key in mapping
            except TypeError:  # unhashable key
                known = False
            if not known:
                raise ValidationError(
                    f"actions: unknown agent {shown(key)}; expected names from env.agents "
                    f"({self.possible_agents[0]!r} … {self.possible_agents[-1]!r}). Nothing was changed."
                )
        active = self._sim.active
        missing = [agent for agent in self.agents if agent not in actions and active[mapping[agent]]]
        if missing:
            raise ValidationError(
                f"actions: no action for {len(missing)} live agent(s), first {missing[0]!r}; expected one "
                f"action for each of the {int(active.sum())} agents in env.agents. Nothing was changed."
            )
        in_agents = set(self.agents)
        ignored = [key for key in actions if key not in in_agents]
        if ignored:  # finished agents: their actions are ignored, but must still be actions
            self._coerce_actions(ignored, [actions[key] for key in ignored])
        return [actions[agent] if agent in actions else 0 for agent in self.agents]

    def _coerce_actions(self, agents, values) -> np.ndarray:
        """Check each action on its own (slow path); name the first bad one."""
        out = np.empty(len(agents), dtype=np.int64)
        for k, (agent, value) in enumerate(zip(agents, values)):
            if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iu":
                value = value.item()
            if not is_int(value):
                raise ValidationError(
                    f"actions[{agent!r}]: got {shown(value, typed=True)}; expected "
                    f"{self._core.action_words()}: a Python int, NumPy integer or 0-d integer array "
                    f"(booleans, floats and None are not actions). Nothing was changed."
                )
            value = int(value)
            if not 0 <= value < self._n_actions:
                raise ValidationError(
                    f"actions[{agent!r}] = {value} is out of range; expected {self._core.action_words()}. "
                    f"Nothing was changed."
                )
            out[k] = value
        return out

    def _range_error(self, agents, chosen) -> ValidationError:
        bad = np.flatnonzero((chosen < 0) | (chosen >= self._n_actions))
        k = int(bad[0]) if bad.size else 0
        return ValidationError(
            f"actions[{agents[k]!r}] = {int(chosen[k])} is out of range; expected {self._core.action_words()}. "
            f"Nothing was changed."
        )

    # ------------------------------------------------------------------ state / render / close
    def state(self) -> np.ndarray:
        """The global state, a fresh ``(4 N + 1,)`` float32 array in ``[0, 1]``: per agent
        ``(concentration, x, y, active)``, then the elapsed fraction of ``max_cycles`` (3-D:
        ``(5 N + 1,)``, ``(concentration, x, y, z, active)`` per agent)."""
        if not self._started:
            raise StateError("Cannot read state() before reset(): call reset() first")
        return self._core.global_state(0)

    def render(self):
        """``"rgb_array"``: a fresh ``(height * s, width * s, 3)`` uint8 frame (the field, the source as
        a red cross, each searcher as a coloured square, finished ones white, y upward; with a heading
        body a line along each heading, antenna sample points as dots, the wind as an arrow), each cell
        an ``s x s`` block with ``s = plume_multi.viz.render.display_scale(width, height)`` (at least
        256 pixels on the shorter side where the grid allows). ``"human"``: show
        that frame in a window and return None. No render mode: warn and return None."""
        if self.render_mode is None:
            gymnasium.logger.warn(
                "You are calling render() without a render mode; pass render_mode='rgb_array' or 'human'."
            )
            return None
        if not self._started:
            raise StateError("Cannot render before reset(): call reset() first")
        frame = self._core.frame(0, scaled=True)
        if self.render_mode == "rgb_array":
            return frame
        self._window.show(frame)
        return None

    def close(self) -> None:
        """Close the render window, if any. Never raises; may be called again."""
        if self._window is not None:
            self._window.close()

    # ------------------------------------------------------------------ AEC support
    def check_action(self, agent, action) -> None:
        """Raise ``ValidationError`` unless ``action`` is a valid action of the searching ``agent``."""
        self._check_agent(agent)
        self._coerce_actions([agent], [action])


class _ParallelToAEC(parallel_to_aec_wrapper):
    """PettingZoo's ``parallel_to_aec`` that checks each action when it is given.

    The conversion keeps each agent's action until the last agent of the cycle has acted; a bad
    action found only then would leave the cycle half done. Checking at once keeps the env usable.
    A finished agent is stepped with ``None`` (the AEC API's convention); an action given to it
    instead is checked and ignored, as the parallel env ignores actions for finished agents
    (trainers such as TorchRL's ``PettingZooWrapper`` send one for every agent).
    """

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                self.env.check_action(agent, action)  # a bad value still raises
                action = None
        else:
            self.env.check_action(agent, action)
        super().step(action)


class PlumeAECEnv(OrderEnforcingWrapper):
    """The AEC form of ``raw_env`` (what ``env()`` returns): PettingZoo's order enforcing, with
    this package's errors, and a failed ``reset`` or ``step`` changes nothing."""

    def __init__(self, par_env: raw_env):
        super().__init__(_ParallelToAEC(par_env))

    def reset(self, seed=None, options=None) -> None:
        self.env.reset(seed=seed, options=options)  # raises before anything changes
        self._has_reset = True
        self._has_updated = True

    def step(self, action) -> None:
        if not self._has_reset:
            raise StateError("Cannot step before reset(): call reset() first")
        super().step(action)


def parallel_env(**kwargs) -> raw_env:
    """A ``ParallelEnv`` of N searchers in one shared plume (keyword arguments: see ``raw_env``)."""
    return raw_env(**kwargs)


def env(**kwargs) -> PlumeAECEnv:
    """The AEC form of ``parallel_env(**kwargs)``: ``parallel_to_aec`` with call order enforced and
    each action checked when it is given."""
    return PlumeAECEnv(raw_env(**kwargs))


# help(parallel_env) shows the env card itself, not a pointer to raw_env.
for _factory in (parallel_env, env):
    if _factory.__doc__ and raw_env.__doc__:  # None under python -OO
        _factory.__doc__ = inspect.cleandoc(_factory.__doc__) + "\n\n" + inspect.cleandoc(raw_env.__doc__)
