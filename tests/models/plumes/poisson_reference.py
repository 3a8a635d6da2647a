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
    if h < n_hits - 1:
        return mu ** h * math.exp(-mu) / math.factorial(h)
    # 1 - sum_{k < n_hits-1} Pr(k), summed as the tail itself: the difference cancels to rounding
    # noise where the tail is tiny (far from the source).
    if mu == 0.0:
        return 0.0
    terms = [math.exp(k * math.log(mu) - mu - math.lgamma(k + 1)) for k in range(n_hits - 1, n_hits + 400)]
    return min(1.0, sum(terms))


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


def auto_grid_size(L, I, dims, n_hits, p_out=1e-3):
    """Smallest odd N such that, after any first hit h >= 1, Pr(source beyond radius (N-1)/2) < p_out."""
    r = np.arange(1, int(1000 * L), dtype=float)
    shell = 2 * math.pi * r if dims == 2 else 2 * np.ones_like(r)
    best = 0
    for h in range(1, n_hits):
        w = np.array([hit_probability(h, ri, L, I, dims, n_hits) for ri in r]) * shell
        tail = 1 - np.cumsum(w) / w.sum()
        radius = int(r[np.flatnonzero(tail < p_out)[0]])
        best = max(best, 2 * radius + 1)
    return best


def most_likely_hit(p, like, x, y):
    """argmax_h sum_x p(x) Pr(h | x - (x, y)) (lowest h on ties)."""
    P = np.array([(p * like(h, x, y)).sum() for h in range(like.n_hits)])
    return int(np.argmax(P))


def team_decide(p, positions, moves, like, space_aware=False, rule="believer"):
    """Actions of agents sharing belief p, chosen in order (see Infotaxis.team_rule)."""
    q = p.copy()
    out = []
    for x, y in positions:
        a, _ = decide(q, x, y, moves, like, space_aware)
        out.append(a)
        if rule == "believer" and len(out) < len(positions):
            tx, ty = x + moves[a][0], y + moves[a][1]
            h = most_likely_hit(q, like, tx, ty)
            q = update(q, like(h, tx, ty), tx, ty)
    return out


def categorical(probs_flat, u):
    """First index with u < cumulative sum (the last positive one if rounding leaves u above)."""
    acc = 0.0
    last = -1
    for i, v in enumerate(probs_flat):
        if v > 0:
            acc += v
            last = i
            if u < acc:
                return i
    return last


def episode(shape, seed, uniform, stream_key, streams, moves, like, first_hit_cdf,
            team_size=1, shared=True, space_aware=False, rule="believer", max_steps=200):
    """One protocol episode, step by step in Python (draws from the same counter-based uniforms).

    uniform(key, a, b) and stream_key(seed, episode, stream) are the package's draw functions;
    streams = (first_hit, source, hits). Returns (steps, found, first_hit, (sx, sy))."""
    H, W = shape
    cx, cy = W // 2, H // 2
    # keys are uint64: pass them as such (a Python int would compile an int64 variant of the draw)
    u0 = uniform(np.uint64(stream_key(seed, 0, streams[0])), 0, 0)
    h0 = int(np.flatnonzero(u0 < np.asarray(first_hit_cdf))[0]) if u0 < first_hit_cdf[-1] else len(first_hit_cdf) - 1
    p = np.ones(shape) / (H * W - 1)
    p[cy, cx] = 0
    p = update(p, like(h0, cx, cy), cx, cy)
    s = categorical(p.ravel(), uniform(np.uint64(stream_key(seed, 0, streams[1])), 0, 0))
    sy, sx = divmod(s, W)
    n_b = 1 if shared else team_size
    beliefs = [p.copy() for _ in range(n_b)]
    pos = [(cx, cy)] * team_size
    key = np.uint64(stream_key(seed, 0, streams[2]))
    for t in range(1, max_steps + 1):
        if shared:
            acts = team_decide(beliefs[0], pos, moves, like, space_aware, rule)
        else:
            acts = [decide(beliefs[k], *pos[k], moves, like, space_aware)[0] for k in range(team_size)]
        pos = [(x + moves[a][0], y + moves[a][1]) for (x, y), a in zip(pos, acts)]
        if any(q == (sx, sy) for q in pos):
            return t, True, h0, (sx, sy)
        for k, (x, y) in enumerate(pos):
            u = uniform(key, t, k)
            d = distance(sx - x, sy - y, like.norm)
            probs = [hit_probability(h, d, like.L, like.I, like.dims, like.n_hits) for h in range(like.n_hits)]
            cdf = np.cumsum(probs)
            hit = int(np.flatnonzero(u < cdf[:-1])[0]) if np.any(u < cdf[:-1]) else like.n_hits - 1
            b = 0 if shared else k
            beliefs[b] = update(beliefs[b], like(hit, x, y), x, y)
    return max_steps, False, h0, (sx, sy)


def first_hit_draw(uniform, stream_key, stream, seed, first_hit_cdf):
    """The first hit drawn as the package draws it: the first ``h`` with ``u < cdf[h]``."""
    u0 = uniform(np.uint64(stream_key(seed, 0, stream)), 0, 0)
    cdf = np.asarray(first_hit_cdf)
    return int(np.flatnonzero(u0 < cdf)[0]) if u0 < cdf[-1] else len(cdf) - 1


def bayesian_episode(shape, start, seed, uniform, stream_key, streams, moves, like, first_hit_cdf,
                     space_aware=False, max_steps=200, stop_p=1e-6, stuck_after=0):
    """One episode of otto-benchmark's Bayesian protocol (its evaluate.py with DRAW_SOURCE = False),
    step by step: no source; ``T += p_not_found``, ``p_not_found *= 1 - p_end`` after each move; a
    hit drawn from its predictive law given the source is elsewhere; stop when
    ``p_not_found < stop_p`` or ``p_end > 1 - 1e-10``, or (``stuck_after > 0``) as otto's isotropic
    ``_is_agent_stuck`` says: back on the cell of two steps before more than ``stuck_after`` times
    in a row. Returns ``(steps, T, p_not_found, h0, stuck)``."""
    H, W = shape
    x, y = start
    h0 = first_hit_draw(uniform, stream_key, streams[0], seed, first_hit_cdf)
    p = np.ones(shape) / (H * W - 1)
    p[y, x] = 0
    p = update(p, like(h0, x, y), x, y)
    key = np.uint64(stream_key(seed, 0, streams[2]))
    expected, not_found = 0.0, 1.0
    trail = [None, None]  # the cells two and one steps ago
    repeats = 0
    for t in range(1, max_steps + 1):
        a, _ = decide(p, x, y, moves, like, space_aware)
        trail = [trail[1], (x, y)]
        x, y = x + moves[a][0], y + moves[a][1]
        repeats = repeats + 1 if trail[0] == (x, y) else 0
        p_end = p[y, x]
        expected += not_found
        not_found *= 1 - p_end
        if not_found < stop_p or p_end > 1 - EPS:
            return t, expected, not_found, h0, False
        if t == max_steps:
            break
        if stuck_after and repeats > stuck_after:
            return t, expected, not_found, h0, True
        predictive = [float((p * like(h, x, y)).sum()) for h in range(like.n_hits)]
        target = uniform(key, t, 0) * sum(predictive)
        acc, hit = 0.0, 0
        for h, v in enumerate(predictive):
            if v > 0:
                acc, hit = acc + v, h
                if target < acc:
                    break
        p = update(p, like(hit, x, y), x, y)
    return max_steps, expected, not_found, h0, False
