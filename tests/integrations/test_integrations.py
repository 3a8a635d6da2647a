"""The integrations the docs show, checked beyond "it runs": TorchRL, Tianshou, and the
``plume_multi:`` id form for processes that never import the package. (SB3 and SuperSuit have
their own test modules; the docs' blocks themselves run in test_docs.py.)"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import plume_multi


def test_vector_env_exposes_its_autoreset_mode_like_gymnasiums_own():
    for mode in AutoresetMode:
        env = plume_multi.vector_env(2, autoreset_mode=mode, grid_size=(8, 6))
        assert env.autoreset_mode is mode and env.metadata["autoreset_mode"] is mode


def test_torchrl_wraps_the_vector_env_as_a_batched_env():
    from torchrl.envs import GymWrapper

    n, max_steps = 16, 7
    env = GymWrapper(plume_multi.vector_env(n, autoreset_mode=AutoresetMode.SAME_STEP, grid_size=(9, 7),
                                            max_steps=max_steps))
    assert tuple(env.batch_size) == (n,)
    assert env.action_spec.shape == (n, 4)  # one-hot over the four cardinal moves
    rollout = env.rollout(3 * max_steps, break_when_any_done=False)
    assert tuple(rollout.batch_size) == (n, 3 * max_steps)
    obs = rollout["next", "observation"]
    assert obs.shape == (n, 3 * max_steps, 3) and float(obs.min()) >= 0 and float(obs.max()) <= 1
    reward = rollout["next", "reward"].squeeze(-1)
    terminated = rollout["next", "terminated"].squeeze(-1)
    done = rollout["next", "done"].squeeze(-1)
    assert set(reward.unique().tolist()) <= {0.0, 1.0}
    assert bool((terminated[reward == 1.0]).all())  # a reward comes with the goal, which ends the episode
    # SAME_STEP: every world's episode ends by its max_steps-th step, then a new one starts
    for world in range(n):
        ends = done[world].nonzero().flatten().tolist()
        assert ends and ends[0] < max_steps
        assert all(b - a <= max_steps for a, b in zip([-1, *ends], ends))


def test_torchrl_refuses_next_step_autoreset_as_the_docs_say():
    from torchrl.envs import GymWrapper

    with pytest.raises(RuntimeError, match="SAME_STEP or DISABLED"):
        GymWrapper(plume_multi.vector_env(2, grid_size=(8, 6)))  # NEXT_STEP, Gymnasium's default


def test_tianshou_collects_whole_episodes_from_the_single_agent_env():
    import gymnasium as gym
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.utils.net.common import Net

    from plume_multi.envs.components import CompactObservation

    def make_env():
        return gym.make("plume_multi:PlumeSearch-v0", grid_size=(8, 6), max_steps=10,
                        observation_model=CompactObservation())

    envs = DummyVectorEnv([make_env for _ in range(3)])
    policy = DiscreteQLearningPolicy(model=Net(state_shape=3, action_shape=4, hidden_sizes=[16]),
                                     action_space=envs.action_space[0], eps_training=1.0)
    buffer = VectorReplayBuffer(1000, len(envs))
    collector = Collector(policy, envs, buffer, exploration_noise=True)
    collector.reset(gym_reset_kwargs={"seed": 0})
    stats = collector.collect(n_step=60)
    assert stats.n_collected_steps >= 60
    assert stats.n_collected_episodes >= 6  # episodes last at most 10 steps
    assert stats.lens.max() <= 10
    obs = buffer.obs[:len(buffer)]
    assert obs.shape[1:] == (3,) and obs.min() >= 0 and obs.max() <= 1
    assert set(np.unique(buffer.rew[:len(buffer)])) <= {0.0, 1.0}


def test_the_module_prefixed_ids_work_in_a_process_that_never_imports_the_package():
    code = """
import json
import gymnasium as gym  # and nothing else: the "plume_multi:" prefix makes Gymnasium import the package
envs = gym.make_vec("plume_multi:PlumeSearchCompact-v0", num_envs=4, vectorization_mode="vector_entry_point",
                    grid_size=(10, 8))
obs, _ = envs.reset(seed=0)
env = gym.make("plume_multi:PlumeSearch-v0", grid_size=(10, 8))
single, _ = env.reset(seed=0)
print(json.dumps({"vector": list(obs.shape), "single": sorted(single)}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["vector"] == [4, 3]  # the native vector env's flat observation
    assert result["single"] == ["agent_position", "concentration_field", "source_location"]  # the contract's Dict
