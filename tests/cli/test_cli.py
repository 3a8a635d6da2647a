"""The `plume-multi` command: exit codes and output of each subcommand on good and bad input."""

import io
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")

import imageio.v3 as iio
import pytest

from plume_multi.cli import main
from plume_multi.viz.recording import caption_height

TINY = ["--agents", "3", "--grid", "24", "16", "--steps", "40", "--quiet"]


def run(capsys, *argv):
    """Exit code, stdout and stderr of the command, without the engine's compile notices (printed
    after a second of compiling or loading from the cache: on a cold cache or a loaded machine)."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, without_compile_notices(err)


def without_compile_notices(err: str) -> str:
    return "".join(line for line in err.splitlines(keepends=True)
                   if not line.startswith(("plume_multi: compiling", "plume_multi: loading")))


def outputs(tmp_path, name="run"):
    return ["--png", str(tmp_path / f"{name}.png"), "--movie", str(tmp_path / f"{name}.gif")]


# ------------------------------------------------------------------ top level
def test_help_lists_the_commands(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for command in ("demo", "bench", "render"):
        assert command in out


def test_no_command_fails_in_one_line(capsys):
    code, _, err = run(capsys)
    assert code == 2
    assert err == "plume-multi: error: no command given; expected one of demo, bench, render (see plume-multi --help)\n"


def test_unknown_command(capsys):
    code, _, err = run(capsys, "fly")
    assert code == 2 and "invalid choice: 'fly'" in err


def test_version(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.startswith("plume-multi 0.")


def test_installed_console_script():
    script = Path(sys.executable).with_name("plume-multi")
    result = subprocess.run([str(script), "render", "--agents", "0"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "plume-multi render: error: --agents: got 0; expected an integer >= 1" in result.stderr


# ------------------------------------------------------------------ render
def test_render_help(capsys):
    code, out, _ = run(capsys, "render", "--help")
    assert code == 0
    assert "MODULE:NAME" in out and "--grid WIDTH HEIGHT" in out and "factory" in out


def test_render_writes_a_png_and_a_gif(tmp_path, capsys):
    code, out, err = run(capsys, "render", *TINY, *outputs(tmp_path), "--seed", "2")
    assert code == 0, err
    assert "gradient: 3 agents on a 24x16 grid, source at (12, 8)" in out
    assert "agents finished" in out and f"wrote {tmp_path / 'run.png'}" in out and f"wrote {tmp_path / 'run.gif'}" in out
    assert err == ""  # --quiet
    png = iio.imread(tmp_path / "run.png")
    assert png.ndim == 3 and png.shape[0] > 100
    gif = iio.imread(tmp_path / "run.gif", index=None)
    scale = 256 // 24 + 1
    # the frames, with the step counter and legend strip below
    assert gif.shape[1:] == (16 * scale + caption_height(24 * scale), 24 * scale, 3) and gif.shape[0] >= 2


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_render_progress_is_one_bar_on_a_terminal_and_silent_otherwise(tmp_path, capsys, monkeypatch):
    argv = ["render", "--agents", "2", "--grid", "20", "12", "--steps", "30", "--policy", "random", "--no-movie",
            "--png", str(tmp_path / "a.png")]
    monkeypatch.setenv("PLUME_MULTI_QUIET", "1")  # no compile notice among the bar's lines
    code, out, err = run(capsys, *argv)
    assert code == 0 and err == ""  # not a terminal (CI logs): quiet
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(argv) == 0
    bar = terminal.getvalue()
    assert bar.count("\n") == 1 and "\r" in bar  # one bar, redrawn in place
    assert bar.rstrip().split("\r")[-1].startswith("render:") and "/30" in bar and "finished" in bar
    assert "render:" not in capsys.readouterr().out


def test_render_options_reach_the_run(tmp_path, capsys):
    code, out, err = run(capsys, "render", "--agents", "4", "--grid", "20", "14", "--steps", "25", "--quiet",
                         "--policy", "random", "--source", "3", "4", "--action-model", "moore", "--neighbours", "2",
                         "--team", "--goal-radius", "2.5", "--sigma", "4", "--every", "5", "--scale", "2", "--fps", "8",
                         "--trail", "0", *outputs(tmp_path))
    assert code == 0, err
    assert "source at (3, 4)" in out
    frames = iio.imread(tmp_path / "run.gif", index=None)
    assert frames.shape[1:3] == (28 + caption_height(40), 40)  # --scale 2, and the caption strip
    steps = int(out.split("after ")[1].split()[0])
    assert frames.shape[0] == steps // 5 + 1 + (1 if steps % 5 else 0)  # --every 5, plus the last step


def test_render_no_movie(tmp_path, capsys):
    code, out, _ = run(capsys, "render", *TINY, *outputs(tmp_path), "--no-movie")
    assert code == 0 and (tmp_path / "run.png").exists() and not (tmp_path / "run.gif").exists()


def test_render_creates_missing_folders(tmp_path, capsys):
    code, _, _ = run(capsys, "render", *TINY, "--png", str(tmp_path / "a" / "b.png"),
                     "--movie", str(tmp_path / "c" / "d.gif"))
    assert code == 0 and (tmp_path / "a" / "b.png").is_file() and (tmp_path / "c" / "d.gif").is_file()


@pytest.mark.parametrize("argv", [["--plume", "bogus"], ["--body", "oriented:turn_degrees=0"], ["--policy", "clever"],
                                  ["--sensors", "concentration", "wind:noise_std=-1"], ["--grid", "0", "4"]])
def test_render_checks_every_argument_before_touching_the_file_system(tmp_path, capsys, argv):
    """Issue 21, item 12: a bad --plume exited 2 but had created --png's folders already."""
    code, _, err = run(capsys, "render", *TINY, "--png", str(tmp_path / "newdir" / "sub" / "x.png"),
                       "--movie", str(tmp_path / "other" / "y.gif"), *argv)
    assert code == 2 and "plume-multi render: error:" in err, err
    assert list(tmp_path.iterdir()) == []


