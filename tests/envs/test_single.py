"""PlumeSearchEnv: determinism, checkers, parity with the batched engine, rendering, components,
configuration, registration and bad input."""

import importlib.util
import math
import pathlib
import sys
import warnings

import matplotlib

matplotlib.use("Agg")  # the human window is drawn off-screen in the tests

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env
from hypothesis import given, strategies as st

import plume_multi
from plume_multi import (ComponentError, PlumeSearchEnv, RenderingError, Scenario, Simulator, StateError,
                         ValidationError)
from plume_multi.viz.render import render_frame
from plume_multi.envs.components import (AgentState, CompactObservation, DiscreteGridActions,
                                             FullFieldObservation, SparseGoalReward, StaticGaussianPlume)
from plume_multi.envs.single import EnvironmentState

from single_agent_reference import (MOVES, RIGHT, SMALLEST_FLOAT32, ReferenceEpisode, expected_start,
                                    gaussian_field, gaussian_value, path_to, seed_with_start)

ROOT = pathlib.Path(__file__).resolve().parents[2]
seeds = st.integers(0, 2**31 - 1)


def quiet_step(env, action):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # over-running an episode warns (tested below)
        return env.step(action)


@st.composite
def small_setups(draw, max_side=14):
    """Non-square-capable grids, any source, goal radii from 'the source cell only' to a few cells."""
    w = draw(st.integers(1, max_side))
    h = draw(st.integers(1, max_side))
    return dict(grid_size=(w, h), source_location=(draw(st.integers(0, w - 1)), draw(st.integers(0, h - 1))),
                goal_radius=draw(st.sampled_from([SMALLEST_FLOAT32, 1.0, 1.5, 2.0, 2.9])),
                max_steps=draw(st.integers(1, 15)), plume_params={"sigma": draw(st.floats(0.5, 20))})


# ------------------------------------------------------------------ starts and determinism
def test_seed_42_starts_at_11_99():
    _, info = PlumeSearchEnv().reset(seed=42)
    assert info["agent_xy"] == (11, 99)


def test_defaults_are_the_contracts():
    env = PlumeSearchEnv()
    sc = env.scenario
    assert (sc.grid_size, sc.source_location, sc.max_steps, sc.sigma) == ((128, 128), (64, 64), 1000, 12.0)
    assert sc.goal_radius == SMALLEST_FLOAT32 and env.render_mode is None
    obs, _ = env.reset(seed=0)
    np.testing.assert_array_equal(obs["concentration_field"], gaussian_field(128, 128, (64, 64), 12.0))
    assert obs["concentration_field"][64, 64] == 1.0


@given(seed=seeds, w=st.integers(1, 2048), h=st.integers(1, 2048))
def test_start_is_numpys_draw(seed, w, h):
    env = PlumeSearchEnv(grid_size=(w, h))
    obs, info = env.reset(seed=seed)
    assert info["agent_xy"] == tuple(obs["agent_position"].tolist()) == expected_start(seed, w, h)


@given(seed=seeds)
def test_reset_determinism(seed):
    """Same seed -> identical initial state (seed 000)."""
    (obs1, info1), (obs2, info2) = PlumeSearchEnv().reset(seed=seed), PlumeSearchEnv().reset(seed=seed)
    for key in obs1:
        np.testing.assert_array_equal(obs1[key], obs2[key])
    assert info1 == info2 and info1["seed"] == seed


@given(seed=seeds, actions=st.lists(st.integers(0, 3), max_size=60))
def test_episode_determinism(seed, actions):
    """Same seed + actions -> identical trajectory (seed 000; 0..3: the 9 actions are not this env's)."""
    env1, env2 = PlumeSearchEnv(grid_size=(40, 23)), PlumeSearchEnv(grid_size=(40, 23))
    env1.reset(seed=seed)
    env2.reset(seed=seed)
    for action in actions:
        obs1, *rest1 = quiet_step(env1, action)
        obs2, *rest2 = quiet_step(env2, action)
        assert rest1 == rest2
        for key in obs1:
            np.testing.assert_array_equal(obs1[key], obs2[key])


