"""Plume models: what the agents smell. ``plume_multi.plumes``."""

from ..base import Plume
from .gaussian import Gaussian
from .movie import Movie
from .poisson_hits import PoissonHits, WindyPoissonHits
from .puffs import PuffPlume, Puffs, Wind

__all__ = ["Plume", "Gaussian", "Movie", "PoissonHits", "WindyPoissonHits", "Puffs", "Wind", "PuffPlume"]


def __getattr__(name):
    if name == "render_puffs":  # moved to the pictures (models import nothing above them)
        import importlib
        import warnings

        warnings.warn("plume_multi.plumes.render_puffs is deprecated; use plume_multi.viz.render.render_puffs",
                      DeprecationWarning, stacklevel=2)
        return importlib.import_module("plume_multi.viz.render").render_puffs
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
