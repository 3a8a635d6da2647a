"""Plain NumPy / pure-Python reference of the Poisson-hit search, written from the formulas.

Nothing here reads the model's tables: rates, probabilities, beliefs and decisions are computed
from their definitions, cell by cell or with obvious NumPy, so the compiled kernels can be checked
against them.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import k0

EPS = 1e-10


def mean_hits(d, L, I, dims):
    d = np.asarray(d, dtype=float)
    if dims == 2:
        return I * k0(d / L) / math.log(2 * L)
    return I * 2 * L / (2 * L - 1) * np.exp(-d / L)


def hit_probability(h, d, L, I, dims, n_hits):
    """Pr(h | d) for one h and scalar d >= 1: Poisson below n_hits-1, the tail lumped at n_hits-1."""
    mu = float(mean_hits(d, L, I, dims))
    pmf = [mu ** k * math.exp(-mu) / math.factorial(k) for k in range(n_hits - 1)]
    if h < n_hits - 1:
        return pmf[h]
    return max(0.0, 1.0 - sum(pmf))


def distance(dx, dy, norm):
    dx, dy = abs(dx), abs(dy)
    if norm == "euclidean":
        return math.sqrt(dx * dx + dy * dy)
    if norm == "manhattan":
        return dx + dy
    return max(dx, dy)


def default_n_hits(L, I, dims):
    mu1 = float(mean_hits(1.0, L, I, dims))
    return int(math.ceil(mu1 + math.sqrt(mu1))) + 1


def likelihood_grid(shape, x0, y0, h, L, I, dims, n_hits, norm):
    """Pr(h | distance of each cell to (x0, y0)) over a (H, W) grid, 0 at (x0, y0)."""
    H, W = shape
    out = np.zeros(shape)
    for y in range(H):
        for x in range(W):
            if (x, y) != (x0, y0):
                out[y, x] = hit_probability(h, distance(x - x0, y - y0, norm), L, I, dims, n_hits)
    return out


def first_hit_probabilities(L, I, dims, n_hits):
    r = np.arange(1, int(1000 * L), dtype=float)
    shell = 2 * math.pi * r if dims == 2 else 2 * np.ones_like(r)
    w = np.zeros(n_hits)
    for h in range(1, n_hits):
        w[h] = sum(hit_probability(h, ri, L, I, dims, n_hits) * si for ri, si in zip(r, shell))
    return w / w.sum()


def update(p, like_grid, x, y):
    """Bayes update after a hit at (x, y): like_grid = Pr(h | cell) for that hit."""
    q = p.copy()
    q[y, x] = 0.0
    q = q * like_grid
    return q / q.sum()


def entropy_bits(p):
    p = p[p > 0]
    return float(-(p * np.log2(p)).sum())


def decide(p, x, y, moves, like, space_aware=False):
    """Infotaxis as specified. like(h, x', y') -> (H, W) grid of Pr(h | cell) for an agent at x'.

    Returns (action, scores) with scores inf off the grid, -inf for a forced move."""
    H, W = p.shape
    K = len(moves)
    scores = np.full(K, np.inf)
    for m, (dx, dy) in enumerate(moves):
        tx, ty = x + dx, y + dy
        if not (0 <= tx < W and 0 <= ty < H):
            continue
        p_end = p[ty, tx]
        if p_end > 1 - EPS:
            scores[m] = -np.inf
            return m, scores
        pp = p.copy()
        pp[ty, tx] = 0.0
        pp /= pp.sum()
        total = 0.0
        n_hits = like.n_hits
        for h in range(n_hits):
            q = pp * like(h, tx, ty)
            P = q.sum()
            if P <= 0:
                continue
            r = q / P
            S = entropy_bits(r)
            if space_aware:
                yy, xx = np.mgrid[0:H, 0:W]
                D = float((r * (np.abs(xx - tx) + np.abs(yy - ty))).sum())
                v = D + 2 ** (S - 1) - 0.5
                if v > 0:
                    v = math.log2(v)
                total += (1 - p_end) * P * v
            else:
                total += (1 - p_end) * P * S
        scores[m] = total
    allowed = scores < np.inf
    best = scores[allowed].min()
    action = int(np.flatnonzero(allowed & (np.abs(scores - best) < EPS))[0])
    return action, scores


class Likelihood:
    """Cached like(h, x', y') grids for one model and grid, from the formulas."""

    def __init__(self, shape, L, I, dims, n_hits, norm="euclidean"):
        self.shape, self.L, self.I, self.dims, self.n_hits, self.norm = shape, L, I, dims, n_hits, norm
        self._cache = {}

    def __call__(self, h, x, y):
        key = (h, x, y)
        if key not in self._cache:
            self._cache[key] = likelihood_grid(self.shape, x, y, h, self.L, self.I, self.dims,
                                               self.n_hits, self.norm)
        return self._cache[key]