@given(setup=small_setups(), seed=seeds, actions=st.lists(st.integers(0, 3), max_size=25))
def test_episode_follows_the_contract_rules(setup, seed, actions):
    """Every step against a plain-Python model of the contract (moves, clamp, goal, flags, info)."""
    env = PlumeSearchEnv(**setup)
    w, h = setup["grid_size"]
    src = setup["source_location"]
    sigma = setup["plume_params"]["sigma"]
    ref = ReferenceEpisode(w, h, src, setup["goal_radius"], setup["max_steps"], seed)
    obs, info = env.reset(seed=seed)
    assert info == {"seed": seed, "episode": 1, "step_count": 0, "total_reward": 0.0,
                    "goal_reached": ref.reset_goal_reached, "agent_xy": ref.pos, "plume_peak_xy": src, "distance_to_source": ref.distance()}
    np.testing.assert_array_equal(obs["concentration_field"], gaussian_field(w, h, src, sigma))
    for action in actions:
        obs, reward, terminated, truncated, info = quiet_step(env, action)
        pos, ref_reward, ref_term, ref_trunc = ref.step(action)
        assert (reward, terminated, truncated) == (ref_reward, ref_term, ref_trunc)
        assert info == {"seed": seed, "step_count": ref.step_count, "total_reward": ref.total_reward,
                        "goal_reached": ref.goal_reached, "agent_xy": pos, "plume_peak_xy": src,
                        "distance_to_source": ref.distance(),
                        "concentration_at_agent": gaussian_value(*pos, src, sigma)}
        assert obs["agent_position"].tolist() == list(pos) and obs["source_location"].tolist() == list(src)


def test_reset_reports_goal_reached_when_the_start_is_within_the_radius():
    """The reference's rule: distance <= goal_radius at reset gives info["goal_reached"] = True."""
    w, h, src, radius = 9, 7, (4, 3), 2.0
    inside = seed_with_start(lambda p: math.dist(p, src) <= radius, w, h)
    on_edge = seed_with_start(lambda p: math.dist(p, src) == radius, w, h)
    outside = seed_with_start(lambda p: math.dist(p, src) > radius, w, h)
    env = PlumeSearchEnv(grid_size=(w, h), source_location=src, goal_radius=radius)
    for seed, expected in ((inside, True), (on_edge, True), (outside, False)):
        _, info = env.reset(seed=seed)
        ref = ReferenceEpisode(w, h, src, radius, 1000, seed)
        assert info["agent_xy"] == ref.pos
        assert info["goal_reached"] is expected is ref.reset_goal_reached


@given(setup=small_setups(), seed=st.integers(0, 2**31 - 9), num_worlds=st.integers(1, 5),
       data=st.data())
def test_world_i_of_a_batch_replays_the_env_seeded_s_plus_i(setup, seed, num_worlds, data):
    """Parity: world i of Simulator(..., autoreset="disabled").reset(seed=s) == PlumeSearchEnv.reset(seed=s+i)."""
    steps = data.draw(st.lists(st.lists(st.integers(0, 3), min_size=num_worlds, max_size=num_worlds),
                               max_size=20))
    sc = Scenario(grid_size=setup["grid_size"], source_location=setup["source_location"],
                  goal_radius=setup["goal_radius"], max_steps=setup["max_steps"],
                  sigma=setup["plume_params"]["sigma"])
    sim = Simulator(sc, num_worlds=num_worlds, autoreset="disabled")
    sim.reset(seed=seed)
    envs = [PlumeSearchEnv(config=sc) for _ in range(num_worlds)]
    for i, env in enumerate(envs):
        obs, _ = env.reset(seed=seed + i)
        assert obs["agent_position"].tolist() == sim.positions[i].tolist()
    for actions in steps:
        sim_obs, sim_reward, sim_term, sim_trunc = sim.step(np.array(actions, dtype=np.int64))
        for i, env in enumerate(envs):
            obs, reward, terminated, truncated, info = quiet_step(env, actions[i])
            assert obs["agent_position"].tolist() == sim.positions[i].tolist()
            assert (reward, terminated, truncated) == (float(sim_reward[i]), bool(sim_term[i]), bool(sim_trunc[i]))
            assert info["concentration_at_agent"] == float(sim_obs[i, 0])
            assert info["step_count"] == int(sim.world_steps[i])


def test_reset_without_seed_draws_a_replayable_seed():
    env = PlumeSearchEnv(grid_size=(50, 30))
    obs, info = env.reset()
    seed = info["seed"]
    assert type(seed) is int and 0 <= seed < 2**31 and env.episode_seed == seed
    assert tuple(obs["agent_position"].tolist()) == expected_start(seed, 50, 30)
    # After a seeded reset, unseeded resets draw a deterministic sequence of seeds.
    a, b = PlumeSearchEnv(), PlumeSearchEnv()
    a.reset(seed=7)
    b.reset(seed=7)
    assert [a.reset()[1]["seed"] for _ in range(5)] == [b.reset()[1]["seed"] for _ in range(5)]


