"""``History(sensor, steps=k)``: the last ``k`` readings of another sensor."""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import ClassVar

from ...engine.api import observe_inner
from ...engine.jit import njit
from ..base import Sensor, SensorKernels, check_int, fail

# width: the wrapped sensor's columns; steps: how many readings are kept (the wrapped sensor's
# own parameters come as ``inner.params``)
HistoryParams = namedtuple("HistoryParams", "width steps")


@njit(inline="always")
def shift(obs, i, col, width, steps):
    """Move blocks 1..steps-1 one block to the left (the oldest reading drops out)."""
    for q in range(col, col + (steps - 1) * width):
        obs[i, q] = obs[i, q + width]


@njit(inline="always")
def fill(obs, i, col, width, steps):
    """Copy the newest block into every older one (the start of an episode)."""
    last = col + (steps - 1) * width
    for s in range(steps - 1):
        for q in range(width):
            obs[i, col + s * width + q] = obs[i, last + q]


@njit(inline="always")
def observe_agent(P, S, obs, col, plume, agent, inner):
    if not agent.first:
        shift(obs, agent.i, col, P.width, P.steps)
    # the wrapped sensor writes its reading into the newest block
    observe_inner(inner, S, obs, col + (P.steps - 1) * P.width, plume, agent)
    if agent.first:
        fill(obs, agent.i, col, P.width, P.steps)


@dataclass(frozen=True)
class History(Sensor):
    """``k * w`` columns: the wrapped sensor's ``w`` columns at the last ``k`` steps, oldest first,
    newest last. At the start of an episode the first reading fills every slot. The memory lives
    in the observation itself, so snapshots keep it."""

    sensor: object = None
    steps: int = 2

    kernels: ClassVar = SensorKernels(observe_agent=observe_agent)
    # in every dimension the sensor it wraps runs in (its function passes the agent on; the capability
    # table checks the wrapped sensor's declarations too)
    dimensions: ClassVar[tuple] = (2, 3)
    recomputable: ClassVar[bool] = False

    def __post_init__(self):
        if (not isinstance(self.sensor, Sensor) or isinstance(self.sensor, History) or self.sensor.per_world
                or self.sensor.state_spec(None)):
            fail("History", "sensor", self.sensor, "a per-agent sensor model without state (not Neighbours, "
                 "not a History)")
        self._set("steps", check_int("History", "steps", self.steps, 1, 1024))

    @property
    def wraps(self) -> Sensor:
        return self.sensor

    def kernels_for(self, dims: int):
        return self.kernels if self.sensor.kernels_for(dims) is not None else None

    def check(self, ctx) -> None:
        self.sensor.check(ctx)

    def columns(self, ctx) -> list:
        inner = self.sensor.columns(ctx)
        return [f"{name}_t-{self.steps - 1 - s}" for s in range(self.steps) for name in inner]

    def width(self, ctx) -> int:
        return self.steps * self.sensor.width(ctx)

    def bounds(self, ctx) -> tuple:
        import numpy as np

        lo, hi = self.sensor.bounds(ctx)
        return np.tile(lo, self.steps), np.tile(hi, self.steps)

    def params(self, ctx) -> tuple:
        return HistoryParams(self.sensor.width(ctx), self.steps)
