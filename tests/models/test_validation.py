"""Every bad parameter of every model, and every impossible combination, raises ValidationError
naming the field (``Model.field``), before anything is compiled or allocated."""

import math

import numpy as np
import pytest

from plume_multi import Scenario, Simulator, bodies, plumes, rewards, sensors
from plume_multi.errors import ValidationError

NAN, INF = math.nan, math.inf
GOOD_FRAMES = np.zeros((4, 3, 5), np.uint8)

BAD = [
    # (factory, field named in the message)
    (lambda: plumes.Gaussian(source=(1,)), "Gaussian.source"),
    (lambda: plumes.Gaussian(source=(1.5, 2)), "Gaussian.source"),
    (lambda: plumes.Gaussian(source=(True, 2)), "Gaussian.source"),
    (lambda: plumes.Gaussian(source="centre"), "Gaussian.source"),
    (lambda: plumes.Gaussian(source=5), "Gaussian.source"),
    (lambda: plumes.Gaussian(sigma=0.05), "Gaussian.sigma"),
    (lambda: plumes.Gaussian(sigma=101), "Gaussian.sigma"),
    (lambda: plumes.Gaussian(sigma=NAN), "Gaussian.sigma"),
    (lambda: plumes.Gaussian(sigma="12"), "Gaussian.sigma"),
    (lambda: plumes.Gaussian(sigma=True), "Gaussian.sigma"),
    (lambda: plumes.Gaussian(wind=(1.0,)), "Gaussian.wind"),
    (lambda: plumes.Gaussian(wind=(NAN, 0.0)), "Gaussian.wind"),
    (lambda: plumes.Gaussian(wind=(0.0, INF)), "Gaussian.wind"),
    (lambda: plumes.Gaussian(wind=1.0), "Gaussian.wind"),
    (lambda: plumes.Movie(None, source=(0, 0)), "Movie.frames"),
    (lambda: plumes.Movie([[[0.0]]], source=(0, 0)), "Movie.frames"),
    (lambda: plumes.Movie(np.zeros((3, 5)), source=(0, 0)), "Movie.frames"),
    (lambda: plumes.Movie(np.zeros((0, 3, 5)), source=(0, 0)), "Movie.frames"),
    (lambda: plumes.Movie(np.zeros((2, 3, 5), np.int32), source=(0, 0)), "Movie.frames"),
    (lambda: plumes.Movie(np.full((2, 3, 5), 1.5), source=(0, 0)), "Movie.frames"),
    (lambda: plumes.Movie(np.full((2, 3, 5), -0.1), source=(0, 0)), "Movie.frames"),
    (lambda: plumes.Movie(np.full((2, 3, 5), NAN), source=(0, 0)), "Movie.frames"),
    (lambda: plumes.Movie(GOOD_FRAMES), "Movie.source"),
    (lambda: plumes.Movie(GOOD_FRAMES, source="ab"), "Movie.source"),
    (lambda: plumes.Movie(GOOD_FRAMES, source=(1,)), "Movie.source"),
    (lambda: plumes.Movie(GOOD_FRAMES, source=(-1, 0)), "Movie.source"),
    (lambda: plumes.Movie(GOOD_FRAMES, source=(5, 0)), "Movie.source"),
    (lambda: plumes.Movie(GOOD_FRAMES, source=(0, 2.5)), "Movie.source"),
    (lambda: plumes.Movie(GOOD_FRAMES, source=(0, 0), start="first"), "Movie.start"),
    (lambda: plumes.Movie(GOOD_FRAMES, source=(0, 0), start=-1), "Movie.start"),
    (lambda: plumes.Movie(GOOD_FRAMES, source=(0, 0), start=4), "Movie.start"),
    (lambda: plumes.Movie(GOOD_FRAMES, source=(0, 0), start=1.0), "Movie.start"),
    (lambda: plumes.Movie(GOOD_FRAMES, source=(0, 0), end="loop"), "Movie.end"),
    (lambda: plumes.Movie(GOOD_FRAMES, source=(0, 0), wind=(1.0, 2.0, 3.0)), "Movie.wind"),
    (lambda: plumes.Movie(GOOD_FRAMES, source=(0, 0), wind=np.zeros((5, 2))), "Movie.wind"),
    (lambda: plumes.Movie(GOOD_FRAMES, source=(0, 0), wind=np.zeros((4, 5, 3, 2))), "Movie.wind"),
    (lambda: plumes.Movie(GOOD_FRAMES, source=(0, 0), wind=(NAN, 0.0)), "Movie.wind"),
    (lambda: plumes.Movie(GOOD_FRAMES, source=(0, 0), wind="calm"), "Movie.wind"),
    (lambda: plumes.Movie(GOOD_FRAMES, source=(0, 0), fps=0), "Movie.fps"),
    (lambda: plumes.Movie(GOOD_FRAMES, source=(0, 0), fps=-30), "Movie.fps"),
    (lambda: plumes.Movie(GOOD_FRAMES, source=(0, 0), fps="30"), "Movie.fps"),
    (lambda: plumes.Movie(GOOD_FRAMES, source=(0, 0), scale=0.0), "Movie.scale"),
    (lambda: plumes.Movie(np.full((2, 3, 5), 255, np.uint8), source=(0, 0), scale=1.0), "Movie.scale"),
    (lambda: plumes.Movie(np.zeros((2, 3, 5), np.float32), source=(0, 0), scale=1e-300), "Movie.scale"),
    (lambda: bodies.Oriented(turn_degrees=0), "Oriented.turn_degrees"),
    (lambda: bodies.Oriented(turn_degrees=-90), "Oriented.turn_degrees"),
    (lambda: bodies.Oriented(turn_degrees=181), "Oriented.turn_degrees"),
    (lambda: bodies.Oriented(turn_degrees=NAN), "Oriented.turn_degrees"),
    (lambda: bodies.Oriented(step=0), "Oriented.step"),
    (lambda: bodies.Oriented(step=2049), "Oriented.step"),
    (lambda: bodies.Oriented(step=1.0), "Oriented.step"),
    (lambda: bodies.Oriented(step=True), "Oriented.step"),
    (lambda: bodies.Oriented(initial_heading=NAN), "Oriented.initial_heading"),
    (lambda: bodies.Oriented(initial_heading=INF), "Oriented.initial_heading"),
    (lambda: bodies.Oriented(initial_heading=1e7), "Oriented.initial_heading"),
    (lambda: bodies.Oriented(initial_heading="north"), "Oriented.initial_heading"),
    (lambda: bodies.RunTumble(step=0), "RunTumble.step"),
    (lambda: bodies.RunTumble(step=2.5), "RunTumble.step"),
    (lambda: bodies.RunTumble(initial_heading=NAN), "RunTumble.initial_heading"),
    (lambda: bodies.RunTumble(initial_heading=-1e7), "RunTumble.initial_heading"),
    (lambda: bodies.Continuous(max_speed=0.0), "Continuous.max_speed"),
    (lambda: bodies.Continuous(max_speed=-1.0), "Continuous.max_speed"),
    (lambda: bodies.Continuous(max_speed=2049.0), "Continuous.max_speed"),
    (lambda: bodies.Continuous(max_speed=NAN), "Continuous.max_speed"),
    (lambda: bodies.Continuous(max_turn_degrees=-1.0), "Continuous.max_turn_degrees"),
    (lambda: bodies.Continuous(max_turn_degrees=181.0), "Continuous.max_turn_degrees"),
    (lambda: bodies.Continuous(max_turn_degrees=INF), "Continuous.max_turn_degrees"),
    (lambda: bodies.Continuous(initial_heading=NAN), "Continuous.initial_heading"),
    (lambda: sensors.Binary(-0.1), "Binary.threshold"),
    (lambda: sensors.Binary(NAN), "Binary.threshold"),
    (lambda: sensors.Binary("0.5"), "Binary.threshold"),
    (lambda: sensors.Antennae(angles=()), "Antennae.angles"),
    (lambda: sensors.Antennae(angles=45.0), "Antennae.angles"),
    (lambda: sensors.Antennae(angles=tuple(range(65))), "Antennae.angles"),
    (lambda: sensors.Antennae(angles=(400.0,)), "Antennae.angles"),
    (lambda: sensors.Antennae(angles=(NAN, 0.0)), "Antennae.angles"),
    (lambda: sensors.Antennae(angles=("left",)), "Antennae.angles"),
    (lambda: sensors.Antennae(distance=-1.0), "Antennae.distance"),
    (lambda: sensors.Antennae(distance=2049.0), "Antennae.distance"),
    (lambda: sensors.Antennae(distance=NAN), "Antennae.distance"),
    (lambda: sensors.Wind(noise_std=-1.0), "Wind.noise_std"),
    (lambda: sensors.Wind(noise_std=NAN), "Wind.noise_std"),
    (lambda: sensors.Wind(noise_std=1e7), "Wind.noise_std"),
    (lambda: sensors.Neighbours(0), "Neighbours.k"),
    (lambda: sensors.Neighbours(-1), "Neighbours.k"),
    (lambda: sensors.Neighbours(1.0), "Neighbours.k"),
    (lambda: sensors.Neighbours(True), "Neighbours.k"),
    (lambda: sensors.History(None), "History.sensor"),
    (lambda: sensors.History("concentration"), "History.sensor"),
    (lambda: sensors.History(sensors.Neighbours(1)), "History.sensor"),
    (lambda: sensors.History(sensors.History(sensors.Concentration())), "History.sensor"),
    (lambda: sensors.History(bodies.Cardinal()), "History.sensor"),
    (lambda: sensors.History(sensors.Concentration(), steps=0), "History.steps"),
    (lambda: sensors.History(sensors.Concentration(), steps=1025), "History.steps"),
    (lambda: sensors.History(sensors.Concentration(), steps=2.0), "History.steps"),
    (lambda: rewards.StepPenalty(goal_reward=NAN), "StepPenalty.goal_reward"),
    (lambda: rewards.StepPenalty(goal_reward=1e7), "StepPenalty.goal_reward"),
    (lambda: rewards.StepPenalty(goal_reward="1"), "StepPenalty.goal_reward"),
    (lambda: rewards.StepPenalty(step_penalty=-0.01), "StepPenalty.step_penalty"),
    (lambda: rewards.StepPenalty(step_penalty=INF), "StepPenalty.step_penalty"),
]


