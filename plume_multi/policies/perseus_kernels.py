"""Compiled pieces of ``policies.Perseus``: alpha-vector values of beliefs, and Perseus backups.

One layout for 1-D, 2-D and 3-D searches (a 2-D belief ``(H, W)`` is ``(1, H, W)``, a 1-D one
``(1, 1, W)``; cells are ``(x, y, z)`` with ``z = 0`` below 3-D), so each function is written once:

* a belief ``p`` ``(D, H, W)`` float64 over the source's cell, indexed ``[z, y, x]``;
* the offsets of the source from the agent, ``(dx, dy, dz)``, fill the box ``(2D-1, 2H-1, 2W-1)``
  (the layout of the plume's ``centred_likelihood``: ``[dz + D-1, dy + H-1, dx + W-1]``), numbered
  in row-major order (``S`` of them);
* ``Alphas``: ``table`` ``(S, capacity)`` float64, column ``i`` the alpha vector ``i`` over the
  offsets, and ``actions`` ``(capacity,)`` int64; the first ``count`` columns are the set. Stored
  by offset, so that the values of every vector at one offset are one contiguous row: the value of
  a belief under all vectors is a sum of rows (``p(y)`` times the row of ``y - c``), vectorized over
  the vectors, and a block of columns stays in cache while every agent reads it;
* ``Tables``: ``lik`` ``(n_hits, S)`` the plume's centred likelihood (0 at the centre), ``moves``
  ``(K, 3)`` int64 the body's moves, ``discount`` and ``floor`` (the value of an offset a move
  takes out of the box, ``-1 / (1 - discount)``: never read by a move that stays in the grid).

A move whose cell leaves the grid is never taken: an alpha vector counts for an agent only where its
action keeps the agent inside the grid. Every value is a sum over the belief's cells in row-major
order (cells of probability 0 skipped, which adds nothing), one thread per output: the results never
depend on the thread count, and a vector's value computed alone (``window_dot``) equals its value
among all (``values``) bit for bit.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import prange

from ..engine.jit import njit

__all__: list = []  # the compiled pieces behind policies.Perseus

Tables = namedtuple("Tables", "lik moves discount floor")
Alphas = namedtuple("Alphas", "table actions")

# Vectors valued together by one thread: the window of an agent's belief over a block of columns
# stays within this many bytes (half of this machine's 4 MiB L2), so the next agent reads it from
# cache; and the inner loop over a block's columns is long enough to vectorize well (19 x 19, 256
# agents x 1024 vectors, one thread: 0.34 GMAC/s with blocks of 16 columns, 0.64 with 32, 1.19 with
# 128, 1.65 with 256). Blocks split the outputs only: each value is summed in the same order.
BLOCK_BYTES = 2**21
MIN_BLOCK, MAX_BLOCK = 32, 512


def block_for(cells: int) -> int:
    """Columns per block for beliefs of ``cells`` cells: the largest power of two in
    ``MIN_BLOCK..MAX_BLOCK`` whose window of ``cells`` rows fits ``BLOCK_BYTES``."""
    block = MAX_BLOCK
    while block > MIN_BLOCK and cells * block * 8 > BLOCK_BYTES:
        block //= 2
    return block


@njit(cache=True, inline="always")
def _inside(x, y, z, d, h, w):
    return 0 <= x < w and 0 <= y < h and 0 <= z < d


@njit(cache=True, inline="always")
def _origin(d, h, w, cx, cy, cz):
    """The offset index of cell ``(0, 0, 0)`` for an agent at ``c``; cell ``(x, y, z)`` is at
    ``origin + (z * (2H-1) + y) * (2W-1) + x``."""
    return ((d - 1 - cz) * (2 * h - 1) + (h - 1 - cy)) * (2 * w - 1) + (w - 1 - cx)


@njit(cache=True, inline="always")
def _window_sums(p, o, table, i0, n, acc):
    """``acc[k] += sum_y p[y] table[o + offset(y), i0 + k]`` for ``k < n``: the values of ``p``
    ``(D, H, W)`` under columns ``i0..i0+n-1`` of ``table``, ``o`` the ``_origin`` of the agent's
    cell. Cells in row-major order, those of probability 0 skipped (they add nothing)."""
    d, h, w = p.shape
    sw = 2 * w - 1
    for z in range(d):
        for y in range(h):
            base = o + (z * (2 * h - 1) + y) * sw
            for x in range(w):
                v = p[z, y, x]
                if v != 0.0:
                    row = table[base + x, i0:i0 + n]
                    for k in range(n):  # a loop of unknown length: vectorized with alias checks
                        acc[k] += v * row[k]


@njit(cache=True)
def window_dot(p, vector, cx, cy, cz):
    """``sum_y p[y] vector[y - c]``: the value of belief ``p`` ``(D, H, W)`` under one alpha vector
    ``(S,)`` (box layout) for an agent at ``(cx, cy, cz)``; the very sums of ``values``."""
    d, h, w = p.shape
    acc = np.zeros(1)
    _window_sums(p, _origin(d, h, w, cx, cy, cz), vector.reshape((vector.shape[0], 1)), 0, 1, acc)
    return acc[0]


@njit(cache=True, parallel=True)
def values(beliefs, owner, cells, alphas, count, block, out):
    """``out[m, i]`` ``(M, count)``: the value of agent ``m``'s belief ``beliefs[owner[m]]``
    (``(G, D, H, W)``) at ``cells[m]`` ``(M, 3)`` int64 under vector ``i``, for every vector
    (whether its move is allowed is ``best_of``'s business). Parallel over blocks of ``block``
    vectors (``block_for``), each running over every agent."""
    table = alphas.table
    d, h, w = beliefs.shape[1], beliefs.shape[2], beliefs.shape[3]
    for blk in prange((count + block - 1) // block):
        i0 = blk * block
        n = min(block, count - i0)
        acc = np.empty(n)
        for m in range(cells.shape[0]):
            acc[:] = 0.0
            _window_sums(beliefs[owner[m]], _origin(d, h, w, cells[m, 0], cells[m, 1], cells[m, 2]), table, i0, n,
                         acc)
            out[m, i0:i0 + n] = acc


@njit(cache=True, parallel=True)
def best_of(vals, cells, actions, count, moves, shape, active, scores, best):
    """From ``vals`` ``(M, count)`` (``values``): ``scores`` ``(M, K)``, the value of the best
    vector of each move (``-inf`` for a move that leaves the grid ``shape`` ``(D, H, W)``, that no
    vector has, or an inactive agent: ``active`` ``(M,)`` bool), and ``best`` ``(M,)`` int64, the
    first vector of highest value among those whose move stays in the grid (``-1`` when none).
    Parallel over agents."""
    d, h, w = shape[0], shape[1], shape[2]
    for m in prange(cells.shape[0]):
        for k in range(moves.shape[0]):
            scores[m, k] = -np.inf
        best[m] = -1
        if not active[m]:
            continue
        cx, cy, cz = cells[m, 0], cells[m, 1], cells[m, 2]
        top = -np.inf
        for i in range(count):
            a = actions[i]
            if not _inside(cx + moves[a, 0], cy + moves[a, 1], cz + moves[a, 2], d, h, w):
                continue
            v = vals[m, i]
            if v > scores[m, a]:
                scores[m, a] = v
            if v > top:
                top = v
                best[m] = i


@njit(cache=True, parallel=True)
def raise_values(beliefs, cells, todo, vector, action, moves, index, current, best):
    """Raise ``current[b]`` (and set ``best[b] = index``) for each ``b`` of ``todo`` ``(n,)`` int64
    whose belief ``beliefs[b]`` ``(B, D, H, W)`` at ``cells[b]`` is worth more under ``vector``
    ``(S,)`` (the alpha vector of ``action``, numbered ``index``) than ``current[b]``: Perseus's
    check of which beliefs a new vector improved. Parallel over ``todo``."""
    d, h, w = beliefs.shape[1], beliefs.shape[2], beliefs.shape[3]
    for t in prange(todo.shape[0]):
        b = todo[t]
        cx, cy, cz = cells[b, 0], cells[b, 1], cells[b, 2]
        if not _inside(cx + moves[action, 0], cy + moves[action, 1], cz + moves[action, 2], d, h, w):
            continue
        v = window_dot(beliefs[b], vector, cx, cy, cz)
        if v > current[b]:
            current[b] = v
            best[b] = index


@njit(cache=True, parallel=True)
def _successor_values(p, cell, alphas, count, tables, block, dots):
    """``dots[a, h, i] = sum_y p(y) L_h(y - c') alpha_i(y - c')`` with ``c' = c + move_a``: the
    unnormalized belief after move ``a`` and hit ``h``, valued by vector ``i`` (rows of moves that
    leave the grid are not written). Parallel over blocks of vectors."""
    table = alphas.table
    lik, moves = tables.lik, tables.moves
    d, h, w = p.shape
    sw = 2 * w - 1
    n_hits = lik.shape[0]
    k_moves = moves.shape[0]
    for blk in prange((count + block - 1) // block):
        i0 = blk * block
        n = min(block, count - i0)
        acc = np.empty((n_hits, n))
        for a in range(k_moves):
            nx, ny, nz = cell[0] + moves[a, 0], cell[1] + moves[a, 1], cell[2] + moves[a, 2]
            if not _inside(nx, ny, nz, d, h, w):
                continue
            o = _origin(d, h, w, nx, ny, nz)
            acc[:, :] = 0.0
            for z in range(d):
                for y in range(h):
                    base = o + (z * (2 * h - 1) + y) * sw
                    for x in range(w):
                        v = p[z, y, x]
                        if v == 0.0:
                            continue
                        s = base + x
                        row = table[s, i0:i0 + n]
                        for hit in range(n_hits):
                            c = v * lik[hit, s]
                            if c != 0.0:
                                ah = acc[hit]
                                for k in range(n):
                                    ah[k] += c * row[k]
            dots[a, :, i0:i0 + n] = acc


@njit(cache=True)
def backup(p, cell, alphas, count, tables, block, dots, choice, out):
    """The Perseus backup of belief ``p`` ``(D, H, W)`` at ``cell`` ``(3,)`` int64 against the first
    ``count`` vectors of ``alphas`` (valued in blocks of ``block`` vectors: ``block_for``).

    For each move ``a`` that stays in the grid and each hit ``h``, the best vector ``k(a, h)`` of
    the successor belief (``_successor_values``) among those whose own move stays in the grid from
    the new cell (ties to the lowest index); the move of highest ``-1 + discount * sum_h
    dots[a, h, k(a, h)]`` (ties to the lowest) is ``a*``, and ``out`` ``(S,)`` receives its
    vector: at offset ``delta`` (source minus agent), ``delta' = delta - move_a*``,

        out(delta) = -1 + discount * sum_h L_h(delta') alpha_k(a*, h)(delta')   (delta' in the box, not 0)
                   = -1                                                          (delta' = 0: found)
                   = floor                                                       (delta' out of the box)

    and ``out(0) = 0`` (on the source: the search is over). ``dots`` ``(K, n_hits, capacity)`` and
    ``choice`` ``(n_hits,)`` int64 are scratch. Returns ``(a*, window_dot(p, out, cell))``;
    ``a* = -1`` when no move stays in the grid.
    """
    lik, moves, discount, floor = tables.lik, tables.moves, tables.discount, tables.floor
    table, actions = alphas.table, alphas.actions
    d, h, w = p.shape
    cx, cy, cz = cell[0], cell[1], cell[2]
    _successor_values(p, cell, alphas, count, tables, block, dots)
    n_hits = lik.shape[0]
    best_a = -1
    best_v = -np.inf
    for a in range(moves.shape[0]):
        nx, ny, nz = cx + moves[a, 0], cy + moves[a, 1], cz + moves[a, 2]
        if not _inside(nx, ny, nz, d, h, w):
            continue
        total = 0.0
        for hit in range(n_hits):
            top = -np.inf
            for i in range(count):
                ai = actions[i]
                if dots[a, hit, i] > top and _inside(nx + moves[ai, 0], ny + moves[ai, 1], nz + moves[ai, 2], d, h, w):
                    top = dots[a, hit, i]
            total += top
        v = -1.0 + discount * total
        if v > best_v:
            best_v = v
            best_a = a
    if best_a < 0:
        return -1, -np.inf
    nx, ny, nz = cx + moves[best_a, 0], cy + moves[best_a, 1], cz + moves[best_a, 2]
    for hit in range(n_hits):
        top = -np.inf
        choice[hit] = 0
        for i in range(count):
            ai = actions[i]
            if dots[best_a, hit, i] > top and _inside(nx + moves[ai, 0], ny + moves[ai, 1], nz + moves[ai, 2], d, h, w):
                top = dots[best_a, hit, i]
                choice[hit] = i
    mx, my, mz = moves[best_a, 0], moves[best_a, 1], moves[best_a, 2]
    sd, sh, sw = 2 * d - 1, 2 * h - 1, 2 * w - 1
    for iz in range(sd):
        jz = iz - mz
        for iy in range(sh):
            jy = iy - my
            for ix in range(sw):
                jx = ix - mx
                s = (iz * sh + iy) * sw + ix
                if iz == d - 1 and iy == h - 1 and ix == w - 1:
                    out[s] = 0.0
                elif jz == d - 1 and jy == h - 1 and jx == w - 1:
                    out[s] = -1.0
                elif 0 <= jz < sd and 0 <= jy < sh and 0 <= jx < sw:
                    j = (jz * sh + jy) * sw + jx
                    acc = 0.0
                    for hit in range(n_hits):
                        acc += lik[hit, j] * table[j, choice[hit]]
                    out[s] = -1.0 + discount * acc
                else:
                    out[s] = floor
    return best_a, window_dot(p, out, cx, cy, cz)
