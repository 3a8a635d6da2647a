"""benchmarks/walls_search.py: its geometries have a free path from the start to the source, its
interval is Wilson's, and its table runs (tiny: the Poisson search among walls of
tests/policies/test_among_walls.py)."""

import importlib.util
import sys
from collections import deque
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_walls_search", ROOT / "benchmarks" / "walls_search.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules["bench_walls_search"] = bench
_spec.loader.exec_module(bench)


def _reachable(mask, start, goal):
    seen, queue = {start}, deque([start])
    while queue:
        x, y = queue.popleft()
        for nx, ny in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if 0 <= nx < mask.shape[1] and 0 <= ny < mask.shape[0] and not mask[ny, nx] and (nx, ny) not in seen:
                seen.add((nx, ny))
                queue.append((nx, ny))
    return goal in seen


def test_every_geometry_has_a_free_path_with_walls_in_the_straight_line():
    for name, make in bench.GEOMETRIES.items():
        start, source, mask = make()
        assert not mask[start[::-1]] and not mask[source[::-1]] and _reachable(mask, start, source), name
        between = [(start[0] + (source[0] - start[0]) * k // 8, start[1] + (source[1] - start[1]) * k // 8)
                   for k in range(9)]
        assert name == "corridor" or any(mask[c[::-1]] for c in between), name


def test_wilson_intervals():
    lo, hi = bench.wilson(200, 200)
    assert 0.98 < lo < 0.982 and hi == 1.0
    lo, hi = bench.wilson(100, 200)
    assert abs((lo + hi) / 2 - 0.5) < 1e-12 and 0.43 < lo < 0.44


def test_the_table_runs_tiny(capsys):
    assert bench.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "| wall | greedy | yes | 4 |" in out and "| wall | greedy | no | 4 |" in out
