"""The model library: plumes, actions (bodies), sensors and rewards, one file per model.

Public as ``plume_multi.plumes``, ``plume_multi.actions``, ``plume_multi.sensors`` and
``plume_multi.rewards``. How to add a model: docs/developing-models.md.
"""

from . import actions, plumes, rewards, sensors
from .base import Model
from .registry import from_metadata, model_class, model_names

__all__ = ["Model", "plumes", "actions", "sensors", "rewards", "from_metadata", "model_class", "model_names"]
