"""Infotaxis decision kernels in 3-D (``infotaxis_kernels.py`` in 2-D; the same quantities).

For a move to ``x'`` with belief ``p`` ``(D, H, W)`` and ``L_h(x) = Pr(h | x - x')``, the sums
``A_h = sum p L_h``, ``B_h = sum u L_h + sum p M_h`` (``u = p log p``, ``M_h = L_h log L_h``) and,
for space-aware infotaxis, ``C_h = sum p L_h D`` (``D`` the Manhattan distance to ``x'``) give the
expected entropy ``sum_h A_h S_h`` (``S_h = log A_h - B_h / A_h``) or the space-aware value, as in
2-D; hit 0 from the totals (``sum_h L_h = 1`` off the source).

Memory layout: the belief is copied into ``pp`` with rows padded to ``2W - 1`` (zeros), planes
``H (2W-1)`` apart; a table window's plane is ``(2H-1)(2W-1)`` apart. A plane of the belief meets its
table window as one contiguous run (narrow grids, ``W < 64``: padding included, no branch) or row
by row (wide ones). Away from the faces the six moves are scored in one pass per hit, run by run
and three windows per inner loop: the windows of neighbouring targets overlap, so the table entries
one inner loop reads are still in cache for the next (a 3-D table does not fit in a core's cache:
two separate passes of three cost 1.3x as much on 39^3).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from ..engine import rng
from ..engine.jit import njit
from ..models.plumes.poisson_hits.kernels import STREAM_HITS, draw_first_hit
from ..models.plumes.poisson_hits.kernels_3d import (draw_first_hit_at3, draw_hit3, draw_source3, hit_mass3,
                                                     init_belief3, update_belief3)
from .infotaxis_kernels import _FAST, FOUND_TOL, ROWS_FROM, RULE_BELIEVER, TIE_TOL, _hit_value, _p_log_p

__all__ = ["decide3", "decide_group3", "decide_batch3", "start_world3", "run_world3", "run_worlds3"]


@njit(cache=True, inline="always")
def _run_offsets(r, rows, plane_b, plane_t, ww, bs):
    """Offsets of run ``r`` in the belief and in a table window: plane runs of the padded belief
    (``rows == 0``) or row runs (``rows`` = H) of the belief as it is."""
    if rows == 0:
        return r * plane_b, r * plane_t
    z = r // rows
    y = r - z * rows
    return z * plane_b + y * bs, z * plane_t + y * ww


@njit(cache=True, fastmath=_FAST, error_model="numpy")
def _sums1(pp, up, lf, mf, df, base, n_runs, run, rows, plane_b, plane_t, ww, bs, with_lik, with_dist):
    """``(sum p L, sum u L, sum p M, sum p L D)`` over one window at ``base`` (terms not asked for are 0)."""
    a = 0.0
    b1 = 0.0
    b2 = 0.0
    c = 0.0
    for r in range(n_runs):
        ob, ot = _run_offsets(r, rows, plane_b, plane_t, ww, bs)
        pr = pp[ob:ob + run]
        mr = mf[base + ot:base + ot + run]
        dr = df[base + ot:base + ot + run]
        if with_lik:
            ur = up[ob:ob + run]
            lr = lf[base + ot:base + ot + run]
            for i in range(run):
                q = pr[i] * lr[i]
                a += q
                b1 += ur[i] * lr[i]
                b2 += pr[i] * mr[i]
                if with_dist:
                    c += q * dr[i]
        else:
            for i in range(run):
                b2 += pr[i] * mr[i]
                if with_dist:
                    c += pr[i] * dr[i]
    return a, b1, b2, c


@njit(cache=True, fastmath=_FAST, error_model="numpy", inline="always")
def _run3(pp, up, lf, mf, df, ob, ot, k0, k1, k2, run, with_lik, with_dist):
    """The twelve sums of three windows (bases ``k0, k1, k2``) over one run (at ``ob`` in the
    padded belief, ``ot`` in the windows), window by window: ``(A, U, M, C) x 3``."""
    a0 = a1 = a2 = 0.0
    u0 = u1 = u2 = 0.0
    m0 = m1 = m2 = 0.0
    c0 = c1 = c2 = 0.0
    pr = pp[ob:ob + run]
    ur = up[ob:ob + run]
    n0 = mf[k0 + ot:k0 + ot + run]
    n1 = mf[k1 + ot:k1 + ot + run]
    n2 = mf[k2 + ot:k2 + ot + run]
    l0 = lf[k0 + ot:k0 + ot + run]
    l1 = lf[k1 + ot:k1 + ot + run]
    l2 = lf[k2 + ot:k2 + ot + run]
    d0 = df[k0 + ot:k0 + ot + run]
    d1 = df[k1 + ot:k1 + ot + run]
    d2 = df[k2 + ot:k2 + ot + run]
    if with_lik and with_dist:
        for i in range(run):
            p = pr[i]
            u = ur[i]
            q0 = p * l0[i]
            q1 = p * l1[i]
            q2 = p * l2[i]
            a0 += q0
            a1 += q1
            a2 += q2
            u0 += u * l0[i]
            u1 += u * l1[i]
            u2 += u * l2[i]
            m0 += p * n0[i]
            m1 += p * n1[i]
            m2 += p * n2[i]
            c0 += q0 * d0[i]
            c1 += q1 * d1[i]
            c2 += q2 * d2[i]
    elif with_lik:
        for i in range(run):
            p = pr[i]
            u = ur[i]
            a0 += p * l0[i]
            a1 += p * l1[i]
            a2 += p * l2[i]
            u0 += u * l0[i]
            u1 += u * l1[i]
            u2 += u * l2[i]
            m0 += p * n0[i]
            m1 += p * n1[i]
            m2 += p * n2[i]
    elif with_dist:
        for i in range(run):
            p = pr[i]
            m0 += p * n0[i]
            m1 += p * n1[i]
            m2 += p * n2[i]
            c0 += p * d0[i]
            c1 += p * d1[i]
            c2 += p * d2[i]
    else:
        for i in range(run):
            p = pr[i]
            m0 += p * n0[i]
            m1 += p * n1[i]
            m2 += p * n2[i]
    return (a0, u0, m0, c0, a1, u1, m1, c1, a2, u2, m2, c2)


@njit(cache=True, fastmath=_FAST, error_model="numpy")
def _sums6(pp, up, lf, mf, df, ks, n_runs, run, rows, plane_b, plane_t, ww, bs, with_lik, with_dist):
    """The sums of six windows (bases ``ks``), run by run, three windows per inner loop: the table
    entries the first three read are still in cache for the other three (their windows overlap).
    24 values, window by window."""
    t = (0.0,) * 24
    for r in range(n_runs):
        ob, ot = _run_offsets(r, rows, plane_b, plane_t, ww, bs)
        x = _run3(pp, up, lf, mf, df, ob, ot, ks[0], ks[1], ks[2], run, with_lik, with_dist)
        y = _run3(pp, up, lf, mf, df, ob, ot, ks[3], ks[4], ks[5], run, with_lik, with_dist)
        t = (t[0] + x[0], t[1] + x[1], t[2] + x[2], t[3] + x[3], t[4] + x[4], t[5] + x[5], t[6] + x[6],
             t[7] + x[7], t[8] + x[8], t[9] + x[9], t[10] + x[10], t[11] + x[11], t[12] + y[0], t[13] + y[1],
             t[14] + y[2], t[15] + y[3], t[16] + y[4], t[17] + y[5], t[18] + y[6], t[19] + y[7], t[20] + y[8],
             t[21] + y[9], t[22] + y[10], t[23] + y[11])
    return t


@njit(cache=True, inline="always")
def _geometry(d, h, w):
    """``(ww, bs, plane_b, plane_t, n_runs, run, rows)``: the tables' row and plane strides
    ``ww``, ``plane_t``; narrow grids (``w < ROWS_FROM``): the belief padded (rows ``bs = ww`` apart,
    planes ``plane_b = h ww``), one run per plane; wider ones: the belief as it is (``bs = w``,
    ``plane_b = h w``), row by row."""
    ww = 2 * w - 1
    plane_t = (2 * h - 1) * ww
    if w < ROWS_FROM:
        return ww, ww, h * ww, plane_t, d, (h - 1) * ww + w, 0
    return ww, w, h * w, plane_t, d * h, w, h


@njit(cache=True, inline="always")
def _base(d, h, w, ww, plane_t, tx, ty, tz):
    """Where the table window of a move to ``(tx, ty, tz)`` starts (flat, per hit)."""
    return (d - 1 - tz) * plane_t + (h - 1 - ty) * ww + (w - 1 - tx)


@njit(cache=True, error_model="numpy")
def _move_score3(pp, up, total_p, total_u, likf, lloglf, manhf, d, h, w, tx, ty, tz, space_aware):
    """Infotaxis (or space-aware) score of moving to ``(tx, ty, tz)`` (one window)."""
    ww, bs, plane_b, plane_t, n_runs, run, rows = _geometry(d, h, w)
    base = _base(d, h, w, ww, plane_t, tx, ty, tz)
    t = tz * plane_b + ty * bs + tx
    rest_p = total_p - pp[t]
    rest_u = total_u - up[t]
    sum_c = 0.0
    total = 0.0
    for hit in range(1, likf.shape[0]):
        a, b1, b2, c = _sums1(pp, up, likf[hit], lloglf[hit], manhf, base, n_runs, run, rows, plane_b, plane_t, ww, bs,
                              True, space_aware)
        rest_p -= a
        rest_u -= b1
        sum_c += c
        total += _hit_value(a, b1 + b2, c, space_aware)
    _, _, b2, c_all = _sums1(pp, up, likf[0], lloglf[0], manhf, base, n_runs, run, rows, plane_b, plane_t, ww, bs,
                             False, space_aware)
    return total + _hit_value(rest_p, rest_u + b2, c_all - sum_c, space_aware)


@njit(cache=True, error_model="numpy")
def _score6(pp, up, total_p, total_u, likf, lloglf, manhf, d, h, w, targets, space_aware, scores, buf):
    """``_move_score3`` of the six moves (``targets`` ``(6, 3)`` cells) into ``scores``, one pass
    per hit (``_sums6``); ``buf`` ``(18,)`` float64 scratch."""
    ww, bs, plane_b, plane_t, n_runs, run, rows = _geometry(d, h, w)
    ks = (_base(d, h, w, ww, plane_t, targets[0, 0], targets[0, 1], targets[0, 2]),
          _base(d, h, w, ww, plane_t, targets[1, 0], targets[1, 1], targets[1, 2]),
          _base(d, h, w, ww, plane_t, targets[2, 0], targets[2, 1], targets[2, 2]),
          _base(d, h, w, ww, plane_t, targets[3, 0], targets[3, 1], targets[3, 2]),
          _base(d, h, w, ww, plane_t, targets[4, 0], targets[4, 1], targets[4, 2]),
          _base(d, h, w, ww, plane_t, targets[5, 0], targets[5, 1], targets[5, 2]))
    rest_p = buf[0:6]
    rest_u = buf[6:12]
    sum_c = buf[12:18]
    for j in range(6):
        t = targets[j, 2] * plane_b + targets[j, 1] * bs + targets[j, 0]
        rest_p[j] = total_p - pp[t]
        rest_u[j] = total_u - up[t]
        sum_c[j] = 0.0
        scores[j] = 0.0
    for hit in range(1, likf.shape[0]):
        r = _sums6(pp, up, likf[hit], lloglf[hit], manhf, ks, n_runs, run, rows, plane_b, plane_t, ww, bs, True,
                   space_aware)
        for j in range(6):
            rest_p[j] -= r[4 * j]
            rest_u[j] -= r[4 * j + 1]
            sum_c[j] += r[4 * j + 3]
            scores[j] += _hit_value(r[4 * j], r[4 * j + 1] + r[4 * j + 2], r[4 * j + 3], space_aware)
    r = _sums6(pp, up, likf[0], lloglf[0], manhf, ks, n_runs, run, rows, plane_b, plane_t, ww, bs, False, space_aware)
    for j in range(6):
        scores[j] += _hit_value(rest_p[j], rest_u[j] + r[4 * j + 2], r[4 * j + 3] - sum_c[j], space_aware)


@njit(cache=True, error_model="numpy")
def decide3(p, scratch, lik, llogl, manh, moves, x, y, z, space_aware, scores):
    """Infotaxis action of an agent at ``(x, y, z)`` with belief ``p`` ``(D, H, W)``.

    ``lik`` ``(n_hits, 2D-1, 2H-1, 2W-1)``; ``llogl`` ``(n_hits + 1, ...)`` (its last plane, the sum,
    unread); ``manh`` ``(2D-1, 2H-1, 2W-1)``; ``moves``
    ``(K, 3)`` int32; ``scratch`` ``(3, D * H * (2W-1))`` float64, overwritten; ``scores`` ``(K,)``
    out: the expected entropy in bits (or the space-aware value) of each move, ``inf`` off the
    grid, ``-inf`` for a move onto a cell holding the source with probability ``> 1 - 1e-10``
    (then taken at once). Returns the allowed action with the lowest score, ties within ``1e-10``
    to the lowest index (-1 if no move is allowed).
    """
    d, h, w = p.shape
    ww, bs, plane_b, plane_t, n_runs, run, rows = _geometry(d, h, w)
    n = d * h * w
    flat = p.reshape(n)
    if bs == ww:  # narrow: both padded
        pp = scratch[0]
        up = scratch[1]
        logs = scratch[2, :n]
        total_p, total_u = _p_log_p(flat, logs)  # over the cells only: p log p, and the totals
        for zz in range(d):
            for yy in range(h):
                o = zz * plane_b + yy * ww
                c = (zz * h + yy) * w
                pp[o:o + w] = flat[c:c + w]
                up[o:o + w] = logs[c:c + w]
                pp[o + w:o + ww] = 0.0
                up[o + w:o + ww] = 0.0
    else:  # wide: the belief as it is
        pp = flat
        up = scratch[1, :n]
        total_p, total_u = _p_log_p(pp, up)
    nh = lik.shape[0]
    size = lik.shape[1] * lik.shape[2] * lik.shape[3]
    likf = lik.reshape((nh, size))
    lloglf = llogl.reshape((llogl.shape[0], size))  # n_hits planes, then their sum (unread here)
    manhf = manh.reshape(size)
    k_moves = moves.shape[0]
    forced = -1
    n_allowed = 0
    for m in range(k_moves):
        tx = x + moves[m, 0]
        ty = y + moves[m, 1]
        tz = z + moves[m, 2]
        if tx < 0 or tx >= w or ty < 0 or ty >= h or tz < 0 or tz >= d:
            scores[m] = np.inf
        elif p[tz, ty, tx] > 1.0 - FOUND_TOL:
            scores[m] = -np.inf
            if forced < 0:
                forced = m
        else:
            scores[m] = 0.0
            n_allowed += 1
    if forced >= 0:
        return forced
    if k_moves == 6 and n_allowed == 6:  # away from the faces: the six moves in one pass per hit
        targets = scratch[2, :18].view(np.int64).reshape((6, 3))  # the logarithm's scratch, free again
        for m in range(6):
            targets[m, 0] = x + moves[m, 0]
            targets[m, 1] = y + moves[m, 1]
            targets[m, 2] = z + moves[m, 2]
        _score6(pp, up, total_p, total_u, likf, lloglf, manhf, d, h, w, targets, space_aware, scores,
                scratch[2, 18:36])
    else:
        for m in range(k_moves):
            if scores[m] != np.inf:
                scores[m] = _move_score3(pp, up, total_p, total_u, likf, lloglf, manhf, d, h, w, x + moves[m, 0],
                                         y + moves[m, 1], z + moves[m, 2], space_aware)
    best = np.inf
    for m in range(k_moves):
        if scores[m] < best:
            best = scores[m]
    if best == np.inf:
        return -1
    for m in range(k_moves):
        if scores[m] < best + TIE_TOL:
            return m
    return -1


@njit(cache=True)
def _believe3(p, lik, x, y, z):
    """Update ``p`` with the most likely hit at ``(x, y, z)`` (ties to the lowest hit)."""
    best_hit = 0
    best = -1.0
    for hit in range(lik.shape[0]):
        a = hit_mass3(p, lik, hit, x, y, z)
        if a > best:
            best = a
            best_hit = hit
    if best > 0.0:
        update_belief3(p, lik, x, y, z, best_hit)


@njit(cache=True)
def decide_group3(belief, work, scratch, lik, llogl, manh, moves, pos, a0, a1, space_aware, rule, scores, actions):
    """``infotaxis_kernels.decide_group`` in 3-D: ``pos`` ``(M, 3)`` int32, ``work`` ``(D, H, W)``."""
    if rule == RULE_BELIEVER and a1 - a0 > 1:
        work[:, :, :] = belief
        p = work
    else:
        p = belief
    for i in range(a0, a1):
        x = pos[i, 0]
        y = pos[i, 1]
        z = pos[i, 2]
        a = decide3(p, scratch, lik, llogl, manh, moves, x, y, z, space_aware, scores[i])
        actions[i] = a
        if rule == RULE_BELIEVER and i + 1 < a1 and a >= 0:
            _believe3(p, lik, x + moves[a, 0], y + moves[a, 1], z + moves[a, 2])


@njit(cache=True, parallel=True)
def decide_batch3(beliefs, group_start, pos, lik, llogl, manh, moves, space_aware, rule, work, scratch, scores,
                  actions, group_active):
    """``infotaxis_kernels.decide_batch`` in 3-D: ``beliefs`` ``(G, D, H, W)``, ``work``
    ``(T, D, H, W)``, ``scratch`` ``(T, 3, D * H * (2W-1))``."""
    for g in prange(beliefs.shape[0]):
        if not group_active[g]:
            for i in range(group_start[g], group_start[g + 1]):
                actions[i] = 0
                scores[i, :] = np.inf
            continue
        tid = numba.get_thread_id()
        decide_group3(beliefs[g], work[tid], scratch[tid], lik, llogl, manh, moves, pos, group_start[g],
                      group_start[g + 1], space_aware, rule, scores, actions)


@njit(cache=True)
def start_world3(seed, episode, first_hit_cdf, lik, x0, y0, z0, source, belief):
    """``infotaxis_kernels.start_world`` in 3-D (``source`` ``(3,)`` int64, ``-1`` when drawn).
    Returns ``(first_hit, sx, sy, sz)``."""
    if source[0] < 0:
        h0 = draw_first_hit(seed, episode, first_hit_cdf)
        init_belief3(belief, lik, x0, y0, z0, h0)
        sx, sy, sz = draw_source3(seed, episode, belief)
        return h0, sx, sy, sz
    h0 = draw_first_hit_at3(seed, episode, lik, source[0] - x0, source[1] - y0, source[2] - z0)
    init_belief3(belief, lik, x0, y0, z0, h0)
    return h0, source[0], source[1], source[2]


@njit(cache=True)
def run_world3(seed, episode, n_agents, shared, rule, space_aware, first_hit_cdf, lik, llogl, manh, moves,
               max_steps, start, source, beliefs, work, scratch, pos, scores, actions):
    """``infotaxis_kernels.run_world`` in 3-D: ``start``, ``source`` ``(3,)`` int64; ``beliefs``
    ``(G, D, H, W)``; ``pos`` ``(n_agents, 3)``. Returns ``(steps, found, first_hit, sx, sy, sz)``."""
    h0, sx, sy, sz = start_world3(seed, episode, first_hit_cdf, lik, start[0], start[1], start[2], source, beliefs[0])
    for g in range(1, 1 if shared else n_agents):
        beliefs[g, :, :, :] = beliefs[0]
    for k in range(n_agents):
        pos[k, 0] = start[0]
        pos[k, 1] = start[1]
        pos[k, 2] = start[2]
    key = rng.stream_key(seed, episode, STREAM_HITS)
    for t in range(1, max_steps + 1):
        if shared:
            decide_group3(beliefs[0], work, scratch, lik, llogl, manh, moves, pos, 0, n_agents, space_aware, rule,
                          scores, actions)
        else:
            for k in range(n_agents):
                decide_group3(beliefs[k], work, scratch, lik, llogl, manh, moves, pos, k, k + 1, space_aware, rule,
                              scores, actions)
        found = False
        for k in range(n_agents):
            a = actions[k]
            pos[k, 0] += moves[a, 0]
            pos[k, 1] += moves[a, 1]
            pos[k, 2] += moves[a, 2]
            if pos[k, 0] == sx and pos[k, 1] == sy and pos[k, 2] == sz:
                found = True
        if found:
            return t, True, h0, sx, sy, sz
        for k in range(n_agents):
            hit = draw_hit3(key, t, k, lik, sx - pos[k, 0], sy - pos[k, 1], sz - pos[k, 2])
            update_belief3(beliefs[0 if shared else k], lik, pos[k, 0], pos[k, 1], pos[k, 2], hit)
    return max_steps, False, h0, sx, sy, sz


@njit(cache=True, parallel=True)
def run_worlds3(seeds, episode, n_agents, shared, rule, space_aware, first_hit_cdf, lik, llogl, manh, moves,
                max_steps, start, source, beliefs, work, scratch, pos, scores, actions, out_steps, out_found,
                out_first_hit, out_source):
    """``run_world3`` for each seed, in parallel over worlds (buffers as ``infotaxis_kernels.run_worlds``;
    ``out_source`` ``(B, 3)``)."""
    g = 1 if shared else n_agents
    for b in prange(seeds.shape[0]):
        tid = numba.get_thread_id()
        s, f, h0, sx, sy, sz = run_world3(
            seeds[b], episode, n_agents, shared, rule, space_aware, first_hit_cdf, lik, llogl, manh, moves,
            max_steps, start, source, beliefs[b * g:(b + 1) * g], work[tid], scratch[tid],
            pos[b * n_agents:(b + 1) * n_agents], scores[b * n_agents:(b + 1) * n_agents],
            actions[b * n_agents:(b + 1) * n_agents])
        out_steps[b] = s
        out_found[b] = f
        out_first_hit[b] = h0
        out_source[b, 0] = sx
        out_source[b, 1] = sy
        out_source[b, 2] = sz
