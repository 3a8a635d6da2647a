"""Every task by name in the trainers' APIs: a Gymnasium id per task, a PettingZoo env per task.

* ``gymnasium.make("plume_multi:<task id>")`` (e.g. ``"plume_multi:following/gaussian-random-source-v0"``;
  the family is Gymnasium's namespace): a ``TaskEnv`` (one searcher: ``Box`` observations of the
  scenario's sensors, its body's actions) or, for a task of several searchers, an
  ``AgentTupleEnv`` (one world, ``Tuple`` spaces). ``gymnasium.make_vec(id, num_envs,
  vectorization_mode="vector_entry_point")`` gives ``vector_env`` of the task's scenario (one searcher).
* ``tasks.parallel_env(task_id)`` / ``tasks.aec_env(task_id)``: PettingZoo's ``ParallelEnv`` / AEC
  env of one world of the task (grid bodies).

Episodes are capped at the protocol's ``max_steps``; options of a task on a file go through as
keywords (``gymnasium.make(id, path=...)``, ``parallel_env(id, path=...)``).
"""

from __future__ import annotations

import gymnasium
import numpy as np

from ..errors import StateError, ValidationError
from ..scenario import Scenario
from .registration import register_gymnasium_task, register_gymnasium_tasks
from .registry import add, make
from .task import Task

__all__ = ["TaskEnv", "gym_env", "gym_vector_env", "parallel_env", "aec_env", "register_gymnasium_task",
           "register_gymnasium_tasks", "scenario_options"]


def scenario_options(scenario: Scenario) -> dict:
    """The scenario's fields as given (what ``Scenario.replace`` starts from), those left unset
    (``None``) out: keywords the front-ends pass to ``Scenario`` (their own defaults may differ from
    ``Scenario``'s, as ``parallel_env``'s 8 agents, so every set field goes through)."""
    return {k: v for k, v in scenario._given.items() if v is not None}


def _scenario(task_id, options: dict) -> tuple[Task, Scenario]:
    task = make(task_id, **options)
    return task, task.scenario()


class TaskEnv(gymnasium.Env):
    """One searcher of a task's scenario as a Gymnasium ``Env``.

    ## Observation Space
    ``Box(low, high, (D,), float32)``: the columns of the scenario's sensors
    (``scenario.observation_layout``).

    ## Action Space
    ``Discrete(K)`` for a grid body, ``Box`` for a continuous one (``(speed, turn)``).

    ## Rewards, Episode End
    The scenario's reward (1.0 on reaching the source by default); terminated on reaching it,
    truncated after the protocol's ``max_steps``.

    ## Arguments
    ``task_id`` and the task's options (``path=`` for a task on the user's file). ``simulator``
    is the one-world ``Simulator`` underneath: ``policies.Infotaxis().act(env.unwrapped.simulator)``.
    ``reset(seed=s)``: any non-negative integer (one beyond the engine's ``2**63 - 1`` taken modulo
    ``2**63``).

    ## Example
    >>> import gymnasium, plume_multi
    >>> env = gymnasium.make("plume_multi:following/gaussian-random-source-v0")
    >>> obs, info = env.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    """

    metadata = {"render_modes": []}

    def __init__(self, task_id: str, **options):
        from ..envs._core import Core  # the front-ends load on first use (import plume_multi stays light)

        self.task, self.scenario = _scenario(task_id, options)
        if self.scenario.n_agents != 1:
            raise ValidationError(f"{self.task.id}: {self.scenario.n_agents} searchers; TaskEnv runs one (this task's "
                                  "Gymnasium id gives an AgentTupleEnv)")
        self._core = Core(self.scenario, 1, autoreset="disabled")
        self.observation_space = self._core.observation_box()
        self.action_space = self._core.action_space()
        self._started = False

    @property
    def simulator(self):
        """The one-world ``Simulator`` underneath (its arrays are views: read, don't keep)."""
        return self._core.sim

    def reset(self, *, seed=None, options=None):
        seed = self._core.fold_seed(seed)
        super().reset(seed=seed)
        obs = self.simulator.reset(seed=seed)
        self._started = True
        return obs[0].copy(), {}

    def step(self, action):
        if not self._started:
            raise StateError("Cannot step before reset(): call reset() first")
        if self.scenario.continuous:
            actions = np.asarray(action)[None, ...]
        else:
            actions = np.array([self._core.check_action(action)], dtype=np.int64)
        obs, reward, terminated, truncated = self.simulator.step(actions)
        return obs[0].copy(), float(reward[0]), bool(terminated[0]), bool(truncated[0]), {}


def gym_env(task_id: str, **options):
    """The Gymnasium entry point of every task id: ``TaskEnv`` for one searcher, else
    ``AgentTupleEnv`` of the task's scenario."""
    task = make(task_id, **options)
    if task.scenario().n_agents == 1:
        return TaskEnv(task_id, **options)
    from ..envs.agent_tuple import AgentTupleEnv

    return AgentTupleEnv(**scenario_options(task.scenario()))


def gym_vector_env(num_envs: int = 1, *, task_id: str, **options):
    """The vector entry point: ``vector_env(num_envs)`` of a one-searcher task's scenario."""
    from ..envs.vector import vector_env

    _, scenario = _scenario(task_id, options)
    if scenario.n_agents != 1:
        raise ValidationError(f"{task_id}: {scenario.n_agents} searchers per world; the vector entry point runs "
                              "one (use plume_multi.tasks.parallel_env or multi_agent_vector_env)")
    fields = scenario_options(scenario)
    return vector_env(num_envs, **fields)


def parallel_env(task_id, **options):
    """PettingZoo ``ParallelEnv`` of one world of the task (``plume_multi.parallel_env`` with the
    task's scenario; ``max_cycles`` = the protocol's ``max_steps``)."""
    from ..envs.pettingzoo import parallel_env as make_parallel

    _, scenario = _scenario(task_id, options)
    fields = scenario_options(scenario)
    fields["max_cycles"] = fields.pop("max_steps", scenario.max_steps)
    return make_parallel(**fields)


def aec_env(task_id, **options):
    """PettingZoo AEC env of one world of the task (``parallel_env``'s, turn by turn)."""
    from ..envs.pettingzoo import PlumeAECEnv

    return PlumeAECEnv(parallel_env(task_id, **options))


def register(task: Task) -> Task:
    """Add ``task`` to the registry and register its Gymnasium id; returns it. An id already taken
    by another task is refused: change the version instead."""
    add(task)
    register_gymnasium_task(task)
    return task
