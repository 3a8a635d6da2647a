"""Plume models."""

from .puffs import PuffPlume, Puffs, Wind, render_puffs

__all__ = ["Puffs", "Wind", "PuffPlume", "render_puffs"]
