"""docs/plume_statistics.py, the script behind docs/plume-statistics.md: a tiny run writes the figure
and the tables of a plume (the Gaussian's, whose compiled step the suite shares), and the table
beside the literature reads the statistics it is given."""

import dataclasses
import sys

import numpy as np

from plume_multi.stats import odor_statistics
from docs_scripts import load
from stats_reference import telegraph


def _script():
    return load("plume_statistics")


def test_a_tiny_run_writes_the_figure_and_the_tables(tmp_path, capsys):
    script = _script()
    assert script.main(["--tiny", "--plumes", "gaussian", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "gaussian.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = (tmp_path / "gaussian.txt").read_text()
    assert "Gaussian on 96x48 cells, 2 worlds x 4 steps" in text and text in capsys.readouterr().out
    # the closed-form table: on the axis, the measured mean equals exp(-d^2 / 2 sigma^2)
    rows = [line.split("|")[1:-1] for line in text.splitlines() if line.startswith("| ") and line.count("|") == 5]
    closed = [(float(d), float(mean), float(form)) for d, mean, form, _ in rows[1:]]
    assert [d for d, _, _ in closed] == [2, 4, 8, 12, 16, 24, 32, 48, 64]
    assert all(mean == form == round(np.exp(-d * d / 288.0), 4) for d, mean, form in closed)
    assert not (tmp_path / "literature.txt").exists()  # it needs the puffs and the movie


def test_the_table_beside_the_literature_reads_the_statistics():
    script = _script()
    signal = telegraph(0.05, 0.2, 3 * 40, 400, seed=1).astype(np.float32).reshape(40, 3, 400)
    stats = odor_statistics(signal, 0.5, dt=0.01, time_unit="s")
    stats = dataclasses.replace(stats, downwind=np.array([4.0, 8.0, 16.0]), crosswind=np.zeros(3))
    table = script.table_literature({"puffs": (stats, 0.5), "movie": (stats, 1.0)}).splitlines()
    assert len(table) == 2 + len(script.LITERATURE)
    assert table[0].endswith("| `Puffs` here | `Movie` here |")
    low, high = stats.intermittency.min(), stats.intermittency.max()
    assert f"| {low:.3f} to {high:.3f} (> 0.5) |" in table[4]
    assert "over 2 to 8 m |" in table[2] and "over 4 to 16 cells |" in table[2]
    assert "Celani, Villermaux & Vergassola 2014" in table[2] and "not measured" in table[-1]
