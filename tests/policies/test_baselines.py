"""The policies of observations (``RandomPolicy``, ``RandomBoxPolicy``, ``GradientClimber``,
``SurgeCast``) against their plain references (``baselines_reference.py``): on drawn observations,
and in closed loop, each steering a ``Simulator`` while its reference steers the plain reference of
the engine (``NaiveSim``, ``NaiveSourcesWorld``), in every context the capability table gives them:
2-D and 3-D, teams, walls, several and moving sources. Actions, observations, rewards and flags are
equal bit for bit at every step.

No combination of models compiles here that the model tests do not compile already: the scenarios
are theirs (``simple_scenario`` of tests/models/test_reference.py's combinations, the 3-D ones of
test_three_dimensions.py and test_movie_3d.py, the walls of test_walls.py, the sources of
test_gaussian_sources.py), with numbers of their own; a team is a run-time flag of the same driver.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

TESTS = Path(__file__).resolve().parents[1]
for folder in (TESTS / "models" / "sources", TESTS / "models" / "plumes", TESTS / "models", TESTS):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from baselines_reference import references  # noqa: E402
from models_reference import NaiveSim, simple_scenario  # noqa: E402
from plume_multi import Scenario, Simulator, bodies, plumes, rewards, sensors, sources  # noqa: E402
from plume_multi.policies import GradientClimber, RandomBoxPolicy, RandomPolicy, SurgeCast  # noqa: E402


def _policies(sc, seed=7):
    """Every policy of observations the table lets steer ``sc``'s body, each with its reference
    (SurgeCast only in 2-D; upwind known when the scenario has no wind sensor)."""
    body = sc.action_model
    out = []
    if body.continuous:
        low, high = sc.action_bounds()
        out.append(RandomBoxPolicy(low, high, seed=seed))
    else:
        out.append(RandomPolicy(sc.n_actions, seed=seed))
    if isinstance(body, (bodies.Cardinal, bodies.Continuous)) and not (body.continuous and sc.dims == 3):
        out.append(GradientClimber(explore=0.2, seed=seed, scenario=sc))
    if sc.dims == 2 and isinstance(body, (bodies.Cardinal, bodies.Continuous, bodies.Oriented)):
        windy = "wind_u" in sc.observation_layout or "wind_forward" in sc.observation_layout
        out.append(SurgeCast(sc, threshold=0.3, surge=3, cast=2, upwind=None if windy else 30.0, seed=seed))
    return [(p, references(p, seed)) for p in out]


def closed_loop(sc, num_worlds=2, seed=3, steps=None):
    """Each policy of ``_policies(sc)`` steers a Simulator, its reference the plain reference of the
    engine, from the same seed: everything equal at every step. Memory is forgotten for the rows
    of worlds that start a new episode, on both sides. Returns how many times an arrival ended
    the episode of another agent of its team (two agents or more terminated in one world's step)."""
    steps = steps or 2 * sc.max_steps + 2
    team_ends = 0
    for policy, ref_policy in _policies(sc):
        sim, ref = Simulator(sc, num_worlds=num_worlds), NaiveSim(sc, num_worlds)
        obs, want = sim.reset(seed=seed), ref.reset(seed)
        np.testing.assert_array_equal(obs, want, err_msg="reset")
        for k in range(steps):
            where = f"{type(policy).__name__} step {k + 1}"
            actions, expected = policy(obs), ref_policy(want)
            np.testing.assert_array_equal(actions, expected, err_msg=where)
            done_before = sim.state.world_done.copy()
            searching = sim.active.copy()
            obs, reward, terminated, truncated = sim.step(actions)
            got = (obs, reward, terminated, truncated, sim.positions)
            want, *rest = ref.step(expected)
            for g, e in zip(got, (want, *rest, ref.pos)):
                np.testing.assert_array_equal(g, e, err_msg=where)
            stopped = (terminated & searching).reshape(num_worlds, sc.n_agents).sum(axis=1)
            team_ends += int((stopped >= 2).sum())
            if done_before.any():  # those worlds started a new episode: forget their rows
                rows = np.repeat(done_before, sc.n_agents)
                policy.reset(rows)
                ref_policy.reset(rows)
    return team_ends


# ----------------------------------------------------------------------------- on drawn observations
def _observations(rng, m, layout, low=-0.2, high=1.2):
    obs = rng.uniform(low, high, (m, len(layout))).astype(np.float32)
    obs[rng.random(m) < 0.2, 0] = obs[0, 0]  # some equal readings (a flat concentration turns)
    return obs


@pytest.mark.parametrize("body", [bodies.Cardinal(), bodies.Moore(), bodies.Oriented(turn_degrees=45.0),
                                  bodies.Continuous(max_speed=1.5, max_turn_degrees=40.0), bodies.RunTumble()],
                         ids=lambda b: b.name)
@pytest.mark.parametrize("dims", [2, 3])
def test_each_policy_acts_as_its_reference_on_drawn_observations(body, dims):
    """Calls of changing sizes, forgotten rows, antennae, known and sensed wind: equal actions."""
    if dims == 3 and body.oriented and not body.continuous:
        return  # no 3-D body with a heading on a grid: the table refuses it (test_capabilities.py)
    extra = (sensors.Antennae((30.0, -60.0)), sensors.Heading()) if body.oriented and dims == 2 else ()
    rng = np.random.default_rng(dims)
    for wind in ((sensors.Wind(),), ()):
        sc = Scenario(grid_size=(6, 5) if dims == 2 else (6, 5, 3), action_model=body, n_agents=3,
                      sensors=(sensors.Concentration(),) + extra + wind + (sensors.Binary(0.5),))
        pairs = _policies(sc, seed=int(rng.integers(0, 2**32)))
        assert pairs, sc
        for policy, ref in pairs:
            for size in (5, 5, 5, 8, 8, 8, 8):
                obs = _observations(rng, size, sc.observation_layout)
                np.testing.assert_array_equal(policy(obs), ref(obs), err_msg=f"{type(policy).__name__}")
                mask = rng.random(size) < 0.3
                policy.reset(mask)
                ref.reset(mask)
            policy.reset()
            ref.reset()
            obs = _observations(rng, 8, sc.observation_layout)
            np.testing.assert_array_equal(policy(obs), ref(obs))


def test_the_references_are_not_the_policies():
    """A reference that took another draw or another turn would differ: a sanity check that the
    comparison can fail (a climber that never explores, a cast of other legs)."""
    sc = Scenario(action_model=bodies.Moore(), sensors=(sensors.Concentration(), sensors.Wind()), n_agents=1)
    rng = np.random.default_rng(0)
    obs = _observations(rng, 16, sc.observation_layout)
    climber, ref = GradientClimber(explore=0.5, seed=1, scenario=sc), references(GradientClimber(explore=0.0,
                                                                                                 seed=1, scenario=sc), 1)
    assert any((climber(obs) != ref(obs)).any() for _ in range(5))
    surge = SurgeCast(sc, cast=1, surge=1)
    other = references(SurgeCast(sc, cast=3, surge=1), 0)
    quiet = np.zeros((16, 3), np.float32)
    quiet[:, 1] = 1.0
    assert any((surge(quiet) != other(quiet)).any() for _ in range(4))


# ----------------------------------------------------------------------------- in closed loop, in every context
@pytest.mark.parametrize("team", [False, True], ids=["alone", "team"])
@pytest.mark.parametrize("combo", [("gaussian", "table"), ("gaussian", "continuous"), ("movie", "oriented"),
                                   ("gaussian", "run_tumble")], ids="-".join)
def test_the_policies_steer_the_2d_models_as_their_references(combo, team):
    """tests/models/test_reference.py's combinations (every sensor but Hits and Belief), alone and in
    teams, with a StepPenalty on the grid bodies."""
    sc = simple_scenario(*combo, n_agents=3, max_steps=6, goal_radius=1.5).replace(team=team)
    if combo[1] != "continuous":
        sc = sc.replace(reward=rewards.StepPenalty(-0.25, 2.0))
    closed_loop(sc)


def _default_3d(team):
    return Scenario(grid_size=(5, 4, 3), n_agents=3, max_steps=6, goal_radius=1.0, team=team)


def _table_3d(team):
    from test_three_dimensions import sensor_set_3d

    return Scenario(grid_size=(4, 5, 3), plume=plumes.Gaussian(source="random", sigma=2.0), n_agents=3,
                    action_model=bodies.Moore(), sensors=sensor_set_3d(2), goal_radius=1.5, max_steps=6, team=team)


def _continuous_3d(team):
    from test_three_dimensions import point_sensors

    return Scenario(grid_size=(4, 5, 3), plume=plumes.Gaussian(source=(1, 2, 1), sigma=2.0, wind=(0.5, 0.0, -0.5)),
                    n_agents=3, action_model=bodies.Continuous(max_speed=1.5), sensors=point_sensors(0.4, 0.5),
                    reward=rewards.StepPenalty(-0.5, 1.0), goal_radius=1.5, max_steps=6, team=team)


def _movie_3d(team):
    from test_movie_3d import scenario, volumes

    return scenario(plumes.Movie(volumes(seed=2), source=(1.0, 2.0, 1.0)), n_agents=3, goal_radius=1.5, max_steps=6,
                    team=team)


@pytest.mark.parametrize("team", [False, True], ids=["alone", "team"])
@pytest.mark.parametrize("make", [_default_3d, _table_3d, _continuous_3d, _movie_3d], ids=lambda f: f.__name__[1:])
def test_the_policies_steer_the_3d_models_as_their_references(make, team):
    """tests/models/test_three_dimensions.py's three combinations and test_movie_3d.py's, alone and
    in teams."""
    closed_loop(make(team), steps=14)


def _walls_2d(body):
    """tests/models/test_walls.py's combination: the default scenario among walls (two masks)."""
    masks = np.zeros((2, 5, 6), bool)
    masks[0, 1:4, 2] = True
    masks[1, 2, 0:4] = True
    return Scenario(grid_size=(6, 5), source_location=(4, 2), sigma=2.0, action_model=body, walls=masks,
                    n_agents=3, max_steps=8, goal_radius=1.0)


def _walls_3d():
    """test_walls.py's 3-D combination: a continuous body among walls."""
    mask = np.zeros((3, 5, 4), bool)
    mask[1, 1:4, 2] = True
    return Scenario(grid_size=(4, 5, 3), plume=plumes.Gaussian(source=(3, 2, 1), sigma=2.0), n_agents=3,
                    action_model=bodies.Continuous(max_speed=1.2),
                    sensors=(sensors.Concentration(), sensors.Position(), sensors.Neighbours(1)), walls=mask,
                    max_steps=8, goal_radius=1.0)


@pytest.mark.parametrize("make", [lambda: _walls_2d(bodies.Cardinal()), lambda: _walls_2d(bodies.Moore()), _walls_3d],
                         ids=["cardinal-2d", "moore-2d", "continuous-3d"])
def test_the_policies_steer_among_walls_as_their_references(make):
    sc = make()
    closed_loop(sc, num_worlds=3, steps=20)


def _sources(kind, team):
    """tests/models/sources/test_gaussian_sources.py's three combinations."""
    if kind == "several":
        plume = plumes.Gaussian(source=[(1, 1), (4, 3)], sigma=2.0)
        body = "moore"
    elif kind == "walking":
        plume = plumes.Gaussian(source="random", n_sources=2, sigma=2.0,
                                source_motion=sources.RandomWalk(speed=0.7, persistence=4.0))
        body = "moore"
    else:
        plume = plumes.Gaussian(source=(2, 3), sigma=2.0, source_motion=sources.Drift((0.5, -0.25)))
        body = "moore"
    return Scenario(grid_size=(6, 5), plume=plume, n_agents=3, team=team, goal_radius=1.0, max_steps=8,
                    action_model=body)


@pytest.mark.parametrize("team", [False, True], ids=["alone", "team"])
@pytest.mark.parametrize("kind", ["several", "walking", "drifting"])
def test_the_policies_steer_among_several_and_moving_sources_as_their_references(kind, team):
    closed_loop(_sources(kind, team), steps=18)


# ----------------------------------------------------------------------------- bodies and sensors in every context
# The contexts the model tests step only with the table body and the default sensors: each body and
# sensor among walls (2-D and 3-D) and among several moving sources. One compiled combination per
# body (the continuous one with every sensor that reads at a float position, the others with the
# fewest sensors a policy needs), tiny grids, a handful of steps.
def _walls_mask(w, h, *cells):
    mask = np.zeros((h, w), bool)
    for x, y in cells:
        mask[y, x] = True
    return mask


def _walled(body, **kw):
    """A fixed-source Gaussian among walls, a body with its smallest sensor set."""
    chosen = (sensors.Concentration(), sensors.Heading()) if body.oriented else (sensors.Concentration(),)
    return Scenario(grid_size=(6, 5), plume=plumes.Gaussian(source=(4, 1), sigma=2.0), action_model=body,
                    sensors=chosen, walls=_walls_mask(6, 5, (2, 1), (2, 2), (2, 3), (4, 3)), n_agents=3,
                    max_steps=8, goal_radius=1.0, **kw)


def _walled_movie_continuous():
    """tests/models/test_reference.py's movie and continuous body (every sensor) among walls."""
    sc = simple_scenario("movie", "continuous", n_agents=3, max_steps=8, goal_radius=1.5)
    return sc.replace(walls=_walls_mask(11, 7, (4, 2), (4, 3), (4, 4), (7, 1), (8, 5)),
                      reward=rewards.StepPenalty(-0.5, 1.0))


def _walled_3d(body):
    from test_movie_3d import volumes

    from models_reference import HISTORY_STEPS

    mask = np.zeros((4, 5, 6), bool)
    mask[1:3, 1:4, 3] = True
    return Scenario(plume=plumes.Movie(volumes(seed=4), source=(4.0, 2.0, 1.0)), action_model=body,
                    sensors=(sensors.Concentration(), sensors.Binary(0.5), sensors.Wind(0.3),
                             sensors.History(sensors.Concentration(), steps=HISTORY_STEPS)),
                    reward=rewards.StepPenalty(-0.25, 1.0), walls=mask, n_agents=3, max_steps=8, goal_radius=1.0)


@pytest.mark.parametrize("make", [lambda: _walled(bodies.Oriented(turn_degrees=45.0)), lambda: _walled(bodies.RunTumble()),
                                  _walled_movie_continuous, lambda: _walled_3d(bodies.Moore()),
                                  lambda: _walled_3d(bodies.Cardinal())],
                         ids=["oriented-2d", "run_tumble-2d", "movie-continuous-2d", "movie-moore-3d",
                              "movie-cardinal-3d"])
def test_each_body_and_sensor_steps_among_walls_as_the_reference(make):
    closed_loop(make(), num_worlds=3, steps=20)


def _moving_sources(body, team=False):
    """Two drawn sources that walk (several and moving at once) and a body with, for the continuous
    one, every sensor of tests/models/test_reference.py's set."""
    plume = plumes.Gaussian(source="random", n_sources=2, sigma=2.0, wind=(0.5, -0.25),
                            source_motion=sources.RandomWalk(speed=0.6, persistence=3.0))
    if body.continuous:
        from models_reference import sensor_set

        chosen = sensor_set(noise_std=0.5)
    else:
        chosen = (sensors.Concentration(), sensors.Heading()) if body.oriented else (sensors.Concentration(),)
    return Scenario(grid_size=(7, 5), plume=plume, action_model=body, sensors=chosen, n_agents=3, team=team,
                    reward=rewards.StepPenalty(-0.5, 1.0), max_steps=8, goal_radius=1.5)


@pytest.mark.parametrize("team", [False, True], ids=["alone", "team"])
@pytest.mark.parametrize("body", [bodies.Continuous(max_speed=1.5), bodies.Oriented(turn_degrees=45.0),
                                  bodies.RunTumble()], ids=lambda b: b.name)
def test_each_body_and_sensor_steps_among_several_moving_sources_as_the_reference(body, team):
    closed_loop(_moving_sources(body, team), steps=18)
