"""benchmarks/training.py and benchmarks/learned_baselines.py run tiny and print their tables."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_training_table_runs_tiny(capsys, tmp_path):
    bench = _load("training")
    assert bench.main(["--tiny", "--validations", "2", "--json", str(tmp_path / "t.json")]) == 0
    out = capsys.readouterr().out
    assert "| path | worlds | agent-steps/s | per CPU-second | vs SB3 | time to 80 % |" in out
    for label in bench.LABELS.values():
        assert f"| {label} |" in out
    assert "| Stable-Baselines3 PPO" in out and "| 1.0x |" in out
    assert "Where the time goes in ppo-mlp's loop" in out and "| update, per epoch |" in out
    rows = json.loads((tmp_path / "t.json").read_text())["rows"]
    assert set(rows) == set(bench.PATHS)
    for path, row in rows.items():
        assert row["env_steps"] >= 4096 and row["seconds"] > 0 and row["cpu_seconds"] > 0
        assert (len(row["curve"]) == 0) == (path == "cleanrl")  # the CleanRL loop has no validation hook
    assert bench.time_to([(1.0, 10, 0.5), (2.0, 20, 0.85)]) == (2.0, 20)
    assert bench.time_to([(1.0, 10, 0.5)]) is None


def test_the_learned_columns_run_tiny_resume_and_join_the_benchmark_table(capsys, tmp_path, monkeypatch):
    from plume_multi import Scenario
    from plume_multi.tasks import Protocol, Task, registry
    from plume_multi.tasks.table import read_rows

    task = Task(id="tests/easy-v0", scenario_factory=lambda: Scenario(grid_size=(7, 5), sigma=2.0, max_steps=8),
                protocol=Protocol(episodes=100, max_steps=8), card="The easy search.")
    registry._load()
    monkeypatch.setitem(registry._TASKS, task.id, task)
    bench = _load("learned_baselines")
    argv = ["--tiny", "--tasks", task.id, "--seeds", "3", "--validations", "2", "--out", str(tmp_path)]
    assert bench.main(argv) == 0
    captured = capsys.readouterr()
    assert "| tests/easy-v0 | ppo-mlp (2,048 steps) | 3 |" in captured.out
    assert "| tests/easy-v0 | ppo-gru (1,024 steps) | 3 |" in captured.out
    assert "| task | ppo-mlp | ppo-gru |" in captured.out  # the benchmark table, its learned columns
    rows = read_rows(tmp_path)
    for name in ("ppo-mlp", "ppo-gru"):
        mine = [r for r in rows if r["policy"] == name]
        # the three seeds' shares: every one of the 64 episodes once, seeded as the protocol seeds them
        assert sorted(r["episode"] for r in mine) == list(range(64))
        assert all(r["seed"] == r["episode"] and r["reduced"] for r in mine)
        for seed in range(3):
            for suffix in (".pt", "-best.pt", "-last.pt", ".json"):
                assert (tmp_path / "learned" / f"tests__easy-v0__{name}-seed{seed}{suffix}").is_file()
    # a rerun reuses every finished run; a record lost (a run killed before it finished) is run again
    (tmp_path / "learned" / "tests__easy-v0__ppo-gru-seed1.json").unlink()
    assert bench.main(argv) == 0
    err = capsys.readouterr().err
    assert err.count("reused") == 5 and "tests/easy-v0 ppo-gru seed 1: training" in err
    assert sorted(r["episode"] for r in read_rows(tmp_path) if r["policy"] == "ppo-gru") == list(range(64))
    assert bench.shares(1000, 3) == [(0, 333), (333, 334), (667, 333)]
    assert bench.spread([1.0, 2.0, 3.0]) == "2 ± 1 (1–3)"
    assert bench.spread([191_234.0, 250_000.0]) == "221,000 ± 42,000 (191,000–250,000)"


def test_the_learned_baselines_train_on_the_tasks_observed_by_sensors():
    from plume_multi import tasks

    bench = _load("learned_baselines")
    assert bench.task_ids("trainable") == [
        "following/gaussian-random-source-v0", "puffs/constant-v0", "puffs/switch-once-v0", "puffs/switch-many-v0",
        "puffs/sparse-v0", "walls/gaussian-baffles-v0", "recorded/synthetic-v0"]
    assert not bench.trainable(tasks.get("teams/mixed-2-v0")) and not bench.trainable(tasks.get("otto/isotropic-19x19-v0"))


def test_the_benchmark_table_puts_the_learned_columns_after_the_built_ins():
    from plume_multi.tasks.table import LEARNED, markdown_table
    from plume_multi.training import POLICIES

    assert LEARNED == tuple(POLICIES)
    cell = {"task": "following/gaussian-random-source-v0", "reduced": False, "success_rate": 0.5, "iqm_steps": 10.0,
            "iqm_low": 9.0, "iqm_high": 11.0}
    table = markdown_table([{**cell, "policy": p} for p in ("mine", "ppo-gru", "random", "ppo-mlp")])
    assert table.startswith("| task | random | ppo-mlp | ppo-gru | mine |")
