#!/usr/bin/env python
"""Env-steps per second of each trainer's recipe (docs/integrations.md), training included, beside
the trainer's generic path where it has one (its own vectorization of single-env copies).

    python benchmarks/trainers.py             # every trainer installed here (about 3 minutes)
    python benchmarks/trainers.py --quick     # tiny budgets: checks that every row still runs
    python benchmarks/trainers.py --only rllib,benchmarl    # rows whose trainer names contain these

Each row trains for a fixed number of env-steps (agent-steps for the multi-agent rows) on a
32x32 grid, sigma 8, 200 steps per episode, one torch thread, and reports steps per wall-clock
second of the whole loop (collection and updates); "env alone" rows step the same env with
random actions. Rows whose trainer is not installed here are left out; run the script in the
environment that has it: RLlib and BenchMARL in .venv-ray (``--only rllib,benchmarl``), AgileRL in
.venv-agilerl (``--only agilerl``).
"""

from __future__ import annotations

import argparse
import importlib.util
import tempfile
import time

import gymnasium as gym
import numpy as np

import plume_multi

SCENE = dict(grid_size=(32, 32), sigma=8.0, max_steps=200)
COMPACT = "plume_multi:PlumeSearchCompact-v0"


def _timed(run, steps: int) -> float:
    """Steps per second of ``run(steps)``: it returns the steps done (timed here, set-up included) or
    ``(steps, seconds)`` timed by itself (the env-alone rows, set-up and compilation excluded)."""
    start = time.perf_counter()
    done = run(steps)
    if isinstance(done, tuple):
        return done[0] / done[1]
    return (done or steps) / (time.perf_counter() - start)


def _stepping(step, actions, calls: int, rows: int) -> tuple[int, float]:
    """``(rows * calls, seconds)`` of ``calls`` steps, cycling through the prepared ``actions``."""
    start = time.perf_counter()
    for k in range(calls):
        step(actions[k % len(actions)])
    return rows * calls, time.perf_counter() - start


def sb3_native(steps):
    from stable_baselines3 import PPO
    from plume_multi.integrations.sb3 import SB3VecEnv

    venv = SB3VecEnv(plume_multi.vector_env(256, **SCENE))
    model = PPO("MlpPolicy", venv, n_steps=64, batch_size=4096, n_epochs=4, seed=0, device="cpu").learn(steps)
    return model.num_timesteps


def sb3_dummy(steps):
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env(COMPACT, n_envs=16, seed=0, env_kwargs=SCENE)
    model = PPO("MlpPolicy", venv, n_steps=64, batch_size=256, n_epochs=4, seed=0, device="cpu").learn(steps)
    return model.num_timesteps


def sb3_recurrent(steps):
    from sb3_contrib import RecurrentPPO
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env(COMPACT, n_envs=8, seed=0, env_kwargs=SCENE)
    model = RecurrentPPO("MlpLstmPolicy", venv, n_steps=128, batch_size=256, n_epochs=4, seed=0,
                         device="cpu").learn(steps)
    return model.num_timesteps


def _reinforce(envs, steps):
    """The docs' CleanRL-style loop (REINFORCE, 64-step rollouts) on a Gymnasium vector env."""
    import torch

    policy = torch.nn.Sequential(torch.nn.Linear(3, 64), torch.nn.Tanh(), torch.nn.Linear(64, 4))
    optimizer = torch.optim.Adam(policy.parameters(), lr=3e-3)
    obs, _ = envs.reset(seed=0)
    done_steps = 0
    while done_steps < steps:
        log_probs, rewards = [], []
        for _ in range(64):
            dist = torch.distributions.Categorical(logits=policy(torch.as_tensor(obs)))
            action = dist.sample()
            obs, reward, terminated, truncated, _ = envs.step(action.numpy())
            log_probs.append(dist.log_prob(action))
            rewards.append(torch.as_tensor(reward, dtype=torch.float32))
        returns = torch.stack(rewards).flip(0).cumsum(0).flip(0)
        loss = -(torch.stack(log_probs) * (returns - returns.mean())).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        done_steps += 64 * envs.num_envs
    envs.close()
    return done_steps


def cleanrl_native(steps):
    return _reinforce(gym.make_vec(COMPACT, num_envs=256, vectorization_mode="vector_entry_point", **SCENE), steps)


def cleanrl_sync(steps):
    envs = gym.vector.SyncVectorEnv([lambda: gym.wrappers.RecordEpisodeStatistics(gym.make(COMPACT, **SCENE))
                                     for _ in range(16)])
    return _reinforce(envs, steps)


