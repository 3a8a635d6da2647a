"""plume_multi.integrations.benchmarl: MAPPO and IPPO train on the plume-search task for a few
hundred frames, and the return rises.

Runs in .venv-ray (``make test``): BenchMARL 1.5.2 pins TorchRL < 0.12, which the main test
environment's TorchRL (the newest) is not; conftest.py collects this file only where BenchMARL
imports.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.ray

from benchmarl.algorithms import IppoConfig, MappoConfig  # noqa: E402
from benchmarl.experiment import Experiment, ExperimentConfig  # noqa: E402
from benchmarl.experiment.callback import Callback  # noqa: E402
from benchmarl.models.mlp import MlpConfig  # noqa: E402

from plume_multi import ValidationError  # noqa: E402
from plume_multi.integrations.benchmarl import PlumeSearchTask  # noqa: E402


class Returns(Callback):
    """The mean return of the episodes that ended in each collected batch."""

    def __init__(self):
        super().__init__()
        self.means = []

    def on_batch_collected(self, batch):
        done = batch.get(("next", "done")).squeeze(-1)
        ret = batch.get(("next", "searcher", "episode_reward")).mean(-2).squeeze(-1)
        self.means.append(float(ret[done].mean()) if done.any() else float("nan"))


def run(algorithm, tmp_path):
    config = ExperimentConfig.get_from_yaml()
    config.max_n_frames = 1000
    config.on_policy_collected_frames_per_batch = 200
    config.on_policy_n_envs_per_worker = 4
    config.on_policy_n_minibatch_iters = 4
    config.on_policy_minibatch_size = 100
    config.lr = 3e-3
    config.evaluation = False
    config.render = False
    config.loggers = []
    config.create_json = False
    config.checkpoint_interval = 0
    config.save_folder = str(tmp_path)
    task = PlumeSearchTask.SEARCH.get_task({"n_agents": 2, "grid_size": (5, 5), "sigma": 2.0, "max_cycles": 25})
    returns = Returns()
    experiment = Experiment(task=task, algorithm_config=algorithm.get_from_yaml(), model_config=MlpConfig.get_from_yaml(),
                            critic_model_config=MlpConfig.get_from_yaml(), seed=0, config=config, callbacks=[returns])
    experiment.run()
    return experiment, returns.means


@pytest.mark.parametrize("algorithm", [MappoConfig, IppoConfig], ids=["mappo", "ippo"])
def test_a_few_hundred_frames_train_and_the_return_rises(algorithm, tmp_path):
    experiment, means = run(algorithm, tmp_path)
    assert experiment.total_frames == 1000 and len(means) == 5
    assert experiment.group_map == {"searcher": ["searcher_0", "searcher_1"]}  # black death: the group stays whole
    assert means[-1] > means[0] + 0.2, means  # per searcher, 1.0 = it reached the source


def test_the_task_sets_black_death_itself_and_checks_its_options():
    task = PlumeSearchTask.TEAM_SEARCH.get_task()
    assert task.config["team"] is True and task.supports_discrete_actions() and not task.supports_continuous_actions()
    env = task.get_env_fun(num_envs=1, continuous_actions=False, seed=0, device="cpu")()
    assert env._env.black_death and "state" in env.observation_spec.keys()
    with pytest.raises(ValidationError, match="sets them itself"):
        PlumeSearchTask.SEARCH.get_task({"black_death": False})
    with pytest.raises(ValidationError, match="sigma"):
        PlumeSearchTask.SEARCH.get_task({"sigma": -1.0})
