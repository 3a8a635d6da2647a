"""BenchMARL tasks: N searchers in one plume, for every BenchMARL algorithm with discrete actions.

Needs BenchMARL (``pip install "plume-multi[benchmarl]"``: BenchMARL 1.5.2 pins TorchRL < 0.12,
so it lives beside the TorchRL of its own pin, not the newest)::

    from benchmarl.algorithms import MappoConfig
    from benchmarl.experiment import Experiment, ExperimentConfig
    from benchmarl.models.mlp import MlpConfig
    from plume_multi.integrations.benchmarl import PlumeSearchTask

    experiment = Experiment(task=PlumeSearchTask.SEARCH.get_task(), algorithm_config=MappoConfig.get_from_yaml(),
                            model_config=MlpConfig.get_from_yaml(), critic_model_config=MlpConfig.get_from_yaml(),
                            seed=0, config=ExperimentConfig.get_from_yaml())
    experiment.run()

Each environment is ``parallel_env(black_death=True, ...)`` in TorchRL's ``PettingZooWrapper``: one
group ``"searcher"`` of N agents, categorical actions, the global ``state()`` for centralised
critics. Black death is built in: a searcher that reached the source stays in the group, observing
zeros and earning nothing, until its world's episode ends, so every batch has N agents (without it,
MAPPO learns only to make the first arrival sooner: TorchRL ends a parallel env's episode at the
first finished agent). The arrival is in the infos (``("searcher", "info", "arrived")``).
"""

from __future__ import annotations

from typing import Callable, Dict, Optional

try:
    from benchmarl.environments.common import Task
    from benchmarl.environments.pettingzoo.common import PettingZooClass
    from torchrl.envs import EnvBase, PettingZooWrapper
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "plume_multi.integrations.benchmarl needs BenchMARL: pip install 'plume-multi[benchmarl]'"
    ) from exc

from ..envs.pettingzoo import parallel_env
from ..errors import ValidationError

__all__ = ["PlumeSearchTask", "PlumeSearchClass", "DEFAULT_CONFIGS"]

# Each task's configuration: parallel_env keyword arguments (the Scenario's fields, max_cycles).
DEFAULT_CONFIGS = {
    # every searcher is rewarded 1.0 for its own arrival
    "SEARCH": dict(n_agents=4, grid_size=(32, 32), sigma=8.0, max_cycles=200),
    # the first arrival ends the search and rewards every searcher (team=True)
    "TEAM_SEARCH": dict(n_agents=4, grid_size=(32, 32), sigma=8.0, max_cycles=200, team=True, n_neighbours=2),
}
# Set here, not by the task's configuration: BenchMARL's algorithms need a fixed agent set.
_FIXED = ("black_death", "terminate_on_arrival", "render_mode")


class PlumeSearchClass(PettingZooClass):
    """The ``TaskClass`` of ``PlumeSearchTask``: BenchMARL's PettingZoo task, on ``plume_multi.parallel_env``.

    ``config``: ``parallel_env`` keyword arguments (``n_agents``, ``grid_size``, ``sigma``,
    ``max_cycles``, ``team``, ``n_neighbours``, ``action_model``, ...), except ``black_death``,
    ``terminate_on_arrival`` and ``render_mode``, which the task sets.
    """

    def __init__(self, name: str, config: Optional[Dict] = None):
        config = dict(config or {})
        fixed = sorted(set(config) & set(_FIXED))
        if fixed:
            raise ValidationError(f"PlumeSearchTask config: got {fixed}; the task sets them itself (black death "
                                  "keeps BenchMARL's agent groups whole)")
        parallel_env(**config).close()  # bad options fail here, with the argument named
        super().__init__(name=name, config=config)

    def get_env_fun(self, num_envs: int, continuous_actions: bool, seed: Optional[int],
                    device) -> Callable[[], EnvBase]:
        config = dict(self.config)
        return lambda: PettingZooWrapper(
            env=parallel_env(black_death=True, render_mode="rgb_array", **config),
            categorical_actions=True, use_mask=False, return_state=True, seed=seed, device=device)

    def supports_continuous_actions(self) -> bool:
        return False

    def supports_discrete_actions(self) -> bool:
        return True

    def has_state(self) -> bool:
        return True

    def max_steps(self, env: EnvBase) -> int:
        return int(self.config.get("max_cycles", 1000))

    @staticmethod
    def env_name() -> str:
        return "plume_multi"


class PlumeSearchTask(Task):
    """The plume-search tasks: ``SEARCH`` (each searcher rewarded for its own arrival) and
    ``TEAM_SEARCH`` (the first arrival rewards and ends it for all; two neighbours sensed).

    ``get_task(config=None)`` gives the defaults of ``DEFAULT_CONFIGS``; a ``config`` dict updates them.
    """

    SEARCH = None
    TEAM_SEARCH = None

    @staticmethod
    def associated_class():
        return PlumeSearchClass

    def get_task(self, config: Optional[Dict] = None) -> PlumeSearchClass:
        return PlumeSearchClass(name=self.name, config={**DEFAULT_CONFIGS[self.name], **(config or {})})

    def get_from_yaml(self, path: Optional[str] = None) -> PlumeSearchClass:
        """The defaults (BenchMARL keeps its task yaml files inside its own package); with ``path``,
        that yaml file's keys update them."""
        config = None
        if path is not None:
            from benchmarl.utils import _read_yaml_config

            config = _read_yaml_config(path)
        return self.get_task(config)