def torchrl_collect(steps):
    from gymnasium.vector import AutoresetMode
    from tensordict.nn import TensorDictModule
    from torch import nn
    from torchrl.collectors import Collector
    from torchrl.envs import GymWrapper
    from torchrl.modules import OneHotCategorical, ProbabilisticActor

    env = GymWrapper(plume_multi.vector_env(256, autoreset_mode=AutoresetMode.DISABLED, **SCENE))
    actor = ProbabilisticActor(TensorDictModule(nn.Sequential(nn.Linear(3, 64), nn.Tanh(), nn.Linear(64, 4)),
                                                ["observation"], ["logits"]),
                               in_keys=["logits"], spec=env.action_spec, distribution_class=OneHotCategorical)
    collector = Collector(env, actor, frames_per_batch=256 * 64, total_frames=steps,
                          auto_register_policy_transforms=False)
    frames = sum(batch.numel() for batch in collector)
    collector.shutdown()
    return frames


def torchrl_pettingzoo(steps):
    from torchrl.envs import PettingZooWrapper

    env = PettingZooWrapper(plume_multi.parallel_env(n_agents=4, black_death=True, max_cycles=200,
                                                     grid_size=(32, 32), sigma=8.0), use_mask=False)
    rollout = env.rollout(steps // 4, break_when_any_done=False)
    return rollout.numel() * 4


def tianshou_dqn(steps):
    import torch
    from tianshou.algorithm.modelfree.dqn import DQN, DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.trainer import OffPolicyTrainerParams
    from tianshou.utils.net.common import Net

    envs = DummyVectorEnv([lambda: gym.make(COMPACT, **SCENE) for _ in range(8)])
    policy = DiscreteQLearningPolicy(model=Net(state_shape=3, action_shape=4, hidden_sizes=[64, 64]),
                                     action_space=envs.action_space[0], eps_training=0.1)
    algorithm = DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=0.99, target_update_freq=100)
    collector = Collector(algorithm, envs, VectorReplayBuffer(20_000, 8), exploration_noise=True)
    collector.reset()
    algorithm.run_training(OffPolicyTrainerParams(
        training_collector=collector, max_epochs=1, epoch_num_steps=steps, collection_step_num_env_steps=64,
        batch_size=64, update_step_num_gradient_steps_per_sample=0.1, test_collector=None, show_progress=False,
        verbose=False))
    del torch
    return steps


