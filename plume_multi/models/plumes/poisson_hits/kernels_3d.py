"""Kernels of the Poisson-hit plume in 3-D: draws and Bayesian belief updates (``kernels.py`` in 2-D).

The same functions as ``kernels.py`` with a third coordinate; the same streams and counters, so a
3-D world draws as a 2-D one does:

* ``lik`` ``(n_hits, 2D-1, 2H-1, 2W-1)`` float64: ``Pr(h | offset)`` centred, entry
  ``[h, dz + D-1, dy + H-1, dx + W-1]`` for the source at offset ``(dx, dy, dz)`` from the agent,
  0 at the centre. For an agent at ``(x, y, z)`` the window
  ``lik[h, D-1-z : 2D-1-z, H-1-y : 2H-1-y, W-1-x : 2W-1-x]`` lines up with the grid.
* a belief: ``(D, H, W)`` float64 indexed ``[z, y, x]``, non-negative, summing to 1; totals summed
  as NumPy sums otto's 3-D beliefs, indexed ``[x, y, z]`` (``numpy_sum.volume_sum``).

Cells are ``(x, y, z)``; the source is drawn over the cells in row-major ``[z, y, x]`` order.
"""

from __future__ import annotations

from ....engine import rng
from ....engine.jit import njit
from .kernels import STREAM_FIRST_HIT, STREAM_SOURCE, draw_weighted
from .numpy_sum import volume_sum

__all__ = ["draw_first_hit_at3", "draw_source3", "draw_source_after3", "draw_hit3", "init_belief3", "update_belief3",
           "hit_mass3", "centred_belief3", "observe_beliefs3"]


@njit(cache=True)
def draw_first_hit_at3(seed, episode, lik, dx, dy, dz):
    """``kernels.draw_first_hit_at`` for a source at offset ``(dx, dy, dz)``."""
    iz = dz + (lik.shape[1] - 1) // 2
    iy = dy + (lik.shape[2] - 1) // 2
    ix = dx + (lik.shape[3] - 1) // 2
    return draw_weighted(lik[:, iz, iy, ix], 1, rng.uniform(rng.stream_key(seed, episode, STREAM_FIRST_HIT), 0, 0))


@njit(cache=True)
def draw_source3(seed, episode, belief):
    """The source cell ``(x, y, z)`` drawn from ``belief`` ``(D, H, W)`` (cells in row-major order)."""
    u = rng.uniform(rng.stream_key(seed, episode, STREAM_SOURCE), 0, 0)
    d, h, w = belief.shape
    acc = 0.0
    last_x, last_y, last_z = -1, -1, -1
    for z in range(d):
        for y in range(h):
            for x in range(w):
                p = belief[z, y, x]
                if p > 0.0:
                    acc += p
                    last_x, last_y, last_z = x, y, z
                    if u < acc:
                        return x, y, z
    return last_x, last_y, last_z


@njit(cache=True)
def draw_source_after3(seed, episode, lik, x0, y0, z0, first_hit, d, h, w):
    """``draw_source3`` from the belief ``init_belief3`` would build for an agent at
    ``(x0, y0, z0)`` after ``first_hit``, without a belief array (bit for bit the same cell)."""
    c = 1.0 / (d * h * w - 1)
    oz = d - 1 - z0
    oy = h - 1 - y0
    ox = w - 1 - x0
    s = volume_sum(lik[first_hit], oz, oy, ox, d, h, w, c)  # 0 at (x0, y0, z0): the table is 0 there
    u = rng.uniform(rng.stream_key(seed, episode, STREAM_SOURCE), 0, 0)
    acc = 0.0
    last_x, last_y, last_z = -1, -1, -1
    for zz in range(d):
        for yy in range(h):
            for xx in range(w):
                p = (c * lik[first_hit, zz + oz, yy + oy, xx + ox]) / s
                if p > 0.0:
                    acc += p
                    last_x, last_y, last_z = xx, yy, zz
                    if u < acc:
                        return xx, yy, zz
    return last_x, last_y, last_z


