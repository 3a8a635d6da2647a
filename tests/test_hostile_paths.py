"""Scenario files that are bombs, and paths and values that raised foreign errors (issue 32, items
8 and 10): each is refused with our error naming what was given and what was expected, before
anything large is allocated or any work is done."""

from __future__ import annotations

import base64
import json
import tracemalloc
import zlib

import numpy as np
import pytest

from plume_multi import Scenario
from plume_multi.cli import main
from plume_multi.errors import ValidationError
from plume_multi.evaluation import EvaluationResult, sweep
from plume_multi.scenario import load_scenario, save_scenario


def _walls_json(folder, shape, packed: bytes, grid=(16, 12)):
    meta = Scenario(grid_size=grid).metadata()
    meta["walls"] = {"shape": list(shape), "encoding": "packbits-zlib-base64",
                     "data": base64.b64encode(zlib.compress(packed, 9)).decode()}
    path = folder / "bomb.json"
    path.write_text(json.dumps(meta))
    return path


def _peak(call) -> tuple:
    """``(the ValidationError call raised, the bytes it allocated at most)``."""
    tracemalloc.start()
    try:
        with pytest.raises(ValidationError) as err:
            call()
        return err.value, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_walls_that_claim_another_grid_are_refused_before_a_byte_is_inflated(tmp_path):
    """Item 8: a 170 KB file claiming masks of 32768 x 32768 took 3.6 GB and 30 s to be refused
    for a 16 x 12 grid; here 4096 x 4096 (2 KB of JSON, 48 MB then)."""
    cells = 4096 * 4096
    path = _walls_json(tmp_path, [1, 4096, 4096], bytes(cells // 8))
    assert path.stat().st_size < 4000
    err, peak = _peak(lambda: load_scenario(path))
    assert "Scenario.walls: got 1 mask(s) of shape (4096, 4096); expected masks of shape (height, width) = " \
           "(12, 16) (the 16x12 grid)" in str(err)
    assert peak < 2**20, peak


def test_walls_that_inflate_beyond_their_shape_stop_at_it(tmp_path):
    path = _walls_json(tmp_path, [1, 12, 16], bytes(64 * 2**20))  # 192 cells claimed, 512 M inflatable
    err, peak = _peak(lambda: load_scenario(path))
    assert "Scenario.walls: its data holds more than 192 cells; expected 192 cells" in str(err)
    assert peak < 4 * 2**20, peak
    cut = json.loads(path.read_text())  # a stream cut short is named as such
    cut["walls"]["data"] = base64.b64encode(zlib.compress(bytes(24), 9)[:-6]).decode()
    path.write_text(json.dumps(cut))
    with pytest.raises(ValidationError, match="Scenario.walls: its data holds a cut zlib stream"):
        load_scenario(path)


def test_a_number_of_5000_digits_in_a_scenario_file_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "digits.json"
    path.write_text('{"max_steps": ' + "9" * 5000 + "}")
    with pytest.raises(ValidationError, match=r"scenario: '.*digits\.json' holds a number Python will not read"):
        load_scenario(path)


def test_scenario_files_of_paths_that_are_not_files(tmp_path):
    for value, match in ((None, r"got None \(NoneType\); expected .*scenario JSON file .*\(a str or pathlib.Path\)"),
                         (5, r"got 5 \(int\); expected"), ("a\0b", r"got 'a\\x00b', a path with a NUL character")):
        with pytest.raises(ValidationError, match=f"load_scenario: {match}"):
            load_scenario(value)
    scenario = Scenario(grid_size=(9, 7))
    (tmp_path / "taken").mkdir()
    (tmp_path / "plain").write_text("x")
    for value, match in ((tmp_path / "taken", "which is a folder"), (None, r"got None \(NoneType\)"),
                         (tmp_path / "plain" / "s.json", "goes through a file as if a folder"),
                         ("", "an empty path")):
        with pytest.raises(ValidationError, match=f"save_scenario: (got .*)?{match}"):
            save_scenario(scenario, value)
    written = save_scenario(scenario, tmp_path / "new" / "folder" / "s.json")  # missing folders are made
    assert load_scenario(written) == scenario
    assert sorted(p.name for p in written.parent.iterdir()) == ["s.json"]  # no temporary file left


def test_results_are_refused_where_they_cannot_be_written(tmp_path):
    scenario = Scenario(grid_size=(8, 8), n_agents=2, max_steps=10)
    result = EvaluationResult(scenario, 0, "first", np.array([[3, -1]], np.int32), np.array([10], np.int32))
    (tmp_path / "taken.csv").mkdir()
    (tmp_path / "plain").write_text("x")
    with pytest.raises(ValidationError, match=r"EvaluationResult.to_csv: got '.*taken\.csv', which is a folder"):
        result.to_csv(tmp_path / "taken.csv")
    with pytest.raises(ValidationError, match=r"EvaluationResult.to_json: got '.*plain/r\.json', which goes through a "
                                              r"file as if a folder"):
        result.to_json(tmp_path / "plain" / "r.json")

    def never(obs):
        raise AssertionError("sweep evaluated before refusing its output")

    with pytest.raises(ValidationError, match=r"sweep.out: got '.*plain/run\.csv', which goes through a file"):
        sweep(never, scenario, {"n_agents": [1, 2]}, episodes=1, out=tmp_path / "plain" / "run", progress=False)
    assert result.to_csv(tmp_path / "ok.csv").read_text().startswith("episode,seed,success")


@pytest.mark.parametrize("argv, message", [
    (["eval", "--episodes", "1", "--out", ".", "--no-plot"],
     "plume-multi eval: error: --out: got '.'; expected a path prefix ending in a file name (writes PREFIX.csv, "
     "PREFIX.json)"),
    (["eval", "--episodes", "1", "--out", "/proc/no_such_folder/run", "--no-plot"],
     "plume-multi eval: error: --out: cannot write '/proc/no_such_folder/run.csv': nothing can be created in '/proc'"),
    (["train", "--budget", "inf"], "plume-multi train: error: --budget: got inf; expected a whole number"),
    (["train", "--budget", "100", "--out", ""], "plume-multi train: error: --out: got ''; expected a path prefix"),
    (["eval", "--episodes", "1", "--scenario", "poisson_search:dims=" + "1" * 100_000],
     "plume-multi eval: error: --scenario: PoissonHits.dims: got '11111"),
    (["eval", "--episodes", "1", "--plume", "movie:path=" + "x" * 100_000 + ".npy"],
     "plume-multi eval: error: --plume: Movie.frames: got 'xxxxx"),
    (["benchmark", "run", "recorded/file-v0", "--policy", "random", "--episodes", "1", "--option",
      "path=" + "x" * 100_000], "plume-multi benchmark: error: recorded/file-v0 --policy random: Movie.frames: got 'xxx"),
])
def test_command_line_values_that_raised_foreign_errors(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1 and len(err) < 1000, err[:500]
    assert not list(tmp_path.iterdir())  # refused before any work: nothing written
