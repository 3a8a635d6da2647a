"""Kernels of the Poisson-hit plume: draws and Bayesian belief updates, one function per role for
2-D and 3-D.

Pure functions over explicit arrays; the tables come from ``PoissonHits``
(``plume_multi.models.plumes.poisson_hits``). A belief is ``(H, W)`` float64 indexed ``[y, x]``,
or ``(D, H, W)`` indexed ``[z, y, x]`` in 3-D, non-negative, summing to 1. A cell is a tuple
``(x, y)`` or ``(x, y, z)``, an offset ``(dx, dy[, dz])`` likewise: Numba compiles each function
once per tuple length (one source for every dimension):

* ``lik`` ``(n_hits, 2H-1, 2W-1)`` (``(n_hits, 2D-1, 2H-1, 2W-1)``) float64: ``Pr(h | offset)``
  centred, entry ``[h, dy + H-1, dx + W-1]`` (``[h, dz + D-1, dy + H-1, dx + W-1]``) for the source
  at offset ``(dx, dy[, dz])`` from the agent (0 at the centre: an agent on the source draws no
  hit). For an agent at ``cell`` the window ``lik[h, H-1-y : 2H-1-y, W-1-x : 2W-1-x]`` lines up
  with the grid, so loops run over contiguous memory with no square root or absolute value per
  cell.
* ``solid``: ``None`` (no walls) or a bool array of the belief's shape, True where a cell is solid
  (``Scenario(walls=...)``). Walls hold no source: a first belief puts no mass on a solid cell,
  and no update puts any back (a zero times a likelihood stays zero). Hits keep their free-space
  law (``docs/walls.md``): the likelihood is the same table among walls.

Random draws are counter-based (``rng.uniform(rng.stream_key(seed, episode, STREAM), a, b)``):
the first hit and the source at counters ``(0, 0)`` of their streams, the hit of agent ``k`` at
step ``t`` at ``(t, k)`` of ``STREAM_HITS``. Results never depend on thread count.

Totals over a belief (the normalization of a Bayes update, the source draw after the first hit)
are summed as NumPy sums the beliefs of otto-benchmark (Loisy & Heinonen 2023), which are indexed
``[x, y]`` (otto's 3-D ones ``[x, y, z]``): NumPy's pairwise summation over the cells in x-major
order (``numpy_sum.window_sum``). So a belief after the same hits is bit for bit
``p * L / (p * L).sum()`` of that code, and of the plain NumPy references in tests/.

The infotaxis decisions that read these tables are in ``plume_multi.policies.infotaxis_kernels``.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import types
from numba.extending import overload

from ....engine import rng
from ....engine.jit import njit
from .numpy_sum import window_sum

__all__ = [
    "STREAM_FIRST_HIT", "STREAM_SOURCE", "STREAM_HITS", "BeliefTables",
    "draw_first_hit", "draw_first_hit_at", "draw_source", "draw_source_after", "draw_hit", "init_belief",
    "update_belief", "hit_mass", "draw_weighted", "centred_belief", "observe_beliefs", "write_beliefs", "window_sum",
    "cell_of", "moved", "inside", "solid_at", "free_cells",
]

# Stream numbers of this model (rng.STREAM_STARTS = 0 is the engine's).
STREAM_FIRST_HIT = 0x504F01
STREAM_SOURCE = 0x504F02
STREAM_HITS = 0x504F03

# What a Bayesian searcher reads of a Poisson-hit plume, in one record: ``likelihood`` (the centred
# ``lik`` above), ``likelihood_log`` (``(n_hits + 1, ...)``: ``L log L`` of each hit value, then
# their sum; ``PoissonHitPlume.centred_likelihood_log``), ``manhattan`` (``|dx| + |dy| [+ |dz|]``
# centred, the belief's dimensions), ``first_hit_cdf`` ``(n_hits,)``.
BeliefTables = namedtuple("BeliefTables", "likelihood likelihood_log manhattan first_hit_cdf")


# ------------------------------------------------------------------------------------- cells
# One compiled body per dimension, picked by the types (a tuple's length, an array's ndim).

def cell_of(pos, i, p):
    """In compiled code: row ``i`` of the ``(M, dims)`` cells ``pos`` as a cell tuple, of the
    length the belief ``p`` (``(H, W)`` or ``(D, H, W)``) says."""


@overload(cell_of, inline="always")
def _cell_of(pos, i, p):
    if p.ndim == 2:
        return lambda pos, i, p: (pos[i, 0], pos[i, 1])
    return lambda pos, i, p: (pos[i, 0], pos[i, 1], pos[i, 2])


def moved(cell, moves, m):
    """In compiled code: ``cell`` moved by the step ``moves[m]`` (``moves`` ``(K, len(cell))``)."""


@overload(moved, inline="always")
def _moved(cell, moves, m):
    if len(cell) == 2:
        return lambda cell, moves, m: (cell[0] + moves[m, 0], cell[1] + moves[m, 1])
    return lambda cell, moves, m: (cell[0] + moves[m, 0], cell[1] + moves[m, 1], cell[2] + moves[m, 2])


@njit(cache=True, inline="always")
def inside(p, cell):
    """Whether ``cell`` lies on the grid of the belief ``p`` (``cell[k]`` indexes axis ``ndim-1-k``)."""
    n = len(cell)
    for k in range(n):
        if cell[k] < 0 or cell[k] >= p.shape[n - 1 - k]:
            return False
    return True


def solid_at(solid, cell):
    """In compiled code: whether ``cell`` (on the grid) is solid; always False when ``solid`` is
    None (no walls: the test compiles away)."""


@overload(solid_at, inline="always")
def _solid_at(solid, cell):
    if isinstance(solid, types.NoneType):
        return lambda solid, cell: False
    return lambda solid, cell: solid[cell[::-1]]


def free_cells(solid, p):
    """In compiled code: the number of cells of ``p``'s grid not solid (all of them without walls)."""


