"""Numba kernels: pure functions over arrays. Nothing here imports from the rest of the package."""