@pytest.mark.parametrize("factory, field", BAD, ids=[f"{i}-{f}" for i, (_, f) in enumerate(BAD)])
def test_bad_parameter_names_its_field(factory, field):
    with pytest.raises(ValidationError, match=field.replace(".", r"\.")) as info:
        factory()
    assert isinstance(info.value, ValueError)
    assert "expected" in str(info.value)


IMPOSSIBLE = [
    (lambda: Scenario(n_agents=3, sensors=(sensors.Neighbours(3),)), "Neighbours.k"),
    (lambda: Scenario(n_agents=1, sensors=(sensors.Concentration(), sensors.Neighbours(1))), "Neighbours.k"),
    (lambda: Scenario(plume=plumes.Movie(GOOD_FRAMES, source=(0, 0)), grid_size=(3, 5)), "Scenario.grid_size"),
    (lambda: Scenario(plume=plumes.Movie(GOOD_FRAMES, source=(0, 0)), grid_size=(128, 128)), "Scenario.grid_size"),
    (lambda: Scenario(plume=plumes.Gaussian(), sigma=3.0), "Scenario.sigma"),
    (lambda: Scenario(plume=plumes.Gaussian(), source_location=(1, 1)), "Scenario.source_location"),
    (lambda: Scenario(n_agents=3, n_neighbours=1, sensors=(sensors.Concentration(),)), "Scenario.n_neighbours"),
    (lambda: Scenario(grid_size=(10, 10), plume=plumes.Gaussian(source=(10, 0))), "Gaussian.source"),
    (lambda: Scenario(grid_size=(10, 10), plume=plumes.Gaussian(source=(0, -1))), "Gaussian.source"),
    (lambda: Scenario(plume="gaussian"), "Scenario.plume"),
    (lambda: Scenario(plume=sensors.Concentration()), "Scenario.plume"),
    (lambda: Scenario(action_model=sensors.Position()), "Scenario.action_model"),
    (lambda: Scenario(action_model="oriented"), "Scenario.action_model"),
    (lambda: Scenario(sensors=()), "Scenario.sensors"),
    (lambda: Scenario(sensors=sensors.Concentration()), "Scenario.sensors"),
    (lambda: Scenario(sensors=(bodies.Cardinal(),)), "Scenario.sensors"),
    (lambda: Scenario(reward=bodies.Cardinal()), "Scenario.reward"),
    (lambda: Scenario(grid_size=(5, 5), start_region=((0, 0), (5, 4))), "Scenario.start_region"),
    (lambda: Scenario(grid_size=(5, 5), start_region=((3, 0), (2, 4))), "Scenario.start_region"),
    (lambda: Scenario(grid_size=(5, 5), start_positions=((0, 0),), start_region=((0, 0), (1, 1))),
     "Scenario.start_region"),
    # a heading on a body without one would read a constant (1, 0): refused, naming both
    (lambda: Scenario(sensors=(sensors.Concentration(), sensors.Heading())), "Heading.body: got 'Cardinal'"),
    (lambda: Scenario(action_model="moore", sensors=(sensors.History(sensors.Heading(), steps=2),)),
     "Heading.body: got 'Moore'"),
    (lambda: Simulator(Scenario(plume=plumes.Movie(GOOD_FRAMES, source=(0, 0))), field=np.zeros((3, 5))), "field"),
    (lambda: Simulator(Scenario(grid_size=(5, 3), plume=plumes.Gaussian(source="random")), field=np.zeros((3, 5))),
     "field"),
]


