"""Plume models: what the agents smell. ``plume_multi.plumes``."""

from .gaussian import Gaussian
from .movie import Movie

__all__ = ["Gaussian", "Movie"]