def test_render_refuses_an_output_below_a_file_without_creating_anything(tmp_path, capsys):
    (tmp_path / "a.txt").write_text("")
    code, _, err = run(capsys, "render", *TINY, "--png", str(tmp_path / "a.txt" / "x.png"), "--no-movie")
    assert code == 2 and "a.txt' is a file, not a folder" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


@pytest.mark.parametrize("argv, message", [
    (["--agents", "0"], "--agents: got 0; expected an integer >= 1"),
    (["--steps", "-3"], "--steps: got -3; expected an integer >= 1"),
    (["--seed", "-1"], "--seed: got -1; expected an integer in 0..9223372036854775807"),
    (["--seed", str(2**63)], f"--seed: got {2**63}; expected an integer in 0.."),
    (["--grid", "0", "5"], "--grid (Scenario.grid_size: got (0, 5)"),
    (["--source", "99", "1"], "--source (Scenario.source_location: got (99, 1)"),
    (["--sigma", "0"], "--sigma (Scenario.sigma: got 0.0"),
    (["--neighbours", "5"], "--neighbours (Scenario.n_neighbours: got 5; expected an integer in 0..2"),
    (["--goal-radius", "-1"], "--goal-radius (Scenario.goal_radius: got -1.0"),
    (["--png", "out.jpg"], "--png: got 'out.jpg'; expected a file name ending in .png"),
    (["--movie", "out.avi"], "--movie: got 'out.avi'; expected a file name ending in .gif or .mp4"),
    (["--every", "0"], "--every: got 0; expected an integer >= 1"),
    (["--scale", "0"], "--scale: got 0; expected an integer in 1..64"),
    (["--fps", "0"], "--fps: got 0.0"),
    (["--trail", "-1"], "--trail: got -1"),
    (["--policy", "clever"], "--policy: got 'clever'; expected one of random, gradient, surge-cast, infotaxis, "
                             "space-aware-infotaxis, greedy, perseus (or a comma-separated list of them, one per "
                             "agent), or MODULE:NAME"),
    (["--policy", "no_such_module_xyz:f"], "--policy: cannot import module 'no_such_module_xyz'"),
    (["--policy", "plume_multi.policies:Nothing"], "--policy: 'plume_multi.policies' has no attribute 'Nothing'"),
    (["--policy", "math:pi"], "--policy: 'math:pi' is a float, not a callable"),
    (["--policy", "missing_file.py:f"], "--policy: got 'missing_file.py', which does not exist; expected a path to "
                                        "a .py file"),
])
def test_render_bad_arguments(tmp_path, capsys, argv, message):
    code, out, err = run(capsys, "render", "--agents", "3", "--grid", "24", "16", "--steps", "5", "--quiet",
                         *outputs(tmp_path), *argv)
    assert code == 2, err
    assert f"plume-multi render: error: {message}" in err
    assert not (tmp_path / "run.png").exists()


