"""benchmarks/perseus.py runs tiny, and its NumPy peer backs up as the compiled kernel does."""

from __future__ import annotations

import runpy
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from plume_multi.policies import perseus_kernels as pk

ROOT = Path(__file__).resolve().parents[2]


def _load():
    return SimpleNamespace(**runpy.run_path(str(ROOT / "benchmarks" / "perseus.py"), run_name="bench_perseus"))


@pytest.mark.parametrize("domain", ["1-D L=2 (33)", "19x19", "3-D 11^3"])
def test_numpy_peer_backs_up_as_the_kernel(domain):
    bench = _load()
    plume = bench.DOMAINS[domain]()
    shape3, box, tables, alphas = bench.problem(plume, 40, seed=2)
    b3, c3 = bench.beliefs_along_walks(plume, 5, seed=1)
    n_hits = tables.lik.shape[0]
    dots = np.empty((len(tables.moves), n_hits, 40))
    choice = np.empty(n_hits, dtype=np.int64)
    out = np.empty(int(np.prod(box)))
    for j in range(5):
        a, _ = pk.backup(b3[j], c3[j], alphas, 40, tables, pk.block_for(int(np.prod(shape3))), dots, choice, out)
        ra, rv = bench.numpy_backup(b3[j], c3[j], tables, alphas, 40, shape3)
        assert a == ra
        np.testing.assert_allclose(out, rv, rtol=1e-12, atol=1e-12)


def test_quick_run_prints_the_table(capsys):
    assert _load().main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "| 19x19 | 361 | 64 |" in out and "| 3-D 11^3 | 1331 | 64 |" in out
    assert out.count("x (CPU)") == 3