def test_reset_seeds_np_random_and_the_action_space():
    env = PlumeSearchEnv()
    env.reset(seed=123)
    assert env.np_random.bit_generator.state == np.random.default_rng(123).bit_generator.state
    samples = [env.action_space.sample() for _ in range(10)]
    reference = spaces.Discrete(4)
    reference.seed(123)
    assert samples == [reference.sample() for _ in range(10)]


def test_observations_are_fresh_arrays():
    env = PlumeSearchEnv(grid_size=(12, 7))
    returned = [env.reset(seed=3)[0]] + [env.step(a)[0] for a in (0, 1, 2)]
    internal = [env._sim.state.pos, env._sim.state.obs, env._sim.field]
    arrays = [value for obs in returned for value in obs.values()]
    for i, a in enumerate(arrays):
        for b in arrays[i + 1:] + internal:
            assert not np.shares_memory(a, b)
    returned[-1]["concentration_field"][:] = 0.5  # the user owns what was returned
    assert env.step(3)[0]["concentration_field"].max() == 1.0


def test_overrunning_an_episode_warns_once_and_stays_terminal():
    w, h, src = 9, 4, (6, 2)
    seed = seed_with_start(lambda p: abs(p[0] - src[0]) + abs(p[1] - src[1]) >= 2, w, h)
    env = PlumeSearchEnv(grid_size=(w, h), source_location=src, max_steps=100)
    env.reset(seed=seed)
    for action in path_to(expected_start(seed, w, h), src):
        env.step(action)
    assert env.state is EnvironmentState.TERMINATED
    with pytest.warns(UserWarning, match=r"TERMINATED.*reset\(\)") as record:
        results = [env.step(a) for a in (0, 1, 2, 3, 0)]
    assert len(record) == 1
    # The engine's rule: a finished agent stays where it is and earns nothing.
    assert [r[4]["agent_xy"] for r in results] == [src] * 5
    assert [r[1:3] for r in results] == [(0.0, True)] * 5
    assert results[-1][4]["step_count"] == len(path_to(expected_start(seed, w, h), src)) + 5
    assert env.state is EnvironmentState.TERMINATED
    env.reset(seed=seed)
    assert env.state is EnvironmentState.READY


def test_a_truncated_agent_keeps_moving_when_overrun():
    env = PlumeSearchEnv(grid_size=(20, 20), source_location=(19, 19), max_steps=1)
    env.reset(seed=seed_with_start(lambda p: p[0] < 10 and p[1] < 10, 20, 20))
    x, y = env.step(RIGHT)[4]["agent_xy"]
    assert env.state is EnvironmentState.TRUNCATED
    with pytest.warns(UserWarning, match="TRUNCATED"):
        _, _, terminated, truncated, info = env.step(RIGHT)
    assert info["agent_xy"] == (x + 1, y) and (terminated, truncated) == (False, True)
    assert env.state is EnvironmentState.TRUNCATED


# ------------------------------------------------------------------ checkers
@pytest.mark.parametrize("kwargs", [
    {},
    {"render_mode": "rgb_array", "grid_size": (31, 17)},
    {"render_mode": "human", "grid_size": (9, 5)},
    {"observation_model": CompactObservation(), "grid_size": (12, 5)},
])
def test_gymnasium_check_env_with_warnings_as_errors(kwargs):
    env = gymnasium.make("PlumeSearch-v0", **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    env.close()


def test_stable_baselines3_check_env():
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sb3_check_env(PlumeSearchEnv(grid_size=(20, 12)))
    # SB3's only remark on the contract's Dict: it recommends flattening the (h, w) field.
    messages = [str(w.message) for w in caught]
    assert all("concentration_field has an unconventional shape" in m for m in messages), messages
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3_check_env(PlumeSearchEnv(grid_size=(20, 12), observation_model=CompactObservation()))


# ------------------------------------------------------------------ rendering
def test_render_rgb_array_marks_agent_and_source():
    w, h, src = 40, 24, (30, 6)
    seed = seed_with_start(lambda p: abs(p[0] - src[0]) + abs(p[1] - src[1]) > 10, w, h)
    env = PlumeSearchEnv(grid_size=(w, h), source_location=src, render_mode="rgb_array")
    env.reset(seed=seed)
    frame = env.render()
    assert frame.shape == (h, w, 3) and frame.dtype == np.uint8
    plain = render_frame(gaussian_field(w, h, src, 12.0))  # the heat map without markers
    changed = (frame != plain).any(axis=2)
    x, y = expected_start(seed, w, h)
    assert changed[h - 1 - y, x] and changed[h - 1 - src[1], src[0]]  # row 0 is the top (largest y)
    env.step(RIGHT)
    assert not np.array_equal(env.render(), frame)


def test_render_human_shows_a_window_and_close_releases_it():
    import matplotlib.pyplot as plt

    before = set(plt.get_fignums())
    env = PlumeSearchEnv(grid_size=(16, 8), render_mode="human")
    env.reset(seed=0)
    assert env.render() is None
    assert env.step(0)[0] is not None
    assert len(set(plt.get_fignums()) - before) == 1
    env.close()
    env.close()
    assert set(plt.get_fignums()) == before


def test_render_human_without_matplotlib_raises_rendering_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)  # "import matplotlib.pyplot" fails
    env = PlumeSearchEnv(render_mode="human")
    with pytest.raises(RenderingError, match="pip install"):
        env.reset(seed=0)
    assert env.state is EnvironmentState.CREATED  # raised before anything changed