@njit(cache=True, inline="always")
def draw_hit3(key, t, k, lik, dx, dy, dz):
    """A hit for an agent at offset ``(dx, dy, dz) != 0`` from the source, from the uniform at
    counters ``(t, k)`` of ``key``."""
    iz = dz + (lik.shape[1] - 1) // 2
    iy = dy + (lik.shape[2] - 1) // 2
    ix = dx + (lik.shape[3] - 1) // 2
    u = rng.uniform(key, t, k)
    acc = 0.0
    nh = lik.shape[0]
    for h in range(nh - 1):
        acc += lik[h, iz, iy, ix]
        if u < acc:
            return h
    return nh - 1


@njit(cache=True)
def hit_mass3(belief, lik, hit, x, y, z):
    """``kernels.hit_mass`` in 3-D: ``belief`` ``(D, H, W)``."""
    d, h, w = belief.shape
    a = 0.0
    for zz in range(d):
        for yy in range(h):
            row = lik[hit, zz + d - 1 - z, yy + h - 1 - y, w - 1 - x:2 * w - 1 - x]
            for xx in range(w):
                a += belief[zz, yy, xx] * row[xx]
    return a


@njit(cache=True, error_model="numpy")
def update_belief3(belief, lik, x, y, z, hit):
    """Bayes in 3-D: ``p *= Pr(hit | offset to (x, y, z))`` (0 at the agent's cell), normalized in
    place; the total (``volume_sum``: NumPy's sum of otto's ``[x, y, z]`` belief) is returned, 0
    when the hit was impossible (the belief is then left all zero). ``belief`` C-contiguous."""
    d, h, w = belief.shape
    oz = d - 1 - z
    oy = h - 1 - y
    ox = w - 1 - x
    for zz in range(d):
        for yy in range(h):
            row = lik[hit, zz + oz, yy + oy, ox:ox + w]
            for xx in range(w):
                belief[zz, yy, xx] = belief[zz, yy, xx] * row[xx]
    s = volume_sum(belief, 0, 0, 0, d, h, w, 1.0)
    if s > 0.0:
        for zz in range(d):
            for yy in range(h):
                for xx in range(w):
                    belief[zz, yy, xx] = belief[zz, yy, xx] / s
    return s


@njit(cache=True)
def init_belief3(belief, lik, x, y, z, first_hit):
    """The belief of an agent at ``(x, y, z)`` after its first hit: uniform over the other cells,
    then ``update_belief3`` (in place)."""
    d, h, w = belief.shape
    belief[:, :, :] = 1.0 / (d * h * w - 1)
    belief[z, y, x] = 0.0
    return update_belief3(belief, lik, x, y, z, first_hit)


@njit(cache=True)
def centred_belief3(belief, x, y, z, out):
    """``belief`` ``(D, H, W)`` centred on ``(x, y, z)`` into ``out`` ``((2D-1)(2H-1)(2W-1),)``
    (row-major ``(2D-1, 2H-1, 2W-1)``, zero outside the grid; the centre is the agent's cell)."""
    d, h, w = belief.shape
    ww = 2 * w - 1
    plane = (2 * h - 1) * ww
    out[:] = 0.0
    for zz in range(d):
        for yy in range(h):
            base = (zz + d - 1 - z) * plane + (yy + h - 1 - y) * ww + w - 1 - x
            for xx in range(w):
                out[base + xx] = belief[zz, yy, xx]


@njit(cache=True)
def observe_beliefs3(beliefs, lik, b, n_agents, shared, first, was_done, first_hit, pos, obs, col):
    """``kernels.observe_beliefs`` in 3-D: ``beliefs`` ``(B or B*N, D, H, W)``, ``pos`` ``(B*N, 3)``,
    each agent's belief centred on it written into ``obs[i, col : col + (2D-1)(2H-1)(2W-1)]``."""
    base = b * n_agents
    d, h, w = beliefs.shape[1], beliefs.shape[2], beliefs.shape[3]
    size = (2 * d - 1) * (2 * h - 1) * (2 * w - 1)
    if first:
        if shared:
            init_belief3(beliefs[b], lik, pos[base, 0], pos[base, 1], pos[base, 2], first_hit)
        else:
            for i in range(base, base + n_agents):
                init_belief3(beliefs[i], lik, pos[i, 0], pos[i, 1], pos[i, 2], first_hit)
    elif was_done:
        return
    for i in range(base, base + n_agents):
        g = b if shared else i
        centred_belief3(beliefs[g], pos[i, 0], pos[i, 1], pos[i, 2], obs[i, col:col + size])
