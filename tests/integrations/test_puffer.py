"""``SharedBufferEnv``'s buffers and actions (issue 32, item 11): buffers that share memory are
refused (each is written in its own phase of a step, so one would overwrite another), and actions
are integers, never floats, bools or strings cast in silence; a list of ints is taken."""

from types import SimpleNamespace

import numpy as np
import pytest

from plume_multi.errors import ValidationError
from plume_multi.integrations.puffer import SharedBufferEnv

B, N, D = 2, 2, 3


def _buffers(**changes):
    buf = dict(observations=np.zeros((B * N, D), np.float32), rewards=np.zeros(B * N, np.float32),
               terminals=np.zeros(B * N, bool), truncations=np.zeros(B * N, bool), masks=np.zeros(B * N, bool),
               actions=np.zeros(B * N, np.int64))
    buf.update(changes)
    return SimpleNamespace(**buf)


def test_buffers_that_share_memory_are_refused():
    flags = np.zeros(B * N, bool)
    raw = np.zeros(B * N * D + B * N, np.float32)  # rewards over the observations' last bytes
    cases = [(_buffers(terminals=flags, truncations=flags), "truncations", "terminals"),
             (_buffers(observations=raw[:B * N * D].reshape(B * N, D), rewards=raw[B * N * D - 1:-1]), "rewards",
              "observations"),
             (_buffers(terminals=flags, masks=flags), "masks", "terminals")]
    for buf, second, first in cases:
        with pytest.raises(ValidationError, match=rf"buf\.{second}: got an array that shares memory with buf\.{first}"):
            SharedBufferEnv(B, N, buf=buf, grid_size=(6, 6), max_steps=5)
    # two arrays of one allocation that do not overlap are buffers as good as any
    words = np.zeros(B * N + B * N * D, np.float32)
    SharedBufferEnv(B, N, buf=_buffers(rewards=words[:B * N], observations=words[B * N:].reshape(B * N, D)),
                    grid_size=(6, 6), max_steps=5)


def test_actions_are_integers_never_cast():
    env = SharedBufferEnv(B, N, buf=_buffers(), grid_size=(6, 6), max_steps=5)
    env.reset(seed=0)
    for actions, got in [(np.full(B * N, 1.7), r"dtype float64"), (np.ones(B * N, bool), r"dtype bool"),
                         (np.array(["1"] * (B * N)), r"dtype <U1"), ([1.0] * (B * N), r"dtype float64"),
                         (np.zeros(B * N + 1, np.int64), r"shape \(5,\)"), ("0123", r"shape \(\)"),
                         (np.zeros((B * N, 1), np.int64), r"shape \(4, 1\)")]:
        before = env.observations.copy()
        with pytest.raises(ValidationError, match=rf"actions: got an array of .*{got}.*; expected \(4,\) integers"):
            env.step(actions)
        np.testing.assert_array_equal(env.observations, before)  # nothing stepped
    obs, *_ = env.step([0, 1, 2, 3])  # a list of ints: taken
    assert obs is env.observations
    env.step(np.array([3, 2, 1, 0], np.uint8))  # any integer type
    env.actions[:] = [1, 1, 1, 1]
    env.step()
