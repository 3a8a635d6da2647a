"""Seed 002, the Gymnasium API contract: every test it sketches, then its stated invariants."""

import warnings

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env

from plume_multi import PlumeSearchEnv, StateError

from single_agent_reference import MOVES, expected_start, path_to, seed_with_start


# ------------------------------------------------------------------ the sketched tests
def test_gymnasium_api_compliance():
    """Environment satisfies Gymnasium API."""
    env = PlumeSearchEnv()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env)  # Official Gymnasium checker
    # Built directly (not by gymnasium.make) the env has no spec, so the checker cannot build
    # it in its other render modes and says so; that must be its only remark.
    # tests/envs/test_single.py runs it through gymnasium.make with warnings as errors.
    messages = [str(w.message) for w in caught]
    assert all("not having a spec" in m for m in messages), messages


def test_observation_space_consistency():
    """All observations match declared space."""
    env = PlumeSearchEnv()
    obs, info = env.reset(seed=42)

    assert obs in env.observation_space

    for _ in range(100):
        action = env.action_space.sample()
        obs, reward, terminated, truncated, info = env.step(action)
        assert obs in env.observation_space

        if terminated or truncated:
            break


def test_action_space_validation():
    """Invalid actions rejected."""
    env = PlumeSearchEnv()
    env.reset(seed=42)

    # Valid actions
    for action in [0, 1, 2, 3]:
        env.reset(seed=42)
        result = env.step(action)
        assert len(result) == 5

    # Invalid actions
    for invalid in [-1, 4, 100]:
        env.reset(seed=42)
        with pytest.raises(ValueError):
            env.step(invalid)


def test_info_keys_present():
    """Info dict has required keys."""
    env = PlumeSearchEnv()
    obs, info = env.reset(seed=42)

    assert "seed" in info

    obs, reward, term, trunc, info = env.step(0)
    assert "step_count" in info
    assert "total_reward" in info
    assert "goal_reached" in info


def test_determinism():
    """Same seed produces same trajectory."""
    env1 = PlumeSearchEnv()
    env2 = PlumeSearchEnv()

    obs1, _ = env1.reset(seed=42)
    obs2, _ = env2.reset(seed=42)

    np.testing.assert_array_equal(obs1["agent_position"], obs2["agent_position"])

    actions = [0, 1, 2, 3, 0]
    for action in actions:
        obs1, r1, t1, tr1, i1 = env1.step(action)
        obs2, r2, t2, tr2, i2 = env2.step(action)

        np.testing.assert_array_equal(obs1["agent_position"], obs2["agent_position"])
        assert r1 == r2
        assert t1 == t2


# ------------------------------------------------------------------ the contract's other clauses
def test_action_space_is_discrete_4_with_the_movement_mapping():
    w, h = 9, 6
    env = PlumeSearchEnv(grid_size=(w, h), source_location=(0, 0))
    assert env.action_space == spaces.Discrete(4)
    seed = seed_with_start(lambda p: 0 < p[0] < w - 1 and 0 < p[1] < h - 1, w, h)
    for action, (dx, dy) in MOVES.items():
        env.reset(seed=seed)
        x, y = expected_start(seed, w, h)
        obs, *_ = env.step(action)
        assert tuple(obs["agent_position"]) == (x + dx, y + dy)


def test_observation_space_structure():
    w, h = 11, 5
    env = PlumeSearchEnv(grid_size=(w, h))
    space = env.observation_space
    assert isinstance(space, spaces.Dict)
    assert set(space.spaces) == {"agent_position", "concentration_field", "source_location"}
    for key in ("agent_position", "source_location"):
        assert space[key].shape == (2,) and space[key].dtype == np.int32
        assert (space[key].low == 0).all() and (space[key].high == max(w, h) - 1).all()
    field = space["concentration_field"]
    assert field.shape == (h, w) and field.dtype == np.float32
    assert (field.low == 0).all() and (field.high == 1).all()
    assert env.observation_space is space and env.action_space is env.action_space  # built once


def test_observation_invariants():
    """Observation invariants I1-I8 (keys, dtypes, no NaN/Inf) on reset and every step."""
    env = PlumeSearchEnv(grid_size=(13, 7), max_steps=30)
    obs, _ = env.reset(seed=5)
    rng = np.random.default_rng(0)
    for k in range(31):
        assert set(obs) == {"agent_position", "concentration_field", "source_location"}
        assert obs["agent_position"].dtype == np.int32
        assert obs["concentration_field"].dtype == np.float32
        assert obs["source_location"].dtype == np.int32
        for value in obs.values():
            assert np.isfinite(value).all()
        field = obs["concentration_field"]
        assert field.shape == (7, 13) and field.min() >= 0 and field.max() <= 1
        if k < 30:
            obs, _, terminated, truncated, _ = env.step(int(rng.integers(4)))
            if terminated or truncated:
                obs, _ = env.reset()


def test_reset_info_contract():
    env = PlumeSearchEnv()
    _, info = env.reset(seed=42)
    assert info["seed"] == 42
    assert info["step_count"] == 0
    _, info = env.reset()
    assert isinstance(info["seed"], int) and 0 <= info["seed"] < 2**31


def test_step_return_types_and_info_invariants():
    env = PlumeSearchEnv(grid_size=(16, 9), goal_radius=3.0, max_steps=25)
    env.reset(seed=1)
    total, steps, ends = 0.0, 0, []
    for k in range(60):
        obs, reward, terminated, truncated, info = env.step(k % 4)
        assert type(reward) is float and reward in (0.0, 1.0)
        assert type(terminated) is bool and type(truncated) is bool
        steps += 1
        total += reward
        assert info["step_count"] == steps
        assert info["total_reward"] == total >= 0.0
        assert info["goal_reached"] is terminated
        if terminated or truncated:
            ends.append((terminated, truncated))
            env.reset()
            total, steps = 0.0, 0
    assert ends, "no episode ended: the test would check nothing about the end flags"


def test_terminated_and_truncated_on_the_same_step():
    """Edge case: the goal reached on the last step; both flags True, the state TERMINATED."""
    w, h, source = 8, 3, (5, 1)
    seed = seed_with_start(lambda p: abs(p[0] - source[0]) + abs(p[1] - source[1]) >= 2, w, h)
    path = path_to(expected_start(seed, w, h), source)
    env = PlumeSearchEnv(grid_size=(w, h), source_location=source, max_steps=len(path))
    env.reset(seed=seed)
    for action in path:
        _, reward, terminated, truncated, _ = env.step(action)
    assert (reward, terminated, truncated) == (1.0, True, True)
    assert env.state.name == "TERMINATED"


def test_render_metadata():
    assert PlumeSearchEnv.metadata["render_fps"] == 30
    assert set(PlumeSearchEnv.metadata["render_modes"]) == {"human", "rgb_array"}


def test_render_rgb_array_shape():
    env = PlumeSearchEnv(grid_size=(10, 4), render_mode="rgb_array")
    with pytest.raises(StateError):
        env.render()  # P2: reset() first
    env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (4, 10, 3) and frame.dtype == np.uint8


def test_close_is_idempotent_and_final():
    env = PlumeSearchEnv()
    env.close()
    env.close()
    with pytest.raises(StateError):
        env.reset()
    with pytest.raises(StateError):
        env.step(0)
