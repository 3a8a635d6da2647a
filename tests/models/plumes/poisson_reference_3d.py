"""Plain NumPy reference of the 3-D Poisson-hit search (otto's 3-D hit law, Loisy & Eloy 2022).

Written from the formulas, cell by cell or with obvious NumPy: beliefs ``(D, H, W)`` indexed
``[z, y, x]``, cells ``(x, y, z)``. Totals are summed as NumPy sums otto's beliefs, which it indexes
``[x, y, z]`` (``total``), so updates match the kernels bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

import poisson_reference as nv

EPS = 1e-10


def mean_hits(d, L, I):
    """otto's 3-D law: ``mu0 L/d exp(1 - d/L)`` with ``mu0 = I e^-1 / (2 L)`` (``a = dx / 2``)."""
    mu0 = I * (1 / (2 * L)) * math.exp(-1)
    return mu0 * L / np.asarray(d, dtype=float) * np.exp(1 - np.asarray(d, dtype=float) / L)


def hit_probability(h, d, L, I, n_hits):
    """``Pr(h | d)`` (array ``d``): Poisson below ``n_hits - 1``, the tail (its survival function) at it."""
    from scipy.stats import poisson

    mu = mean_hits(d, L, I)
    return poisson.pmf(h, mu) if h < n_hits - 1 else poisson.sf(n_hits - 2, mu)


def auto_sizes(L, I, p_out=1e-3):
    """otto's autoset in 3-D: ``(n_hits, N)``."""
    mu1 = float(mean_hits(1.0, L, I))
    n_hits = int(math.ceil(mu1 + math.sqrt(mu1))) + 1
    r = np.arange(1, int(1000 * L), dtype=float)
    shell = (4 / 3 * math.pi) * ((r + 0.5) ** 3 - (r - 0.5) ** 3)
    best = 0
    for h in range(1, n_hits):
        w = hit_probability(h, r, L, I, n_hits) * shell
        ball = np.cumsum(w) / w.sum()
        best = max(best, 2 * (int(np.flatnonzero(1 - ball < p_out)[0]) + 1) + 1)
    return n_hits, best


class Likelihood3:
    """``like(h, x, y, z)``: ``Pr(h | source at each cell)`` for an agent at ``(x, y, z)``, ``(D, H, W)``."""

    def __init__(self, shape, L, I, n_hits):
        self.shape, self.L, self.I, self.n_hits = shape, L, I, n_hits
        self._cache = {}

    def __call__(self, h, x, y, z):
        key = (h, x, y, z)
        if key not in self._cache:
            zz, yy, xx = np.meshgrid(*[np.arange(n) for n in self.shape], indexing="ij")
            d = np.sqrt((xx - x) ** 2 + (yy - y) ** 2 + (zz - z) ** 2)
            out = np.zeros(self.shape)
            out[d > 0] = hit_probability(h, d[d > 0], self.L, self.I, self.n_hits)
            self._cache[key] = out
        return self._cache[key]


def total(q):
    """``q.sum()`` as NumPy sums the same belief indexed ``[x, y, z]`` (otto's)."""
    return np.sum(np.ascontiguousarray(q.transpose(2, 1, 0)))


def update(p, like_grid, x, y, z):
    q = p.copy()
    q[z, y, x] = 0.0
    q = q * like_grid
    return q / total(q)


def decide(p, cell, moves, like, space_aware=False):
    """Infotaxis as specified (``nv.decide`` in 3-D). Returns ``(action, scores)``."""
    D, H, W = p.shape
    scores = np.full(len(moves), np.inf)
    x, y, z = cell
    zz, yy, xx = np.mgrid[0:D, 0:H, 0:W]
    for m, (dx, dy, dz) in enumerate(moves):
        tx, ty, tz = x + dx, y + dy, z + dz
        if not (0 <= tx < W and 0 <= ty < H and 0 <= tz < D):
            continue
        p_end = p[tz, ty, tx]
        if p_end > 1 - EPS:
            scores[m] = -np.inf
            return m, scores
        pp = p.copy()
        pp[tz, ty, tx] = 0.0
        pp /= pp.sum()
        value = 0.0
        for h in range(like.n_hits):
            q = pp * like(h, tx, ty, tz)
            P = q.sum()
            if P <= 0:
                continue
            r = q / P
            S = nv.entropy_bits(r)
            if space_aware:
                Dm = float((r * (np.abs(xx - tx) + np.abs(yy - ty) + np.abs(zz - tz))).sum())
                v = Dm + 2 ** (S - 1) - 0.5
                value += (1 - p_end) * P * (math.log2(v) if v > 0 else v)
            else:
                value += (1 - p_end) * P * S
        scores[m] = value
    best = scores[scores < np.inf].min()
    return int(np.flatnonzero((scores < np.inf) & (np.abs(scores - best) < EPS))[0]), scores


def episode(shape, start, seed, uniform, stream_key, streams, moves, like, first_hit_cdf, space_aware=False,
            max_steps=100):
    """One drawn-source episode of one agent, step by step, with the package's draws.
    Returns ``(steps, found, first_hit, source)``."""
    D, H, W = shape
    x, y, z = start
    h0 = nv.first_hit_draw(uniform, stream_key, streams[0], seed, first_hit_cdf)
    p = np.ones(shape) / (D * H * W - 1)
    p[z, y, x] = 0
    p = update(p, like(h0, x, y, z), x, y, z)
    s = nv.categorical(p.ravel(), uniform(np.uint64(stream_key(seed, 0, streams[1])), 0, 0))
    sz, rest = divmod(s, H * W)
    sy, sx = divmod(rest, W)
    key = np.uint64(stream_key(seed, 0, streams[2]))
    for t in range(1, max_steps + 1):
        a, _ = decide(p, (x, y, z), moves, like, space_aware)
        x, y, z = x + moves[a][0], y + moves[a][1], z + moves[a][2]
        if (x, y, z) == (sx, sy, sz):
            return t, True, h0, (sx, sy, sz)
        d = math.sqrt((sx - x) ** 2 + (sy - y) ** 2 + (sz - z) ** 2)
        cdf = np.cumsum([float(hit_probability(h, d, like.L, like.I, like.n_hits)) for h in range(like.n_hits)])
        u = uniform(key, t, 0)
        hit = int(np.flatnonzero(u < cdf[:-1])[0]) if np.any(u < cdf[:-1]) else like.n_hits - 1
        p = update(p, like(hit, x, y, z), x, y, z)
    return max_steps, False, h0, (sx, sy, sz)
