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
from plume_multi.tasks import Protocol, Task
from plume_multi.training import VALIDATION_SEED, PPOConfig, LearnedPolicy, TrainingResult, load_policy, train

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
    with pytest.raises(ValidationError, match="scenario: got 'following'; expected .* or a task id"):
        train("following", "ppo-mlp", 100)
    with pytest.raises(ValidationError, match="expected a registered task"):
        train("following/no-such-task-v0", "ppo-mlp", 100)
    with pytest.raises(ValidationError, match=r"train.keep: got 'first'"):
        train(EASY, "ppo-mlp", 100, keep="first")
    with pytest.raises(ValidationError, match="train.keep: got 'best' with validation_episodes=0"):
        train(EASY, "ppo-mlp", 100, keep="best", validation_episodes=0)
    with pytest.raises(ValidationError, match=r"train.checkpoints: got 3 \(int\); expected None or a path prefix"):
        train(EASY, "ppo-mlp", 100, checkpoints=3)
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


# ----------------------------------------------------------------------------------------- the best and the last
def _validated(policy, until="first"):
    """What a validation during training measured for ``policy``: the same held-out episodes."""
    result = plume_multi.evaluate(policy, EASY, 256, seed=VALIDATION_SEED, progress=False, until=until)
    return result.success_rate, result.mean


def test_the_best_validated_weights_are_kept_beside_the_last(tmp_path):
    # a learning rate that overshoots: the validations rise, then fall back, so best and last differ
    config = SMALL.replace(learning_rate=0.1, epochs=8)
    result = train(EASY, "ppo-mlp", 8192, seed=0, config=config, validate_every=1024, validation_episodes=256,
                   progress=False, checkpoints=tmp_path / "run")
    rows = result.validation
    best = result.best_validation
    # the documented rule, written out: the highest success rate, then the fewest mean steps, then
    # the earliest; the weights differ from the last (training's floats differ between CPUs: on one
    # the last validation is worse, on another it ties on success and takes more steps)
    # (NaN mean steps: none succeeded, counted as the most)
    expected = min(rows, key=lambda row: (-row["success_rate"], np.nan_to_num(row["mean_steps"], nan=np.inf),
                                          row["env_steps"]))
    assert len(rows) == 8 and best == expected and best["env_steps"] < result.env_steps, rows
    assert result.kept == "best" and result.policy is result.best
    # each kept policy is the very weights that were validated
    assert _validated(result.best) == (best["success_rate"], best["mean_steps"])
    last = result.validation[-1]
    assert _validated(result.last) == (last["success_rate"], last["mean_steps"])
    assert result.best.training["scenario_steps"] == best["env_steps"] < result.env_steps
    assert result.last.training["scenario_steps"] == result.env_steps
    assert result.summary()["best"] == best and result.summary()["kept"] == "best"
    # the checkpoints on disk are the same two policies
    obs = np.random.default_rng(0).random((64, EASY.obs_dim), dtype=np.float32)
    for kind, policy in (("best", result.best), ("last", result.last)):
        loaded = load_policy(tmp_path / f"run-{kind}.pt")
        np.testing.assert_array_equal(loaded(obs), policy(obs))
        assert loaded.training["checkpoint"] == kind
    assert sorted(f.name for f in tmp_path.iterdir()) == ["run-best.pt", "run-last.pt"]  # no temporary file left

    again = train(EASY, "ppo-mlp", 8192, seed=0, config=config, validate_every=1024, validation_episodes=256,
                  progress=False, keep="last")
    assert again.kept == "last" and again.policy is again.last
    np.testing.assert_array_equal(again.policy(obs), result.last(obs))  # the same run, the other choice
    np.testing.assert_array_equal(again.best(obs), result.best(obs))
    unvalidated = train(EASY, "ppo-mlp", 1024, seed=0, config=config, validation_episodes=0, progress=False)
    assert unvalidated.kept == "last" and unvalidated.best is None and unvalidated.best_validation is None


