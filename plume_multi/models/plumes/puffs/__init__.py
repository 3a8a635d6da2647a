"""``Puffs``: the puff plume of Farrell et al. 2002 as pompy implements it (the model and its engine
functions in ``model.py``; the compiled physics, usable alone, in ``physics.py``)."""

from .model import MAX_PUFFS, MAX_WIND_GRID, REACH_RADII, PuffPlume, Puffs, Wind

__all__ = ["Wind", "Puffs", "PuffPlume", "REACH_RADII", "MAX_PUFFS", "MAX_WIND_GRID"]
