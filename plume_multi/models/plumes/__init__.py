"""Plume models: what the agents smell. ``plume_multi.plumes``."""

from .gaussian import Gaussian

__all__ = ["Gaussian"]