def test_a_killed_run_keeps_the_checkpoints_it_finished(tmp_path, monkeypatch):
    """Stopped at its fourth validation, the run has left the checkpoints of the first three, whole."""
    from plume_multi.training import trainer

    seen = []
    validate = trainer._validate

    def stopping(*args, **kwargs):
        if len(seen) == 3:
            raise KeyboardInterrupt
        seen.append(validate(*args, **kwargs))
        return seen[-1]

    monkeypatch.setattr(trainer, "_validate", stopping)
    with pytest.raises(KeyboardInterrupt):
        train(EASY, "ppo-mlp", 8192, seed=0, config=SMALL, validate_every=1024, validation_episodes=256,
              progress=False, checkpoints=tmp_path / "run")
    best = load_policy(tmp_path / "run-best.pt")
    last = load_policy(tmp_path / "run-last.pt")
    assert last.training["scenario_steps"] == 3072
    rates = [row["success_rate"] for row in seen]
    assert best.training["validation"]["success_rate"] == max(rates)
    assert _validated(best)[0] == max(rates)


def test_a_policy_file_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    policy = train(EASY, "ppo-mlp", 512, config=SMALL, validation_episodes=0, progress=False).policy
    path = policy.save(tmp_path / "p.pt")
    before = path.read_bytes()

    def broken(record, f):
        f.write(b"half a file")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", broken)
    with pytest.raises(ValidationError, match="cannot be written .disk full"):
        policy.save(path)
    assert path.read_bytes() == before and [f.name for f in tmp_path.iterdir()] == ["p.pt"]


# ----------------------------------------------------------------------------------------- tasks
def _task(**protocol):
    return Task(id="tests/easy-v0", scenario_factory=lambda: EASY.replace(max_steps=50),
                protocol=Protocol(**{"episodes": 100, "max_steps": 8, **protocol}), card="The easy search.")


def test_a_task_gives_its_scenario_protocol_and_seeds(monkeypatch):
    task = _task(until="all")
    seen = {}
    reset = Simulator.reset

    def recording(self, *args, **kwargs):
        seen.setdefault("seed", kwargs.get("seed"))
        return reset(self, *args, **kwargs)

    monkeypatch.setattr(Simulator, "reset", recording)
    result = train(task, "ppo-mlp", 1024, seed=2, config=SMALL, validation_episodes=64, progress=False)
    assert result.task == "tests/easy-v0" and result.policy.training["task"] == "tests/easy-v0"
    assert result.policy.scenario["metadata"]["max_steps"] == 8  # the protocol's step cap, not the factory's 50
    assert seen["seed"] == task.protocol.train_seed_low + 2 * 2**32
    # by its registered id too
    from plume_multi.tasks import registry

    registry._load()
    monkeypatch.setitem(registry._TASKS, task.id, task)
    by_id = train(task.id, "ppo-mlp", 1024, seed=2, config=SMALL, validation_episodes=64, progress=False)
    obs = np.random.default_rng(0).random((16, EASY.obs_dim), dtype=np.float32)
    np.testing.assert_array_equal(by_id.policy(obs), result.policy(obs))


def test_tasks_that_cannot_be_trained_are_refused_before_anything_compiles():
    with pytest.raises(ValidationError, match="teams/mixed-2-v0 fixes the policies of some agents"):
        train("teams/mixed-2-v0", "ppo-mlp", 100)
    with pytest.raises(ValidationError, match=r"needs the option\(s\) \['path'\]"):
        train("recorded/file-v0", "ppo-mlp", 100)
    close = _task(eval_seed=VALIDATION_SEED - 10)
    with pytest.raises(ValidationError, match="the validation episodes .* must lie between them"):
        train(close, "ppo-mlp", 100)
    with pytest.raises(ValidationError, match="seed: got 5; .* must stay <="):
        train(_task(train_seed_low=2**63 - 2**33), "ppo-mlp", 100, seed=5, validation_episodes=0)