def test_render_before_reset_and_after_close_raise():
    env = PlumeSearchEnv(render_mode="rgb_array")
    with pytest.raises(StateError, match=r"render before reset\(\)"):
        env.render()
    env.reset(seed=0)
    env.close()
    with pytest.raises(StateError, match="render: the environment is closed"):
        env.render()


def test_render_without_render_mode_warns_and_returns_none():
    env = PlumeSearchEnv()
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode=None"):
        assert env.render() is None


# ------------------------------------------------------------------ components
def _complete(role):
    """A minimal component of each role (a dict of members)."""
    box = spaces.Box(0, 1, (1,), np.float32)
    return {
        "action_processor": {"action_space": spaces.Discrete(4),
                             "process_action": lambda self, a, s, g: s,
                             "validate_action": lambda self, a: True,
                             "get_metadata": lambda self: {}},
        "observation_model": {"observation_space": box,
                              "get_observation": lambda self, st: np.zeros(1, np.float32),
                              "get_metadata": lambda self: {"required_state_keys": []}},
        "reward_fn": {"compute_reward": lambda self, p, a, n, pl: 0.0, "get_metadata": lambda self: {}},
        "plume_model": {"sample": lambda self, x, y, t=None: 0.0, "reset": lambda self, seed=None: None},
    }[role]


ROLE_MEMBERS = [(role, member) for role in ("action_processor", "observation_model", "reward_fn", "plume_model")
                for member in _complete(role)]


@pytest.mark.parametrize("role,member", ROLE_MEMBERS)
def test_component_missing_a_member_raises_component_error(role, member):
    members = dict(_complete(role))
    PlumeSearchEnv(**{role: type("Complete", (), members)()})  # the complete one is accepted
    del members[member]
    with pytest.raises(ComponentError, match=rf"{role}: Broken .*missing {member}"):
        PlumeSearchEnv(**{role: type("Broken", (), members)()})


def test_component_with_wrong_member_types_raises_component_error():
    members = dict(_complete("action_processor"), action_space="Discrete(4)", validate_action=True)
    with pytest.raises(ComponentError, match="action_space is a str.*validate_action is not callable"):
        PlumeSearchEnv(action_processor=type("Odd", (), members)())


def test_observation_model_requiring_unknown_state_keys_raises():
    members = dict(_complete("observation_model"), get_metadata=lambda self: {"required_state_keys": ["wind_field"]})
    with pytest.raises(ComponentError, match=r"\['wind_field'\].*available keys"):
        PlumeSearchEnv(observation_model=type("Windy", (), members)())


def test_full_field_observation_of_another_grid_raises():
    with pytest.raises(ComponentError, match="FullFieldObservation"):
        PlumeSearchEnv(grid_size=(10, 6), observation_model=FullFieldObservation((6, 10)))


class ConcentrationAndTime:
    """A user observation model: [concentration at the agent, fraction of the episode gone].

    It returns the same internal buffer every call: the env must still hand out fresh arrays."""

    def __init__(self, max_steps):
        self.max_steps = max_steps
        self.observation_space = spaces.Box(0, 1, (2,), np.float32)
        self.seen_keys = set()
        self._buffer = np.zeros(2, np.float32)

    def get_observation(self, env_state):
        self.seen_keys |= set(env_state)
        x, y = env_state["agent_state"].position
        self._buffer[:] = env_state["plume_field"][y, x], min(env_state["step_count"] / self.max_steps, 1.0)
        return self._buffer

    def get_metadata(self):
        return {"required_state_keys": ["agent_state", "plume_field", "step_count"]}


