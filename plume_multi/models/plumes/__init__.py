"""Plume models: what the agents smell. ``plume_multi.plumes``."""

from .gaussian import Gaussian
from .puffs import PuffPlume, Puffs, Wind, render_puffs

__all__ = ["Gaussian", "Puffs", "Wind", "PuffPlume", "render_puffs"]