def epymarl_env(steps):
    env = gym.wrappers.TimeLimit(gym.make("PlumeSearchAgents-v0", n_agents=4, **SCENE), max_episode_steps=200)
    env.reset(seed=0)

    def step(actions):  # what EPyMARL's runner does with the env each step
        _, _, terminated, truncated, _ = env.step([int(a) for a in actions])
        if all(terminated) or truncated:
            env.reset()

    return _stepping(step, np.random.default_rng(0).integers(0, 4, (16, 4)), max(1, steps // 4), 4)


def puffer_buffers(steps):
    from plume_multi.integrations.puffer import SharedBufferEnv

    env = SharedBufferEnv(num_worlds=1024, n_agents=4, **SCENE)
    env.reset(seed=0)
    actions = np.random.default_rng(0).integers(0, 4, (16, env.num_agents))
    return _stepping(env.step, actions, max(1, steps // env.num_agents), env.num_agents)


def multi_vector_rows(steps):
    env = plume_multi.multi_agent_vector_env(1024, 4, **SCENE)
    env.reset(seed=0)
    actions = np.random.default_rng(0).integers(0, 4, (16, env.num_envs))
    return _stepping(env.step, actions, max(1, steps // env.num_envs), env.num_envs)


def _rllib_train(config, steps):
    """Train an RLlib algorithm of ``config`` (on a local Ray of 2 CPUs) until it has sampled
    ``steps`` env-steps; returns the steps sampled."""
    import ray

    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    algo = config.build_algo()
    done = 0
    try:
        while done < steps:
            done = int(algo.train()["env_runners"]["num_env_steps_sampled_lifetime"])
    finally:
        algo.stop()
    return done


def rllib_ppo(steps):
    from plume_multi.integrations.rllib import ppo_config

    worlds = min(256, max(8, steps // 64))  # 256 for the full run; one small batch for --quick
    return _rllib_train(ppo_config(num_env_runners=1, num_envs_per_env_runner=worlds, rollout_fragment_length=64,
                                   **SCENE), steps)


def rllib_lstm(steps):
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    config = (PPOConfig().environment(COMPACT, env_config=SCENE)
              .env_runners(num_env_runners=1, num_envs_per_env_runner=8)
              .training(train_batch_size_per_learner=max(256, min(4000, steps)), minibatch_size=128)
              .rl_module(model_config=DefaultModelConfig(use_lstm=True, lstm_cell_size=32, max_seq_len=20)))
    return _rllib_train(config, steps)


def agilerl_ippo(steps):
    from agilerl.algorithms import IPPO
    from agilerl.training.train_multi_agent_on_policy import train_multi_agent_on_policy
    from agilerl.vector.pz_async_vec_env import AsyncPettingZooVecEnv

    def make():
        return plume_multi.parallel_env(n_agents=4, black_death=True, terminate_on_arrival=True, max_cycles=200,
                                        grid_size=(32, 32), sigma=8.0)

    env = AsyncPettingZooVecEnv([make for _ in range(4)])
    env.reset(seed=0)
    agent = IPPO([env.single_observation_space(a) for a in env.agents], [env.single_action_space(a) for a in env.agents],
                 agent_ids=list(env.agents), lr=1e-3, learn_step=1024, batch_size=256)
    vector_steps = max(1024, steps // 4 // 1024 * 1024)
    try:
        train_multi_agent_on_policy(env, "plume_search", "IPPO", [agent], max_steps=vector_steps,
                                    evo_steps=vector_steps, verbose=False)
    finally:
        env.close()
    return vector_steps * 4  # agent-steps


def benchmarl_mappo(steps):
    from benchmarl.algorithms import MappoConfig
    from benchmarl.experiment import Experiment, ExperimentConfig
    from benchmarl.models.mlp import MlpConfig
    from plume_multi.integrations.benchmarl import PlumeSearchTask

    config = ExperimentConfig.get_from_yaml()
    frames = max(200, steps // 4 // 200 * 200)
    config.max_n_frames, config.on_policy_collected_frames_per_batch = frames, 200
    config.on_policy_n_envs_per_worker, config.on_policy_minibatch_size = 4, 100
    config.evaluation, config.render, config.loggers, config.create_json = False, False, [], False
    config.checkpoint_interval, config.save_folder = 0, tempfile.mkdtemp()
    Experiment(task=PlumeSearchTask.SEARCH.get_task(), algorithm_config=MappoConfig.get_from_yaml(),
               model_config=MlpConfig.get_from_yaml(), critic_model_config=MlpConfig.get_from_yaml(), seed=0,
               config=config).run()
    return frames * 4  # agent-steps


# (trainer, recipe, module needed, function, steps for the full run)
ROWS = [
    ("Stable-Baselines3 PPO", "SB3VecEnv(vector_env(256))", "stable_baselines3", sb3_native, 262_144),
    ("Stable-Baselines3 PPO", "make_vec_env(compact id, 16) (SB3's own)", "stable_baselines3", sb3_dummy, 16_384),
    ("sb3-contrib RecurrentPPO", "make_vec_env(compact id, 8), MlpLstmPolicy", "sb3_contrib", sb3_recurrent, 8_192),
    ("CleanRL-style loop", "make_vec(compact id, 256, vector_entry_point)", "torch", cleanrl_native, 262_144),
    ("CleanRL-style loop", "SyncVectorEnv of 16 compact envs (CleanRL's make_env)", "torch", cleanrl_sync, 16_384),
    ("TorchRL collector", "GymWrapper(vector_env(256, DISABLED))", "torchrl", torchrl_collect, 262_144),
    ("TorchRL / BenchMARL env", "PettingZooWrapper(parallel_env(4, black_death))", "torchrl", torchrl_pettingzoo,
     8_000),
    ("Tianshou DQN", "DummyVectorEnv of 8 compact envs", "tianshou", tianshou_dqn, 8_000),
    ("EPyMARL (env alone)", "TimeLimit(make(PlumeSearchAgents-v0, 4 agents))", "gymnasium", epymarl_env, 40_000),
    ("PufferLib style (env alone)", "SharedBufferEnv(1024 worlds x 4)", "numpy", puffer_buffers, 4_096_000),
    ("PufferLib style (env alone)", "multi_agent_vector_env(1024, 4) (fresh arrays, infos)", "numpy",
     multi_vector_rows, 4_096_000),
    ("RLlib PPO", "ppo_config(1 runner x 256 worlds)", "ray", rllib_ppo, 65_536),  # --quick: 16 worlds
    ("RLlib PPO, LSTM", "PPOConfig().environment(compact id), use_lstm (1 runner x 8)", "ray", rllib_lstm, 8_000),
    ("BenchMARL MAPPO", "PlumeSearchTask.SEARCH (4 agents, SerialEnv of 4)", "benchmarl", benchmarl_mappo, 3_200),
    ("AgileRL IPPO", "AsyncPettingZooVecEnv of 4 parallel_env(4, black death)", "agilerl", agilerl_ippo, 16_384),
]


def measure(quick: bool = False, only: str = "") -> list[dict]:
    import torch

    torch.set_num_threads(1)  # a small network gains nothing from more threads
    wanted = [w.strip().lower() for w in only.split(",") if w.strip()]
    rows = []
    for trainer, recipe, module, run, steps in ROWS:
        if importlib.util.find_spec(module) is None or (wanted and not any(w in trainer.lower() for w in wanted)):
            continue
        if quick:
            steps = max(1, steps // 64)
        rows.append(dict(trainer=trainer, recipe=recipe, steps_per_s=_timed(run, steps)))
    return rows


def format_table(rows) -> str:
    lines = ["| trainer | recipe | env-steps/s |", "|---|---|---:|"]
    lines += [f"| {r['trainer']} | {r['recipe']} | {r['steps_per_s']:,.0f} |" for r in rows]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny budgets (a smoke test)")
    parser.add_argument("--only", default="", help="comma-separated parts of trainer names (default: every row)")
    args = parser.parse_args(argv)
    print(format_table(measure(args.quick, args.only)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
