"""benchmarks/bayesian_plumes.py runs tiny, its cells are what ``evaluate`` gives, and a second run
reuses the cells its results file holds.

The tiny row compiles and calibrates what tests/models/test_likelihoods.py does: a puff plume with a
grid body and a ``Belief`` following a likelihood (calibrated, or the Poisson closed form)."""

from __future__ import annotations

import json
import runpy
from pathlib import Path
from types import SimpleNamespace

from plume_multi import evaluate
from plume_multi.calibration import calibrate
from plume_multi.policies import Infotaxis
from plume_multi.tasks.scores import iqm, steps_of

ROOT = Path(__file__).resolve().parents[2]


def _load():
    return SimpleNamespace(**runpy.run_path(str(ROOT / "benchmarks" / "bayesian_plumes.py"), run_name="bench_bayesian_plumes"))


def test_the_table_runs_tiny_resumes_and_its_cells_are_evaluate_s(capsys, tmp_path):
    bench = _load()
    results = tmp_path / "cells.json"
    assert bench.main(["--quick", "--results", str(results)]) == 0
    out = capsys.readouterr().out
    assert "| task | Bayesian searchers' body | infotaxis | space-aware | greedy | infotaxis, Poisson model |" in out
    assert out.count("| tiny puffs | the task's (Cardinal) |") == 1
    assert "tiny puffs: calibrated in" in out
    data = json.loads(results.read_text(encoding="utf-8"))
    rows = bench._quick_rows()
    sc = rows["tiny puffs"][0]
    cell = data[bench._key("tiny puffs", "infotaxis", 2, sc.max_steps, 32, 200)]
    ref = evaluate(Infotaxis(likelihood=calibrate(sc, progress=False)), sc, 2, seed=0, progress=False)
    assert cell["success"] == ref.success_rate and cell["iqm"] == iqm(steps_of(ref))
    assert bench.mismatched(sc).natural_grid_size() == tuple(sc.grid_size)
    measured = []
    bench.measure(rows, 2, 32, 200, results, log=measured.append)  # every cell is in the file: none run again
    assert measured == []
