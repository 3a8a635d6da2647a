"""``Wind(noise_std=0.0)``: the wind where the agent is."""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...engine import rng
from ...engine.api import body_heading_table, wind_at
from ...engine.jit import njit
from ..base import Sensor, SensorKernels, check_real

STREAM = 0x9B05688C
# body_frame: rotate into the body's frame (bodies with a heading); cos, sin: (K,) float64,
# ``rotation`` of each heading of the body's heading_table
WindParams = namedtuple("WindParams", "noise_std body_frame cos sin")


@njit(inline="always")
def rotation(heading):
    """``(cos, sin)`` of ``heading`` degrees."""
    rad = heading * (np.pi / 180.0)
    c = np.cos(rad)
    s = np.sin(rad)
    return c, s


@njit(inline="always")
def reading(noise_std, body_frame, u, v, c, s, seed, episode, t, n):
    """The two columns of agent ``n`` (its index in its world: the noise of world b seeded s is
    the noise of world 0 seeded s) at step ``t``; ``(c, s)``: the rotation of its heading."""
    if body_frame:
        u, v = u * c + v * s, -u * s + v * c
    if noise_std > 0.0:
        key = rng.stream_key(seed, episode, STREAM)
        u += noise_std * rng.normal(key, t, 2 * n)
        v += noise_std * rng.normal(key, t, 2 * n + 1)
    return np.float32(u), np.float32(v)


@njit(inline="always")
def observe_agent(P, S, obs, col, plume, agent, inner):
    # P (its tables too) is read before any branch: Numba prunes the counting of references to
    # its arrays within one block, not across branches
    u, v = wind_at(plume, agent.x, agent.y)
    k = agent.heading_index
    rows = P.cos.shape[0]
    row = min(max(k, 0), rows - 1)
    c = P.cos[row]
    s = P.sin[row]
    noise_std = P.noise_std
    body_frame = P.body_frame
    if body_frame and (k < 0 or k >= rows):
        c, s = rotation(agent.heading)
    u, v = reading(noise_std, body_frame, u, v, c, s, agent.seed, agent.episode, agent.t, agent.n)
    obs[agent.i, col] = u
    obs[agent.i, col + 1] = v


def rotation_table(headings: np.ndarray) -> tuple:
    """``rotation`` of each heading (NaN: 0), read-only float64 arrays (one row at least)."""
    c = np.zeros(max(1, len(headings)))
    s = np.zeros(max(1, len(headings)))
    for k, h in enumerate(headings):
        if h == h:
            c[k], s[k] = rotation(float(h))
    c.flags.writeable = False
    s.flags.writeable = False
    return c, s


@dataclass(frozen=True)
class Wind(Sensor):
    """Two columns: the plume's wind at the agent in cells per step. Bodies with a heading read it
    in their own frame, ``(forward, left)``; the others read ``(u, v)`` in the grid frame. Each
    column gets Gaussian noise of standard deviation ``noise_std`` (counter-based: a pure function of the
    world's seed and episode, the step and the agent's index in its world)."""

    noise_std: float = 0.0

    kernels: ClassVar = SensorKernels(observe_agent=observe_agent)

    def __post_init__(self):
        self._set("noise_std", check_real("Wind", "noise_std", self.noise_std, 0.0, 1e6))

    def columns(self, ctx) -> list:
        return ["wind_forward", "wind_left"] if ctx.oriented else ["wind_u", "wind_v"]

    def bounds(self, ctx) -> tuple:
        return np.full(2, -np.inf, np.float32), np.full(2, np.inf, np.float32)

    def params(self, ctx) -> tuple:
        table = body_heading_table(ctx) if ctx.oriented else np.zeros(0)
        return WindParams(self.noise_std, ctx.oriented, *rotation_table(table))