def test_user_observation_model_is_honoured():
    model = ConcentrationAndTime(max_steps=10)
    env = PlumeSearchEnv(grid_size=(15, 8), observation_model=model, max_steps=10)
    assert env.observation_space is model.observation_space
    obs0, info = env.reset(seed=4)
    obs1, _, _, _, info1 = env.step(RIGHT)
    x, y = info1["agent_xy"]
    assert obs0.tolist() == [gaussian_value(*info["agent_xy"], (7, 4), 12.0), 0.0]
    assert obs1.tolist() == [gaussian_value(x, y, (7, 4), 12.0), np.float32(0.1)]
    assert not np.shares_memory(obs0, obs1) and obs1 in env.observation_space
    assert model.seen_keys == {"agent_state", "plume_field", "step_count"}


class StepPenalty:
    """A user reward: -0.01 per step, +1 on reaching the source."""

    def __init__(self):
        self.calls = []

    def compute_reward(self, prev_state, action, next_state, plume):
        self.calls.append((prev_state, action, next_state, plume))
        return 1.0 if next_state.goal_reached else -0.01

    def get_metadata(self):
        return {"type": "step_penalty"}


def test_user_reward_function_is_honoured():
    w, h, src = 10, 5, (7, 2)
    seed = seed_with_start(lambda p: abs(p[0] - src[0]) + abs(p[1] - src[1]) >= 3, w, h)
    reward_fn = StepPenalty()
    env = PlumeSearchEnv(grid_size=(w, h), source_location=src, reward_fn=reward_fn)
    env.reset(seed=seed)
    path = path_to(expected_start(seed, w, h), src)
    results = [env.step(a) for a in path]
    assert [r[1] for r in results] == [-0.01] * (len(path) - 1) + [1.0]
    assert math.isclose(results[-1][4]["total_reward"], 1.0 - 0.01 * (len(path) - 1))
    assert env.state is EnvironmentState.TERMINATED  # termination stays the goal test
    prev, action, nxt, plume = reward_fn.calls[0]
    assert isinstance(prev, AgentState) and prev.position == expected_start(seed, w, h) and action == path[0]
    assert nxt.step_count == 1 and nxt.position == results[0][4]["agent_xy"] and plume is env.plume_model
    # Over-running the finished episode earns 0.0 without asking the reward function.
    calls = len(reward_fn.calls)
    assert quiet_step(env, 0)[1] == 0.0 and len(reward_fn.calls) == calls


def test_user_reward_that_is_not_finite_raises():
    members = dict(_complete("reward_fn"), compute_reward=lambda self, p, a, n, pl: float("nan"))
    env = PlumeSearchEnv(reward_fn=type("NaNReward", (), members)())
    env.reset(seed=0)
    with pytest.raises(ComponentError, match="NaNReward.compute_reward returned nan"):
        env.step(0)


class TwoCellMoves:
    """A user action processor: the four moves, two cells at a time, clamped."""

    def __init__(self):
        self.action_space = spaces.Discrete(4)

    def validate_action(self, action):
        return self.action_space.contains(action)

    def process_action(self, action, state, grid_size):
        dx, dy = MOVES[int(action)]
        x = min(max(state.position[0] + 2 * dx, 0), grid_size.width - 1)
        y = min(max(state.position[1] + 2 * dy, 0), grid_size.height - 1)
        return AgentState(position=(x, y), orientation=state.orientation)

    def get_metadata(self):
        return {"type": "two_cell"}


@given(seed=seeds, actions=st.lists(st.integers(0, 3), max_size=20))
def test_user_action_processor_is_honoured(seed, actions):
    w, h, src = 11, 6, (4, 3)
    env = PlumeSearchEnv(grid_size=(w, h), source_location=src, goal_radius=1.0, action_processor=TwoCellMoves())
    env.reset(seed=seed)
    pos, done = expected_start(seed, w, h), False
    for k, action in enumerate(actions):
        if not done:
            dx, dy = MOVES[action]
            pos = (min(max(pos[0] + 2 * dx, 0), w - 1), min(max(pos[1] + 2 * dy, 0), h - 1))
        reached = not done and math.dist(pos, src) <= 1.0
        done = done or reached
        obs, reward, terminated, truncated, info = quiet_step(env, action)
        assert info["agent_xy"] == pos and obs["agent_position"].tolist() == list(pos)
        assert (reward, terminated, info["step_count"]) == (1.0 if reached else 0.0, done, k + 1)


