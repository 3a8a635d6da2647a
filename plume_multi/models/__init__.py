"""The model library: plumes, bodies, sensors and rewards, one file (or folder) per model.

Public as ``plume_multi.plumes``, ``plume_multi.bodies`` (alias ``plume_multi.actions``),
``plume_multi.sensors`` and ``plume_multi.rewards``; ``plume_multi.sources``, the source motions
a plume takes. How to add a model: docs/developing-models.md.
"""

from . import bodies, plumes, rewards, sensors, sources
from .base import (Body, BodyKernels, Model, Plume, PlumeKernels, Reward, RewardKernels, Sensor, SensorKernels, StateArray,
                   StateWorld, grid_high)
from .registry import from_metadata, model_class, model_names

actions = bodies  # the family's former name

__all__ = ["Model", "Plume", "Body", "Sensor", "Reward", "PlumeKernels", "BodyKernels", "SensorKernels",
           "RewardKernels", "StateArray", "StateWorld", "grid_high", "plumes", "bodies", "actions", "sensors", "rewards",
           "sources", "from_metadata", "model_class", "model_names"]
