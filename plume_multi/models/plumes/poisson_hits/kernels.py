"""Kernels of the Poisson-hit plume: draws and Bayesian belief updates.

Pure functions over explicit arrays; the tables come from ``PoissonHits``
(``plume_multi.models.plumes.poisson_hits``):

* ``lik`` ``(n_hits, 2H-1, 2W-1)`` float64: ``Pr(h | offset)`` centred, entry
  ``[h, dy + H-1, dx + W-1]`` for the offset ``(dx, dy)`` from the agent (0 at the centre: an
  agent on the source draws no hit). For an agent at ``(x, y)`` the window
  ``lik[h, H-1-y : 2H-1-y, W-1-x : 2W-1-x]`` lines up with the grid, so loops run over
  contiguous memory with no square root or absolute value per cell.
* ``llogl`` same shape: ``lik * log(lik)`` (0 where ``lik = 0``).
* ``manh`` ``(2H-1, 2W-1)`` float64: ``|dx| + |dy|`` centred (space-aware infotaxis).
* ``moves`` ``(K, 2)`` int32 ``(dx, dy)`` per action; a move off the grid is not allowed.
* a belief: ``(H, W)`` float64 indexed ``[y, x]``, non-negative, summing to 1.

Random draws are counter-based (``rng.uniform(rng.stream_key(seed, episode, STREAM), a, b)``):
the first hit and the source at counters ``(0, 0)`` of their streams, the hit of agent ``k`` at
step ``t`` at ``(t, k)`` of ``STREAM_HITS``. Results never depend on thread count.

Totals over a belief (the normalization of a Bayes update, the source draw after the first hit)
are summed as NumPy sums the beliefs of otto-benchmark (Loisy & Heinonen 2023), which are indexed
``[x, y]``: NumPy's pairwise summation over the cells in x-major order (``column_sum``). So a
belief after the same hits is bit for bit ``p * L / (p * L).sum()`` of that code, and of the plain
NumPy references in tests/.

The infotaxis decisions that read these tables are in ``plume_multi.policies.infotaxis_kernels``.
"""

from __future__ import annotations


from ....engine import rng
from ....engine.jit import njit
from .numpy_sum import column_sum

__all__ = [
    "STREAM_FIRST_HIT", "STREAM_SOURCE", "STREAM_HITS",
    "draw_first_hit", "draw_first_hit_at", "draw_source", "draw_source_after", "draw_hit", "init_belief",
    "update_belief", "hit_mass", "draw_weighted", "centred_belief", "observe_beliefs", "column_sum",
]

# Stream numbers of this model (rng.STREAM_STARTS = 0 is the engine's).
STREAM_FIRST_HIT = 0x504F01
STREAM_SOURCE = 0x504F02
STREAM_HITS = 0x504F03



@njit(cache=True, inline="always")
def _draw_from_cdf(cdf, u):
    """First index ``k`` with ``u < cdf[k]`` (the last one when rounding leaves ``u`` above)."""
    n = cdf.shape[0]
    for k in range(n - 1):
        if u < cdf[k]:
            return k
    return n - 1


@njit(cache=True)
def draw_first_hit(seed, episode, first_hit_cdf):
    """The first hit ``h0 >= 1`` of an episode: ``first_hit_cdf`` ``(n_hits,)`` (``cdf[0] = 0``)."""
    key = rng.stream_key(seed, episode, STREAM_FIRST_HIT)
    return _draw_from_cdf(first_hit_cdf, rng.uniform(key, 0, 0))


@njit(cache=True)
def draw_weighted(weights, first, u):
    """The index ``k >= first`` drawn with probability proportional to ``weights[k] >= 0`` from the
    uniform ``u``: the first ``k`` whose cumulated weight exceeds ``u`` times the total (the last
    positive one when rounding leaves none; ``first - 1`` when every weight is 0)."""
    total = 0.0
    for k in range(first, weights.shape[0]):
        total += weights[k]
    target = u * total
    acc = 0.0
    last = first - 1
    for k in range(first, weights.shape[0]):
        p = weights[k]
        if p > 0.0:
            acc += p
            last = k
            if target < acc:
                return k
    return last


@njit(cache=True)
def draw_first_hit_at(seed, episode, lik, dx, dy):
    """The first hit ``h0 >= 1`` of an episode whose (fixed) source lies at offset ``(dx, dy)``
    from the first agent: a draw from ``Pr(h | offset)`` conditioned on ``h >= 1``, at the same
    counters as ``draw_first_hit``. 0 when no hit ``>= 1`` is possible there (the models refuse
    such a start)."""
    iy = dy + (lik.shape[1] - 1) // 2
    ix = dx + (lik.shape[2] - 1) // 2
    return draw_weighted(lik[:, iy, ix], 1, rng.uniform(rng.stream_key(seed, episode, STREAM_FIRST_HIT), 0, 0))


@njit(cache=True)
def draw_source(seed, episode, belief):
    """The source cell ``(x, y)`` drawn from ``belief`` ``(H, W)`` (cells in row-major order)."""
    key = rng.stream_key(seed, episode, STREAM_SOURCE)
    u = rng.uniform(key, 0, 0)
    h, w = belief.shape
    acc = 0.0
    last_x, last_y = -1, -1
    for y in range(h):
        for x in range(w):
            p = belief[y, x]
            if p > 0.0:
                acc += p
                last_x, last_y = x, y
                if u < acc:
                    return x, y
    return last_x, last_y


