"""``Wind(noise_std=0.0)``: the wind where the agent is."""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...engine import rng
from ...engine.api import body_heading_table, wind_at
from ...engine.jit import njit
from ...engine.tuples import replaced
from ..base import Sensor, SensorKernels, check_real, dims_of

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
def turned(wind, c, s):
    """``wind`` with its first two components turned into a body's frame (``c, s``: the cosine and
    sine of its heading): ``(forward, left)``."""
    u, v = wind[0], wind[1]
    return replaced(replaced(wind, 0, u * c + v * s), 1, -u * s + v * c)


@njit(inline="always")
def observe_agent(P, S, obs, col, plume, agent, inner):
    # P (its tables too) is read before any branch: Numba prunes the counting of references to
    # its arrays within one block, not across branches
    wind = wind_at(plume, agent.point)
    k = agent.heading_index
    rows = P.cos.shape[0]
    row = min(max(k, 0), rows - 1)
    c = P.cos[row]
    s = P.sin[row]
    noise_std = P.noise_std
    body_frame = P.body_frame
    if body_frame and (k < 0 or k >= rows):
        c, s = rotation(agent.heading)
    if body_frame:
        wind = turned(wind, c, s)
    # component j of agent n (its index in its world: the noise of world b seeded s is the noise of
    # world 0 seeded s) draws at counters (t, D n + j)
    dims = len(wind)
    key = rng.stream_key(agent.seed, agent.episode, STREAM) if noise_std > 0.0 else np.uint64(0)
    for j in range(dims):
        value = wind[j]
        if noise_std > 0.0:
            value += noise_std * rng.normal(key, agent.t, dims * agent.n + j)
        obs[agent.i, col + j] = np.float32(value)


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
    world's seed and episode, the step and the agent's index in its world). In 3-D three columns,
    ``(u, v, w)`` in the grid frame (no body has a heading in 3-D)."""

    noise_std: float = 0.0

    kernels: ClassVar = SensorKernels(observe_agent=observe_agent)
    dimensions: ClassVar[tuple] = (2, 3)

    def __post_init__(self):
        self._set("noise_std", check_real("Wind", "noise_std", self.noise_std, 0.0, 1e6))

    def columns(self, ctx) -> list:
        if ctx.oriented:
            return ["wind_forward", "wind_left"]
        return ["wind_u", "wind_v", "wind_w"][:dims_of(ctx)]

    def bounds(self, ctx) -> tuple:
        n = dims_of(ctx)
        return np.full(n, -np.inf, np.float32), np.full(n, np.inf, np.float32)

    def params(self, ctx) -> tuple:
        table = body_heading_table(ctx) if ctx.oriented else np.zeros(0)
        return WindParams(self.noise_std, ctx.oriented, *rotation_table(table))
