"""The model library: plumes, actions (bodies), sensors and rewards, one file per model.

Public as ``plume_multi.plumes``, ``plume_multi.actions``, ``plume_multi.sensors`` and
``plume_multi.rewards``. How to add a model: docs/developing-models.md.
"""

from . import actions, plumes, rewards, sensors
from .base import Model

__all__ = ["Model", "plumes", "actions", "sensors", "rewards"]