def test_user_action_processor_errors():
    env = PlumeSearchEnv(grid_size=(8, 5), action_processor=TwoCellMoves())
    _, info = env.reset(seed=1)
    with pytest.raises(ValidationError, match="TwoCellMoves says it is not in its action space"):
        env.step(7)
    members = dict(_complete("action_processor"),
                   process_action=lambda self, a, s, g: AgentState(position=(g.width, 0)))
    env = PlumeSearchEnv(grid_size=(8, 5), action_processor=type("OffGrid", (), members)())
    _, info = env.reset(seed=1)
    with pytest.raises(ComponentError, match=r"moved the agent to \(8, 0\).*inside the 8x5 grid"):
        env.step(0)
    assert env.agent_state.position == info["agent_xy"] and env.step_count == 0


class Delegate:
    """Wraps a built-in so that the env no longer recognises it: the protocol path runs instead."""

    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)


@given(setup=small_setups(), seed=seeds, actions=st.lists(st.integers(0, 3), max_size=20),
       compact=st.booleans())
def test_protocol_path_equals_compiled_path(setup, seed, actions, compact):
    """Built-ins called through their protocols (Python) give exactly what the kernels give."""
    sc = PlumeSearchEnv(**setup).scenario
    obs_model = CompactObservation() if compact else FullFieldObservation(sc.grid_size)
    fast = PlumeSearchEnv(**setup, observation_model=obs_model)
    slow = PlumeSearchEnv(**setup, observation_model=Delegate(obs_model),
                          action_processor=Delegate(DiscreteGridActions()),
                          reward_fn=Delegate(SparseGoalReward(sc.source_location, sc.goal_radius)))
    results = [(fast.reset(seed=seed), slow.reset(seed=seed))]
    for action in actions:
        results.append((quiet_step(fast, action), quiet_step(slow, action)))
    for a, b in results:
        assert a[1:] == b[1:]
        oa, ob = (a[0], b[0]) if compact else (a[0]["concentration_field"], b[0]["concentration_field"])
        np.testing.assert_array_equal(oa, ob)
        if not compact:
            assert a[0]["agent_position"].tolist() == b[0]["agent_position"].tolist()


class GradientPlume:
    """A user plume with field_array: concentration rises with x; its peak shifts with the seed."""

    def __init__(self, w, h, with_array=True):
        self.w, self.h = w, h
        self.reset_seeds = []
        self._shift = 0
        if not with_array:
            del self.field_array  # a plume may omit the optional member

    @property
    def field_array(self):
        x = (np.arange(self.w) + self._shift) % self.w
        return np.tile((x / max(self.w - 1, 1)).astype(np.float32), (self.h, 1))

    def sample(self, x, y, t=None):
        return float(self.field_array[y, x])

    def reset(self, seed=None):
        self.reset_seeds.append(seed)
        self._shift = seed % self.w


class SampledPlume:
    """A user plume without field_array: only sample()."""

    def sample(self, x, y, t=None):
        return (x + 2 * y) / 30.0

    def reset(self, seed=None):
        pass


def test_user_plume_with_field_array_feeds_the_engine():
    plume = GradientPlume(12, 5)
    env = PlumeSearchEnv(grid_size=(12, 5), plume_model=plume)
    for seed in (3, 8, None):
        obs, info = env.reset(seed=seed)
        assert plume.reset_seeds[-1] == info["seed"]
        np.testing.assert_array_equal(obs["concentration_field"], plume.field_array)
        obs, _, _, _, info = env.step(RIGHT)
        x, y = info["agent_xy"]
        assert info["concentration_at_agent"] == plume.sample(x, y)


def test_user_plume_without_field_array_is_sampled():
    env = PlumeSearchEnv(grid_size=(12, 9), plume_model=SampledPlume())
    obs, _ = env.reset(seed=0)
    expected = np.array([[(x + 2 * y) / 30.0 for x in range(12)] for y in range(9)], dtype=np.float32)
    np.testing.assert_array_equal(obs["concentration_field"], expected)


def test_user_plume_with_a_bad_field_raises():
    class Wide(GradientPlume):
        field_array = np.zeros((5, 13), np.float32)

    with pytest.raises(ComponentError, match=r"shape \(5, 13\); expected \(height, width\) = \(5, 12\)"):
        PlumeSearchEnv(grid_size=(12, 5), plume_model=Wide(12, 5))

    class Hot(GradientPlume):
        field_array = np.full((5, 12), 2.0, np.float32)

    with pytest.raises(ComponentError, match="Hot gave an unusable field"):
        PlumeSearchEnv(grid_size=(12, 5), plume_model=Hot(12, 5))


