"""benchmarks/walls.py: its NumPy step does the simulator's work among walls, and the table runs
(tiny, one agent per world: the default scenario among walls of tests/models/test_walls.py)."""

import importlib.util
import sys
from pathlib import Path

import numpy as np

from plume_multi import Simulator

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
_spec = importlib.util.spec_from_file_location("bench_walls", ROOT / "benchmarks" / "walls.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_the_maze_has_rooms_and_a_free_centre():
    mask = bench.maze()
    assert mask.shape == (128, 128) and not mask[64, 64]
    assert 0.04 < mask.mean() < 0.08
    assert mask[24].mean() > 0.5 and not mask[24].all()  # a wall with doors


def test_numpy_models_do_the_same_work_among_walls_until_a_reset():
    sc = bench._scenario(True, 1, 16, masks=3)
    sim = Simulator(sc, 8)
    sim.reset(seed=3)
    ref = bench.NumpyModels(sim)
    np.testing.assert_array_equal(ref.obs, sim.state.obs)
    refused = 0
    for actions in bench._actions(sim, np.random.default_rng(1), count=10):
        if sim.state.world_done.any():
            break  # the next step resets a world: the draws differ from here on
        before = sim.positions.copy()
        got = [np.array(a) for a in sim.step(actions)]
        want = ref.step(actions)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(sim.positions, ref.pos)
        refused += int(((sim.positions == before).all(axis=1)
                        & (np.clip(before + sc.moves()[actions], 0, 15) != before).any(axis=1)).sum())
    assert refused > 0  # some moves met a wall


def test_walls_table_runs_tiny():
    rows = bench.measure(quick=True, repeats=1, min_seconds=0.001, masks=2, threads=False, one_agent_only=True)
    assert [(r["walls"], r["num_worlds"]) for r in rows] == [(False, 16), (True, 16), (False, 64), (True, 64)]
    assert all(r["serial"] > 0 and r["numpy"] > 0 for r in rows)
    assert all(r["vs_no_walls"] > 0 for r in rows if r["walls"])
    table = bench.format_table(rows)
    assert "default + walls (2 masks)" in table and "walls / no walls" in table
