"""plume_multi.train at tiny sizes: it learns an easy search, is deterministic for a seed, saves
and loads its policies, and refuses bad input before it starts.

Every scenario here is the default combination (Gaussian, cardinal moves, concentration and
position, one agent per world) on small grids: the suite compiles it anyway.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import plume_multi
from plume_multi import Scenario, Simulator, ValidationError
from plume_multi.training import PPOConfig, LearnedPolicy, TrainingResult, load_policy, train

# 7x5 cells, source at the centre, 8 steps: every start is within 5 moves of the source, yet a random
# walk rarely gets there in time
EASY = Scenario(grid_size=(7, 5), sigma=2.0, max_steps=8)
SMALL = PPOConfig(num_worlds=64, rollout_steps=8, epochs=4, minibatch_size=256, learning_rate=3e-3, hidden=32)


@pytest.fixture(scope="module")
def trained() -> TrainingResult:
    return train(EASY, "ppo-mlp", 12_288, seed=3, config=SMALL, validate_every=4096, validation_episodes=256,
                 progress=False)


def test_ppo_mlp_learns_the_easy_search(trained):
    before = train(EASY, "ppo-mlp", 1, seed=3, config=SMALL.replace(learning_rate=1e-9), validation_episodes=0,
                   progress=False).policy
    untrained = plume_multi.evaluate(before, EASY, 500, seed=0, progress=False)
    learned = plume_multi.evaluate(trained.policy, EASY, 500, seed=0, progress=False)
    assert untrained.success_rate < 0.5
    assert learned.success_rate >= 0.9, learned.success_rate
    assert [row["env_steps"] for row in trained.validation] == [4096, 8192, 12288]
    assert trained.validation[-1]["success_rate"] >= 0.9
    assert trained.env_steps == 12_288 and trained.seconds > 0 and trained.steps_per_second > 0
    assert sum(row["episodes"] for row in trained.log) > 0 and len(trained.log) == 24
    seconds, steps = trained.time_to(0.9)
    assert steps in (4096, 8192, 12288) and 0 < seconds <= trained.seconds
    assert trained.time_to(1.01) is None


def test_training_is_deterministic_for_a_seed():
    def weights(seed):
        result = train(EASY, "ppo-mlp", 1024, seed=seed, config=SMALL, validation_episodes=0, progress=False)
        return result.policy.network.state_dict()

    first, again, other = weights(5), weights(5), weights(6)
    for key in first:
        torch.testing.assert_close(first[key], again[key], rtol=0, atol=0)
    assert any(not torch.equal(first[key], other[key]) for key in first if key.endswith("weight"))


def test_the_policy_file_round_trips(trained, tmp_path):
    path = trained.policy.save(tmp_path / "mlp.pt")
    assert path.stat().st_size < 50_000
    loaded = load_policy(path)
    obs = np.random.default_rng(0).random((100, EASY.obs_dim), dtype=np.float32)
    np.testing.assert_array_equal(loaded(obs), trained.policy(obs))
    assert loaded.observation_layout == EASY.observation_layout and loaded.config == SMALL
    assert loaded.training["seed"] == 3
    sampled = loaded.sampled(seed=1)
    assert not sampled.greedy and np.array_equal(sampled(obs), loaded.sampled(seed=1)(obs))
    with pytest.raises(ValidationError, match="obs: got shape"):
        loaded(obs[:, :2])
    (tmp_path / "junk.pt").write_bytes(b"not a policy")
    with pytest.raises(ValidationError, match="is not a policy file"):
        load_policy(tmp_path / "junk.pt")


def test_the_gru_policy_trains_keeps_a_memory_and_round_trips(tmp_path):
    config = PPOConfig.for_policy("ppo-gru", num_worlds=32, rollout_steps=8, minibatch_size=128, hidden=16)
    result = train(EASY, "ppo-gru", 512, seed=0, config=config, validate_every=0, validation_episodes=32,
                   progress=False)
    policy = result.policy
    assert policy.recurrent and len(result.validation) == 1
    obs = np.random.default_rng(1).random((6, EASY.obs_dim), dtype=np.float32)
    first = policy(obs)
    memory = policy._memory.clone()
    policy(obs)
    assert not torch.equal(policy._memory, memory)  # the memory moves on
    policy.reset()
    np.testing.assert_array_equal(policy(obs), first)  # a cleared memory acts as at the start
    path = policy.save(tmp_path / "gru.pt")
    np.testing.assert_array_equal(load_policy(path)(obs), first)
    # episode_start clears chosen rows only
    policy.reset()
    policy(obs)
    policy(obs, episode_start=np.array([True] + [False] * 5))
    fresh = load_policy(path).network.features(torch.from_numpy(obs[:1]), torch.zeros(1, 16))[2][0].detach()
    torch.testing.assert_close(policy._memory[0], fresh)  # a batch of 1 may round differently
    assert not torch.allclose(policy._memory[1], fresh)


def test_bad_input_is_refused_before_training():
    with pytest.raises(ValidationError, match="policy: got 'ppo-lstm'"):
        train(EASY, "ppo-lstm", 100)
    with pytest.raises(ValidationError, match=r"train.budget: got 0"):
        train(EASY, "ppo-mlp", 0)
    with pytest.raises(ValidationError, match=r"train.seed: got -1"):
        train(EASY, "ppo-mlp", 100, seed=-1)
    with pytest.raises(ValidationError, match="scenario: got str"):
        train("following", "ppo-mlp", 100)
    with pytest.raises(ValidationError, match=r"PPOConfig.epochs: got 0"):
        PPOConfig(epochs=0)
    with pytest.raises(ValidationError, match=r"PPOConfig.learning_rate: got nan"):
        PPOConfig(learning_rate=float("nan"))
    with pytest.raises(ValidationError, match="unknown setting"):
        PPOConfig().replace(epoch=3)
    with pytest.raises(ValidationError, match="stop_at"):
        train(EASY, "ppo-mlp", 100, stop_at=1.5)


def test_a_scenario_factory_and_several_agents_per_world():
    """A task hands over a factory; with 3 agents per world the rows share the one network, and
    rows that already arrived are left out of the loss."""
    scenario = EASY.replace(n_agents=3)
    result = train(lambda: scenario, "ppo-mlp", 1536, seed=0, config=SMALL.replace(num_worlds=16),
                   validation_episodes=16, progress=False)
    assert result.env_steps == 16 * 3 * 8 * 4
    actions = result.policy(Simulator(scenario, 2).reset(seed=0))
    assert actions.shape == (6,) and actions.dtype == np.int64


def test_torch_threads_are_restored_and_the_policy_acts_on_its_own():
    before = torch.get_num_threads()
    torch.set_num_threads(3)  # the caller's setting; training and acting use config.threads (1)
    try:
        seen = []
        policy = train(EASY, "ppo-mlp", 512, config=SMALL, validation_episodes=0, progress=False).policy
        assert torch.get_num_threads() == 3
        features = policy.network.features

        def counting(*args):
            seen.append(torch.get_num_threads())
            return features(*args)

        policy.network.features = counting
        policy(np.zeros((4, EASY.obs_dim), np.float32))
        assert seen == [1] and torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)


def test_staggering_spreads_the_episode_phases_reproducibly():
    from plume_multi.training.trainer import stagger_episodes

    def phases(seed):
        sim = Simulator(EASY.replace(max_steps=50), 256, autoreset="same_step", parallel=False)
        sim.reset(seed=0)
        assert stagger_episodes(sim, seed) == 49
        return sim.world_steps.copy()

    first = phases(1)
    assert len(np.unique(first)) > 25  # worlds reset together would all be at one step
    np.testing.assert_array_equal(first, phases(1))
    assert not np.array_equal(first, phases(2))
