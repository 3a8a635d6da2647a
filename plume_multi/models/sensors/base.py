"""What a sensor is: a model that writes a fixed number of observation columns.

A sensor gives the step driver a few lines of code (``emit_agent`` per agent after it moved,
``emit_world`` once per world after all its agents moved), written with these names:

* ``i`` (row of the agent), ``b`` (world), ``t`` (step of the episode, 0 after a reset),
  ``first`` (True when the episode just started), ``seed``, ``episode`` (for counter-based draws);
* ``cx, cy`` (int cell), ``ax, ay`` (float position: the cell for grid bodies), ``hd`` (heading in
  degrees, 0 = +x, 90 = +y; 0 for bodies without one), ``width``, ``height``;
* ``obs`` (B*N, D) float32, ``pos`` (B*N, 2) int32; in world code also ``n_agents`` and
  ``base = b * n_agents``;
* the plume's functions ``plume.sample_cell(PP, PS, pw, ix, iy)``, ``plume.sample_at(PP, PS, pw,
  x, y)``, ``plume.wind_at(PP, PS, pw, x, y)``; the body's ``body.*(AP, AS, ...)``;
* its own parameters and state ``SP{k}``, ``SS{k}`` and module ``s{k}`` (``k`` its slot).
``{col}`` in the code is replaced by its first column and ``{k}`` by its slot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..base import Model


@dataclass(frozen=True)
class Sensor(Model):
    family: ClassVar[str] = "sensor"
    # True when the columns are a pure function of the current state (validate() recomputes them)
    recomputable: ClassVar[bool] = True
    per_world: ClassVar[bool] = False  # writes from emit_world (cannot be wrapped by History)

    def width(self, ctx) -> int:
        return len(self.columns(ctx))

    def columns(self, ctx) -> list:
        raise NotImplementedError

    def bounds(self, ctx) -> tuple:
        """``(low, high)``: per-column float32 arrays of the observation space."""
        n = self.width(ctx)
        return np.zeros(n, np.float32), np.ones(n, np.float32)

    inner_module: ClassVar[str] = ""  # a wrapped sensor's module, imported as s{k}_inner

    def emit_agent(self, ctx) -> str:
        return ""

    def emit_world(self, ctx) -> str:
        return ""

    def check(self, ctx) -> None:
        """Raise ValidationError when this sensor cannot run in ``ctx`` (plume, body, others)."""