@pytest.mark.parametrize("argv, message", [
    (["--agents", "many"], "argument --agents: invalid int value: 'many'"),
    (["--grid", "24"], "argument --grid: expected 2 arguments"),
    (["--action-model", "hex"], "argument --action-model: invalid choice: 'hex'"),
    (["--frobnicate"], "unrecognized arguments: --frobnicate"),
])
def test_render_unparsable_arguments(capsys, argv, message):
    code, _, err = run(capsys, "render", *argv)
    assert code == 2 and message in err


# ------------------------------------------------------------------ user policies
@pytest.fixture
def policy_module(tmp_path, monkeypatch):
    """A module in the current folder (not on sys.path) with policies of every kind."""
    name = f"user_policies_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent("""
        import numpy as np
        CALLS = []

        def always_up(obs):
            CALLS.append(("always_up", obs.shape))
            return np.zeros(len(obs), dtype=np.int64)

        def make(scenario, seed):
            CALLS.append(("make", scenario.n_agents, scenario.n_actions, seed))
            return always_up

        class Right:
            def __init__(self, n_actions):
                CALLS.append(("Right", n_actions))
            def __call__(self, obs):
                return np.ones(len(obs), dtype=np.int32)

        def wrong_shape(obs):
            return np.zeros((len(obs), 2), dtype=np.int64)

        def floats(obs):
            return np.zeros(len(obs))

        def out_of_range(obs):
            return np.full(len(obs), 7)

        def broken(obs):
            raise KeyError("oops")

        def factory_of_nothing(scenario):
            return 42

        class NeedsMore:
            def __init__(self, n_actions, depth):
                pass
    """))
    (tmp_path / f"{name}_broken.py").write_text("import numpy\nraise RuntimeError('bad module')\n")
    (tmp_path / f"{name}_needs.py").write_text("import no_such_dependency_xyz\n")
    monkeypatch.chdir(tmp_path)
    yield name
    for module in (name, f"{name}_broken", f"{name}_needs"):
        sys.modules.pop(module, None)


def test_render_user_function(tmp_path, capsys, policy_module):
    code, out, err = run(capsys, "render", *TINY, "--no-movie", "--policy", f"{policy_module}:always_up",
                         "--png", "a.png")
    assert code == 0, err
    calls = sys.modules[policy_module].CALLS
    assert calls[0] == ("always_up", (3, 3)) and len(calls) >= 1
    assert (tmp_path / "a.png").exists()


def test_render_user_factory_function_and_class(capsys, policy_module):
    code, _, err = run(capsys, "render", *TINY, "--no-movie", "--png", "a.png", "--seed", "9",
                       "--policy", f"{policy_module}:make")
    assert code == 0, err
    assert sys.modules[policy_module].CALLS[0] == ("make", 3, 4, 9)
    code, _, err = run(capsys, "render", *TINY, "--no-movie", "--png", "b.png", "--action-model", "moore",
                       "--policy", f"{policy_module}:Right")
    assert code == 0, err
    assert ("Right", 9) in sys.modules[policy_module].CALLS


def test_render_policy_from_a_file_path(tmp_path, capsys, policy_module):
    code, _, err = run(capsys, "render", *TINY, "--no-movie", "--png", "a.png",
                       "--policy", f"{tmp_path / policy_module}.py:always_up")
    assert code == 0, err


def test_render_builtin_class_by_name(tmp_path, capsys):
    code, _, err = run(capsys, "render", *TINY, "--no-movie", "--png", str(tmp_path / "a.png"),
                       "--policy", "plume_multi.policies:GradientClimber")
    assert code == 0, err


@pytest.mark.parametrize("name, message", [
    ("wrong_shape", "returned shape (3, 2) dtype int64; expected 3 integer actions in 0..3, shape (3,)"),
    ("floats", "returned shape (3,) dtype float64; expected 3 integer actions"),
    ("out_of_range", "returned actions in 7..7; expected 3 integer actions in 0..3"),
    ("broken", "raised KeyError: 'oops'"),
])
def test_render_policy_that_misbehaves(capsys, policy_module, name, message):
    code, _, err = run(capsys, "render", *TINY, "--no-movie", "--png", "a.png", "--policy", f"{policy_module}:{name}")
    assert code == 2 and err.count("\n") == 1  # one line, no traceback
    assert err.startswith(f"plume-multi render: error: policy '{policy_module}:{name}' {message}")
    assert not Path("a.png").exists()


def test_render_factory_returning_a_non_callable(capsys, policy_module):
    code, _, err = run(capsys, "render", *TINY, "--no-movie", "--png", "a.png",
                       "--policy", f"{policy_module}:factory_of_nothing")
    assert code == 2 and "returned a int, not a callable policy" in err


@pytest.mark.parametrize("suffix, message", [
    ("_broken:f", "importing '{m}_broken' failed: RuntimeError: bad module"),
    ("_needs:f", "importing '{m}_needs' failed: ModuleNotFoundError: No module named 'no_such_dependency_xyz'"),
    (":NeedsMore", "calling the factory '{m}:NeedsMore' failed: TypeError"),
])
def test_render_policy_module_or_factory_that_fails(capsys, policy_module, suffix, message):
    code, _, err = run(capsys, "render", *TINY, "--no-movie", "--png", "a.png", "--policy", policy_module + suffix)
    assert code == 2
    assert f"plume-multi render: error: --policy: {message.format(m=policy_module)}" in err


def test_render_missing_movie_extra(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "imageio", None)
    code, _, err = run(capsys, "render", *TINY, *outputs(tmp_path))
    assert code == 2 and "pip install 'plume-multi[movie]'" in err and "--no-movie" in err and err.count("\n") == 1
    assert not (tmp_path / "run.png").exists()  # refused before the run, not after it


# ------------------------------------------------------------------ demo and bench are delegated
def test_demo(tmp_path, capsys):
    code, out, err = run(capsys, "demo", "--agents", "4", "--steps", "30", "--worlds", "2", "--quiet",
                         "--out", str(tmp_path))
    assert code == 0, err
    assert "gradient climbing" in out and "random walk" in out
    assert iio.imread(tmp_path / "demo.png").ndim == 3


def test_demo_help_and_bad_argument(capsys):
    code, out, _ = run(capsys, "demo", "--help")
    assert code == 0 and "plume-multi demo" in out
    code, _, err = run(capsys, "demo", "--agents", "none")
    assert code == 2 and "--agents" in err


def test_bench(capsys):
    code, out, err = run(capsys, "bench", "--quick", "--no-rss", "--sizes", "1,64", "--repeats", "1")
    assert code == 0, err
    assert "| worlds x agents |" in out and "| 1 x 1 |" in out


def test_bench_bad_argument(capsys):
    code, _, err = run(capsys, "bench", "--repeats", "many")
    assert code == 2 and "--repeats" in err


# ------------------------------------------------------------------ output paths are checked first (one line, code 2)
def test_render_unwritable_output_fails_before_the_run(tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    for option in ("--png", "--movie"):
        paths = outputs(tmp_path)
        paths[paths.index(option) + 1] = str(blocker / ("x.png" if option == "--png" else "x.gif"))
        code, out, err = run(capsys, "render", *TINY, *paths)
        assert code == 2
        assert err.startswith(f"plume-multi render: error: {option}: cannot write '{blocker}/x.")
        assert err.count("\n") == 1 and "Traceback" not in err
        assert "agents finished" not in out  # no work was done
        assert not (tmp_path / "run.png").exists()


def test_demo_and_bench_check_their_output_paths_first(tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    code, out, err = run(capsys, "demo", "--agents", "2", "--steps", "5", "--worlds", "1", "--out", str(blocker / "d"))
    assert code == 2 and err.startswith("plume-multi demo: error: --out: cannot write") and err.count("\n") == 1
    assert "found the source" not in out
    code, out, err = run(capsys, "bench", "--quick", "--no-rss", "--json", str(blocker / "b.json"))
    assert code == 2 and err.startswith("plume-multi bench: error: --json: cannot write") and err.count("\n") == 1
    assert "| worlds x agents |" not in out


@pytest.mark.parametrize("argv", [["render", "--agents", "many"], ["render", "--frobnicate"], ["fly"],
                                  ["demo", "--agents", "0"], ["demo", "--agents", "x"], ["bench", "--repeats", "0"],
                                  ["bench", "--sizes", "a,b"]])
def test_every_failure_is_one_line_with_exit_code_2(capsys, argv):
    code, _, err = run(capsys, *argv)
    assert code == 2 and err.count("\n") == 1 and ": error: " in err, err


def test_demo_progress_is_one_bar(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PLUME_MULTI_QUIET", "1")  # no compile notice among the bar's lines
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["demo", "--agents", "4", "--steps", "30", "--worlds", "2", "--out", str(tmp_path)]) == 0
    bar = terminal.getvalue()
    assert bar.count("\n") == 1 and "90/90" in bar
    monkeypatch.undo()
    capsys.readouterr()
    code, _, err = run(capsys, "demo", "--agents", "4", "--steps", "30", "--worlds", "2", "--no-picture")
    assert code == 0 and err == ""  # not a terminal: no progress lines at all


def test_the_hand_written_progress_module_is_gone():
    import importlib.util

    assert importlib.util.find_spec("plume_multi.progress") is None


# ------------------------------------------------------------------ what the help lists is accepted
@pytest.mark.parametrize("command", ["render", "eval"])
def test_every_option_the_help_names_is_accepted(capsys, command):
    """Every --flag written anywhere in a command's help (options, epilog, examples) is one of its
    options: nothing is advertised that the command would reject."""
    import re

    from plume_multi.cli import _build_parser

    code, out, _ = run(capsys, command, "--help")
    assert code == 0
    named = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", out))
    sub = next(a for a in _build_parser()._actions if a.dest == "command").choices[command]
    accepted = {flag for action in sub._actions for flag in action.option_strings}
    assert {"--plume", "--body", "--sensors", "--reward", "--scenario"} <= named
    assert named <= accepted, sorted(named - accepted)


def test_the_help_names_every_model_and_every_plume_is_reachable():
    from argparse import Namespace

    from plume_multi import plumes
    from plume_multi.cli import POLICY_HELP
    from plume_multi.cli.scenario_flags import scenario_from_args
    from plume_multi.models.registry import model_names

    for family in ("plume", "action", "sensor", "reward"):
        for name in model_names(family):
            assert name in POLICY_HELP, name
    blank = dict(scenario=None, agents=None, grid=None, source=None, sigma=None, steps=None, goal_radius=None,
                 action_model=None, plume=None, body=None, sensors=None, reward=None, neighbours=None, team=None,
                 walls=None)
    for flags, kind in ((dict(plume="puffs:source=10,50,spin_up_steps=5", grid=[200, 100]), plumes.Puffs),
                        (dict(plume="poisson_hits:lambda_over_dx=1,R_dt=2"), plumes.PoissonHits),
                        (dict(plume="windy_poisson_hits:R_bar=0.25"), plumes.WindyPoissonHits),
                        (dict(plume="gaussian:sigma=4"), plumes.Gaussian),
                        (dict(scenario="poisson_search:lambda_over_dx=2", agents=4), plumes.PoissonHits)):
        sc = scenario_from_args(Namespace(**(blank | flags)), agents=1, steps=100)
        assert isinstance(sc.plume, kind)
    assert sc.n_agents == 4 and sc.team and sc.grid_size == (37, 37)


def test_built_in_policies_by_name():
    from plume_multi import Scenario, bodies, plumes, sensors
    from plume_multi.cli import UsageError, load_policy
    from plume_multi.policies import Greedy, Infotaxis, SurgeCast, Team
    from plume_multi.scenarios import poisson_search

    poisson = poisson_search(1.0, 2.0, n_agents=3)
    team = load_policy("infotaxis,greedy", poisson)
    assert isinstance(team, Team) and [type(m) for m in team.members] == [Infotaxis, Greedy, Infotaxis]
    assert team.members[0] is team.members[2]  # one policy object per name
    assert load_policy("space-aware-infotaxis", poisson).space_aware
    windy = Scenario(action_model=bodies.Oriented(), sensors=(sensors.Concentration(), sensors.Wind(), sensors.Heading()))
    assert isinstance(load_policy("surge-cast", windy), SurgeCast)
    with pytest.raises(UsageError, match="--policy surge-cast: SurgeCast: the scenario has no sensors.Wind"):
        load_policy("surge-cast", Scenario())
    two = Scenario(plume=plumes.Gaussian(source=((10, 10), (30, 30))))  # a belief is over one source's cell
    with pytest.raises(UsageError, match="--policy greedy: Greedy does not work with several sources"):
        load_policy("greedy", two)


# ------------------------------------------------------------------ compare, --walls
def test_compare_prints_the_table_and_writes_the_csv_and_figure(capsys, tmp_path):
    import csv

    from plume_multi import Scenario, compare

    code, out, err = run(capsys, "compare", "--policies", "random", "gradient", *TINY, "--episodes", "12",
                         "--seed", "4", "--out", str(tmp_path / "c"))
    assert code == 0, err
    assert "| random | " in out and "| gradient | " in out and "seeds 4..15" in out
    with open(tmp_path / "c.csv") as f:
        rows = list(csv.DictReader(f))
    expected = compare(["random", "gradient"], Scenario(n_agents=3, grid_size=(24, 16), max_steps=40), 12, 4,
                       progress=False)
    assert [float(r["success_rate"]) for r in rows] == [r["success_rate"] for r in expected.rows]
    assert (tmp_path / "c.png").stat().st_size > 0


@pytest.mark.parametrize("argv, message", [
    (["--policies", "random", "random"], "--policies: got ['random', 'random']; expected each policy once"),
    (["--policies", "random", "--task", "walls/gaussian-baffles-v0", "--agents", "2"], "--agents: got it with --task"),
    (["--policies", "random", "--task", "nowhere/x-v0"], "--task: task_id: got 'nowhere/x-v0'"),
    (["--policies", "surge-cast", "gradient"], "--policy surge-cast: SurgeCast: the scenario has no sensors.Wind"),
])
def test_compare_refuses_bad_arguments_in_one_line(capsys, tmp_path, argv, message):
    code, _, err = run(capsys, "compare", *argv, "--episodes", "2", "--quiet", "--no-plot", "--out", str(tmp_path / "c"))
    assert code == 2 and message in err and len(err.splitlines()) == 1, err


def test_walls_from_a_file_in_every_command_that_takes_a_scenario(capsys, tmp_path):
    import json

    import numpy as np

    from plume_multi import Scenario, evaluate

    mask = np.zeros((16, 24), dtype=bool)
    mask[4, 2:22] = True  # a wall below the source (12, 8)
    np.save(tmp_path / "wall.npy", mask)
    code, _, err = run(capsys, "eval", "--policy", "random", *TINY, "--episodes", "6", "--walls",
                       str(tmp_path / "wall.npy"), "--out", str(tmp_path / "e"), "--no-plot")
    assert code == 0, err
    expected = evaluate("random", Scenario(n_agents=3, grid_size=(24, 16), max_steps=40, walls=mask), 6,
                        progress=False)
    assert json.loads((tmp_path / "e.json").read_text())["episodes"]["arrival_time"] == expected.arrival_time.tolist()
    code, _, err = run(capsys, "render", "--policy", "random", *TINY, "--walls", str(tmp_path / "wall.npy"),
                       *outputs(tmp_path), "--no-movie")
    assert code == 0, err
    np.save(tmp_path / "small.npy", np.zeros((4, 4), dtype=bool))
    for path, message in ((tmp_path / "small.npy", "--walls (Scenario.walls"), (tmp_path / "none.npy", "cannot read"),
                          (tmp_path / "wall.txt", "expected a .npy file")):
        code, _, err = run(capsys, "eval", *TINY, "--episodes", "2", "--walls", str(path), "--no-plot",
                           "--out", str(tmp_path / "x"))
        assert code == 2 and message in err, err
