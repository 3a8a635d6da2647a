"""benchmarks/teams.py runs tiny, its uniform infotaxis teams search as the protocol runner does
(2-D and 3-D), and its verdict follows the paired intervals.

The 3-D run reuses what the 3-D tests of its group (tests/conftest.py, "docs") compile: the 3-D
step of the Poisson search, the 3-D team decision and the 3-D protocol runner."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from plume_multi.models.plumes.poisson_hits import PoissonHits
from plume_multi.policies.infotaxis import run_search

ROOT = Path(__file__).resolve().parents[2]


def _load():
    spec = importlib.util.spec_from_file_location("bench_teams", ROOT / "benchmarks" / "teams.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_table_runs_tiny_and_uniform_infotaxis_is_the_protocol_runner(capsys):
    bench = _load()
    assert bench.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "| team (agents cycle through) | 2 agents | 4 agents |" in out
    assert "| mixed: infotaxis + space-aware + greedy | — |" in out  # three kinds need three agents
    assert out.count("Piro et al.'s pairing") == 2 and out.count("best mixed") == 2
    data = bench.measure(6, (2,), 2, 60, progress=False)
    ref = run_search(PoissonHits(1.0, 2.0), 6, team_size=2, max_steps=60)
    np.testing.assert_array_equal(data["times"]["infotaxis", 2], ref.steps)


def test_the_3d_table_runs_tiny_and_uniform_infotaxis_is_the_protocol_runner(capsys):
    bench = _load()
    assert bench.main(["--quick", "--dims", "3"]) == 0
    out = capsys.readouterr().out
    assert "19x19x19 domain (L=1, R_dt=2, 3-D)" in out and out.count("Piro et al.'s pairing") == 2
    data = bench.measure(4, (2,), 3, 30, progress=False)
    ref = run_search(PoissonHits(1.0, 2.0, dims=3), 4, team_size=2, max_steps=30)
    np.testing.assert_array_equal(data["times"]["infotaxis", 2], ref.steps)


def test_the_verdict_reads_the_paired_interval():
    bench = _load()
    base = np.arange(1.0, 41.0)
    times = {(name, 2): base + 5 for name in {**bench.UNIFORM, **bench.MIXED}}
    times["space-aware infotaxis", 2] = base.copy()
    times["infotaxis + greedy", 2] = base + np.tile([1.0, 2.0], 20)  # always slower: resolved
    lines = bench.verdict({"times": times}, (2,))
    assert "infotaxis + greedy minus space-aware infotaxis: +1.50 ± 0.16 steps (paired): the uniform team is faster" in lines[1]
    times["infotaxis + greedy", 2] = base + np.tile([1.0, -1.0], 20)  # mean 0: not resolved
    assert "no difference resolved" in bench.verdict({"times": times}, (2,))[1]



def test_the_puff_option_builds_a_team_on_correlated_hits_and_is_2d_only(capsys):
    import pytest

    from plume_multi.models.likelihoods import PoissonLikelihood
    from plume_multi.models.plumes import WindyPoissonHits

    bench = _load()
    sc = bench.puff_search(4, 50)
    assert sc.team and sc.n_agents == 4 and sc.grid_size == (40, 20) and sc.start_region == ((24, 4), (36, 16))
    lik = PoissonLikelihood(WindyPoissonHits(grid_size=(40, 20), start=(30, 10)), thresholds=(0.0,))
    made = bench.team(("infotaxis", "greedy"), 4, lik)
    assert [type(m).__name__ for m in made.members] == ["Infotaxis", "Greedy"] * 2
    assert all(m.likelihood is lik for m in made.members)
    with pytest.raises(SystemExit):
        bench.main(["--plume", "puffs", "--dims", "3"])
    assert "--plume puffs is 2-D" in capsys.readouterr().err
