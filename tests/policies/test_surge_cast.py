"""policies.SurgeCast: the rule on hand-made observations for every body it steers, its refusals,
and a run in the engine (the oriented combination of tests/cli/test_cli_models.py)."""

from __future__ import annotations

import numpy as np
import pytest

from plume_multi import Scenario, Simulator, ValidationError, bodies, plumes, sensors
from plume_multi.policies import RandomPolicy, SurgeCast
from plume_multi.policies.surge_cast import FAR


def _moth_scenario():
    """examples/surge_cast.py's: puffs, a continuous body, concentration, two antennae, wind."""
    return Scenario(grid_size=(200, 100), plume=plumes.Puffs(source=(10, 50)),
                    action_model=bodies.Continuous(max_speed=0.2, max_turn_degrees=30.0),
                    sensors=(sensors.Concentration(), sensors.Antennae(angles=(30.0, -30.0)), sensors.Wind()))


def test_continuous_body_surges_toward_the_stronger_antenna_and_casts_without_odour():
    policy = SurgeCast(_moth_scenario(), threshold=0.5)
    obs = np.array([
        [0.0, 2.0, 0.1, -0.04, 0.0],   # whiff on the left antenna, wind from ahead: surge, veer left
        [0.0, 0.0, 0.0, 0.0, -0.04],   # no odour, wind from the left: cast (crosswind, clipped turn)
        [0.9, 0.0, 0.0, 0.04, 0.0],    # whiff at the body, wind from behind: turn round (clipped)
    ], dtype=np.float32)
    speed, turn = policy(obs).T
    assert np.all(speed == 0.2)
    assert turn[0] == 15.0 and abs(turn[1]) == 30.0 and abs(turn[2]) == 30.0
    assert policy._memory["since_hit"].tolist() == [0, FAR + 1, 0]
    # in a team (one object for both agents of each world): the same (speed, turn) rows
    from plume_multi.policies import Team

    shared = SurgeCast(_moth_scenario(), threshold=0.5)
    rows = np.concatenate([obs, obs[::-1]])  # two worlds of three agents
    together = Team([shared] * 3)(rows)
    np.testing.assert_array_equal(together, SurgeCast(_moth_scenario(), threshold=0.5)(rows))
    assert together.shape == (6, 2) and together.dtype == np.float64


def test_oriented_and_table_bodies_head_upwind_on_a_whiff_and_cast_crosswind():
    oriented = Scenario(action_model=bodies.Oriented(turn_degrees=45),
                        sensors=(sensors.Concentration(), sensors.Wind(), sensors.Heading()))
    # wind (forward, left) blowing from ahead, from the left, from the right; then no whiff
    obs = np.array([[1.0, -1.0, 0.0, 1.0, 0.0], [1.0, 0.0, -1.0, 1.0, 0.0], [1.0, 0.0, 1.0, 1.0, 0.0]], np.float32)
    assert SurgeCast(oriented)(obs).tolist() == [0, 1, 2]  # FORWARD, LEFT, RIGHT
    # without a wind sensor: a known upwind in the grid's frame and the heading (here 90 degrees)
    known = Scenario(action_model=bodies.Oriented(turn_degrees=45), sensors=(sensors.Binary(0.5), sensors.Heading()))
    assert SurgeCast(known, upwind=90.0)(np.array([[1.0, 0.0, 1.0]], np.float32)).tolist() == [0]
    assert SurgeCast(known, upwind=180.0)(np.array([[1.0, 0.0, 1.0]], np.float32)).tolist() == [1]
    for body, surge, casts in (("cardinal", 3, {0, 2}), ("moore", 6, {0, 4})):
        sc = Scenario(action_model=body, sensors=(sensors.Concentration(), sensors.Wind()))
        policy = SurgeCast(sc, cast_angle=75.0)
        wind_plus_x = np.array([[1.0, 1.0, 0.0]], np.float32)  # a whiff; the wind blows toward +x
        assert policy(wind_plus_x).tolist() == [surge]  # LEFT (cardinal 3, moore 6): upwind
        quiet = [SurgeCast(sc, surge=1, seed=s)(np.array([[0.0, 1.0, 0.0]], np.float32))[0] for s in range(8)]
        assert set(quiet) == casts  # 180 +- 75 degrees: UP or DOWN, never a diagonal nor "stay"


def test_casting_legs_lengthen_by_a_quarter_up_to_twice_the_first():
    sc = Scenario(sensors=(sensors.Concentration(), sensors.Wind()))
    policy = SurgeCast(sc, surge=1, cast=4)
    sides = []
    for _ in range(40):
        policy(np.array([[0.0, 1.0, 0.0]], np.float32))
        sides.append(policy._memory["side"][0])
    flips = [t + 1 for t in range(1, 40) if sides[t] != sides[t - 1]]
    assert flips == [4, 9, 15, 22, 30, 38]  # legs of 4, 5, 6, 7, then 8 steps (twice the first)
    policy.reset()
    assert policy._memory["cast_left"][0] == 4 and policy._memory["since_hit"][0] == FAR


@pytest.mark.parametrize("scenario, kwargs, message", [
    (lambda: Scenario(action_model=bodies.RunTumble(), sensors=(sensors.Concentration(), sensors.Wind())), {},
     "the body RunTumble cannot turn to a chosen direction"),
    (lambda: Scenario(sensors=(sensors.Position(), sensors.Wind())), {}, "give no odour reading"),
    (lambda: Scenario(sensors=(sensors.Concentration(),)), {}, "no sensors.Wind to tell upwind"),
    (lambda: Scenario(action_model=bodies.Oriented(), sensors=(sensors.Concentration(),)), {"upwind": 0.0},
     "add sensors.Heading"),
    (lambda: Scenario(sensors=(sensors.Concentration(), sensors.Wind())), {"threshold": float("nan")},
     "SurgeCast.threshold"),
    (lambda: Scenario(sensors=(sensors.Concentration(), sensors.Wind())), {"cast": 0}, "SurgeCast.cast"),
    (lambda: "a scenario", {}, "SurgeCast.scenario"),
])
def test_what_it_cannot_use_is_refused_by_name(scenario, kwargs, message):
    with pytest.raises(ValidationError, match=message):
        SurgeCast(scenario(), **kwargs)
    sc = Scenario(sensors=(sensors.Concentration(), sensors.Wind()))
    with pytest.raises(ValidationError, match=r"expected \(M, 3\)"):
        SurgeCast(sc)(np.zeros((2, 4), np.float32))


def test_surge_cast_finds_a_windy_plume_more_often_than_random_moves():
    sc = Scenario(grid_size=(24, 16), n_agents=3, plume=plumes.Gaussian(sigma=5, wind=(1.0, 0.0)),
                  action_model=bodies.Oriented(turn_degrees=45), goal_radius=2.0, max_steps=80,
                  start_region=((16, 5), (22, 11)),
                  sensors=(sensors.Concentration(), sensors.Antennae(distance=2), sensors.Wind(), sensors.Heading()))
    found = {}
    for name, policy in (("surge-cast", SurgeCast(sc, threshold=0.3, surge=8, cast=6)), ("random", RandomPolicy(3, seed=0))):
        sim = Simulator(sc, num_worlds=32, autoreset="disabled")
        obs = sim.reset(seed=0)
        for _ in range(sc.max_steps):
            obs, reward, terminated, truncated = sim.step(policy(obs))
        found[name] = terminated.mean()
    assert found["surge-cast"] > max(0.5, 3 * found["random"]), found  # 65 % against 16 %