def test_plume_params_and_plume_model_together_raise():
    with pytest.raises(ValidationError, match="plume_params and plume_model"):
        PlumeSearchEnv(plume_params={"sigma": 3.0}, plume_model=SampledPlume())


def test_builtin_components_on_their_own():
    plume = StaticGaussianPlume((9, 4), (2, 1), 3.0)
    np.testing.assert_array_equal(plume.field_array, gaussian_field(9, 4, (2, 1), 3.0))
    assert plume.sample(5, 3) == gaussian_value(5, 3, (2, 1), 3.0)
    actions = DiscreteGridActions()
    state = AgentState(position=(0, 3))
    assert actions.process_action(0, state, (9, 4)).position == (0, 3)  # clamped at the top
    assert actions.process_action(1, state, (9, 4)).position == (1, 3)
    assert state.position == (0, 3)  # not mutated
    assert [actions.validate_action(a) for a in (0, 3, np.int8(2), np.array(1), 4, -1, 1.0, True)] == \
        [True, True, True, True, False, False, False, False]
    reward = SparseGoalReward((2, 1), goal_radius=1.0)
    assert reward.compute_reward(state, 0, AgentState(position=(3, 1)), plume) == 1.0
    assert reward.compute_reward(state, 0, AgentState(position=(3, 2)), plume) == 0.0


def test_compact_observation_env():
    env = PlumeSearchEnv(grid_size=(21, 11), observation_model=CompactObservation())
    assert env.observation_space == spaces.Box(0, 1, (3,), np.float32)
    obs, info = env.reset(seed=9)
    x, y = info["agent_xy"]
    assert obs.dtype == np.float32 and obs.shape == (3,)
    np.testing.assert_allclose(obs, [gaussian_value(x, y, (10, 5), 12.0), x / 20, y / 10], rtol=1e-6)


# ------------------------------------------------------------------ config
def test_config_as_a_scenario():
    sc = Scenario(grid_size=(30, 20), source_location=(3, 4), sigma=5.0, goal_radius=2.0, max_steps=9)
    env = PlumeSearchEnv(config=sc)
    assert env.scenario == sc
    assert PlumeSearchEnv(config=sc, max_steps=50).scenario == sc.replace(max_steps=50)  # keywords win
    with pytest.raises(ValidationError, match="n_agents=2"):
        PlumeSearchEnv(config=Scenario(n_agents=2))
    with pytest.raises(ValidationError, match=r"action_model=Moore\(\)"):
        PlumeSearchEnv(config=Scenario(action_model="moore"))


def test_config_as_a_dict():
    env = PlumeSearchEnv(config={"grid_size": (16, 10), "plume_params": {"sigma": 2.5}, "render_mode": "rgb_array"},
                         grid_size=(17, 10))
    assert env.scenario.grid_size == (17, 10) and env.scenario.sigma == 2.5 and env.render_mode == "rgb_array"
    with pytest.raises(ValidationError, match=r"config: got unknown keys \['grid'\]"):
        PlumeSearchEnv(config={"grid": (3, 3)})
    with pytest.raises(ValidationError, match="config: got int"):
        PlumeSearchEnv(config=5)


# ------------------------------------------------------------------ registration
@pytest.mark.parametrize("env_id", ["PlumeSearch-v0", "PlumeNav-StaticGaussian-v0"])
def test_gymnasium_make(env_id):
    env = gymnasium.make(env_id, grid_size=(25, 14))
    assert isinstance(env.unwrapped, PlumeSearchEnv) and env.unwrapped.scenario.grid_size == (25, 14)
    obs, info = env.reset(seed=42)
    assert info["agent_xy"] == expected_start(42, 25, 14)
    assert len(env.step(env.action_space.sample())) == 5
    env.close()
    assert gymnasium.make(env_id).reset(seed=42)[1]["agent_xy"] == (11, 99)


def test_top_level_name():
    assert plume_multi.PlumeSearchEnv is PlumeSearchEnv
    assert plume_multi.envs.PlumeSearchEnv is PlumeSearchEnv


# ------------------------------------------------------------------ bad input
def _snapshot(env):
    return (env.state, env.episode_count, env.step_count, env.agent_state, env._sim.world_steps.tolist())


@pytest.mark.parametrize("action", [4, -1, 100, 2**70, -2**70, 1.0, np.float32(1), "1", None, True,
                                    np.bool_(False), np.array([1]), np.array(1.0), [1], np.uint64(2**63 + 1)])
