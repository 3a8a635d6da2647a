"""benchmarks/infotaxis.py and infotaxis_results.py run tiny, and their NumPy peers do the same work."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

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
        kp.update_belief(p, plume.centred_likelihood, (pos[i, 0], pos[i, 1]), 1)
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


def test_side_by_side_their_side_imports_neither_plume_multi_nor_numba():
    # their side runs on machines without the package: the module and otto_benchmark.py import it lazily
    code = ("import sys; sys.path.insert(0, 'benchmarks'); import otto_side_by_side as s; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('plume_multi', 'numba')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_side_by_side_runs_our_side_tiny_and_merges_files_into_the_table(tmp_path, capsys):
    sbs = _load("otto_side_by_side")
    assert sbs.main(["ours", "--case", "isotropic-19x19", "--policy", "infotaxis", "--quick",
                     "--out", str(tmp_path / "ours.json")]) == 0
    ours = json.loads((tmp_path / "ours.json").read_text())
    assert ours["side"] == "ours" and len(ours["times"]) == 20 and ours["timing"]["s_per_decision"] > 0
    # their side in two files (two machines or two budgets): pooled; per decision weighted by
    # decisions. The second file holds a list with one summary (no per-episode times)
    rng = np.random.default_rng(0)
    a, b = rng.exponential(10.0, 30).tolist(), rng.exponential(10.0, 50).tolist()
    (tmp_path / "t1.json").write_text(json.dumps(
        {"case": "isotropic-19x19", "policy": "infotaxis", "side": "theirs", "failed": 1, "decisions": 100,
         "timing": {"decisions": 100, "s_per_decision": 2e-4}, "times": a}))
    (tmp_path / "t2.json").write_text(json.dumps(
        [{"case": "isotropic-19x19", "policy": "infotaxis", "side": "theirs", "failed": 1, "episodes": len(b),
          "mean": float(np.mean(b)), "std": float(np.std(b)), "timing": {"decisions": 300, "s_per_decision": 4e-4}}]))
    assert sbs.main(["merge", str(tmp_path / "ours.json"), str(tmp_path / "t1.json"), str(tmp_path / "t2.json")]) == 0
    row = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| isotropic-19x19")][0]
    t, o = np.array(a + b), np.array(ours["times"])
    z = (o.mean() - t.mean()) / np.sqrt(o.var() / len(o) + t.var() / len(t))
    inside = "yes" if abs(o.mean() - t.mean()) <= 1.96 * t.std() / np.sqrt(len(t)) else "no"
    assert f"| 80 | {t.mean():.2f} ± {1.96 * t.std() / np.sqrt(80):.2f} | {inside} | {z:+.2f} |" in row
    assert "| 0.35 ms |" in row  # (2e-4 * 100 + 4e-4 * 300) / 400
    with pytest.raises(SystemExit):  # their side without their code: a usage error naming the checkout
        sbs.main(["theirs", "--case", "otto-3d", "--policy", "infotaxis", "--otto", str(tmp_path), "--out",
                  str(tmp_path / "x.json")])
    assert "not a checkout of otto" in capsys.readouterr().err
