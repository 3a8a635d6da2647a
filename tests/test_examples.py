"""Every example in examples/ runs at a tiny size (train_ppo.py and train_multiagent_ppo.py in their own modules,
walls.py in tests/models/test_walls.py, beside the combinations it compiles)."""

import importlib.util
import sys
import os
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")

import imageio.v3 as iio
import numpy as np
import pytest

from plume_multi.viz.recording import caption_height

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_parallel_env_loop(capsys):
    code = load("parallel_env_loop").main(["--agents", "3", "--size", "12", "9", "--steps", "40", "--seed", "1"])
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    assert "searchers found the source; the episode lasted" in lines[0]
    assert [line.split(":")[0].strip() for line in lines[1:]] == ["searcher_0", "searcher_1", "searcher_2"]
    found = int(lines[0].split("/")[0])
    assert found == sum("found it at step" in line for line in lines[1:])


def test_cooperative_search(capsys):
    code = load("cooperative_search").main(["--agents", "3", "--neighbours", "2", "--worlds", "4",
                                            "--size", "16", "12", "--steps", "60"])
    out = capsys.readouterr().out
    assert code == 0
    assert "4 teams of 3 on a 16x12 grid" in out
    assert "independent" in out and "keep apart (4 cells)" in out
    assert out.count("found in") == 2


def test_cooperative_search_keep_apart_moves_away_from_a_close_team_mate():
    from plume_multi import Scenario

    example = load("cooperative_search")
    scenario = Scenario(n_agents=2, grid_size=(11, 11), n_neighbours=1)
    policy = example.KeepApart(scenario, apart=3, seed=0)
    # concentration low; team-mate 2 cells to the right, 1 cell up, 1 cell down, far to the left
    obs = np.array([[0.0, 0.5, 0.5, 0.2, 0.0],
                    [0.0, 0.5, 0.5, 0.0, 0.1],
                    [0.0, 0.5, 0.5, 0.0, -0.1],
                    [0.0, 0.5, 0.5, -0.9, 0.0]], dtype=np.float32)
    actions = policy(obs)
    assert actions[:3].tolist() == [example.LEFT, example.DOWN, example.UP]
    inside = obs.copy()
    inside[:, 0] = 0.9  # inside the plume it only climbs: the first call saw 0.0, so it keeps heading
    assert policy(inside)[:3].tolist() == policy.climber._heading[:3].tolist()


def test_snapshot_restore(capsys):
    code = load("snapshot_restore").main(["--worlds", "3", "--agents", "2", "--size", "9", "7", "--steps", "30"])
    out = capsys.readouterr().out
    assert code == 0
    assert "bit-for-bit identical continuation: True" in out and "restored state valid: True" in out


def test_snapshot_restore_notices_a_different_continuation(capsys, monkeypatch):
    example = load("snapshot_restore")

    class ForgetfulSimulator(example.Simulator):
        def restore(self, snapshot):  # starts over instead of continuing
            self.reset(seed=123)

    monkeypatch.setattr(example, "Simulator", ForgetfulSimulator)
    code = example.main(["--worlds", "3", "--agents", "2", "--size", "9", "7", "--steps", "30"])
    assert code == 1
    assert "bit-for-bit identical continuation: False" in capsys.readouterr().out


def test_record_movie(tmp_path, capsys):
    code = load("record_movie").main(["--agents", "3", "--size", "20", "12", "--steps", "25", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0
    for name in ("search.png", "search.gif", "parallel_env.gif"):
        assert f"wrote {tmp_path / name}" in out
    assert iio.imread(tmp_path / "search.png").ndim == 3
    recorded = iio.imread(tmp_path / "search.gif", index=None)
    # auto scale (at least 256 pixels wide), then the step counter and legend strip
    assert recorded.shape[1:] == (12 * 13 + caption_height(20 * 13), 20 * 13, 3)
    from_env = iio.imread(tmp_path / "parallel_env.gif", index=None)
    # env.render(): display_scale(20, 12) = 22 pixels per cell, at least 256 on the shorter side
    assert from_env.shape[1:] == (12 * 22, 20 * 22, 3) and from_env.shape[0] >= 2


@pytest.mark.parametrize("name", ["parallel_env_loop", "cooperative_search", "snapshot_restore", "record_movie",
                                  "walls"])
def test_each_example_has_help(name, capsys):
    with pytest.raises(SystemExit) as exit_info:
        load(name).main(["--help"])
    assert exit_info.value.code == 0
    assert "usage:" in capsys.readouterr().out


def test_train_belief_ppo_tiny(tmp_path):
    """PPO on the belief image trains on vector_env worlds and is evaluated beside infotaxis."""
    results = load("train_belief_ppo").main(["--tiny", "--out-dir", str(tmp_path)])
    rows = {r["policy"]: r for r in results["rows"]}
    assert set(rows) == {"PPO on the belief (greedy)", "infotaxis", "random walk"}
    assert rows["infotaxis"]["success_rate"] >= rows["random walk"]["success_rate"]
    assert (tmp_path / "results.md").read_text().count("|") > 10
