"""Plume models: what the agents smell. ``plume_multi.plumes``."""

from .gaussian import Gaussian
from .movie import Movie
from .poisson_hits import PoissonHits

__all__ = ["Gaussian", "Movie", "PoissonHits"]
