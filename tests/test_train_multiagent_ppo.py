"""The multi-agent PPO example runs end to end at a tiny budget, masks finished searchers, and its
evaluation and advantage estimates agree with plain by-hand computations."""

import dataclasses
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import plume_multi

SCRIPT = Path(__file__).resolve().parents[1] / "examples" / "train_multiagent_ppo.py"
SMALL = ["--tiny", "--width", "8", "--height", "6", "--sigma", "3.0"]  # searchers finish often here


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("train_multiagent_ppo", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["train_multiagent_ppo"] = module  # dataclasses look their module up while the file runs
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop("train_multiagent_ppo", None)


def test_every_argument_has_a_docstring_and_a_flag(example):
    docs = example.field_docs(example.Args)
    names = [f.name for f in dataclasses.fields(example.Args)]
    assert sorted(docs) == sorted(names) and all(docs.values())
    args = example.parse_args(["--n-agents", "6", "--sigma", "4.5", "--team", "--no-mask-finished"])
    assert (args.n_agents, args.sigma, args.team, args.mask_finished) == (6, 4.5, True, False)
    with pytest.raises(SystemExit):
        example.parse_args(["--n-agents", "many"])


def test_tiny_run_trains_evaluates_and_writes_the_table(example, tmp_path, capsys):
    results = example.main(SMALL + ["--out-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert "steps/s" in out and "| policy | searchers that found the source |" in out
    assert [r["policy"] for r in results["rows"]] == [
        "PPO, shared policy (greedy)", "gradient climbers, independent", "random walkers, independent"]
    for row in results["rows"]:
        assert 0.0 <= row["all_found_rate"] <= row["success_rate"] <= 1.0 and row["searchers"] == 16 * 4
        steps = row["mean_steps_to_source"]
        assert steps is None or 1 <= steps <= results["args"]["max_steps"]
    assert results["train_steps"] == 2048 and results["train_steps_per_s"] > 0
    assert any(entry["masked_share"] > 0 for entry in results["log"])  # finished searchers were left out
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["rows"] == results["rows"]
    assert (tmp_path / "results.md").read_text().startswith("| policy |")
    state = torch.load(tmp_path / "agent.pt")
    assert state["actor.0.weight"].shape == (64, 3)


def test_without_masking_every_transition_is_trained_on(example, tmp_path):
    results = example.main(SMALL + ["--no-mask-finished", "--out-dir", str(tmp_path)])
    assert all(entry["masked_share"] == 0 for entry in results["log"])


def towards_the_source(obs):
    """A stateless hand policy on the compact observation: step along x, then y, to the centre."""
    x, y = obs[:, 1], obs[:, 2]
    return np.where(x < 0.45, 1, np.where(x > 0.55, 3, np.where(y < 0.45, 0, 2))).astype(np.int64)


def test_evaluation_of_a_deterministic_rule_matches_parallel_env(example):
    args = example.Args(n_agents=3, width=15, height=9, sigma=3.0, max_steps=6, eval_worlds=10, eval_seed=3)
    got = example.evaluate(towards_the_source, args)
    steps, all_found = [], 0
    for b in range(10):
        env = plume_multi.parallel_env(n_agents=3, grid_size=(15, 9), sigma=3.0, max_cycles=6)
        observations, _ = env.reset(seed=3 + b)
        found = {}
        t = 0
        while env.agents:
            t += 1
            actions = {a: int(towards_the_source(observations[a][None])[0]) for a in env.agents}
            observations, _, terminations, _, _ = env.step(actions)
            found.update({a: t for a, done in terminations.items() if done})
        steps += found.values()
        all_found += len(found) == 3
    assert 0 < len(steps) < 30  # a budget of 6 steps: some searchers start too far away
    assert got["success_rate"] == len(steps) / 30
    assert got["mean_steps_to_source"] == pytest.approx(np.mean(steps))
    assert got["all_found_rate"] == all_found / 10


def test_advantages_with_lambda_one_are_discounted_returns_cut_at_episode_ends(example):
    rng = np.random.default_rng(1)
    T, R, gamma = 7, 4, 0.9
    rewards = torch.as_tensor(rng.random((T, R)), dtype=torch.float32)
    values = torch.as_tensor(rng.random((T, R)), dtype=torch.float32)
    dones = torch.as_tensor(rng.random((T, R)) < 0.3, dtype=torch.float32)
    next_value = torch.as_tensor(rng.random(R), dtype=torch.float32)
    next_done = torch.tensor([0.0, 1.0, 0.0, 1.0])
    _, returns = example.compute_advantages(rewards, values, dones, next_value, next_done, gamma, 1.0)
    for r in range(R):
        for t in range(T):
            total, discount = 0.0, 1.0
            for k in range(t, T):
                total += discount * float(rewards[k, r])
                discount *= gamma
                ends = next_done[r] if k == T - 1 else dones[k + 1, r]
                if ends:
                    break
            else:
                total += discount * float(next_value[r])
            assert float(returns[t, r]) == pytest.approx(total, rel=1e-5)
