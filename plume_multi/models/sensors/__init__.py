"""Sensors: what an agent observes; its observation is their columns, in order. ``plume_multi.sensors``."""

from .antennae import Antennae
from ..base import Sensor
from .belief import Belief
from .binary import Binary
from .concentration import Concentration
from .heading import Heading
from .history import History
from .hits import Hits
from .neighbours import Neighbours
from .position import Position
from .wind import Wind

__all__ = ["Sensor", "Concentration", "Position", "Heading", "Binary", "Antennae", "Wind", "Neighbours", "History",
           "Hits", "Belief"]
