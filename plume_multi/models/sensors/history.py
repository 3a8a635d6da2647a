"""``History(sensor, steps=k)``: the last ``k`` readings of another sensor."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...kernels.jit import njit
from ..base import check_int, fail
from .base import Sensor


@dataclass(frozen=True)
class History(Sensor):
    """``k * w`` columns: the wrapped sensor's ``w`` columns at the last ``k`` steps, oldest first,
    newest last. At the start of an episode the first reading fills every slot. The memory lives
    in the observation itself, so snapshots keep it."""

    sensor: object = None
    steps: int = 2

    kernel_module: ClassVar[str] = __name__
    recomputable: ClassVar[bool] = False

    def __post_init__(self):
        if (not isinstance(self.sensor, Sensor) or isinstance(self.sensor, History) or self.sensor.per_world
                or self.sensor.state_spec(None)):
            fail("History", "sensor", self.sensor, "a per-agent sensor model without state (not Neighbours, "
                 "not a History)")
        self._set("steps", check_int("History", "steps", self.steps, 1, 1024))

    @property
    def inner_module(self) -> str:
        return self.sensor.kernel_module

    def check(self, ctx) -> None:
        self.sensor.check(ctx)

    def columns(self, ctx) -> list:
        inner = self.sensor.columns(ctx)
        return [f"{name}_t-{self.steps - 1 - s}" for s in range(self.steps) for name in inner]

    def bounds(self, ctx) -> tuple:
        lo, hi = self.sensor.bounds(ctx)
        return np.tile(lo, self.steps), np.tile(hi, self.steps)

    def params(self, ctx) -> tuple:
        return self.sensor.params(ctx)  # the wrapped sensor's, unchanged (its code reads SP{k})

    def emit_agent(self, ctx) -> str:
        # the wrapped sensor writes into the newest block, with its own parameters (SP{k}) and
        # helper module (imported by the driver as s{k}_inner)
        w = self.sensor.width(ctx)
        newest = f"{{col}} + {(self.steps - 1) * w}"
        inner = (self.sensor.emit_agent(ctx).replace("{col}", f"({newest})")
                 .replace("s{k}.", "s{k}_inner."))
        return (f"if not first:\n    s{{k}}.shift(obs, i, {{col}}, {w}, {self.steps})\n"
                f"{inner}\n"
                f"if first:\n    s{{k}}.fill(obs, i, {{col}}, {w}, {self.steps})")


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
