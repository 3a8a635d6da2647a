"""``PoissonHits``: turbulent search as Poisson hits (the model in ``model.py``; its compiled draws and
belief updates in ``kernels.py``)."""

from .model import MAX_GRID_SIDE_1D, MAX_GRID_SIDE_2D, MAX_N_HITS, MOVES_1D, MOVES_2D, NORMS, P_SOURCE_OUT, PoissonHits

__all__ = ["PoissonHits", "NORMS", "P_SOURCE_OUT", "MAX_GRID_SIDE_2D", "MAX_GRID_SIDE_1D", "MAX_N_HITS", "MOVES_1D",
           "MOVES_2D"]
