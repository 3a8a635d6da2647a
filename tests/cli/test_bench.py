import numpy as np
import pytest

from plume_multi import Scenario, Simulator
from plume_multi.cli.bench import NumpyStep, engine_rows, main


@pytest.mark.parametrize("n_agents,num_worlds", [(1, 7), (5, 3)])
def test_numpy_step_does_the_same_work_as_the_simulator(n_agents, num_worlds):
    """Fixed starts make resets identical, so every output must match bit for bit."""
    rng = np.random.default_rng(0)
    starts = tuple((int(rng.integers(0, 11)), int(rng.integers(0, 7))) for _ in range(n_agents))
    sc = Scenario(grid_size=(11, 7), source_location=(5, 3), n_agents=n_agents, max_steps=9,
                  goal_radius=1.5, start_positions=starts)
    sim, ref = Simulator(sc, num_worlds), NumpyStep(sc, num_worlds)
    np.testing.assert_array_equal(sim.reset(seed=0), ref.obs)
    resets = 0
    for _ in range(60):
        actions = rng.integers(0, 4, sim.total_agents)
        resets += int(sim.state.world_done.sum())
        for x, y in zip(sim.step(actions), ref.step(actions)):
            np.testing.assert_array_equal(x, y)
    assert resets > 0  # the comparison covered autoresets


def test_engine_rows_and_main_run_tiny(capsys):
    rows = engine_rows([(2, 1), (1, 3)], repeats=1, min_seconds=0.001)
    assert [r["agents"] for r in rows] == [2, 3] and all(r["serial"] > 0 and r["numpy"] > 0 for r in rows)
    assert main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "| 64 x 1 |" in out and "| 1 x 64 |" in out


def test_main_rejects_bad_sizes():
    with pytest.raises(SystemExit):
        main(["--sizes", "1,x"])


def test_throughput_script_runs_the_engine_and_front_end_tables_quick():
    """Every table but ``models``, which test_benchmark_models.py runs with ``--only models`` (its
    models compile in a fresh process: running it twice doubles a minute of compiling)."""
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "throughput.py"
    out = subprocess.run([sys.executable, str(script), "--quick", "--only", "engine,single_agent,pettingzoo_api,vector"],
                         capture_output=True, text=True, check=True).stdout
    for table in ("## engine", "## single_agent", "## pettingzoo_api", "## vector"):
        assert table in out
    assert "Simulator.step" in out and "parallel_env().step" in out and "vector_env(4096).step" in out


def test_peak_rss_grows_with_the_number_of_agents():
    from plume_multi.cli.bench import peak_rss_mib

    np.zeros(200 * 2**20, np.uint8).fill(1)  # a large parent must not leak into the children's figures
    big, base = peak_rss_mib(1 << 18, 1)
    assert 0 < base < big < base + 100  # 262,144 agents at 48 B each: about 12 MiB more
