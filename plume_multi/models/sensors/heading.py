"""``Heading()``: the agent's heading as ``(cos, sin)``."""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...engine.api import body_heading_table
from ...engine.jit import njit
from ..base import Need, Sensor, SensorKernels

# cos, sin: (K,) float32, ``unit`` of each heading of the body's heading_table
HeadingParams = namedtuple("HeadingParams", "cos sin")


@njit(inline="always")
def unit(degrees):
    rad = degrees * (np.pi / 180.0)
    return np.float32(np.cos(rad)), np.float32(np.sin(rad))


@njit(inline="always")
def observe_agent(P, S, obs, col, plume, agent, inner):
    # the tables are read before any branch (row 0 when off the table): Numba prunes the counting
    # of references to P's arrays within one block, not across branches
    k = agent.heading_index
    rows = P.cos.shape[0]
    row = min(max(k, 0), rows - 1)
    c = P.cos[row]
    s = P.sin[row]
    if k < 0 or k >= rows:
        c, s = unit(agent.heading)
    obs[agent.i, col] = c
    obs[agent.i, col + 1] = s


def unit_table(headings: np.ndarray) -> tuple:
    """``unit`` of each heading (NaN: 0), read-only float32 arrays (one row at least)."""
    c = np.zeros(max(1, len(headings)), np.float32)
    s = np.zeros(max(1, len(headings)), np.float32)
    for k, h in enumerate(headings):
        if h == h:
            c[k], s[k] = unit(float(h))
    c.flags.writeable = False
    s.flags.writeable = False
    return c, s


@dataclass(frozen=True)
class Heading(Sensor):
    """Two columns, ``cos h`` and ``sin h`` of the heading ``h`` (degrees, 0 = +x, 90 = +y). Only
    for bodies with a heading (``Oriented``, ``RunTumble``, ``Continuous``): with another body the
    scenario is refused (``ValidationError``), since it would read a constant ``(1, 0)``."""

    kernels: ClassVar = SensorKernels(observe_agent=observe_agent)
    dimensions: ClassVar[tuple] = (2,)  # no 3-D body has a heading
    needs: ClassVar[tuple] = (Need("body", "oriented", "a body with a heading (Oriented, RunTumble, Continuous)",
                                   "without one it would read a constant (1, 0)"),)

    def columns(self, ctx) -> list:
        return ["heading_cos", "heading_sin"]

    def bounds(self, ctx) -> tuple:
        return np.full(2, -1.0, np.float32), np.ones(2, np.float32)

    def params(self, ctx) -> tuple:
        return HeadingParams(*unit_table(body_heading_table(ctx)))
