"""Seed 000's transition table, one test per transition (by the names of its test list)."""

import warnings

import pytest

from plume_multi import PlumeSearchEnv, StateError
from plume_multi.envs.single import EnvironmentState

from single_agent_reference import DOWN, LEFT, RIGHT, expected_start, path_to, seed_with_start, small_env

W, H = 9, 5  # non-square, so that an x/y mix-up shows
SOURCE = (6, 3)
SMALLEST = 1e-45  # a tiny goal radius: only the source cell counts


def env_on_grid(**kwargs):
    return PlumeSearchEnv(grid_size=(W, H), source_location=SOURCE, **kwargs)


def far_seed(min_distance):
    """A seed whose start is at least ``min_distance`` cells (Manhattan) from the source."""
    return seed_with_start(lambda p: abs(p[0] - SOURCE[0]) + abs(p[1] - SOURCE[1]) >= min_distance, W, H)


def test_initial_state_is_created():
    env = env_on_grid()
    assert env.state is EnvironmentState.CREATED
    assert env.episode_count == 0 and env.step_count == 0 and env.agent_state is None


def test_cannot_step_before_reset():
    env = env_on_grid()
    with pytest.raises(StateError, match=r"step before reset\(\): call reset\(\) first"):
        env.step(0)
    assert env.state is EnvironmentState.CREATED


def test_reset_transitions_to_ready():
    env = env_on_grid()
    obs, info = env.reset(seed=3)
    assert env.state is EnvironmentState.READY
    assert tuple(obs["agent_position"]) == expected_start(3, W, H) == info["agent_xy"]


def test_step_keeps_ready_when_not_terminal():
    seed = far_seed(3)
    env = env_on_grid(max_steps=10)
    env.reset(seed=seed)
    _, _, terminated, truncated, info = env.step(LEFT if expected_start(seed, W, H)[0] <= SOURCE[0] else RIGHT)
    assert (terminated, truncated) == (False, False)
    assert env.state is EnvironmentState.READY and info["step_count"] == 1


def test_step_transitions_to_terminated_on_goal():
    seed = far_seed(2)
    env = env_on_grid()
    env.reset(seed=seed)
    path = path_to(expected_start(seed, W, H), SOURCE)
    for action in path[:-1]:
        _, reward, terminated, _, _ = env.step(action)
        assert (reward, terminated, env.state) == (0.0, False, EnvironmentState.READY)
    _, reward, terminated, truncated, info = env.step(path[-1])
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["goal_reached"] is True and info["agent_xy"] == SOURCE
    assert env.state is EnvironmentState.TERMINATED


def test_step_transitions_to_truncated_on_timeout():
    # Start at least 4 cells from the source and walk away for 3 steps: the goal cannot be reached.
    seed = far_seed(4)
    env = env_on_grid(max_steps=3)
    env.reset(seed=seed)
    x, y = expected_start(seed, W, H)
    away = LEFT if x <= SOURCE[0] else RIGHT
    flags = [env.step(away)[2:4] for _ in range(3)]
    assert flags == [(False, False), (False, False), (False, True)]
    assert env.state is EnvironmentState.TRUNCATED


def _finish(env, seed, terminated_wanted):
    env.reset(seed=seed)
    if terminated_wanted:
        for action in path_to(expected_start(seed, W, H), SOURCE):
            env.step(action)
    else:
        while env.state is EnvironmentState.READY:
            env.step(DOWN)


def test_can_reset_from_terminated():
    env = env_on_grid()
    _finish(env, far_seed(2), terminated_wanted=True)
    assert env.state is EnvironmentState.TERMINATED
    obs, info = env.reset(seed=11)
    assert env.state is EnvironmentState.READY
    assert info["step_count"] == 0 and info["goal_reached"] is False
    assert tuple(obs["agent_position"]) == expected_start(11, W, H)


def test_can_reset_from_truncated():
    env = env_on_grid(max_steps=2)
    _finish(env, far_seed(4), terminated_wanted=False)
    assert env.state is EnvironmentState.TRUNCATED
    _, info = env.reset(seed=12)
    assert env.state is EnvironmentState.READY and info["episode"] == 2


def _env_in(state):
    env = small_env(max_steps=50)
    if state is EnvironmentState.CREATED:
        return env
    if state is EnvironmentState.CLOSED:
        env.close()
        return env
    seed = seed_with_start(lambda p: p != (5, 1), 7, 4)
    env.reset(seed=seed)
    if state is EnvironmentState.TERMINATED:
        for action in path_to(expected_start(seed, 7, 4), (5, 1)):
            if env.state is EnvironmentState.TERMINATED:
                break
            env.step(action)
    elif state is EnvironmentState.TRUNCATED:
        env = small_env(max_steps=1, goal_radius=SMALLEST)
        env.reset(seed=seed_with_start(lambda p: abs(p[0] - 5) + abs(p[1] - 1) >= 2, 7, 4))
        env.step(0)
    assert env.state is state
    return env


@pytest.mark.parametrize("state", list(EnvironmentState))
def test_close_from_any_state(state):
    env = _env_in(state)
    env.close()
    assert env.state is EnvironmentState.CLOSED


def test_cannot_reset_after_close():
    env = env_on_grid()
    env.reset(seed=1)
    env.close()
    with pytest.raises(StateError, match="Cannot reset: the environment is closed; create a new one"):
        env.reset(seed=1)
    assert env.state is EnvironmentState.CLOSED


def test_cannot_step_after_close():
    env = env_on_grid()
    env.reset(seed=1)
    env.close()
    with pytest.raises(StateError, match="Cannot step: the environment is closed; create a new one"):
        env.step(0)
    assert env.state is EnvironmentState.CLOSED


def test_close_is_idempotent():
    env = env_on_grid(render_mode="rgb_array")
    env.reset(seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env.close()
        env.close()
        env.close()
    assert env.state is EnvironmentState.CLOSED
