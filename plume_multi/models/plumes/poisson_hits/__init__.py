"""Turbulent search as Poisson hits: ``PoissonHits`` (isotropic, ``model.py``) and
``WindyPoissonHits`` (a mean wind, ``windy.py``), two hit laws over the same compiled functions and
tables (``plume.py``); their draws and belief updates in ``kernels.py``."""

from .model import MAX_GRID_SIDE_1D, MAX_GRID_SIDE_2D, MAX_N_HITS, MAX_R_DT, MIN_R_DT, NORMS, P_SOURCE_OUT, PoissonHits
from .plume import MOVES_1D, MOVES_2D, PoissonHitPlume
from .windy import WindyPoissonHits

__all__ = ["PoissonHits", "WindyPoissonHits", "PoissonHitPlume", "NORMS", "P_SOURCE_OUT", "MAX_GRID_SIDE_2D",
           "MAX_GRID_SIDE_1D", "MAX_N_HITS", "MIN_R_DT", "MAX_R_DT", "MOVES_1D", "MOVES_2D"]
