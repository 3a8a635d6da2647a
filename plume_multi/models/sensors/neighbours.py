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


@njit(inline="always")
def keep_nearest(obs, i, c0, k, count, d2, m):
    """Insert other agent ``m`` at squared distance ``d2`` among row ``i``'s best ``k`` so far
    (``count`` of them, sorted ``(d2, index)`` pairs at columns ``c0 + 2 (r + 1)``); return the
    new count."""
    if count < k:
        p = count
        count += 1
    elif d2 < obs[i, c0 + 2 * k]:  # the worst kept; on a tie it has the smaller index
        p = k - 1
    else:
        return count
    # insertion: others come in index order, so "strictly farther" keeps ties by index
    while p > 0 and obs[i, c0 + 2 * p] > d2:
        obs[i, c0 + 2 + 2 * p] = obs[i, c0 + 2 * p]
        obs[i, c0 + 3 + 2 * p] = obs[i, c0 + 1 + 2 * p]
        p -= 1
    obs[i, c0 + 2 + 2 * p] = d2
    obs[i, c0 + 3 + 2 * p] = np.float32(m)
    return count


EXACT = 16777216  # 2**24: a float32 holds every integer below it


@njit(inline="always")
def _d2(pos, i, j):
    """Squared distance, exact (int64), between the cells of rows ``i`` and ``j``."""
    dx = np.int64(pos[j, 0]) - np.int64(pos[i, 0])
    dy = np.int64(pos[j, 1]) - np.int64(pos[i, 1])
    return dx * dx + dy * dy


@njit(inline="always")
def _kept(obs, i, c, pos, base):
    """The squared distance of the neighbour kept in columns ``c`` (its squared distance, or -1
    where a float32 would round it) and ``c + 1`` (its index)."""
    d = obs[i, c]
    if d >= 0.0:
        return np.int64(d)
    return _d2(pos, i, base + np.int64(obs[i, c + 1]))


@njit
def observe(b, n_agents, k, col, width, height, pos, obs):
    """Columns ``col .. col + 2k`` of world ``b``'s observations.

    One pass over the others per agent. While it runs, the agent's own 2k neighbour columns hold
    its best k so far, nearest first, as (squared distance, index) pairs: an index is below 2**24,
    so float32 holds it exactly and no scratch memory is needed; a squared distance of 2**24 or more
    (grid sides beyond 2896 cells: movies can be that wide) is held as -1 and computed again from
    the index when compared, so the order is exact on grids of any size.
    """
    sx = scale(width)
    sy = scale(height)
    base = b * n_agents
    for n in range(n_agents):
        i = base + n
        x = pos[i, 0]
        y = pos[i, 1]
        count = 0
        worst = np.int64(0)  # the squared distance of the k-th kept, once k are kept
        for m in range(n_agents):
            if m == n:
                continue
            d2 = _d2(pos, i, base + m)
            if count < k:
                p = count
                count += 1
            elif d2 < worst:  # on a tie the kept one has the smaller index
                p = k - 1
            else:
                continue
            # insertion: others come in index order, so "strictly farther" keeps ties by index
            while p > 0 and _kept(obs, i, col + 2 * p - 2, pos, base) > d2:
                obs[i, col + 2 * p] = obs[i, col + 2 * p - 2]
                obs[i, col + 2 * p + 1] = obs[i, col + 2 * p - 1]
                p -= 1
            obs[i, col + 2 * p] = np.float32(d2) if d2 < EXACT else np.float32(-1.0)
            obs[i, col + 2 * p + 1] = np.float32(m)
            if count == k:
                worst = _kept(obs, i, col + 2 * k - 2, pos, base)
        for r in range(k):
            j = base + np.int64(obs[i, col + 1 + 2 * r])
            obs[i, col + 2 * r] = (pos[j, 0] - x) * sx
            obs[i, col + 1 + 2 * r] = (pos[j, 1] - y) * sy


@njit(inline="always")
def observe_world(P, S, obs, col, plume, world, inner):
    observe(world.b, world.n_agents, P.k, col, world.width, world.height, world.pos, obs)


@njit
def observe3(b, n_agents, k, col, width, height, depth, pos, obs):
    """Columns ``col .. col + 3k`` of world ``b``'s observations in 3-D: as ``observe``, with
    ``dz``. While it runs, the first 2k of the agent's own 3k columns hold its best k so far as
    sorted (d2, index) pairs (d2 <= 3 * 2047**2 < 2**24: exact in float32); then the (dx, dy, dz)
    triples are written from the last neighbour to the first, so that no pair is overwritten
    before it is read (triple r starts at column 3r >= 2r + 1)."""
    sx = scale(width)
    sy = scale(height)
    sz = scale(depth)
    base = b * n_agents
    c0 = col - 2  # pair r lives at columns c0 + 2 (r + 1), c0 + 2 (r + 1) + 1
    for n in range(n_agents):
        i = base + n
        x = pos[i, 0]
        y = pos[i, 1]
        z = pos[i, 2]
        count = 0
        for m in range(n_agents):
            if m == n:
                continue
            j = base + m
            dx = pos[j, 0] - x
            dy = pos[j, 1] - y
            dz = pos[j, 2] - z
            count = keep_nearest(obs, i, c0, k, count, np.float32(dx * dx + dy * dy + dz * dz), m)
        for r in range(k - 1, -1, -1):
            j = base + np.int64(obs[i, col + 1 + 2 * r])
            obs[i, col + 3 * r] = (pos[j, 0] - x) * sx
            obs[i, col + 3 * r + 1] = (pos[j, 1] - y) * sy
            obs[i, col + 3 * r + 2] = (pos[j, 2] - z) * sz


@njit(inline="always")
def observe_world3(P, S, obs, col, plume, world, inner):
    observe3(world.b, world.n_agents, P.k, col, world.width, world.height, world.depth, world.pos, obs)


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
    kernels_3d: ClassVar = SensorKernels(observe_world=observe_world3)

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
