"""``AgentTupleEnv``: one world of N searchers as one Gymnasium ``Env`` with ``Tuple`` spaces.

The multi-agent convention of Gymnasium envs such as level-based foraging and the robotic
warehouse, which EPyMARL's ``gymma`` wrapper expects: ``gymnasium.make(id)`` gives an ``Env``
whose ``observation_space`` and ``action_space`` are ``Tuple``s with one entry per agent,
``unwrapped.n_agents``, ``step(actions)`` with one action per agent returning a tuple of
observations, a list of rewards, a list of per-agent ``terminated`` flags and one ``truncated``.
Registered as ``"PlumeSearchAgents-v0"`` (``"plume_multi:PlumeSearchAgents-v0"`` from a process
that has not imported the package).
"""

from __future__ import annotations

import gymnasium
from gymnasium import spaces

from ..checks import shown
from ..errors import StateError, ValidationError
from ._core import Core, CoreViews, require_grid_body, scenario_from

__all__ = ["AgentTupleEnv"]


class AgentTupleEnv(CoreViews, gymnasium.Env):
    """N searchers look for the source of one plume: a Gymnasium ``Env`` with one entry per agent.

    ## Description
    The world of ``parallel_env(black_death=True)``, with the agents as the positions of tuples
    and lists instead of the keys of dicts. Every agent stays until the episode ends (a fixed agent
    set, as EPyMARL's learners need); one that reached the source observes zeros and earns 0.0.

    ## Action Space
    ``Tuple(Discrete(4) x N)`` (``"cardinal"``: 0 UP, 1 RIGHT, 2 DOWN, 3 LEFT; ``"moore"``: 9).
    ``step`` takes a sequence of N integers; a finished agent's action is checked and ignored.

    ## Observation Space
    ``Tuple(Box(low, high, (3 + 2k,), float32) x N)``: the concentration at the agent's cell, its
    ``x / (W-1)``, ``y / (H-1)``, then ``(dx, dy)`` of its ``k = n_neighbours`` nearest others
    (``sensors=...`` sets other columns). Zeros for an agent that has reached the source.

    ## Rewards
    A list of N floats: 1.0 to an agent on the step it reaches the source (``team=True``: to every
    searcher on the first arrival), else 0.0. EPyMARL sums them with ``common_reward=True``.

    ## Episode End
    ``terminated``: a list of N bools, True from the step an agent reaches the source on (every
    agent with ``team=True`` once one has); the episode ends when all are True. ``truncated``: one
    bool, True after ``max_steps`` steps. ``info`` on every step: ``arrived`` (how many agents have
    reached the source) and ``episode_limit`` (the episode ended by the step limit, which EPyMARL's
    runners read so as not to treat it as a true end).

    ## Arguments
    ``n_agents=4`` and any ``Scenario`` field (``grid_size``, ``sigma``, ``max_steps``, ``team``,
    ``n_neighbours``, ``action_model``, ``plume``, ``sensors``, ...); ``render_mode=None`` or
    ``"rgb_array"``.

    ## Example
    >>> import gymnasium, plume_multi
    >>> env = gymnasium.make("PlumeSearchAgents-v0", n_agents=3, grid_size=(16, 16), max_steps=50)
    >>> obs, info = env.reset(seed=0)                     # a tuple of 3 float32 arrays
    >>> obs, rewards, terminated, truncated, info = env.step([0, 1, 2])
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 30}
    _UNCOPIED = ("_sim",)

    def __init__(self, n_agents: int = 4, *, render_mode=None, **scenario):
        if render_mode is not None and render_mode != "rgb_array":
            raise ValidationError(f"render_mode: got {shown(render_mode)}; expected None or 'rgb_array'")
        self.scenario = sc = scenario_from(dict(scenario, n_agents=n_agents), owner="AgentTupleEnv")
        require_grid_body(sc, "AgentTupleEnv")
        self.n_agents = sc.n_agents
        self.render_mode = render_mode
        self._core = Core(sc, 1, autoreset="disabled")
        self._bind()
        self.observation_space = spaces.Tuple([self._core.observation_box()] * self.n_agents)
        self.action_space = spaces.Tuple([self._core.action_space()] * self.n_agents)
        self._started = False

    def _bind(self) -> None:
        self._sim = self._core.sim

    def reset(self, *, seed=None, options=None):
        """Start an episode: ``(tuple of N observations, {})``. ``seed``: as ``parallel_env``'s."""
        seed = self._core.fold_seed(seed)
        super().reset(seed=seed)
        obs = self._sim.reset(seed=seed)
        self._started = True
        return tuple(obs.copy()), {}

    def step(self, actions):
        """``(observations, rewards, terminated, truncated, info)`` for N actions (a sequence)."""
        if not self._started:
            raise StateError("Cannot step before reset(): call reset() first")
        chosen = self._core.check_actions(actions, f"{self.n_agents} integers in 0..{self.scenario.n_actions - 1}, "
                                                   "one per agent")
        obs, reward, arrived, is_truncated = self._core.step_fixed_set(chosen)
        info = {"arrived": int(arrived.sum()), "episode_limit": is_truncated and not arrived.all()}
        return tuple(obs), reward.tolist(), arrived.tolist(), is_truncated, info

    def render(self):
        """A ``(height * s, width * s, 3)`` uint8 frame (``render_mode="rgb_array"``), as ``parallel_env``'s."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() was called with render_mode=None; pass render_mode='rgb_array'")
            return None
        if not self._started:
            raise StateError("Cannot render before reset(): call reset() first")
        return self._core.frame(0, scaled=True)
