"""Plume models: what the agents smell. ``plume_multi.plumes``."""

from ..base import Plume
from .gaussian import Gaussian
from .movie import Movie
from .poisson_hits import PoissonHits
from .puffs import PuffPlume, Puffs, Wind, render_puffs

__all__ = ["Plume", "Gaussian", "Movie", "PoissonHits", "Puffs", "Wind", "PuffPlume", "render_puffs"]
