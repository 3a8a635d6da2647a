"""Sensors: what an agent observes; its observation is their columns, in order. ``plume_multi.sensors``."""

from .base import Sensor
from .concentration import Concentration
from .neighbours import Neighbours
from .position import Position

__all__ = ["Sensor", "Concentration", "Position", "Neighbours"]
