"""benchmarks/infotaxis.py and infotaxis_results.py run tiny, and their NumPy peers do the same work."""

from __future__ import annotations

import importlib.util
from pathlib import Path


from plume_multi.policies.infotaxis import Infotaxis, run_search
from plume_multi.models.plumes.poisson_hits import PoissonHits

ROOT = Path(__file__).resolve().parents[2]


def _load(name):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_numpy_peer_decides_as_the_kernel():
    bench = _load("infotaxis")
    plume = PoissonHits(1.0, 2.0)
    beliefs, pos = bench.sample_agents(plume, 40, seed=3)
    for space_aware in (False, True):
        got = Infotaxis(space_aware, plume=plume).decide(beliefs, pos)
        ref = [bench.numpy_decide(plume, beliefs[i], pos[i, 0], pos[i, 1], space_aware) for i in range(40)]
        assert got.tolist() == ref


def test_numpy_peer_episodes_equal_run_search():
    bench = _load("infotaxis")
    plume = PoissonHits(1.0, 2.0)
    res = run_search(plume, 5, seed=0)
    assert [bench.numpy_episode(plume, s)[0] for s in range(5)] == res.steps.tolist()


def test_benchmark_scripts_run_tiny(capsys):
    assert _load("infotaxis").main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "| 19x19 (L=1) | infotaxis |" in out and out.count("same steps: yes") == 2 and "NO" not in out
    assert _load("infotaxis_results").main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "| 1 | 2 | 19x19 |" in out and "| 2 |" in out and "shared, believer" in out


def test_numpy_update_is_the_kernels_bit_for_bit_on_windy_beliefs():
    import numpy as np
    from plume_multi.models.plumes import WindyPoissonHits
    from plume_multi.models.plumes.poisson_hits import kernels as kp

    bench = _load("infotaxis")
    plume = WindyPoissonHits(2.5)
    beliefs, pos = bench.sample_agents(plume, 6, seed=1)
    for i in range(6):
        p = beliefs[i].copy()
        kp.update_belief(p, plume.centred_likelihood, pos[i, 0], pos[i, 1], 1)
        assert np.array_equal(p.T, bench.numpy_update(plume, np.ascontiguousarray(beliefs[i].T), pos[i, 0], pos[i, 1], 1))


def test_otto_benchmark_script_runs_tiny_without_the_fetched_code(capsys, monkeypatch):
    monkeypatch.delenv("OTTO_BENCHMARK_DIR", raising=False)
    bench = _load("otto_benchmark")
    assert bench.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "ours only" in out and "| isotropic-19x19 | infotaxis | 20 |" in out
    row = bench._row("windy-low-detections", "infotaxis", {"episodes": 10, "mean": 5.0, "ci95": 1.0, "s_per_decision": 1e-5},
                     {"episodes": 4, "mean": 5.5, "ci95": 0.6, "s_per_decision": 1e-3})
    assert "| yes |" in row and "100×" in row
