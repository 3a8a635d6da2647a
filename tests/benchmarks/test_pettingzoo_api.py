"""The PettingZoo benchmark script runs (tiny) and its rows and table are well formed."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "pettingzoo_api.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("pettingzoo_api_benchmark", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quick_benchmark_rows_and_table(bench, capsys):
    rows = bench.measure(quick=True)
    keys = {"api", "n", "agent_steps_per_s", "simulator_agent_steps_per_s", "fraction_of_simulator",
            "target_agent_steps_per_s", "reference"}
    assert all(set(row) == keys for row in rows)
    assert [(r["api"], r["n"]) for r in rows[:-1]] == [
        (api, n) for n in bench.SIZES for api in ("Simulator.step", "parallel_env().step")]
    assert rows[-1]["api"].startswith("env() AEC") and rows[-1]["n"] == bench.PERF_BENCHMARK_N
    for row in rows:
        assert math.isfinite(row["agent_steps_per_s"]) and row["agent_steps_per_s"] > 0
    for sim_row, env_row in zip(rows[0:-1:2], rows[1:-1:2]):
        assert env_row["simulator_agent_steps_per_s"] == sim_row["agent_steps_per_s"]
        assert env_row["fraction_of_simulator"] == pytest.approx(
            env_row["agent_steps_per_s"] / sim_row["agent_steps_per_s"])
    assert rows[-2]["target_agent_steps_per_s"] == 1.5e6 and rows[-2]["n"] == 1024
    bench.main(["--quick"])
    out = capsys.readouterr().out
    assert "parallel_env().step" in out and "Simulator.step" in out and "MAgent2" in out


def test_performance_benchmark_output_is_parsed(bench, monkeypatch):
    import pettingzoo.test

    def fake(env):
        print("Starting performance benchmark\n12345.5 turns per second\n200.0 cycles per second")

    monkeypatch.setattr(pettingzoo.test, "performance_benchmark", fake)
    assert bench._performance_benchmark_turns_per_s(None) == 12345.5
    monkeypatch.setattr(pettingzoo.test, "performance_benchmark", lambda env: print("nothing"))
    with pytest.raises(RuntimeError, match="no 'turns per second' line"):
        bench._performance_benchmark_turns_per_s(None)
