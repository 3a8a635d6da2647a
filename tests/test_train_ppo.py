"""The PPO example runs end to end at a tiny budget and writes its table."""

import dataclasses
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from plume_multi.policies import GradientClimber

SCRIPT = Path(__file__).resolve().parents[1] / "examples" / "train_ppo.py"


@pytest.fixture(scope="module")
def train_ppo():
    spec = importlib.util.spec_from_file_location("train_ppo", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["train_ppo"] = module  # dataclasses look their module up while the file runs
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop("train_ppo", None)


def test_every_argument_has_a_docstring_and_a_flag(train_ppo):
    docs = train_ppo.field_docs(train_ppo.Args)
    names = [f.name for f in dataclasses.fields(train_ppo.Args)]
    assert sorted(docs) == sorted(names) and all(docs.values())
    args = train_ppo.parse_args(["--num-envs", "32", "--sigma", "4.5", "--masked", "--no-deterministic"])
    assert (args.num_envs, args.sigma, args.masked, args.deterministic) == (32, 4.5, True, False)
    with pytest.raises(SystemExit):
        train_ppo.parse_args(["--num-envs", "many"])


@pytest.mark.parametrize("masked", [False, True])
def test_tiny_run_trains_evaluates_and_writes_the_table(train_ppo, tmp_path, capsys, masked):
    argv = ["--tiny", "--out-dir", str(tmp_path)] + (["--masked"] if masked else [])
    results = train_ppo.main(argv)
    out = capsys.readouterr().out
    assert "steps/s" in out and "| policy | success rate |" in out
    assert [r["policy"] for r in results["rows"]] == [
        ("MaskablePPO" if masked else "PPO") + " (greedy)", "gradient climber", "random"]
    for row in results["rows"]:
        assert 0.0 <= row["success_rate"] <= 1.0 and row["episodes"] == 64
        steps = row["mean_steps_to_source"]
        assert steps is None or 1 <= steps <= results["args"]["max_steps"]
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["rows"] == results["rows"] and saved["train_steps_per_s"] > 0
    assert (tmp_path / "results.md").read_text().startswith("| policy | success rate |")
    assert (tmp_path / "model.zip").exists()


def test_evaluation_counts_successes_and_steps_like_a_plain_loop(train_ppo):
    """``evaluate`` against a by-hand count over the same seeded worlds."""
    import plume_multi
    from gymnasium.vector import AutoresetMode

    args = train_ppo.Args(width=9, height=7, sigma=3.0, max_steps=30, eval_episodes=50, eval_seed=5)
    got = train_ppo.evaluate(GradientClimber(seed=1), args)
    env = plume_multi.vector_env(50, autoreset_mode=AutoresetMode.DISABLED, grid_size=(9, 7), sigma=3.0, max_steps=30)
    obs, _ = env.reset(seed=5)
    policy = GradientClimber(seed=1)
    found_at = {}
    for t in range(1, 31):
        obs, _, term, _, _ = env.step(policy(obs))
        for i in np.flatnonzero(term):
            found_at.setdefault(i, t)
    assert got["success_rate"] == len(found_at) / 50
    assert got["mean_steps_to_source"] == pytest.approx(np.mean(list(found_at.values())))
    assert 0 < len(found_at) < 50
