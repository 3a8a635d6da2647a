"""benchmarks/models.py: its NumPy step does the simulator's work, and the table runs (tiny)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from plume_multi import Simulator

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_models", ROOT / "benchmarks" / "models.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

FAMILIES = list(bench._scenarios(12, 16))
# every family at one agent per world (the table's rows), and the default, the one family the table
# also runs with several agents per world, with several (another family's several-agent combination
# would compile for this test alone)
CASES = [(label, 6, 1) for label in FAMILIES] + [(label, 2, 3) for label in FAMILIES
                                                  if any(r[0] == label and r[2] > 1 for r in bench.ROWS(True))]


@pytest.mark.parametrize("label,num_worlds,n_agents", CASES)
def test_numpy_models_do_the_same_work_until_a_reset(label, num_worlds, n_agents):
    """Built from the simulator's state, the NumPy step gives the same outputs while no world resets."""
    sim = Simulator(bench._scenarios(12, 16)[label][0](n_agents), num_worlds)
    sim.reset(seed=3)
    ref = bench.NumpyModels(sim)
    np.testing.assert_allclose(ref.obs, sim.state.obs, atol=1e-6)
    rng = np.random.default_rng(1)
    compared = 0
    for actions in bench._actions(sim, rng, count=8):
        if sim.state.world_done.any():
            break  # the next step resets a world: the draws differ from here on
        got = [np.array(a) for a in sim.step(actions)]
        want = ref.step(actions)
        np.testing.assert_allclose(got[0], want[0], atol=2e-6, err_msg=label)
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[2], want[2])
        np.testing.assert_array_equal(got[3], want[3])
        np.testing.assert_array_equal(sim.positions, ref.pos)
        compared += 1
    assert compared >= 4


def test_numpy_models_refuse_what_they_do_not_cover():
    from plume_multi import Scenario
    from plume_multi.models import sensors

    # the default sensors and the neighbours (the combination other tests compile too)
    sim = Simulator(Scenario(n_agents=3, n_neighbours=1), 1)
    assert any(isinstance(s, sensors.Neighbours) for s in sim.scenario.sensors)
    sim.reset(seed=0)
    with pytest.raises(ValueError, match="Neighbours"):
        bench.NumpyModels(sim)


def test_models_table_runs_tiny(capsys):
    rows = bench.measure(quick=True, repeats=1, min_seconds=0.001)
    assert [r["model"] for r in rows][:3] == ["default"] * 3
    assert len(rows) == 3 + len(FAMILIES) - 1
    assert all(r["serial"] > 0 and r["numpy"] > 0 and r["ratio"] > 0 for r in rows)
    assert bench.main(["--quick"]) == 0
    out = capsys.readouterr().out
    for label in ("oriented + antennae + wind + heading", "continuous + bilinear", "movie uint8", "movie float32",
                  "random source", "3-D default (8x8x8)"):
        assert label in out


def test_throughput_runs_the_models_table():
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "throughput.py"), "--quick", "--only", "models"],
                         capture_output=True, text=True, check=True).stdout
    assert "## models" in out and "movie uint8" in out