@pytest.mark.parametrize("factory, field", IMPOSSIBLE, ids=[f"{i}-{f}" for i, (_, f) in enumerate(IMPOSSIBLE)])
def test_impossible_combination_names_its_field(factory, field):
    with pytest.raises(ValidationError, match=field.replace(".", r"\.")):
        factory()


def test_good_edges_are_accepted():
    """The limits themselves are valid (so the checks above test the limits, not everything)."""
    plumes.Gaussian(sigma=0.1, source=(0, 0), wind=(-1e3, 1e3))
    plumes.Gaussian(sigma=100.0)
    plumes.Movie(GOOD_FRAMES, source=(4, 2), start=3, end="clamp", fps=1e-3, scale=1 / 255,
                 wind=np.zeros((4, 3, 5, 2)))
    plumes.Movie(GOOD_FRAMES, source=(4.0, 2.0), wind=np.zeros((4, 2)))
    bodies.Oriented(turn_degrees=180.0, step=2048, initial_heading=-1e6)
    bodies.RunTumble(step=2048, initial_heading=1e6)
    bodies.Continuous(max_speed=2048.0, max_turn_degrees=0.0, initial_heading=0.0)
    sensors.Binary(0.0)
    sensors.Antennae(angles=tuple(range(64)), distance=0.0)
    sensors.Antennae(angles=(-360.0, 360.0), distance=2048.0)
    sensors.Wind(noise_std=0.0)
    sensors.History(sensors.Antennae(), steps=1024)
    sensors.History(sensors.Wind(1.0), steps=1)
    rewards.StepPenalty(goal_reward=-1e6, step_penalty=1e6)
    Scenario(n_agents=4, sensors=(sensors.Neighbours(3),))


def test_model_families_are_public_at_the_top_level():
    """models/__init__.py: 'Public as plume_multi.plumes, .actions, .sensors and .rewards'."""
    import plume_multi
    from plume_multi import models

    for family in ("plumes", "actions", "sensors", "rewards"):
        assert getattr(plume_multi, family) is getattr(models, family)
        assert family in plume_multi.__all__
