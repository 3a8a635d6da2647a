"""``Wind(noise_std=0.0)``: the wind where the agent is."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...kernels import rng
from ...kernels.jit import njit
from ..base import check_real
from .base import Sensor

STREAM = 0x9B05688C


@dataclass(frozen=True)
class Wind(Sensor):
    """Two columns: the plume's wind at the agent in cells per step. Bodies with a heading read it
    in their own frame, ``(forward, left)``; the others read ``(u, v)`` in the grid frame. Each
    column gets Gaussian noise of standard deviation ``noise_std`` (counter-based: same seed, same
    noise)."""

    noise_std: float = 0.0

    kernel_module: ClassVar[str] = __name__

    def __post_init__(self):
        self._set("noise_std", check_real("Wind", "noise_std", self.noise_std, 0.0, 1e6))

    def columns(self, ctx) -> list:
        return ["wind_forward", "wind_left"] if ctx.oriented else ["wind_u", "wind_v"]

    def bounds(self, ctx) -> tuple:
        return np.full(2, -np.inf, np.float32), np.full(2, np.inf, np.float32)

    def params(self, ctx) -> tuple:
        return (self.noise_std, ctx.oriented)

    def emit_agent(self, ctx) -> str:
        return ("u, v = plume.wind_at(PP, PS, pw, ax, ay)\n"
                "obs[i, {col}], obs[i, {col} + 1] = s{k}.reading(SP{k}, u, v, hd, seed, episode, t, i)")


@njit(inline="always")
def reading(P, u, v, heading, seed, episode, t, i):
    if P[1]:
        rad = heading * (np.pi / 180.0)
        c = np.cos(rad)
        s = np.sin(rad)
        u, v = u * c + v * s, -u * s + v * c
    if P[0] > 0.0:
        key = rng.stream_key(seed, episode, STREAM)
        u += P[0] * rng.normal(key, t, 2 * i)
        v += P[0] * rng.normal(key, t, 2 * i + 1)
    return np.float32(u), np.float32(v)
