"""`plume-multi render` with models by name (--plume/--body/--sensors/--reward) or --scenario FILE.json,
and plume_multi.models.from_metadata / plume_multi.scenario (its JSON functions)."""

import json
import os

os.environ.setdefault("MPLBACKEND", "Agg")

import imageio.v3 as iio
import numpy as np
import pytest

from plume_multi import Scenario, ValidationError
from plume_multi.cli import UsageError, load_policy, main, parse_model
from plume_multi.models import bodies, from_metadata, plumes, rewards, sensors
from plume_multi.scenario import load_scenario, save_scenario, scenario_from_metadata

TINY = ["--agents", "3", "--grid", "24", "16", "--steps", "12", "--quiet"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ parse_model
@pytest.mark.parametrize("spec, family, want", [
    ("gaussian", "plume", plumes.Gaussian()),
    ("gaussian:sigma=8,source=random", "plume", plumes.Gaussian(sigma=8, source="random")),
    ("Gaussian:source=10,20,sigma=3", "plume", plumes.Gaussian(source=(10, 20), sigma=3)),
    ("gaussian:wind=(1.5, -0.5)", "plume", plumes.Gaussian(wind=(1.5, -0.5))),
    ("oriented:turn_degrees=45", "action", bodies.Oriented(turn_degrees=45)),
    ("run_tumble:step=2", "action", bodies.RunTumble(step=2)),
    ("continuous:max_speed=0.5,max_turn_degrees=20", "action", bodies.Continuous(0.5, 20)),
    ("antennae:distance=2", "sensor", sensors.Antennae(distance=2)),
    ("antennae:angles=30,-30,0", "sensor", sensors.Antennae(angles=(30, -30, 0))),
    ("wind:noise_std=0.1", "sensor", sensors.Wind(noise_std=0.1)),
    ("step_penalty:step_penalty=0.01", "reward", rewards.StepPenalty(step_penalty=0.01)),
])
def test_models_parse_by_name_with_literal_parameters(spec, family, want):
    assert parse_model(spec, family, "--x") == want


def test_a_movie_takes_its_path(tmp_path):
    path = tmp_path / "frames.npy"
    np.save(path, np.random.default_rng(0).random((4, 8, 10)).astype(np.float32))
    movie = parse_model(f"movie:path={path},source=3,4,start=0", "plume", "--plume")
    assert movie.frames.shape == (4, 8, 10) and movie.source == (3.0, 4.0) and movie.start == 0


@pytest.mark.parametrize("spec, family, flag, message", [
    ("plasma", "plume", "--plume", r"--plume: got 'plasma'; expected one of \['gaussian', 'movie'"),
    ("gaussian:spread=3", "plume", "--plume", "--plume: Gaussian has no parameter 'spread'"),
    ("gaussian:sigma=-1", "plume", "--plume", r"--plume: Gaussian.sigma: got -1; expected"),
    ("gaussian:3", "plume", "--plume", "--plume: got 'gaussian:3'; expected gaussian:KEY=VALUE"),
    ("gaussian:sigma=3,sigma=4", "plume", "--plume", "--plume: the parameter 'sigma' is given twice"),
    ("hexagonal", "action", "--body", r"--body: got 'hexagonal'; expected one of \['cardinal'"),
    ("oriented:turn_degrees=0", "action", "--body", "--body: Oriented.turn_degrees: got 0"),
    ("nose", "sensor", "--sensors", "--sensors: got 'nose'"),
    ("step_penalty:step_penalty=x", "reward", "--reward", "--reward: StepPenalty.step_penalty: got 'x'"),
])
def test_bad_model_specs_name_the_flag(spec, family, flag, message):
    with pytest.raises(UsageError, match=message):
        parse_model(spec, family, flag)


@pytest.mark.parametrize("argv, message", [
    (["--plume", "gaussian:sigma=0"], "--plume: Gaussian.sigma: got 0"),
    (["--plume", "gaussian", "--sigma", "3"], "--sigma: got it with --plume"),
    (["--body", "oriented", "--action-model", "moore"], "--body: got it with --action-model"),
    (["--sensors", "antennae:distance=-2"], "--sensors: Antennae.distance: got -2"),
    (["--body", "oriented"], "--policy gradient: GradientClimber.body: got 'Oriented'; expected a body of cardinal or "
                             "moore moves"),
    (["--body", "run_tumble"], "--policy gradient: GradientClimber.body: got 'RunTumble'"),
    (["--scenario", "missing.json"], "--scenario: load_scenario: got 'missing.json', which does not exist"),
])
def test_render_model_errors_are_one_line_exit_2(capsys, tmp_path, argv, message):
    code, _, err = run(capsys, "render", *TINY, "--no-movie", "--png", str(tmp_path / "a.png"), *argv)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("plume-multi render: error: ") and message in err


def test_render_an_oriented_body_with_antennae(capsys, tmp_path):
    png, gif = tmp_path / "o.png", tmp_path / "o.gif"
    code, out, err = run(capsys, "render", *TINY, "--policy", "random", "--plume", "gaussian:sigma=6,wind=1,0",
                         "--body", "oriented:turn_degrees=45", "--sensors", "concentration", "antennae:distance=2",
                         "wind", "heading", "--reward", "step_penalty:step_penalty=0.01", "--scale", "4",
                         "--png", str(png), "--movie", str(gif))
    assert code == 0, err
    assert "random: 3 agents on a 24x16 grid, source at (12, 8)" in out
    frames = iio.imread(gif)
    assert frames.shape[0] == 13 and png.stat().st_size > 0
    # the wind arrow: white pixels in the top-right corner of every frame (the default scene has none)
    corner = frames[:, :16 * 4 // 3, 24 * 4 // 2:]
    assert (corner == 255).all(axis=-1).any(axis=(1, 2)).all()


def test_render_continuous_body_with_random_policy_and_random_source(capsys, tmp_path):
    code, out, err = run(capsys, "render", *TINY, "--policy", "random", "--plume", "gaussian:source=random",
                         "--body", "continuous", "--no-movie", "--png", str(tmp_path / "c.png"))
    assert code == 0, err and "after 12 steps" in out


def test_random_policy_handles_any_discrete_body():
    for body, n in ((bodies.Oriented(), 3), (bodies.RunTumble(), 2), (bodies.Moore(), 9)):
        policy = load_policy("random", Scenario(action_model=body), seed=0)
        acts = policy(np.zeros((500, 3), np.float32))
        assert set(np.unique(acts)) == set(range(n))
    box = load_policy("random", Scenario(action_model=bodies.Continuous(max_speed=2, max_turn_degrees=10)), seed=0)
    acts = box(np.zeros((500, 3), np.float32))
    assert acts.shape == (500, 2) and 0 <= acts[:, 0].min() and acts[:, 0].max() <= 2 and abs(acts[:, 1]).max() <= 10


# ------------------------------------------------------------------ --scenario and metadata
SCENARIOS = [
    Scenario(),
    Scenario(n_agents=4, n_neighbours=2, team=True, goal_radius=2.0),
    Scenario(grid_size=(40, 30), n_agents=2, plume=plumes.Gaussian(sigma=8, source="random", wind=(1, 0)),
             action_model=bodies.Oriented(turn_degrees=45), reward=rewards.StepPenalty(step_penalty=0.05),
             sensors=(sensors.Concentration(), sensors.Antennae(distance=2), sensors.Wind(), sensors.Heading(),
                      sensors.History(sensors.Binary(0.3), steps=3)),
             start_region=((0, 0), (5, 5))),
    Scenario(action_model=bodies.Continuous(max_speed=0.5), start_positions=((1, 2), (3, 4)), n_agents=2),
]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario_metadata_round_trips(tmp_path, scenario):
    again = scenario_from_metadata(json.loads(json.dumps(scenario.metadata())))
    assert again.metadata() == scenario.metadata()
    save_scenario(scenario, tmp_path / "s.json")
    assert load_scenario(tmp_path / "s.json").metadata() == scenario.metadata()


def test_a_movie_scenario_round_trips_through_its_path(tmp_path):
    path = tmp_path / "m.npy"
    np.save(path, (np.random.default_rng(1).random((5, 12, 9)) * 255).astype(np.uint8))
    sc = Scenario(plume=plumes.Movie(str(path), source=(2, 3), end="clamp"))
    assert scenario_from_metadata(sc.metadata()).metadata() == sc.metadata()


def test_from_metadata_builds_each_family():
    assert from_metadata({"model": "Gaussian", "sigma": 8}) == plumes.Gaussian(sigma=8)
    assert from_metadata({"model": "oriented", "turn_degrees": 30}, "action") == bodies.Oriented(turn_degrees=30)
    assert from_metadata({"family": "sensor", "model": "Antennae", "angles": [10, -10]}) == sensors.Antennae((10, -10))
    assert from_metadata({"model": "History", "sensor": {"model": "Concentration"}, "steps": 2}) == \
        sensors.History(sensors.Concentration(), 2)


@pytest.mark.parametrize("meta, family, message", [
    ([], None, "metadata: got list"),
    ({"model": "Nope"}, None, "metadata: got model 'Nope'"),
    ({"sigma": 3}, "plume", r"metadata: got keys \['sigma'\]; expected 'model'"),
    ({"model": "Gaussian", "spread": 1}, None, r"Gaussian: got unknown field\(s\) \['spread'\]"),
    ({"model": "Gaussian", "sigma": 0}, None, "Gaussian.sigma: got 0"),
    ({"model": "Oriented"}, "plume", "metadata: got the 'action' model|expected a plume model"),
    ({"model": "Movie", "frames": {"shape": [2, 3, 4]}}, None, "Movie.frames: got .*expected a path"),
])
def test_from_metadata_refuses_bad_input(meta, family, message):
    with pytest.raises(ValidationError, match=message):
        from_metadata(meta, family)


@pytest.mark.parametrize("meta, message", [
    ({"planet": 1}, r"scenario: got unknown key\(s\) \['planet'\]"),
    ({"plume": {"model": "Gaussian", "sigma": 4}, "sigma": 5.0}, "Scenario.sigma: got 5.0, but the plume gives 4.0"),
    ({"sensors": []}, "Scenario.sensors: got"),
    ({"action_model": {"model": "Gaussian"}}, "Scenario.action_model: model: got 'Gaussian'; expected an action model"),
    ({"n_agents": 0}, "Scenario.n_agents: got 0"),
])
def test_scenario_from_metadata_refuses_bad_input(meta, message):
    with pytest.raises(ValidationError, match=message):
        scenario_from_metadata(meta)


def test_render_from_a_scenario_file(capsys, tmp_path):
    # the models of test_render_an_oriented_body_with_antennae (one compiled step for both tests)
    meta = {"grid_size": [20, 14], "n_agents": 2, "max_steps": 30,
            "plume": {"model": "Gaussian", "sigma": 5, "source": [4, 4]},
            "action_model": {"model": "Oriented", "turn_degrees": 90},
            "sensors": [{"model": "Concentration"}, {"model": "Antennae", "distance": 1.5}, {"model": "Wind"},
                        {"model": "Heading"}]}
    path = tmp_path / "sc.json"
    path.write_text(json.dumps(meta))
    code, out, err = run(capsys, "render", "--scenario", str(path), "--steps", "8", "--policy", "random", "--quiet",
                         "--no-movie", "--png", str(tmp_path / "s.png"))
    assert code == 0, err
    assert "2 agents on a 20x14 grid, source at (4, 4), at most 8 steps" in out
    code, _, err = run(capsys, "render", "--scenario", str(path), "--body", "cardinal", "--quiet", "--no-movie",
                       "--png", str(tmp_path / "s.png"))
    assert code == 2 and "--body: got it with --scenario" in err
    path.write_text("{not json")
    code, _, err = run(capsys, "render", "--scenario", str(path), "--quiet", "--no-movie", "--png", str(tmp_path / "s.png"))
    assert code == 2 and "--scenario: scenario:" in err and "is not valid JSON" in err
