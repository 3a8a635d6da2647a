"""``Neighbours(k)``: where the ``k`` nearest other agents of the world are (in 2-D and 3-D)."""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...engine.jit import njit
from ..base import Sensor, SensorKernels, check_int, dims_of, fail
from .position import scale

NeighboursParams = namedtuple("NeighboursParams", "k")


EXACT = 16777216  # 2**24: a float32 holds every integer below it


@njit(inline="always")
def _d2(pos, i, j, shape):
    """Squared distance, exact (int64), between the cells of rows ``i`` and ``j``."""
    d2 = np.int64(0)
    for c in range(len(shape)):
        d = np.int64(pos[j, c]) - np.int64(pos[i, c])
        d2 += d * d
    return d2


@njit(inline="always")
def _kept(obs, i, c, pos, base, shape):
    """The squared distance of the neighbour kept in columns ``c`` (its squared distance, or -1
    where a float32 would round it) and ``c + 1`` (its index)."""
    d = obs[i, c]
    if d >= 0.0:
        return np.int64(d)
    return _d2(pos, i, base + np.int64(obs[i, c + 1]), shape)


@njit
def observe(b, n_agents, k, col, shape, pos, obs):
    """Columns ``col .. col + D k`` of world ``b``'s observations (``D = len(shape)``).

    One pass over the others per agent. While it runs, the first 2k of the agent's own D k
    neighbour columns hold its best k so far, nearest first, as (squared distance, index) pairs: an
    index is below 2**24, so float32 holds it exactly and no scratch memory is needed; a squared
    distance of 2**24 or more (grid sides beyond 2896 cells: movies can be that wide) is held as -1
    and computed again from the index when compared, so the order is exact on grids of any size.
    Then the offsets are written, D columns per neighbour, from the last neighbour to the first, so
    that no pair is overwritten before it is read (block r starts at column D r >= 2r + 1 of pair
    r + 1 and after).
    """
    base = b * n_agents
    for n in range(n_agents):
        i = base + n
        count = 0
        worst = np.int64(0)  # the squared distance of the k-th kept, once k are kept
        for m in range(n_agents):
            if m == n:
                continue
            d2 = _d2(pos, i, base + m, shape)
            if count < k:
                p = count
                count += 1
            elif d2 < worst:  # on a tie the kept one has the smaller index
                p = k - 1
            else:
                continue
            # insertion: others come in index order, so "strictly farther" keeps ties by index
            while p > 0 and _kept(obs, i, col + 2 * p - 2, pos, base, shape) > d2:
                obs[i, col + 2 * p] = obs[i, col + 2 * p - 2]
                obs[i, col + 2 * p + 1] = obs[i, col + 2 * p - 1]
                p -= 1
            obs[i, col + 2 * p] = np.float32(d2) if d2 < EXACT else np.float32(-1.0)
            obs[i, col + 2 * p + 1] = np.float32(m)
            if count == k:
                worst = _kept(obs, i, col + 2 * k - 2, pos, base, shape)
        dims = len(shape)
        for r in range(k - 1, -1, -1):
            j = base + np.int64(obs[i, col + 1 + 2 * r])
            for c in range(dims):
                obs[i, col + dims * r + c] = (pos[j, c] - pos[i, c]) * scale(shape[c])


@njit(inline="always")
def observe_world(P, S, obs, col, plume, world, inner):
    observe(world.b, world.n_agents, P.k, col, world.shape, world.pos, obs)


@dataclass(frozen=True)
class Neighbours(Sensor):
    """``2 k`` columns: ``(dx / (W - 1), dy / (H - 1))`` from the agent's cell to each of its ``k``
    nearest other agents' cells, nearest first (exact squared distance in cells, ties by lower
    index), each in ``[-1, 1]``: the offset as a fraction of the grid's extent, so an agent
    ``W - 1`` cells to the left reads -1 on a grid of any width (0 on a side of one cell, where no
    offset is possible). Agents that finished stay where they are and still count. In 3-D ``3 k``
    columns, ``(dx / (W - 1), dy / (H - 1), dz / (D - 1))``, by the 3-D squared distance."""

    k: int = 1

    kernels: ClassVar = SensorKernels(observe_world=observe_world)
    dimensions: ClassVar[tuple] = (2, 3)

    def __post_init__(self):
        self._set("k", check_int("Neighbours", "k", self.k, 1, 1 << 24))

    def check(self, ctx) -> None:
        if self.k > ctx.n_agents - 1:
            fail("Neighbours", "k", self.k, f"an integer in 1..{ctx.n_agents - 1} (n_agents - 1)")

    def columns(self, ctx) -> list:
        axes = ("dx", "dy", "dz") if dims_of(ctx) == 3 else ("dx", "dy")
        return [f"neighbour_{j}_{axis}" for j in range(self.k) for axis in axes]

    def width(self, ctx) -> int:
        return dims_of(ctx) * self.k

    def step_operations(self, ctx) -> int:
        return ctx.n_agents * (ctx.n_agents - 1)  # every agent looks at every other one

    def bounds(self, ctx) -> tuple:
        n = self.width(ctx)
        return np.full(n, -1.0, np.float32), np.ones(n, np.float32)

    def params(self, ctx) -> tuple:
        return NeighboursParams(self.k)