def test_bad_actions_raise_and_change_nothing(action):
    env = PlumeSearchEnv(grid_size=(10, 7))
    env.reset(seed=5)
    env.step(0)
    before = _snapshot(env)
    with pytest.raises(ValidationError, match="action: got .* expected an integer in 0..3"):
        env.step(action)
    assert _snapshot(env) == before


@pytest.mark.parametrize("action", [np.int8(3), np.int64(1), np.uint64(2), np.array(0), np.array(3, np.uint8)])
def test_integer_like_actions_are_accepted(action):
    env, ref = PlumeSearchEnv(grid_size=(10, 7)), PlumeSearchEnv(grid_size=(10, 7))
    env.reset(seed=5)
    ref.reset(seed=5)
    assert env.step(action)[4] == ref.step(int(action))[4]


@pytest.mark.parametrize("seed", [-1, -2**31, 1.5, "3", True, np.bool_(True), np.float64(2.0), [1]])
def test_bad_seeds_raise_and_change_nothing(seed):
    env = PlumeSearchEnv()
    with pytest.raises(ValidationError, match="seed: got"):
        env.reset(seed=seed)
    assert env.state is EnvironmentState.CREATED and env.episode_count == 0
    env.reset(seed=1)
    env.step(0)
    before = _snapshot(env)
    with pytest.raises(ValidationError, match="seed: got"):
        env.reset(seed=seed)
    assert _snapshot(env) == before


def test_numpy_integer_seed_is_accepted():
    assert PlumeSearchEnv().reset(seed=np.int64(42))[1]["agent_xy"] == (11, 99)


@pytest.mark.parametrize("options", [[1], {"start": (0, 0)}])
def test_bad_options_raise(options):
    env = PlumeSearchEnv()
    with pytest.raises(ValidationError, match="options"):
        env.reset(seed=0, options=options)
    assert env.state is EnvironmentState.CREATED


@pytest.mark.parametrize("kwargs,argument", [
    ({"grid_size": (0, 5)}, "grid_size"), ({"grid_size": (5, 2049)}, "grid_size"),
    ({"grid_size": (5.0, 5)}, "grid_size"), ({"grid_size": "ab"}, "grid_size"), ({"grid_size": (5,)}, "grid_size"),
    ({"grid_size": (9, 5), "source_location": (9, 0)}, "source_location"),
    ({"source_location": (-1, 0)}, "source_location"), ({"source_location": (1.5, 2)}, "source_location"),
    ({"max_steps": 0}, "max_steps"), ({"max_steps": -1}, "max_steps"), ({"max_steps": 1.5}, "max_steps"),
    ({"max_steps": True}, "max_steps"), ({"max_steps": "10"}, "max_steps"),
    ({"goal_radius": 0}, "goal_radius"), ({"goal_radius": -1.0}, "goal_radius"),
    ({"goal_radius": float("nan")}, "goal_radius"), ({"goal_radius": float("inf")}, "goal_radius"),
    ({"goal_radius": "1"}, "goal_radius"),
    ({"plume_params": {"sigma": 0.05}}, r"plume_params\['sigma'\]"),
    ({"plume_params": {"sigma": 101}}, r"plume_params\['sigma'\]"),
    ({"plume_params": {"sigma": float("nan")}}, r"plume_params\['sigma'\]"),
    ({"plume_params": {"spread": 3}}, "plume_params"), ({"plume_params": 3.0}, "plume_params"),
    ({"render_mode": "ansi"}, "render_mode"), ({"render_mode": "rgb"}, "render_mode"),
])
def test_bad_constructor_arguments_raise_validation_error(kwargs, argument):
    with pytest.raises(ValidationError, match=rf"{argument}.*got"):
        PlumeSearchEnv(**kwargs)


def test_constructor_is_keyword_only():
    with pytest.raises(TypeError):
        PlumeSearchEnv(None)


# ------------------------------------------------------------------ benchmark
def test_benchmark_runs_quick(capsys):
    spec = importlib.util.spec_from_file_location("single_agent_bench", ROOT / "benchmarks" / "single_agent.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rows = bench.main(["--quick"])
    assert [r["api"] for r in rows] == ["PlumeSearchEnv.step", "PlumeSearchEnv.step (CompactObservation)",
                                        "Simulator.step"]
    for row in rows:
        assert row["n"] == 1 and row["steps_per_s"] > 0
    assert "PlumeSearchEnv.step" in capsys.readouterr().out
