"""``Binary(threshold)``: a detection: 1 when the concentration at the agent exceeds a threshold."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..base import check_real
from .base import Sensor


@dataclass(frozen=True)
class Binary(Sensor):
    """One column: 1.0 if the concentration where the agent is (as ``Concentration`` reads it) is
    strictly above ``threshold``, else 0.0."""

    threshold: float = 0.5

    kernel_module: ClassVar[str] = __name__

    def __post_init__(self):
        self._set("threshold", check_real("Binary", "threshold", self.threshold, 0.0, 1e30))

    def columns(self, ctx) -> list:
        return ["detection"]

    def params(self, ctx) -> tuple:
        return (np.float32(self.threshold),)

    def emit_agent(self, ctx) -> str:
        read = "plume.sample_at(PP, PS, pw, ax, ay)" if ctx.continuous else "plume.sample_cell(PP, PS, pw, cx, cy)"
        return f"obs[i, {{col}}] = np.float32(1.0) if {read} > SP{{k}}[0] else np.float32(0.0)"
