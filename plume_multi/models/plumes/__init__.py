"""Plume models: what the agents smell. ``plume_multi.plumes``."""

from .gaussian import Gaussian
from .poisson_hits import PoissonHits

__all__ = ["Gaussian", "PoissonHits"]
