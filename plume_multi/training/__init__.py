"""The learned baselines: PPO with an MLP (``ppo-mlp``) and PPO with a GRU memory (``ppo-gru``),
trained on any ``Scenario`` by one call, and the trained policies as files.

* ``train(scenario_or_task, policy="ppo-mlp", budget=2_000_000, seed=0)`` (also ``plume_multi.train``,
  and ``plume-multi train`` on the command line) returns a ``TrainingResult``: the best validated
  weights and the last (``keep="best"`` or ``"last"`` says which is its ``policy``), written as
  checkpoints while it trains with ``checkpoints=PREFIX``;
* ``TrainingResult.policy`` is a ``LearnedPolicy``: a callable ``obs -> actions`` that
  ``plume_multi.evaluate`` and ``plume-multi eval --policy FILE.pt`` run, saved with ``save(path)``
  and read back with ``load_policy(path)``;
* ``PPOConfig`` holds every setting (``PPOConfig.for_policy(name)``: each baseline's defaults).

The trainer steps all worlds of one ``Simulator`` in one call and runs the network once per step
for all of them (torch, CPU, float32); see ``docs/training.md`` for where the time goes and the
measured speeds. Needs torch (``pip install "plume-multi[train]"``).
"""

from .config import POLICIES, PPOConfig
from .policy import FILE_FORMAT, LearnedPolicy, load_policy
from .trainer import TRAIN_SEED_BASE, VALIDATION_SEED, TrainingResult, train

__all__ = ["train", "TrainingResult", "PPOConfig", "POLICIES", "LearnedPolicy", "load_policy", "FILE_FORMAT",
           "TRAIN_SEED_BASE", "VALIDATION_SEED"]
