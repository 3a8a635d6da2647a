"""Plume models: what an agent can sense of the source, as a function of where it is."""

from .poisson_hits import PoissonHits

__all__ = ["PoissonHits"]
