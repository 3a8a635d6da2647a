"""The benchmark's table regenerated tiny: ``plume-multi benchmark run`` then ``table``; the IQM
and its interval."""

import csv

import numpy as np
import pytest

from plume_multi.cli import main
from plume_multi.errors import ValidationError
from plume_multi.tasks import iqm, iqm_interval
from plume_multi.tasks.table import markdown_table, read_rows, summarise

TASK = "teams/uniform-2-v0"


def test_the_iqm_is_the_mean_of_the_middle_half_and_its_interval_is_seeded():
    x = np.arange(1.0, 9.0)  # 1..8: the middle half is 3, 4, 5, 6
    assert iqm(x) == 4.5
    scores = np.random.default_rng(1).exponential(50.0, 200)
    state = np.random.get_state()
    low, high, method = iqm_interval(scores)
    assert method in ("rliable", "scipy") and low < iqm(scores) < high
    assert iqm_interval(scores) == (low, high, method)  # the same scores, the same interval
    assert np.array_equal(np.random.get_state()[1], state[1])  # the caller's generator untouched
    assert iqm_interval(np.full(5, 7.0)) == (7.0, 7.0, "none")


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_tiny_benchmark_table_is_regenerated_from_the_command_line(tmp_path, capsys, monkeypatch):
    from plume_multi.policies import perseus_named

    # the quasi-optimal baseline solved tiny (cached apart from the column's: the budget is in the key)
    monkeypatch.setattr(perseus_named, "BUDGET", {"beliefs": 10, "iterations": 2, "seed": 0})
    results = tmp_path / "results"
    code, out, err = _run(capsys, "benchmark", "run", TASK, "--policy", "baselines", "--episodes", "6",
                          "--max-steps", "25", "--out", str(results), "--quiet")
    assert code == 0, err
    files = sorted(p.name for p in results.iterdir())
    assert files == [f"teams__uniform-2-v0__{p}.csv" for p in ("greedy", "infotaxis", "perseus", "random",
                                                                 "space-aware-infotaxis")]
    assert "teams/uniform-2-v0 infotaxis: success" in out and "(reduced)" in out
    again = tmp_path / "again.csv"
    code, _, err = _run(capsys, "benchmark", "run", TASK, "--policy", "infotaxis", "--episodes", "6",
                        "--max-steps", "25", "--out", str(again), "--quiet")
    assert code == 0, err
    assert again.read_text() == (results / "teams__uniform-2-v0__infotaxis.csv").read_text()  # deterministic
    table, figure, summary = tmp_path / "table.md", tmp_path / "profile.png", tmp_path / "summary.csv"
    code, out, err = _run(capsys, "benchmark", "table", "--results", str(results), "--markdown", str(table),
                          "--figure", str(figure), "--csv", str(summary))
    assert code == 0, err
    lines = table.read_text().splitlines()
    assert lines[0] == "| task | random | infotaxis | space-aware-infotaxis | greedy | perseus |"
    assert lines[2].startswith("| teams/uniform-2-v0 | ") and lines[2].count("*") == 5  # every cell reduced
    assert figure.stat().st_size > 10_000 and figure.read_bytes()[:4] == b"\x89PNG"
    with summary.open() as f:
        rows = list(csv.DictReader(f))
    assert [r["policy"] for r in rows] == ["greedy", "infotaxis", "perseus", "random", "space-aware-infotaxis"]
    assert all(int(r["episodes"]) == 6 and float(r["iqm_low"]) <= float(r["iqm_steps"]) <= float(r["iqm_high"])
               for r in rows)
    # the table again from the same files: the same text
    assert markdown_table(summarise(read_rows(results))) == table.read_text()


def test_results_files_are_checked(tmp_path, capsys):
    with pytest.raises(ValidationError, match="holds no .csv or .parquet results"):
        read_rows(tmp_path)
    bad = tmp_path / "bad.csv"
    bad.write_text("task,policy\nx,y\n")
    with pytest.raises(ValidationError, match=r"bad\.csv, the header \(line 1\): got 'task,policy'; expected the "
                                              "columns"):
        read_rows(bad)
    code, _, err = _run(capsys, "benchmark", "run", "nothing", "--policy", "random")
    assert code == 2 and "TASK: got 'nothing'; expected a task id, a family" in err
    code, _, err = _run(capsys, "benchmark", "run", "following", "--policy", "surge-cast", "--episodes", "2")
    assert code == 2 and "following/gaussian-random-source-v0 --policy surge-cast:" in err
    # a built-in over a family runs where it is a baseline, and names the tasks it leaves out
    code, out, err = _run(capsys, "benchmark", "run", "puffs", "--policy", "perseus", "--out", str(tmp_path / "r"))
    assert code == 0, err
    assert "--policy perseus: not among the baselines of puffs/constant-v0, puffs/switch-once-v0" in out
    assert "0 run, 0 reused" in out


def test_a_column_is_merged_into_an_earlier_table_whose_other_cells_stay(tmp_path, capsys):
    from plume_multi.tasks.table import merged_markdown, table_cells

    earlier = ("Text above.\n<!-- benchmark-table: begin -->\n| task | random | greedy | ppo-gru |\n|---|---:|---:|---:|\n"
               "| teams/uniform-2-v0 | 496 [440, 545] (60%) | 21 [20, 22] (100%) | – |\n"
               "| otto/isotropic-19x19-v0 | 280 [248, 315] (69%) | 13 [12, 14] (100%) | 5 [5, 5] (1%) |\n"
               "<!-- benchmark-table: end -->\nText below.\n")
    cell = {"reduced": False, "iqm_steps": 9.2, "iqm_low": 8.4, "iqm_high": 10.1, "success_rate": 1.0}
    summary = [{"task": "otto/isotropic-19x19-v0", "policy": "perseus", **cell},
               {"task": "teams/uniform-2-v0", "policy": "greedy", **cell, "reduced": True}]
    assert merged_markdown(summary, earlier).splitlines() == [
        "| task | random | greedy | perseus | ppo-gru |", "|---|---:|---:|---:|---:|",
        "| otto/isotropic-19x19-v0 | 280 [248, 315] (69%) | 13 [12, 14] (100%) | 9 [8, 10] (100%) | 5 [5, 5] (1%) |",
        "| teams/uniform-2-v0 | 496 [440, 545] (60%) | 9 [8, 10] (100%)* | – | – |"]
    with pytest.raises(ValidationError, match="line 4 has 3 cells; expected 4"):
        table_cells(earlier.replace("| 21 [20, 22] (100%) | – |", "| 21 [20, 22] (100%) |"), "page.md")
    with pytest.raises(ValidationError, match="page.md: holds no table"):
        table_cells("no table here", "page.md")
    page = tmp_path / "page.md"
    code, _, err = _run(capsys, "benchmark", "table", "--results", str(tmp_path), "--merge", str(page), "--markdown",
                        str(page))
    assert code == 2 and "is the --merge file" in err
