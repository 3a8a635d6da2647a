"""``Wind(noise_std=0.0)``: the wind where the agent is."""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...engine import rng
from ...engine.api import wind_at
from ...engine.jit import njit
from ..base import Sensor, SensorKernels, check_real

STREAM = 0x9B05688C
# body_frame: rotate into the body's frame (bodies with a heading)
WindParams = namedtuple("WindParams", "noise_std body_frame")


@njit(inline="always")
def reading(P, u, v, heading, seed, episode, t, n):
    """The two columns of agent ``n`` (its index in its world: the noise of world b seeded s is
    the noise of world 0 seeded s) at step ``t``."""
    if P.body_frame:
        rad = heading * (np.pi / 180.0)
        c = np.cos(rad)
        s = np.sin(rad)
        u, v = u * c + v * s, -u * s + v * c
    if P.noise_std > 0.0:
        key = rng.stream_key(seed, episode, STREAM)
        u += P.noise_std * rng.normal(key, t, 2 * n)
        v += P.noise_std * rng.normal(key, t, 2 * n + 1)
    return np.float32(u), np.float32(v)


@njit(inline="always")
def observe_agent(P, S, obs, col, plume, agent, inner):
    u, v = wind_at(plume, agent.x, agent.y)
    obs[agent.i, col], obs[agent.i, col + 1] = reading(P, u, v, agent.heading, agent.seed, agent.episode,
                                                       agent.t, agent.n)


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
        return WindParams(self.noise_std, ctx.oriented)
