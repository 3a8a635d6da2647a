"""Sensors: what an agent observes; its observation is their columns, in order. ``plume_multi.sensors``."""

from .base import Sensor
from .concentration import Concentration
from .neighbours import Neighbours
from .position import Position
from .hits import Hits  # noqa: E402
from .belief import Belief  # noqa: E402

__all__ = ["Sensor", "Concentration", "Position", "Neighbours", "Hits", "Belief"]
