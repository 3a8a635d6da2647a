"""Physical units of a scenario: how long a cell is and how long a step lasts.

The simulation counts in cells and steps. A recording knows what they are in the lab (a movie's
``fps`` and ``pixel_to_grid``, the puff plume's ``dt`` and cell size), and ``Scenario.units``
gives them as a ``Units`` record that converts both ways. Lengths are in the plume's own length
unit (``length_unit`` when its file names it, e.g. ``"mm"``), times in seconds.

    >>> units = Units(cell_size=0.5, step_duration=0.1, length_unit="mm")
    >>> units.speed(20.0)        # 20 mm/s -> cells per step
    4.0
    >>> units.seconds(150)       # 150 steps
    15.0
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import check_point, check_real, fail
from ..errors import ValidationError

__all__ = ["Units", "MIN_UNIT", "MAX_UNIT"]

# The range of a cell's length and of a step's duration: wide enough for any recording (nm to
# km, ns to days) and narrow enough that every conversion stays finite.
MIN_UNIT, MAX_UNIT = 1e-12, 1e12


@dataclass(frozen=True)
class Units:
    """The physical size of a cell and duration of a step (None where unknown).

    Attributes:
        cell_size: the length of a cell's side (length unit), or None.
        step_duration: seconds per step, or None.
        origin: ``(x, y)`` position of cell ``(0, 0)`` (length unit); ``(x, y, z)`` in 3-D.
        length_unit: the name of the length unit (``"mm"``, ``"m"``, ...), or None (unnamed).
    """

    cell_size: float | None = None
    step_duration: float | None = None
    origin: tuple = (0.0, 0.0)
    length_unit: str | None = None

    def __post_init__(self):
        for name in ("cell_size", "step_duration"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, check_real("Units", name, value, MIN_UNIT, MAX_UNIT))
        object.__setattr__(self, "origin", check_point("Units", "origin", self.origin, length=(2, 3), limit=MAX_UNIT))
        if self.length_unit is not None and (not isinstance(self.length_unit, str) or not self.length_unit):
            fail("Units", "length_unit", self.length_unit, "None or a non-empty string such as 'mm'")

    # ------------------------------------------------------------------ conversions
    def _need(self, name: str) -> float:
        value = getattr(self, name)
        if value is None:
            known = {"cell_size": "a Movie's pixel_to_grid or cell_size, Puffs' cell size",
                     "step_duration": "a Movie's fps, Puffs' dt"}[name]
            raise ValidationError(f"Units.{name}: got None (this scenario does not know it); expected a number: "
                                  f"give Scenario({name}=...) or a plume that knows it ({known})")
        return value

    def seconds(self, steps):
        """Steps -> seconds (a number or an array; NaN stays NaN)."""
        return _times(steps, self._need("step_duration"))

    def steps(self, seconds):
        """Seconds -> steps (float)."""
        return _times(seconds, 1.0 / self._need("step_duration"))

    def length(self, cells):
        """Cells -> length (a distance, not a position: see ``position``)."""
        return _times(cells, self._need("cell_size"))

    def cells(self, length):
        """Length -> cells (a distance)."""
        return _times(length, 1.0 / self._need("cell_size"))

    def speed(self, length_per_second):
        """A speed in length per second -> cells per step (what ``bodies.Continuous(max_speed=...)``
        takes)."""
        return _times(length_per_second, self._need("step_duration") / self._need("cell_size"))

    def position(self, xy):
        """Cell coordinates ``(..., 2)`` (``(..., 3)`` with a 3-D origin) -> physical positions ``origin + xy * cell_size``."""
        return np.asarray(self.origin) + np.asarray(xy, dtype=np.float64) * self._need("cell_size")

    def cell_position(self, position):
        """Physical positions ``(..., 2)`` -> cell coordinates (floats)."""
        return (np.asarray(position, dtype=np.float64) - np.asarray(self.origin)) / self._need("cell_size")

    def metadata(self) -> dict:
        return {"cell_size": self.cell_size, "step_duration": self.step_duration, "origin": list(self.origin),
                "length_unit": self.length_unit}


def _times(value, factor: float):
    if isinstance(value, np.ndarray):
        return value * factor
    return float(value) * factor