@njit(cache=True)
def draw_source_after(seed, episode, lik, x0, y0, first_hit, h, w):
    """``draw_source`` from the belief ``init_belief`` would build for an agent at ``(x0, y0)``
    after ``first_hit`` on an ``(h, w)`` grid, without a belief array: the same operations in
    the same order, so the same cell, bit for bit. Returns ``(x, y)``."""
    c = 1.0 / (h * w - 1)
    oy = h - 1 - y0
    ox = w - 1 - x0
    s = column_sum(lik[first_hit], oy, ox, h, w, c)  # 0 at (x0, y0): the table is 0 there
    key = rng.stream_key(seed, episode, STREAM_SOURCE)
    u = rng.uniform(key, 0, 0)
    acc = 0.0
    last_x, last_y = -1, -1
    for yy in range(h):
        for xx in range(w):
            p = (c * lik[first_hit, yy + oy, xx + ox]) / s
            if p > 0.0:
                acc += p
                last_x, last_y = xx, yy
                if u < acc:
                    return xx, yy
    return last_x, last_y


@njit(cache=True, inline="always")
def draw_hit(key, t, k, lik, dx, dy):
    """A hit ``0..n_hits-1`` for an agent at offset ``(dx, dy) != (0, 0)`` from the source,
    from the uniform at counters ``(t, k)`` of ``key`` (step, agent)."""
    iy = dy + (lik.shape[1] - 1) // 2
    ix = dx + (lik.shape[2] - 1) // 2
    u = rng.uniform(key, t, k)
    acc = 0.0
    nh = lik.shape[0]
    for h in range(nh - 1):
        acc += lik[h, iy, ix]
        if u < acc:
            return h
    return nh - 1


@njit(cache=True)
def hit_mass(belief, lik, hit, x, y):
    """``sum_s p(s) Pr(hit | s - (x, y))``: how likely ``hit`` is at ``(x, y)`` under ``belief``
    ``(H, W)`` (unnormalized when ``belief`` is; the likelihood vanishes at the agent's cell)."""
    h, w = belief.shape
    oy = h - 1 - y
    ox = w - 1 - x
    a = 0.0
    for yy in range(h):
        row = lik[hit, yy + oy, ox:ox + w]
        for xx in range(w):
            a += belief[yy, xx] * row[xx]
    return a


@njit(cache=True, error_model="numpy")
def update_belief(belief, lik, x, y, hit):
    """Bayes: ``p(x, y) = 0``, ``p *= Pr(hit | distance to (x, y))``, normalize (in place).

    Returns the total before normalizing (0 when the hit was impossible under ``belief``; the
    belief is then left all zero). The total is ``column_sum``'s: bit for bit NumPy's
    ``(p * L).sum()`` of a belief indexed ``[x, y]``, as otto-benchmark keeps it. ``belief``
    C-contiguous."""
    h, w = belief.shape
    oy = h - 1 - y
    ox = w - 1 - x
    for yy in range(h):
        row = lik[hit, yy + oy, ox:ox + w]
        for xx in range(w):
            belief[yy, xx] = belief[yy, xx] * row[xx]
    s = column_sum(belief, 0, 0, h, w, 1.0)
    if s > 0.0:
        for yy in range(h):
            for xx in range(w):
                belief[yy, xx] = belief[yy, xx] / s
    return s


@njit(cache=True)
def init_belief(belief, lik, x, y, first_hit):
    """The belief of an agent at ``(x, y)`` after its first hit: uniform over the other cells,
    then ``update_belief`` with ``first_hit`` (in place)."""
    h, w = belief.shape
    belief[:, :] = 1.0 / (h * w - 1)
    belief[y, x] = 0.0
    return update_belief(belief, lik, x, y, first_hit)


@njit(cache=True)
def centred_belief(belief, x, y, out):
    """Write ``belief`` ``(H, W)`` centred on ``(x, y)`` into ``out`` ``((2H-1) * (2W-1),)``
    (float32 or float64, row-major ``(2H-1, 2W-1)`` image, zero outside the grid): the image's
    centre is the agent's cell, entry ``[dy + H-1, dx + W-1]`` the cell at offset ``(dx, dy)``."""
    h, w = belief.shape
    ww = 2 * w - 1
    out[:] = 0.0
    oy = h - 1 - y
    ox = w - 1 - x
    for yy in range(h):
        base = (yy + oy) * ww + ox
        for xx in range(w):
            out[base + xx] = belief[yy, xx]


@njit(cache=True)
def observe_beliefs(beliefs, lik, b, n_agents, shared, first, was_done, first_hit, pos, obs, col):
    """The ``Belief`` sensor's work for world ``b`` after its agents moved (and updated).

    At a reset (``first``) the belief(s) start from ``first_hit``: one shared belief
    ``beliefs[b]`` from the first agent's cell (``shared``), else ``beliefs[i]`` of each agent
    ``i`` from its own cell. Then each agent's belief, centred on it, is written into
    ``obs[i, col : col + (2H-1)(2W-1)]`` (``centred_belief``), unless the world was already done
    before this step (``was_done``, stepping on with autoreset off: nothing changed).
    ``beliefs`` ``(B or B*N, H, W)`` float64; ``pos`` ``(B*N, 2)`` int32; ``obs`` ``(B*N, D)``
    float32.
    """
    base = b * n_agents
    h, w = beliefs.shape[1], beliefs.shape[2]
    size = (2 * h - 1) * (2 * w - 1)
    if first:
        if shared:
            init_belief(beliefs[b], lik, pos[base, 0], pos[base, 1], first_hit)
        else:
            for i in range(base, base + n_agents):
                init_belief(beliefs[i], lik, pos[i, 0], pos[i, 1], first_hit)
    elif was_done:
        return
    for i in range(base, base + n_agents):
        g = b if shared else i
        centred_belief(beliefs[g], pos[i, 0], pos[i, 1], obs[i, col:col + size])
