"""The front-ends over 3-D scenarios: spaces from the sensors and the body, outputs equal to the
``Simulator``'s (checked against the plain reference in tests/models/test_three_dimensions.py),
action masks, pictures; the single-agent contract stays 2-D.

Two compiled combinations, both shared with tests/models/test_three_dimensions.py: the 3-D default
scenario (one agent per world) and the table body with every 3-D sensor (several agents).
"""

import numpy as np
import pytest
from gymnasium import spaces

import plume_multi
from plume_multi import Scenario, Simulator, plumes, sensors
from plume_multi import bodies as A
from plume_multi.envs._core import action_space, move_masks
from plume_multi.errors import ValidationError

GRID = (7, 6, 5)  # no two sides equal: axis mix-ups show


def table_options(k=1):
    """The table combination of tests/models/test_three_dimensions.py (its sensor kinds, in order)."""
    return dict(grid_size=GRID, plume=plumes.Gaussian(source="random", sigma=2.0), action_model=A.Moore(),
                sensors=(sensors.Concentration(), sensors.Position(),
                         sensors.History(sensors.Concentration(), steps=3), sensors.Neighbours(k)),
                goal_radius=1.5, max_steps=9)


def masks_by_hand(pos, moves, grid, free):
    """For each row and move: does the clamped move change the cell? (rows where free: all True)."""
    out = np.zeros((len(pos), len(moves)), bool)
    for i, cell in enumerate(pos):
        for k, move in enumerate(moves):
            moved = [min(max(c + m, 0), n - 1) for c, m, n in zip(cell, move, grid)]
            out[i, k] = moved != list(cell)
        if free[i] or not out[i].any():
            out[i] = True
    return out


def test_spaces_of_3d_scenarios_come_from_the_sensors_and_the_body():
    sc = Scenario(grid_size=GRID, n_agents=3, sensors=(sensors.Concentration(), sensors.Position(), sensors.Neighbours(2)))
    assert action_space(sc) == spaces.Discrete(6)
    assert action_space(Scenario(grid_size=GRID, action_model="moore")) == spaces.Discrete(27)
    box = action_space(Scenario(grid_size=GRID, action_model=A.Continuous(max_speed=2.5)))
    assert box.shape == (3,) and box.low.tolist() == [-2.5] * 3 and box.high.tolist() == [2.5] * 3
    low, high = sc.observation_bounds()
    assert low.tolist() == [0, 0, 0, 0] + [-1] * 6 and high.tolist() == [1] * 10
    assert sc.action_names == ("UP", "RIGHT", "DOWN", "LEFT", "RISE", "SINK")


def test_move_masks_in_3d_are_the_moves_that_change_the_cell():
    rng = np.random.default_rng(0)
    moves = Scenario(grid_size=GRID, action_model="moore").moves()
    pos = np.stack([rng.integers(0, n, 40) for n in GRID], axis=1).astype(np.int32)
    pos[:3] = [[0, 0, 0], [6, 5, 4], [3, 0, 4]]  # corners and edges
    free = rng.random(40) < 0.2
    np.testing.assert_array_equal(move_masks(pos, moves, GRID, free), masks_by_hand(pos, moves, GRID, free))
    single = move_masks(np.zeros((1, 3), np.int32), moves, (1, 1, 1), np.zeros(1, bool))
    assert single.all()  # no move changes the only cell: every action allowed


def test_vector_env_runs_a_3d_scenario_as_the_simulator_does():
    envs = plume_multi.vector_env(4, grid_size=GRID, max_steps=8, render_mode="rgb_array")
    sim = Simulator(Scenario(grid_size=GRID, max_steps=8), num_worlds=4)
    assert envs.single_observation_space.shape == (4,) and envs.single_action_space == spaces.Discrete(6)
    obs, info = envs.reset(seed=9)
    np.testing.assert_array_equal(obs, sim.reset(seed=9))
    rng = np.random.default_rng(1)
    for _ in range(12):
        actions = rng.integers(0, 6, 4)
        got = envs.step(actions)
        want = sim.step(actions)
        for g, w in zip(got[:4], want):
            np.testing.assert_array_equal(g, w)
        assert envs.agent_positions.shape == (4, 3)
        np.testing.assert_array_equal(envs.agent_positions, sim.positions)
        free = sim.state.world_done
        np.testing.assert_array_equal(got[4]["action_mask"], masks_by_hand(sim.positions, sim.scenario.moves(), GRID, free))
    frames = envs.render()
    assert len(frames) == 4 and all(f.dtype == np.uint8 and f.ndim == 3 and f.shape[2] == 3 for f in frames)
    with pytest.raises(ValidationError, match="obs_type: got 'dict'.*3-D worlds take obs_type='compact'"):
        plume_multi.vector_env(2, grid_size=GRID, obs_type="dict")


def test_multi_agent_vector_env_and_parallel_env_run_3d_teams():
    options = table_options(k=2)
    envs = plume_multi.multi_agent_vector_env(num_worlds=2, n_agents=3, render_mode="rgb_array", **options)
    sim = Simulator(Scenario(n_agents=3, **options), num_worlds=2)
    assert envs.single_observation_space.shape == (1 + 3 + 3 + 6,) and envs.single_action_space.n == 27
    obs, _ = envs.reset(seed=4)
    np.testing.assert_array_equal(obs, sim.reset(seed=4))
    rng = np.random.default_rng(2)
    for _ in range(5):
        actions = rng.integers(0, 27, 6)
        got = envs.step(actions)
        np.testing.assert_array_equal(got[0], sim.step(actions)[0])
        masks = envs.action_masks()
        np.testing.assert_array_equal(masks, masks_by_hand(sim.positions, sim.scenario.moves(), GRID, ~envs.active))
    assert envs.agent_positions.shape == (6, 3)
    assert len(envs.render()) == 2

    env = plume_multi.parallel_env(n_agents=3, render_mode="rgb_array", max_cycles=9,
                                   **{key: value for key, value in options.items() if key != "max_steps"})
    sim = Simulator(Scenario(n_agents=3, **options), num_worlds=1, autoreset="disabled")
    observations, _ = env.reset(seed=6)
    expected = sim.reset(seed=6)
    for n, agent in enumerate(env.possible_agents):
        np.testing.assert_array_equal(observations[agent], expected[n])
        assert env.action_space(agent) == spaces.Discrete(27)
    state = env.state()
    assert state.shape == (5 * 3 + 1,)  # (concentration, x, y, z, active) per agent, then time
    np.testing.assert_array_equal(state[:-1].reshape(3, 5)[:, :4], expected[:, :4])
    observations, *_ = env.step({agent: 26 for agent in env.agents})  # everyone stays
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.shape[2] == 3
    with pytest.raises(ValidationError, match="27 .*RISE"):
        env.step({agent: 27 for agent in env.agents})


def test_the_single_agent_env_stays_2d():
    with pytest.raises(ValidationError, match=r"PlumeSearchEnv grid_size: got \(4, 4, 4\); expected \(width, height\)"):
        plume_multi.PlumeSearchEnv(grid_size=(4, 4, 4))
    # a 0-d or 2-d array is no size of either kind: refused by name, never a TypeError of len()
    for bad in (np.array(2), np.array([[4, 4], [4, 4]])):
        with pytest.raises(ValidationError, match="PlumeSearchEnv grid_size: got"):
            plume_multi.PlumeSearchEnv(grid_size=bad)