@overload(free_cells, inline="always")
def _free_cells(solid, p):
    if isinstance(solid, types.NoneType):
        return lambda solid, p: p.size

    def impl(solid, p):
        flat = solid.reshape(solid.size)
        n = 0
        for i in range(flat.shape[0]):
            n += not flat[i]
        return n
    return impl


def _offset_index(lik, hit, offset):
    """In compiled code: the index of ``lik`` for ``hit`` at ``offset`` (the centred table)."""


@overload(_offset_index, inline="always")
def _offset_index_impl(lik, hit, offset):
    if len(offset) == 2:
        return lambda lik, hit, offset: (hit, offset[1] + (lik.shape[1] - 1) // 2, offset[0] + (lik.shape[2] - 1) // 2)
    return lambda lik, hit, offset: (hit, offset[2] + (lik.shape[1] - 1) // 2, offset[1] + (lik.shape[2] - 1) // 2,
                                     offset[0] + (lik.shape[3] - 1) // 2)


def _corner(shape, cell):
    """In compiled code: where the window of a centred table for an agent at ``cell`` starts on a
    grid of ``shape`` (``(H, W)`` or ``(D, H, W)``): ``(H-1-y, W-1-x)`` (``(D-1-z, H-1-y, W-1-x)``),
    in the array's axis order."""


@overload(_corner, inline="always")
def _corner_impl(shape, cell):
    if len(shape) == 2:
        return lambda shape, cell: (shape[0] - 1 - cell[1], shape[1] - 1 - cell[0])
    return lambda shape, cell: (shape[0] - 1 - cell[2], shape[1] - 1 - cell[1], shape[2] - 1 - cell[0])


# ------------------------------------------------------------------------------------- draws
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
def draw_first_hit_at(seed, episode, lik, offset):
    """The first hit ``h0 >= 1`` of an episode whose (fixed) source lies at ``offset``
    ``(dx, dy[, dz])`` from the first agent: a draw from ``Pr(h | offset)`` conditioned on
    ``h >= 1``, at the same counters as ``draw_first_hit``. 0 when no hit ``>= 1`` is possible there
    (the models refuse such a start)."""
    index = _offset_index(lik, 0, offset)
    return draw_weighted(lik[(slice(None),) + index[1:]], 1,
                         rng.uniform(rng.stream_key(seed, episode, STREAM_FIRST_HIT), 0, 0))


def _cell_at(shape, flat):
    """In compiled code: the cell ``(x, y[, z])`` of the row-major index ``flat`` of a grid of
    ``shape``; ``(-1, -1[, -1])`` for ``flat < 0`` (no cell)."""


@overload(_cell_at, inline="always")
def _cell_at_impl(shape, flat):
    if len(shape) == 2:
        def impl(shape, flat):
            if flat < 0:
                return (np.int64(-1), np.int64(-1))
            y, x = divmod(np.int64(flat), np.int64(shape[1]))
            return (x, y)
        return impl

    def impl3(shape, flat):
        if flat < 0:
            return (np.int64(-1), np.int64(-1), np.int64(-1))
        z, rest = divmod(np.int64(flat), np.int64(shape[1] * shape[2]))
        y, x = divmod(rest, np.int64(shape[2]))
        return (x, y, z)
    return impl3


@njit(cache=True)
def draw_source(seed, episode, belief):
    """The source cell ``(x, y[, z])`` drawn from ``belief`` (cells in row-major order; C-contiguous)."""
    key = rng.stream_key(seed, episode, STREAM_SOURCE)
    u = rng.uniform(key, 0, 0)
    flat = belief.reshape(belief.size)
    acc = 0.0
    last = -1
    for i in range(flat.shape[0]):
        p = flat[i]
        if p > 0.0:
            acc += p
            last = i
            if u < acc:
                break
    return _cell_at(belief.shape, last)  # (-1, -1[, -1]) when nothing can be drawn


@njit(cache=True)
def draw_source_after(seed, episode, lik, cell, first_hit, shape):
    """``draw_source`` from the belief ``init_belief`` would build without walls on a grid of
    ``shape`` (``(H, W)`` or ``(D, H, W)``) for an agent at ``cell`` after ``first_hit``, without a
    belief array: the same operations in the same order, so the same cell, bit for bit."""
    n = 1
    for k in range(len(shape)):
        n *= shape[k]
    c = 1.0 / (n - 1)
    corner = _corner(shape, cell)
    plane = lik[first_hit]
    s = window_sum(plane, corner, shape, c)  # 0 at the cell: the table is 0 there
    key = rng.stream_key(seed, episode, STREAM_SOURCE)
    u = rng.uniform(key, 0, 0)
    acc = 0.0
    last = -1
    for i in range(n):
        p = (c * plane[_shifted(_cell_at(shape, i), corner)]) / s
        if p > 0.0:
            acc += p
            last = i
            if u < acc:
                break
    return _cell_at(shape, last)


def _shifted(cell, corner):
    """In compiled code: the index in a centred table of ``cell`` seen from the window at ``corner``."""


@overload(_shifted, inline="always")
def _shifted_impl(cell, corner):
    if len(cell) == 2:
        return lambda cell, corner: (cell[1] + corner[0], cell[0] + corner[1])
    return lambda cell, corner: (cell[2] + corner[0], cell[1] + corner[1], cell[0] + corner[2])


@njit(cache=True, inline="always")
def draw_hit(key, t, k, lik, offset):
    """A hit ``0..n_hits-1`` for an agent at ``offset`` ``!= 0`` from the source, from the uniform
    at counters ``(t, k)`` of ``key`` (step, agent)."""
    index = _offset_index(lik, 0, offset)
    u = rng.uniform(key, t, k)
    acc = 0.0
    nh = lik.shape[0]
    for h in range(nh - 1):
        acc += lik[(h,) + index[1:]]
        if u < acc:
            return h
    return nh - 1


# ------------------------------------------------------------------------------------- beliefs
def _rows(p):
    """In compiled code: ``p`` as rows ``(cells / W, W)`` (a view of a C-contiguous belief)."""


@overload(_rows, inline="always")
def _rows_impl(p):
    if p.ndim == 2:
        return lambda p: p
    return lambda p: p.reshape((p.shape[0] * p.shape[1], p.shape[2]))


@njit(cache=True)
def hit_mass(belief, lik, hit, cell):
    """``sum_s p(s) Pr(hit | s - cell)``: how likely ``hit`` is at ``cell`` under ``belief``
    (unnormalized when ``belief`` is; the likelihood vanishes at the agent's cell)."""
    corner = _corner(belief.shape, cell)
    plane = lik[hit]
    a = 0.0
    if belief.ndim == 2:
        h, w = belief.shape
        for yy in range(h):
            row = plane[yy + corner[0], corner[1]:corner[1] + w]
            for xx in range(w):
                a += belief[yy, xx] * row[xx]
        return a
    d, h, w = belief.shape
    for zz in range(d):
        for yy in range(h):
            row = plane[zz + corner[0], yy + corner[1], corner[2]:corner[2] + w]
            for xx in range(w):
                a += belief[zz, yy, xx] * row[xx]
    return a


@njit(cache=True, error_model="numpy")
def update_belief(belief, lik, cell, hit):
    """Bayes: ``p(cell) = 0``, ``p *= Pr(hit | offset to cell)``, normalize (in place).

    Returns the total before normalizing (0 when the hit was impossible under ``belief``; the
    belief is then left all zero). The total is ``window_sum``'s: bit for bit NumPy's
    ``(p * L).sum()`` of a belief indexed ``[x, y]`` (``[x, y, z]``), as otto-benchmark (otto) keeps
    it. ``belief`` C-contiguous. A cell with no mass keeps none (solid cells stay empty)."""
    corner = _corner(belief.shape, cell)
    plane = lik[hit]
    rows = _rows(belief)
    w = belief.shape[belief.ndim - 1]
    if belief.ndim == 2:
        for yy in range(belief.shape[0]):
            row = plane[yy + corner[0], corner[1]:corner[1] + w]
            for xx in range(w):
                rows[yy, xx] = rows[yy, xx] * row[xx]
    else:
        h = belief.shape[1]
        for zz in range(belief.shape[0]):
            for yy in range(h):
                row = plane[zz + corner[0], yy + corner[1], corner[2]:corner[2] + w]
                r = zz * h + yy
                for xx in range(w):
                    rows[r, xx] = rows[r, xx] * row[xx]
    zero = corner[0] - corner[0]
    if belief.ndim == 2:
        s = window_sum(belief, (zero, zero), belief.shape, 1.0)
    else:
        s = window_sum(belief, (zero, zero, zero), belief.shape, 1.0)
    if s > 0.0:
        for r in range(rows.shape[0]):
            for xx in range(w):
                rows[r, xx] = rows[r, xx] / s
    return s


@njit(cache=True)
def init_belief(belief, lik, cell, first_hit, solid):
    """The belief of an agent at ``cell`` after its first hit: uniform over the other free cells
    (``1 / (free cells - 1)`` each, 0 on solid ones; ``solid`` None: every cell is free), then
    ``update_belief`` with ``first_hit`` (in place). Returns its total."""
    n_free = free_cells(solid, belief)
    c = 1.0 / (n_free - 1)
    flat = belief.reshape(belief.size)
    if solid is None:
        flat[:] = c
    else:
        walls = solid.reshape(solid.size)
        for i in range(flat.shape[0]):
            flat[i] = 0.0 if walls[i] else c
    belief[cell[::-1]] = 0.0
    return update_belief(belief, lik, cell, first_hit)


@njit(cache=True)
def centred_belief(belief, cell, out):
    """Write ``belief`` centred on ``cell`` into ``out`` ``((2H-1) * (2W-1),)`` (3-D:
    ``((2D-1)(2H-1)(2W-1),)``), float32 or float64, a row-major image of the centred table's shape,
    zero outside the grid: the image's centre is the agent's cell, entry ``[dy + H-1, dx + W-1]``
    (``[dz + D-1, dy + H-1, dx + W-1]``) the cell at offset ``(dx, dy[, dz])``."""
    corner = _corner(belief.shape, cell)
    out[:] = 0.0
    w = belief.shape[belief.ndim - 1]
    ww = 2 * w - 1
    if belief.ndim == 2:
        for yy in range(belief.shape[0]):
            base = (yy + corner[0]) * ww + corner[1]
            for xx in range(w):
                out[base + xx] = belief[yy, xx]
        return
    h = belief.shape[1]
    plane = (2 * h - 1) * ww
    for zz in range(belief.shape[0]):
        for yy in range(h):
            base = (zz + corner[0]) * plane + (yy + corner[1]) * ww + corner[2]
            for xx in range(w):
                out[base + xx] = belief[zz, yy, xx]


@njit(cache=True)
def observe_beliefs(beliefs, lik, world, shared, first_hit, obs, col, solid):
    """The ``Belief`` sensor's work for the world ``world.b`` after its agents moved (and updated).

    ``world``: a record with ``b``, ``n_agents``, ``first``, ``was_done`` and ``pos`` (``(B*N,
    dims)`` int32 cells; the engine's ``WorldView``). At a reset (``first``) the belief(s) start
    from ``first_hit`` (``init_belief``, no mass on the world's ``solid`` cells: None without
    walls): one shared belief ``beliefs[b]`` from the first agent's cell (``shared``), else
    ``beliefs[i]`` of each agent ``i`` from its own cell. Then each agent's belief, centred on it,
    is written into ``obs[i, col : col + size]`` (``centred_belief``), unless the world was already
    done before this step (``was_done``, stepping on with autoreset off: nothing changed).
    ``beliefs`` ``(B or B*N, H, W)`` (``(B or B*N, D, H, W)``) float64; ``obs`` ``(B*N, n)`` float32.
    """
    b = world.b
    n_agents = world.n_agents
    base = b * n_agents
    pos = world.pos
    if world.first:
        if shared:
            p = beliefs[b]
            init_belief(p, lik, cell_of(pos, base, p), first_hit, solid)
        else:
            for i in range(base, base + n_agents):
                p = beliefs[i]
                init_belief(p, lik, cell_of(pos, i, p), first_hit, solid)
    elif world.was_done:
        return
    write_beliefs(beliefs, world, shared, obs, col)


@njit(cache=True)
def write_beliefs(beliefs, world, shared, obs, col):
    """Each agent of the world ``world.b`` writes its belief (or the world's shared one), centred on
    its cell, into ``obs[i, col : col + size]`` (``centred_belief``; ``observe_beliefs``' last part)."""
    b = world.b
    base = b * world.n_agents
    size = 1
    for k in range(1, beliefs.ndim):
        size *= 2 * beliefs.shape[k] - 1
    pos = world.pos
    for i in range(base, base + world.n_agents):
        p = beliefs[b if shared else i]
        centred_belief(p, cell_of(pos, i, p), obs[i, col:col + size])
