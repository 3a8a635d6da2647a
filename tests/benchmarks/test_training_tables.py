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


def test_the_seeds_table_runs_tiny(capsys, tmp_path):
    bench = _load("learned_baselines")
    assert bench.main(["--tiny", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| ppo-mlp (2,048 steps) | 2 |" in out and "| ppo-gru (1,024 steps) | 2 |" in out
    assert "| gradient climber | - |" in out and "per CPU-second |" in out
    runs = json.loads((tmp_path / "results.json").read_text())["runs"]
    assert [(r["policy"], r["seed"]) for r in runs] == [("ppo-mlp", 0), ("ppo-mlp", 1), ("ppo-gru", 0), ("ppo-gru", 1)]
    assert all((tmp_path / f"{r['policy']}-seed{r['seed']}.pt").is_file() for r in runs)
    assert bench.spread([1.0, 2.0, 3.0]) == "2 ± 1 (1–3)"
    assert bench.spread([191_234.0, 250_000.0]) == "221,000 ± 42,000 (191,000–250,000)"
