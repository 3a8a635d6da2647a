"""`plume-multi train` writes a policy that `plume-multi eval --policy FILE.pt` runs; bad input fails
in one line, before anything compiles or trains (the default combination on a tiny grid)."""

from __future__ import annotations

import json

import numpy as np

from plume_multi.cli import main
from plume_multi.training import load_policy

EASY = ["--grid", "7", "5", "--sigma", "2", "--steps", "8"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_train_then_evaluate_the_policy_file(capsys, tmp_path):
    prefix = str(tmp_path / "runs" / "mlp")
    code, out, err = run(capsys, "train", *EASY, "--policy", "ppo-mlp", "--budget", "2048", "--seed", "1",
                         "--worlds", "64", "--validations", "2", "--validation-episodes", "16", "--out", prefix, "--quiet")
    assert code == 0, err
    assert out.startswith("ppo-mlp: 2,048 agent-steps on 64 worlds x 1 agent(s) of a 7x5 grid")
    assert "agent-steps/s; validation excluded" in out and out.count("validation success") == 2
    summary = json.loads((tmp_path / "runs" / "mlp.json").read_text())
    assert summary["policy"] == "ppo-mlp" and summary["seed"] == 1 and summary["env_steps"] == 2048
    assert len(summary["validation"]) == 2 and len(summary["log"]) == 2048 // (64 * 4)
    # PREFIX.pt is the best validated weights; both checkpoints stay beside it
    assert summary["kept"] == "best" and summary["best"] in summary["validation"]
    assert f"{prefix}.pt: the best validated weights ({summary['best']['env_steps']:,} steps)" in out
    assert out.count("<- best") == 1
    assert sorted(f.name for f in (tmp_path / "runs").iterdir()) == ["mlp-best.pt", "mlp-last.pt", "mlp.json",
                                                                      "mlp.pt"]
    kept, best = load_policy(prefix + ".pt"), load_policy(prefix + "-best.pt")
    obs = np.random.default_rng(0).random((32, 3), dtype=np.float32)
    np.testing.assert_array_equal(kept(obs), best(obs))
    assert load_policy(prefix + "-last.pt").training["scenario_steps"] == 2048

    code, out, err = run(capsys, "eval", *EASY, "--policy", prefix + ".pt", "--episodes", "40", "--no-plot",
                         "--out", str(tmp_path / "eval"), "--quiet")
    assert code == 0, err
    assert f"{prefix}.pt: 40 episodes" in out and "success:" in out
    rows = (tmp_path / "eval.csv").read_text().splitlines()
    assert len(rows) == 41


def test_a_policy_file_must_fit_the_scenario(capsys, tmp_path):
    prefix = str(tmp_path / "mlp")
    assert run(capsys, "train", *EASY, "--budget", "256", "--worlds", "64", "--validations", "0", "--out", prefix,
               "--quiet")[0] == 0
    code, _, err = run(capsys, "eval", *EASY, "--sensors", "concentration", "--policy", prefix + ".pt", "--quiet")
    assert code == 2
    assert "plume-multi eval: error: --policy" in err and "trained on the observation ['concentration', 'x', 'y']" in err
    code, _, err = run(capsys, "eval", *EASY, "--action-model", "moore", "--policy", prefix + ".pt", "--quiet")
    assert code == 2 and "its actions do not fit the body Moore" in err
    code, _, err = run(capsys, "eval", *EASY, "--policy", str(tmp_path / "missing.pt"), "--quiet")
    assert code == 2 and "expected a policy file written by LearnedPolicy.save" in err


def test_bad_arguments_fail_in_one_line(capsys, tmp_path):
    out = ["--out", str(tmp_path / "p")]
    code, _, err = run(capsys, "train", "--budget", "0", *out)
    assert code == 2 and "--budget: got 0; expected a whole number of agent-steps >= 1" in err
    code, _, err = run(capsys, "train", "--policy", "ppo-lstm", *out)
    assert code == 2 and "invalid choice: 'ppo-lstm'" in err
    code, _, err = run(capsys, "train", "--stop-at", "2", *out)
    assert code == 2 and "--stop-at: got 2.0" in err
    code, _, err = run(capsys, "train", "--worlds", "0", *EASY, *out)
    assert code == 2 and "PPOConfig.num_worlds: got 0" in err
    code, _, err = run(capsys, "train", "--keep", "best", "--validations", "0", *EASY, *out)
    assert code == 2 and "--keep best: chooses among validations" in err
    code, _, err = run(capsys, "train", "--task", "following/gaussian-random-source-v0", "--grid", "8", "8", *out)
    assert code == 2 and "--grid: got it with --task; the task gives the scenario" in err
    code, _, err = run(capsys, "train", "--task", "teams/mixed-2-v0", *out)
    assert code == 2 and "error: task: teams/mixed-2-v0 fixes the policies of some agents" in err
    code, _, err = run(capsys, "train", "--task", "recorded/file-v0", *out)
    assert code == 2 and "needs the option(s) ['path']" in err
    code, _, err = run(capsys, "train", "--option", "path=x.h5", *EASY, *out)
    assert code == 2 and "--option: goes with --task" in err
    assert not any(tmp_path.iterdir())


def test_train_on_a_task_keeps_the_last_when_asked(capsys, tmp_path, monkeypatch):
    from plume_multi.scenario import Scenario
    from plume_multi.tasks import Protocol, Task, registry

    task = Task(id="tests/easy-v0", scenario_factory=lambda: Scenario(grid_size=(7, 5), sigma=2.0, max_steps=50),
                protocol=Protocol(episodes=100, max_steps=8), card="The easy search.")
    registry._load()
    monkeypatch.setitem(registry._TASKS, task.id, task)
    prefix = str(tmp_path / "mlp")
    code, out, err = run(capsys, "train", "--task", task.id, "--budget", "1024", "--worlds", "64", "--validations", "2",
                         "--validation-episodes", "16", "--keep", "last", "--out", prefix, "--quiet")
    assert code == 0, err
    assert out.startswith("ppo-mlp: 1,024 agent-steps on 64 worlds x 1 agent(s) of task tests/easy-v0: a 7x5 grid")
    assert f"{prefix}.pt: the last weights" in out
    summary = json.loads((tmp_path / "mlp.json").read_text())
    assert summary["task"] == task.id and summary["kept"] == "last"
    policy = load_policy(prefix + ".pt")
    assert policy.training["task"] == task.id and policy.scenario["metadata"]["max_steps"] == 8
