"""The puff plume's benchmark script and movie example, run tiny."""

import importlib.util
from pathlib import Path

import imageio.v3 as iio

from plume_multi.policies import SurgeCast

ROOT = Path(__file__).resolve().parents[3]


def load(path):
    spec = importlib.util.spec_from_file_location(path.stem + "_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_benchmark_runs_tiny(capsys):
    assert load(ROOT / "benchmarks" / "puffs.py").main(["--quick"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith(("pompy", "ours", "puffs ", "agents "))]
    assert [r.split()[0].rstrip(",") for r in rows] == ["pompy"] + ["ours"] * 5 + ["puffs", "puffs", "agents", "agents"]
    assert "switch-many wind" in out and "3 sources" in out
    assert all(r.rstrip().endswith(("x", "M")) for r in rows)
    engine = out.split("In the engine")[1].splitlines()[2:]
    assert len(engine) == 1 and engine[0].split()[:2] == ["8", "4"] and engine[0].rstrip().endswith("M")


def test_movie_example_writes_a_gif_and_a_png(tmp_path, capsys):
    module = load(ROOT / "examples" / "puff_plume_movie.py")
    png = tmp_path / "p.png"
    assert module.main(["--frames", "4", "--every", "2", "--spin-up", "300", "--size", "40", "20",
                        "--out", str(tmp_path), "--png", str(png)]) == 0
    frames = iio.imread(tmp_path / "puff_plume.gif")
    assert frames.shape[-3:] == (40, 80, 3)  # (identical frames may be merged in the GIF)
    assert iio.imread(png).shape == (40, 80, 3)


def test_surge_cast_example_runs_tiny(capsys):
    module = load(ROOT / "examples" / "surge_cast.py")
    assert module.main(["--worlds", "2", "--agents", "2", "--steps", "20", "--spin-up", "50"]) == 0
    out = capsys.readouterr().out
    assert "surge-cast" in out and "random flight" in out
    assert module.SurgeCast is SurgeCast  # the example runs the library's policy

