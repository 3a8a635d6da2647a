"""The scripts of moving sources and changing winds run at a tiny size: the two examples (their
pictures) and the surge-and-cast table of the wind regimes."""

import importlib.util
import os
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")

ROOT = Path(__file__).resolve().parents[3]


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem + "_script", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_moving_sources_example_draws_the_tracks(tmp_path, capsys):
    png = tmp_path / "moving.png"
    assert load(ROOT / "examples" / "moving_sources.py").main(["--agents", "3", "--steps", "12", "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert "3 searchers" in out and "the sources travelled" in out and png.stat().st_size > 10_000


def test_wind_regimes_example_draws_the_four_regimes(tmp_path, capsys):
    png = tmp_path / "regimes.png"
    assert load(ROOT / "examples" / "wind_regimes.py").main(["--steps", "40", "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert all(r in out for r in ("constant", "switch-once", "switch-many", "sparse")) and png.stat().st_size > 10_000


def test_wind_regimes_table_runs_tiny(capsys):
    assert load(ROOT / "benchmarks" / "wind_regimes.py").main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert out.count("| switch-") == 2 and "surge-and-cast:" in out
