"""The Gaussian plume of several, drawn or moving sources: ``Gaussian(source=[...], n_sources=K,
source_motion=...)``.

The concentration is the sum of the sources' Gaussians, clipped to 1 (so it stays in [0, 1], the
bounds of the one-source plume): ``C(x, y) = min(1, sum_k exp(-|p - s_k|^2 / (2 sigma^2)))``,
computed in float64, returned as float32. Sources far apart (several sigma) each look like the
one-source plume; where plumes overlap the sum saturates at 1. Fixed sources that do not move
share one precomputed field (this sum at every cell); drawn or moving ones are evaluated where
sensors read, from the world's current source cells.

State (``models/sources/source_set.py``): ``source`` (B, K, 2), ``found`` (B, K), ``motion``
(B, K, W). A plume of one source with the default ``Static()`` motion is ``gaussian.py``'s, as
before.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ...engine.api import grid_point, is_on, static_flag
from ...engine.jit import njit
from .. import sources as _sources  # every built-in motion: the step's cache key covers their files
from ..base import PlumeKernels
from ..sources.source_set import move_sources, place_sources, reach_source
from .interpolation import bilinear

STREAM = 0x6A09E667  # the Gaussian plume's random stream (gaussian.py draws a random source from it too)

__all__ = ["GaussianSourcesParams", "KERNELS", "summed_field", "sources_params"]

MOTIONS = _sources

# field: the shared (H, W) float32 sum of fixed, unmoving sources ((1, 1) unused otherwise);
# starts: (K, 2) float64 start cells (unused when drawn); random, shared_field: compile-time flags;
# motion: the source motion's record, or None
GaussianSourcesParams = namedtuple("GaussianSourcesParams", "field two_sigma2 wind_u wind_v width height starts "
                                                            "random motion shared_field")


def summed_field(grid_size, cells, sigma: float) -> np.ndarray:
    """``(H, W)`` float32: ``min(1, sum_k exp(-d_k^2 / (2 sigma^2)))`` at every cell."""
    w, h = grid_size
    x = np.arange(w, dtype=np.float64)
    y = np.arange(h, dtype=np.float64)
    total = np.zeros((h, w))
    for xs, ys in cells:
        d2 = (y[:, None] - ys) ** 2 + (x[None, :] - xs) ** 2
        total += np.exp(-d2 / (2.0 * float(sigma) ** 2))
    field = np.ascontiguousarray(np.minimum(total, 1.0).astype(np.float32))
    field.flags.writeable = False
    return field


def sources_params(plume, grid_size, cells) -> GaussianSourcesParams:
    """The parameters of ``plume`` (a ``Gaussian`` of several, drawn or moving sources)."""
    w, h = grid_size
    random = plume.source == "random"
    moving = plume.source_motion.moves
    shared = not random and not moving
    if shared:
        field = summed_field(grid_size, cells, plume.sigma)
    else:
        field = np.zeros((1, 1), np.float32)
        field.flags.writeable = False
    k = plume.source_count()
    starts = np.zeros((k, 2)) if random else np.array(cells, np.float64).reshape(k, 2)
    starts.flags.writeable = False
    return GaussianSourcesParams(field, 2.0 * plume.sigma ** 2, plume.wind[0], plume.wind[1], int(w), int(h), starts,
                                 static_flag(random), plume.source_motion.record(), static_flag(shared))


# --------------------------------------------------------------------- compiled functions
# S = (source (B, K, 2) float64, found (B, K) bool, motion (B, K, W) float64)

@njit(inline="always")
def reset_world(P, S, b, seed, episode, pos, base, n_agents):
    place_sources(P.starts, P.random, (P.motion, S[2]), (S[0], S[1]), b, seed, episode, (P.width, P.height), STREAM,
                  None)


@njit(inline="always")
def advance(P, S, b, t, seed, episode):
    move_sources((P.motion, S[2]), S[0], b, t, (P.width, P.height), seed, episode, None)


@njit(inline="always")
def source(P, S, b, shape):
    return S[0][b, 0, 0], S[0][b, 0, 1]


@njit(inline="always")
def reach(P, S, b, point, goal_d2, team):
    return reach_source(S[0], S[1], b, point[0], point[1], goal_d2, team)


@njit(inline="always")
def _summed(P, S, b, x, y):
    xy = S[0]
    total = 0.0
    for k in range(xy.shape[1]):
        dx = x - xy[b, k, 0]
        dy = y - xy[b, k, 1]
        total += np.exp(-(dx * dx + dy * dy) / P.two_sigma2)
    return np.float32(min(total, 1.0))


# These read 2-D tuples (several or moving sources are 2-D: Gaussian.bind refuses them in 3-D).
@njit(inline="always")
def sample_cell(P, S, pw, cell):
    if is_on(P.shared_field):
        return P.field[cell[1], cell[0]]
    return _summed(P, S, pw, np.float64(cell[0]), np.float64(cell[1]))


@njit(inline="always")
def sample_at(P, S, pw, point):
    """Concentration at a float position: within half a cell of the grid, at the nearest point of
    ``[0, W-1] x [0, H-1]``; 0 farther out (``engine.api.grid_point``, as the one-source plume)."""
    inside, clamped = grid_point(point, (P.width, P.height))
    if not inside:
        return np.float32(0.0)
    x, y = clamped
    if is_on(P.shared_field):
        return bilinear(P.field, x, y)
    return _summed(P, S, pw, x, y)


@njit(inline="always")
def wind_at(P, S, pw, point):
    return P.wind_u, P.wind_v


KERNELS = PlumeKernels(source=source, sample_cell=sample_cell, sample_at=sample_at, reset_world=reset_world,
                       advance=advance, wind_at=wind_at, reach=reach)
