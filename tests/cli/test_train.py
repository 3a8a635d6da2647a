"""`plume-multi train` writes a policy that `plume-multi eval --policy FILE.pt` runs; bad input fails
in one line, before anything compiles or trains (the default combination on a tiny grid)."""

from __future__ import annotations

import json

from plume_multi.cli import main

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
    assert not (tmp_path / "p.pt").exists()
