"""The compiled roles of a Poisson-hit plume in a 3-D scenario (``plume.py`` in 2-D).

The same draws at the same counters, with a third coordinate: the centred likelihood
``(n_hits, 2D-1, 2H-1, 2W-1)`` (entry ``[h, dz + D-1, dy + H-1, dx + W-1]`` for the source at
offset ``(dx, dy, dz)`` from the agent) and the mean hits ``(2D-1, 2H-1, 2W-1)`` float32 (entry
``[az - sz + D-1, ay - sy + H-1, ax - sx + W-1]`` for an agent at that offset from the source).
State: ``source`` ``(B, 3)`` float64 cells, ``first_hit`` ``(B,)`` int64.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ....engine import rng as _rng
from ....engine.jit import njit
from ...base import PlumeKernels3D
from . import kernels as _kp

__all__ = ["PoissonHits3Params", "KERNELS_3D", "likelihood3", "first_hit3", "hit3"]

PoissonHits3Params = namedtuple("PoissonHits3Params",
                                "likelihood first_hit_cdf mean_hits width height depth source_x source_y source_z")


@njit(inline="always")
def reset_world3(P, S, b, seed, episode, pos, base, n_agents):
    x0 = pos[base, 0]
    y0 = pos[base, 1]
    z0 = pos[base, 2]
    if P.source_x < 0:  # the protocol: a first hit, then the source drawn from its belief
        h0 = _kp.draw_first_hit(seed, episode, P.first_hit_cdf)
        sx, sy, sz = _kp.draw_source_after(seed, episode, P.likelihood, (x0, y0, z0), h0, (P.depth, P.height, P.width))
    else:  # a fixed source: the first hit given its offset from the first agent
        sx, sy, sz = P.source_x, P.source_y, P.source_z
        h0 = _kp.draw_first_hit_at(seed, episode, P.likelihood, (sx - x0, sy - y0, sz - z0))
    S[1][b] = h0
    S[0][b, 0] = sx
    S[0][b, 1] = sy
    S[0][b, 2] = sz


@njit(inline="always")
def source3(P, S, b):
    return S[0][b, 0], S[0][b, 1], S[0][b, 2]


@njit(inline="always")
def sample_cell3(P, S, pw, ix, iy, iz):
    return P.mean_hits[iz - int(S[0][pw, 2]) + P.depth - 1, iy - int(S[0][pw, 1]) + P.height - 1,
                       ix - int(S[0][pw, 0]) + P.width - 1]


@njit(inline="always")
def sample_at3(P, S, pw, x, y, z):
    """Mean hits at the nearest cell; 0 off the grid."""
    if x < 0.0 or y < 0.0 or z < 0.0 or x > P.width - 1 or y > P.height - 1 or z > P.depth - 1:
        return np.float32(0.0)
    return sample_cell3(P, S, pw, int(np.floor(x + 0.5)), int(np.floor(y + 0.5)), int(np.floor(z + 0.5)))


# What sensors.Hits and sensors.Belief read in 3-D.
@njit(inline="always")
def likelihood3(P):
    return P.likelihood


@njit(inline="always")
def first_hit3(P, S, b):
    return S[1][b]


@njit(inline="always")
def hit3(P, S, b, t, n, seed, episode, cx, cy, cz):
    """Hits of agent ``n`` at cell ``(cx, cy, cz)`` at step ``t >= 1`` (0 on the source)."""
    dx = int(S[0][b, 0]) - cx
    dy = int(S[0][b, 1]) - cy
    dz = int(S[0][b, 2]) - cz
    if dx == 0 and dy == 0 and dz == 0:
        return 0
    key = _rng.stream_key(seed, episode, _kp.STREAM_HITS)
    return _kp.draw_hit(key, t, n, P.likelihood, (dx, dy, dz))


KERNELS_3D = PlumeKernels3D(source=source3, sample_cell=sample_cell3, sample_at=sample_at3, reset_world=reset_world3)
