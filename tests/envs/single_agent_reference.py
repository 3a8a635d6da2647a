"""Plain-Python rules of the single-agent contract, written from CONTRACT.md, not from the engine.

``ReferenceEpisode`` replays one episode one step at a time with Python ints and ``math``;
``expected_start`` draws the start with ``numpy.random.default_rng`` itself; ``lifecycle`` drives
a ``PlumeSearchEnv`` through a sequence of calls while a plain model of the seed-000 state
machine says what each call must do.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from plume_multi import StateError, ValidationError
from plume_multi.envs.single import EnvironmentState, PlumeSearchEnv

# seed 002, "Movement Mapping"
MOVES = {0: (0, 1), 1: (1, 0), 2: (0, -1), 3: (-1, 0)}
UP, RIGHT, DOWN, LEFT = 0, 1, 2, 3
SMALLEST_FLOAT32 = float(np.finfo(np.float32).smallest_subnormal)


def expected_start(seed, width, height):
    """CONTRACT.md: ``rng = default_rng(seed)``; ``x = rng.integers(0, width)``; then ``y``."""
    rng = np.random.default_rng(seed)
    x = int(rng.integers(0, width))
    y = int(rng.integers(0, height))
    return x, y


def gaussian_value(x, y, source, sigma):
    d2 = (x - source[0]) ** 2 + (y - source[1]) ** 2
    return float(np.float32(min(max(math.exp(-d2 / (2.0 * sigma * sigma)), 0.0), 1.0)))


def gaussian_field(width, height, source, sigma):
    return np.array([[gaussian_value(x, y, source, sigma) for x in range(width)] for y in range(height)],
                    dtype=np.float32)


def seed_with_start(predicate, width, height, limit=10_000):
    """The first seed whose start cell satisfies ``predicate((x, y))``."""
    for seed in range(limit):
        if predicate(expected_start(seed, width, height)):
            return seed
    raise AssertionError("no seed found")


def path_to(start, target):
    """Actions that walk from ``start`` to ``target`` (x first, then y)."""
    (x, y), (tx, ty) = start, target
    actions = [RIGHT if tx > x else LEFT] * abs(tx - x)
    actions += [UP if ty > y else DOWN] * abs(ty - y)
    return actions


class ReferenceEpisode:
    """One episode under the contract's rules.

    Moves are clamped into the grid; a step ending at distance ``<= goal_radius`` earns 1.0 and
    terminates; ``truncated = step_count >= max_steps``. Stepping on after the goal: the agent
    stays where it is and earns 0 (the engine's rule for a finished agent).
    """

    def __init__(self, width, height, source, goal_radius, max_steps, seed):
        self.w, self.h = width, height
        self.source = source
        self.goal_radius = goal_radius
        self.max_steps = max_steps
        self.pos = expected_start(seed, width, height)
        self.step_count = 0
        self.total_reward = 0.0
        self.goal_reached = False
        # The reference reports goal_reached=True at reset when the start is already within the
        # goal radius (distance <= radius); stepping then goes on under the usual rules.
        self.reset_goal_reached = self.distance() <= goal_radius

    def distance(self):
        return math.sqrt((self.pos[0] - self.source[0]) ** 2 + (self.pos[1] - self.source[1]) ** 2)

    def step(self, action):
        self.step_count += 1
        reward = 0.0
        if not self.goal_reached:
            dx, dy = MOVES[action]
            x = min(max(self.pos[0] + dx, 0), self.w - 1)
            y = min(max(self.pos[1] + dy, 0), self.h - 1)
            self.pos = (x, y)
            if self.distance() <= self.goal_radius:
                reward = 1.0
                self.goal_reached = True
        self.total_reward += reward
        return self.pos, reward, self.goal_reached, self.step_count >= self.max_steps


# ------------------------------------------------------------------------------ lifecycle driver
CALLS = ("reset", "reset_none", "step", "step", "step", "step_bad", "render", "close")
call_lists = st.lists(st.sampled_from(CALLS), max_size=30)


def small_env(**kwargs):
    """A 7x4 grid with a goal radius of 1.5 and 4 steps per episode: every state is reachable."""
    args = dict(grid_size=(7, 4), source_location=(5, 1), goal_radius=1.5, max_steps=4, render_mode="rgb_array")
    args.update(kwargs)
    return PlumeSearchEnv(**args)


def lifecycle(calls, seed=0):
    """Run ``calls`` on a fresh ``small_env``; yield ``(call, env)`` after each.

    Alongside, a plain model of seed 000's transition table predicts the state after every call
    and which calls must raise; a mismatch fails the test that iterates.
    """
    env = small_env()
    sc = env.scenario
    expected = EnvironmentState.CREATED
    model = None
    yield "init", env
    for k, call in enumerate(calls):
        if call in ("reset", "reset_none"):
            if expected is EnvironmentState.CLOSED:
                _must_raise(StateError, env.reset, seed=seed + k)
            else:
                _, info = env.reset(seed=seed + k if call == "reset" else None)
                model = ReferenceEpisode(*sc.grid_size, sc.source_location, sc.goal_radius, sc.max_steps, info["seed"])
                expected = EnvironmentState.READY
        elif call in ("step", "step_bad"):
            if expected in (EnvironmentState.CREATED, EnvironmentState.CLOSED):
                _must_raise(StateError, env.step, 0)
            elif call == "step_bad":
                _must_raise(ValidationError, env.step, 4)
            else:
                action = k % 4
                _, _, terminated, truncated, _ = _quiet_step(env, action)
                _, _, ref_term, ref_trunc = model.step(action)
                assert (terminated, truncated) == (ref_term, ref_trunc)
                if expected is EnvironmentState.READY or expected is EnvironmentState.TRUNCATED:
                    if ref_term:
                        expected = EnvironmentState.TERMINATED
                    elif ref_trunc:
                        expected = EnvironmentState.TRUNCATED
        elif call == "render":
            if expected in (EnvironmentState.CREATED, EnvironmentState.CLOSED):
                _must_raise(StateError, env.render)
            else:
                env.render()
        elif call == "close":
            env.close()
            expected = EnvironmentState.CLOSED
        assert env.state is expected, f"after {calls[:k + 1]}: state {env.state}, expected {expected}"
        yield call, env


def _must_raise(error, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except error:
        return
    raise AssertionError(f"{fn.__name__} did not raise {error.__name__}")


def _quiet_step(env, action):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # over-running an episode warns; tested elsewhere
        return env.step(action)
