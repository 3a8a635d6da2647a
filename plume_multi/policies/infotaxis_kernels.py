"""Infotaxis decision kernels (the policy; the plume's draws and belief updates are in
``plume_multi.models.plumes.poisson_hits.kernels``, whose tables these read).

Infotaxis (Vergassola et al. 2007) without logarithms in the inner loops: for a move to ``x'``,
with ``p`` the belief and ``L_h(x) = Pr(h | x - x')`` (0 at ``x'``),
``A_h = sum_x p(x) L_h(x)`` is ``(1 - p_end) P(h)`` and
``B_h = sum_x p(x) L_h(x) (log p(x) + log L_h(x)) = sum_x u(x) L_h(x) + sum_x p(x) M_h(x)``
with ``u = p log p`` (once per decision, by a vectorized logarithm) and ``M_h = L_h log L_h`` (a
table); the entropy (nats) of the posterior after hit ``h`` is ``S_h = log A_h - B_h / A_h``.

* Infotaxis, the expected entropy ``E[S] = sum_h A_h S_h = sum_h A_h log A_h - sum_h B_h``, and
  ``sum_h B_h = sum_{x != x'} u(x) + sum_x p(x) N(x)`` with ``N = sum_h M_h`` (one table, the
  plume's ``centred_likelihood_log[n_hits]``): one multiply-add per cell for each of
  ``A_1 .. A_{n-1}`` and ``sum p N``, ``A_0`` from the total.
* Space-aware infotaxis needs each ``S_h`` and ``C_h = sum_x p(x) L_h(x) D(x)`` (``D`` the
  Manhattan distance to ``x'``): per hit ``h >= 1``, ``A_h``, ``B_h`` and ``C_h`` (four
  multiply-adds per cell), hit 0 from the totals and ``sum p N``, ``sum p D``.

Each pass reads the belief once for the four moves (windows of the tables ``L_h(. - x')``). On
long rows only the cells from the first to the last above ``NEGLIGIBLE_P`` of each row are read
(``_support``): episodes' beliefs are concentrated (on otto-benchmark's 53 x 53 case about 40 % of
the cells are below 1e-30), and the windy cases have exact zeros upwind.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from ..engine import rng
from ..engine.jit import njit
from ..models.plumes.poisson_hits.kernels import (STREAM_HITS, draw_first_hit, draw_first_hit_at, draw_hit,
                                                  draw_source, hit_mass, init_belief, update_belief)

__all__ = ["RULE_INDEPENDENT", "RULE_BELIEVER", "all_probabilities", "decide", "decide_group", "decide_batch", "start_world", "run_world",
           "run_worlds"]

ROWS_FROM = 32  # beliefs at least this wide are read row by row, narrower ones padded (_geometry)
TIE_TOL = 1e-10  # scores within this of the best are ties; the lowest action index wins
FOUND_TOL = 1e-10  # a move whose cell holds the source with probability > 1 - this is taken at once
# Long rows (_support): the cells at either end of a row whose probability is at most this are left
# out of a decision's window sums (their mass counts for hit 0). Together they hold at most
# d = n * 1e-30 of the probability (3e-27 on 53 x 53). An infotaxis score, sum_h A_h log A_h minus
# sums linear in p, moves by at most (n_hits + 1) d (1 + |log d|) nats (1e-24 bits on 53 x 53); a
# space-aware one by at most ~n_hits d (12 + max |log p|) bits (< 1e-22): seven or more orders of
# magnitude below a score's rounding error (~1e-15).
NEGLIGIBLE_P = 1e-30
INV_LN2 = 1.0 / np.log(2.0)

# How agents that share one belief choose their moves.
RULE_INDEPENDENT = 0  # each agent runs infotaxis on the shared belief, ignoring the others' moves
RULE_BELIEVER = 1  # in agent order, each agent assumes the earlier ones receive their most likely hit

# Vectorizable reductions need reassociation; no 'nnan'/'ninf' (scores use inf for masked moves).
_FAST = {"reassoc", "contract", "nsz", "arcp"}


# The vectorizable logarithm below: float64 bits (fdlibm's and musl's reduction to [sqrt(2)/2, sqrt(2)))
# and fdlibm's e_log.c coefficients of log(1 + f) = 2s + s R(s^2), |error| < 2^-58.45.
_OFF = np.int64(0x3FE6A09E00000000)  # the bits of ~sqrt(2)/2
_EXPONENT = np.int64(-(1 << 52))  # 0xFFF0000000000000: sign and exponent bits
_LN2 = np.log(2.0)
_LG1 = 6.666666666666735130e-01
_LG2 = 3.999999999940941908e-01
_LG3 = 2.857142874366239149e-01
_LG4 = 2.222219843214978396e-01
_LG5 = 1.818357216161805012e-01
_LG6 = 1.531383769920937332e-01
_LG7 = 1.479819860511658591e-01


@njit(cache=True, fastmath=_FAST, error_model="numpy")
def _p_log_p(x, out):
    """``out[i] = x[i] log(x[i])`` (0 where ``x[i] == 0``) for 1-D contiguous float64 arrays of
    probabilities; returns ``(sum x, sum out)``.

    libm's ``log`` does not vectorize and costs as much as the rest of a decision; this one does
    (one branch-free loop): ``x = m 2^k`` with ``m`` in ``[sqrt(2)/2, sqrt(2))`` by integer
    operations on the bits, ``log m = 2s + s R(s^2)``, ``s = (m - 1)/(m + 1)``, ``R`` fdlibm's
    polynomial: within 3 ulp of ``np.log`` for normal numbers (4 ulp for ``x log x``). ``x = 0``
    gives ``log x = -1023 log 2``, subnormal ``x`` a wrong but finite logarithm: multiplied by ``x``,
    they change nothing visible.
    """
    xi = x.view(np.int64)
    mi = out.view(np.int64)
    n = x.shape[0]
    sp = 0.0
    su = 0.0
    for i in range(n):
        b = xi[i]
        t = b - _OFF
        mi[i] = b - (t & _EXPONENT)  # m, through out's bits
        k = np.float64(t >> 52)
        f = out[i] - 1.0
        s = f / (2.0 + f)
        z = s * s
        r = z * (_LG1 + z * (_LG2 + z * (_LG3 + z * (_LG4 + z * (_LG5 + z * (_LG6 + z * _LG7))))))
        p = x[i]
        u = p * (k * _LN2 + (2.0 * s + s * r))
        out[i] = u
        sp += p
        su += u
    return sp, su


@njit(cache=True, inline="always")
def _geometry(h, w):
    """``(ww, bs, n_runs, run)``: the tables' row stride ``2w - 1``; short rows (``w < ROWS_FROM``):
    the belief copied with rows padded to ``ww`` (``bs = ww``) and read as one run, padding included
    (zeros: no branch, long vector loops); longer rows: the belief as it is (``bs = w``), row by row
    (half the reads: faster from 32 cells on)."""
    ww = 2 * w - 1
    if w < ROWS_FROM:
        return ww, ww, 1, (h - 1) * ww + w
    return ww, w, h, w


@njit(cache=True, error_model="numpy")
def _ends(row):
    """``(lo, hi)``: the first cell of ``row`` with ``p > NEGLIGIBLE_P`` and one past the last
    (``lo >= hi`` when none), in one branch-free pass (its min and max reductions vectorize)."""
    n = row.shape[0]
    lo = n
    hi = 0
    for c in range(n):
        keep = row[c] > NEGLIGIBLE_P
        lo = min(lo, c if keep else n)
        hi = max(hi, c + 1 if keep else 0)
    return lo, hi


@njit(cache=True, error_model="numpy")
def _support(p, logs, iv):
    """``p log p`` of every cell into ``logs`` ``(H * W,)``, the runs a decision's window sums read
    into ``iv``, and the totals ``(sum p, sum p log p)`` over every cell.

    Short rows (``_geometry``): one run over the padded rows, ``iv = (0, run)``. Long rows: run
    ``r`` spans row ``r`` from its first to its last cell with ``p > NEGLIGIBLE_P`` (``iv[r]`` its
    first cell, ``iv[h + r]`` its length, 0 for a row with none). The cells at the ends left out
    (exact zeros, as the windy cases' cells upwind of every hit, or below ``NEGLIGIBLE_P``) still
    count in the totals: their mass goes to hit 0, as if no hit could come from them.
    """
    h, w = p.shape
    ww, bs, n_runs, run = _geometry(h, w)
    totals = _p_log_p(p.reshape(h * w), logs)
    if bs == ww:
        iv[0] = 0
        iv[1] = run
    else:
        for r in range(h):
            lo, hi = _ends(p[r])
            iv[r] = lo
            iv[h + r] = max(hi - lo, 0)
    return totals


@njit(cache=True, fastmath=_FAST, error_model="numpy")
def _window_sums(pp, t0, t1, b0, b1, b2, b3, n_runs, iv, ww, bs, both):
    """``sum_x p(x) T(x - x'_j)`` of the table ``t0`` (and, with ``both``, of ``t1``) over the four
    windows at bases ``b0..b3``: the belief is read once for every window and table (8 sums, 8
    independent accumulators). ``pp`` the belief, rows ``bs`` apart; the flat tables' rows are ``ww``
    apart (``_geometry``); run ``r`` covers ``iv[n_runs + r]`` cells from ``iv[r]`` (``_support``).
    Returns ``(t0 sums of the 4 windows, t1 sums of the 4 windows)`` (0 when not ``both``)."""
    a0 = a1 = a2 = a3 = 0.0
    c0 = c1 = c2 = c3 = 0.0
    for r in range(n_runs):
        run = iv[n_runs + r]
        ob = r * bs + iv[r]
        o = r * ww + iv[r]
        pr = pp[ob:ob + run]
        l0 = t0[b0 + o:b0 + o + run]
        l1 = t0[b1 + o:b1 + o + run]
        l2 = t0[b2 + o:b2 + o + run]
        l3 = t0[b3 + o:b3 + o + run]
        if both:
            k0 = t1[b0 + o:b0 + o + run]
            k1 = t1[b1 + o:b1 + o + run]
            k2 = t1[b2 + o:b2 + o + run]
            k3 = t1[b3 + o:b3 + o + run]
            for i in range(run):
                p = pr[i]
                a0 += p * l0[i]
                a1 += p * l1[i]
                a2 += p * l2[i]
                a3 += p * l3[i]
                c0 += p * k0[i]
                c1 += p * k1[i]
                c2 += p * k2[i]
                c3 += p * k3[i]
        else:
            for i in range(run):
                p = pr[i]
                a0 += p * l0[i]
                a1 += p * l1[i]
                a2 += p * l2[i]
                a3 += p * l3[i]
    return (a0, a1, a2, a3, c0, c1, c2, c3)


@njit(cache=True, fastmath=_FAST, error_model="numpy")
def _hit_sums(pp, up, lf, mf, df, b0, b1, b2, b3, n_runs, iv, ww, bs):
    """Space-aware infotaxis' sums of one hit value over the four windows at ``b0..b3``:
    ``A = sum p L``, ``B = sum (u L + p M)``, ``C = sum p L D`` (``u = p log p`` laid out as ``pp``;
    ``lf``, ``mf``, ``df`` the flat ``L``, ``L log L`` and distance tables). Returns ``(A, B, C)``
    of each window, 12 values, window by window; the runs as in ``_window_sums``."""
    a0 = a1 = a2 = a3 = 0.0
    e0 = e1 = e2 = e3 = 0.0
    c0 = c1 = c2 = c3 = 0.0
    for r in range(n_runs):
        run = iv[n_runs + r]
        ob = r * bs + iv[r]
        o = r * ww + iv[r]
        pr = pp[ob:ob + run]
        ur = up[ob:ob + run]
        l0 = lf[b0 + o:b0 + o + run]
        l1 = lf[b1 + o:b1 + o + run]
        l2 = lf[b2 + o:b2 + o + run]
        l3 = lf[b3 + o:b3 + o + run]
        k0 = mf[b0 + o:b0 + o + run]
        k1 = mf[b1 + o:b1 + o + run]
        k2 = mf[b2 + o:b2 + o + run]
        k3 = mf[b3 + o:b3 + o + run]
        d0 = df[b0 + o:b0 + o + run]
        d1 = df[b1 + o:b1 + o + run]
        d2 = df[b2 + o:b2 + o + run]
        d3 = df[b3 + o:b3 + o + run]
        for i in range(run):
            p = pr[i]
            u = ur[i]
            q0 = p * l0[i]
            q1 = p * l1[i]
            q2 = p * l2[i]
            q3 = p * l3[i]
            a0 += q0
            a1 += q1
            a2 += q2
            a3 += q3
            e0 += u * l0[i] + p * k0[i]
            e1 += u * l1[i] + p * k1[i]
            e2 += u * l2[i] + p * k2[i]
            e3 += u * l3[i] + p * k3[i]
            c0 += q0 * d0[i]
            c1 += q1 * d1[i]
            c2 += q2 * d2[i]
            c3 += q3 * d3[i]
    return (a0, e0, c0, a1, e1, c1, a2, e2, c2, a3, e3, c3)


@njit(cache=True, inline="always", error_model="numpy")
def _hit_value(a, b, c, space_aware):
    """``A_h S_h`` (bits) or the space-aware ``A_h log2(D_h + 2^(S_h-1) - 1/2)`` from the sums."""
    if a <= 0.0:
        return 0.0
    s_bits = (np.log(a) - b / a) * INV_LN2
    if space_aware:
        v = c / a + 2.0 ** (s_bits - 1.0) - 0.5
        if v > 0.0:
            v = np.log2(v)
        return a * v
    return a * s_bits


@njit(cache=True, inline="always", error_model="numpy")
def _x_log_x(a):
    """``a log a`` (nats), 0 for ``a <= 0``."""
    return a * np.log(a) if a > 0.0 else 0.0


@njit(cache=True, error_model="numpy")
def _score_group(pp, up, iv, total_p, total_u, likf, lloglf, manhf, h, w, txs, tys, p_t, u_t, space_aware):
    """Scores ``(4,)`` of the moves to the four targets ``(txs[j], tys[j])`` (module docstring).

    ``p_t``, ``u_t``: ``p`` and ``p log p`` at each target; ``up``: ``p log p`` laid out as ``pp``
    (read for space-aware infotaxis only); ``iv``: the runs (``_support``). Infotaxis: a pass per
    pair of the tables ``L_1 .. L_{n-1}, N``; space-aware: a pass per hit value ``h >= 1``
    (``_hit_sums``) and one for ``N`` and ``D``. Hit 0 from the totals: ``A_0 = sum p - p_t - sum_{h>0} A_h`` (``sum_h L_h = 1``
    off the target), ``B_0 = sum u - u_t + sum p N - sum_{h>0} B_h``, ``C_0 = sum p D - sum_{h>0} C_h``.
    """
    ww, bs, n_runs, _ = _geometry(h, w)
    nh = likf.shape[0]
    b0 = (h - 1 - tys[0]) * ww + (w - 1 - txs[0])
    b1 = (h - 1 - tys[1]) * ww + (w - 1 - txs[1])
    b2 = (h - 1 - tys[2]) * ww + (w - 1 - txs[2])
    b3 = (h - 1 - tys[3]) * ww + (w - 1 - txs[3])
    nf = lloglf[nh]  # sum_h L_h log L_h
    rest0 = total_p - p_t[0]
    rest1 = total_p - p_t[1]
    rest2 = total_p - p_t[2]
    rest3 = total_p - p_t[3]
    if not space_aware:
        # E[S] = sum_h A_h log A_h - (sum u - u_t) - sum p N: only the A_h and sum p N are sums,
        # two tables a pass (calls with plain table arguments: a table chosen by a conditional
        # expression made the passes 1.5x slower).
        v0 = v1 = v2 = v3 = 0.0
        k = 1
        while k + 1 < nh:  # L_k and L_{k+1}
            r = _window_sums(pp, likf[k], likf[k + 1], b0, b1, b2, b3, n_runs, iv, ww, bs, True)
            rest0 -= r[0] + r[4]
            rest1 -= r[1] + r[5]
            rest2 -= r[2] + r[6]
            rest3 -= r[3] + r[7]
            v0 += _x_log_x(r[0]) + _x_log_x(r[4])
            v1 += _x_log_x(r[1]) + _x_log_x(r[5])
            v2 += _x_log_x(r[2]) + _x_log_x(r[6])
            v3 += _x_log_x(r[3]) + _x_log_x(r[7])
            k += 2
        if k < nh:  # the last L_k with N
            r = _window_sums(pp, likf[k], nf, b0, b1, b2, b3, n_runs, iv, ww, bs, True)
            rest0 -= r[0]
            rest1 -= r[1]
            rest2 -= r[2]
            rest3 -= r[3]
            v0 += _x_log_x(r[0])
            v1 += _x_log_x(r[1])
            v2 += _x_log_x(r[2])
            v3 += _x_log_x(r[3])
            n0, n1, n2, n3 = r[4], r[5], r[6], r[7]
        else:  # N alone
            r = _window_sums(pp, nf, nf, b0, b1, b2, b3, n_runs, iv, ww, bs, False)
            n0, n1, n2, n3 = r[0], r[1], r[2], r[3]
        return ((v0 + _x_log_x(rest0) - (total_u - u_t[0]) - n0) * INV_LN2,
                (v1 + _x_log_x(rest1) - (total_u - u_t[1]) - n1) * INV_LN2,
                (v2 + _x_log_x(rest2) - (total_u - u_t[2]) - n2) * INV_LN2,
                (v3 + _x_log_x(rest3) - (total_u - u_t[3]) - n3) * INV_LN2)
    # space-aware: every hit value's A_h, B_h, C_h
    e0 = total_u - u_t[0]
    e1 = total_u - u_t[1]
    e2 = total_u - u_t[2]
    e3 = total_u - u_t[3]
    s0 = s1 = s2 = s3 = 0.0
    c0 = c1 = c2 = c3 = 0.0
    for hit in range(1, nh):
        r = _hit_sums(pp, up, likf[hit], lloglf[hit], manhf, b0, b1, b2, b3, n_runs, iv, ww, bs)
        rest0 -= r[0]
        e0 -= r[1]
        c0 -= r[2]
        s0 += _hit_value(r[0], r[1], r[2], True)
        rest1 -= r[3]
        e1 -= r[4]
        c1 -= r[5]
        s1 += _hit_value(r[3], r[4], r[5], True)
        rest2 -= r[6]
        e2 -= r[7]
        c2 -= r[8]
        s2 += _hit_value(r[6], r[7], r[8], True)
        rest3 -= r[9]
        e3 -= r[10]
        c3 -= r[11]
        s3 += _hit_value(r[9], r[10], r[11], True)
    r = _window_sums(pp, nf, manhf, b0, b1, b2, b3, n_runs, iv, ww, bs, True)
    return (s0 + _hit_value(rest0, e0 + r[0], c0 + r[4], True),
            s1 + _hit_value(rest1, e1 + r[1], c1 + r[5], True),
            s2 + _hit_value(rest2, e2 + r[2], c2 + r[6], True),
            s3 + _hit_value(rest3, e3 + r[3], c3 + r[7], True))


@njit(cache=True, error_model="numpy")
def decide(p, scratch, lik, llogl, manh, moves, x, y, space_aware, scores):
    """Infotaxis action of an agent at ``(x, y)`` with belief ``p`` ``(H, W)``.

    ``lik`` ``(n_hits, 2H-1, 2W-1)``: the centred likelihood; ``llogl`` ``(n_hits + 1, 2H-1, 2W-1)``:
    ``L log L`` of each hit value, then their sum over the hit values
    (``PoissonHitPlume.centred_likelihood_log``); ``manh`` ``(2H-1, 2W-1)``; ``scratch``
    ``(3, H * (2W-1))`` float64, overwritten (padded belief and ``p log p`` on short rows; ``p log p``
    and the runs, ``_support``); ``p`` C-contiguous; ``scores`` ``(K,)`` float64 out: the expected
    entropy in bits (or the space-aware value) of each move, ``inf`` for moves off the grid, ``-inf``
    for a move onto a cell holding the source with probability ``> 1 - 1e-10`` (then taken at once,
    the other moves unscored). Returns the allowed action with the lowest score, ties within
    ``1e-10`` to the lowest index (-1 if no move is allowed). Moves are scored four at a time
    (``_score_group``; a last group of fewer repeats its first move).
    """
    h, w = p.shape
    if llogl.shape[0] != lik.shape[0] + 1:
        raise ValueError("infotaxis decide: llogl must hold n_hits + 1 planes (centred_likelihood_log)")
    k_moves = moves.shape[0]
    forced = -1
    n_allowed = 0
    for m in range(k_moves):
        tx = x + moves[m, 0]
        ty = y + moves[m, 1]
        if tx < 0 or tx >= w or ty < 0 or ty >= h:
            scores[m] = np.inf
        elif p[ty, tx] > 1.0 - FOUND_TOL:
            scores[m] = -np.inf
            if forced < 0:
                forced = m
        else:
            scores[m] = 0.0  # allowed: scored below
            n_allowed += 1
    if forced >= 0:
        return forced
    if n_allowed == 0:
        return -1
    ww, bs, n_runs, run = _geometry(h, w)
    n = h * w
    flat = p.reshape(n)
    logs = scratch[2, :n]
    if n + 2 * n_runs > scratch.shape[1]:
        raise ValueError("infotaxis decide: scratch too small")
    iv = scratch[2, n:n + 2 * n_runs].view(np.int64)
    total_p, total_u = _support(p, logs, iv)  # logs: p log p on the runs
    if bs == ww:  # short rows: both padded
        pp = scratch[0]
        up = scratch[1]
        for yy in range(h):
            o = yy * ww
            pp[o:o + w] = p[yy]
            pp[o + w:o + ww] = 0.0
            if space_aware:
                up[o:o + w] = logs[yy * w:yy * w + w]
                up[o + w:o + ww] = 0.0
    else:  # long rows: the belief as it is
        pp = flat
        up = logs
    nh = lik.shape[0]
    plane = lik.shape[1] * lik.shape[2]
    likf = lik.reshape((nh, plane))
    lloglf = llogl.reshape((nh + 1, plane))
    manhf = manh.reshape(plane)
    # the allowed moves four at a time (the last group padded with its first move)
    sel0 = sel1 = sel2 = sel3 = -1
    count = 0
    seen = 0
    for m in range(k_moves):
        if scores[m] != 0.0:
            continue
        seen += 1
        if count == 0:
            sel0 = m
        elif count == 1:
            sel1 = m
        elif count == 2:
            sel2 = m
        else:
            sel3 = m
        count += 1
        if count == 4 or seen == n_allowed:
            if count < 2:
                sel1 = sel0
            if count < 3:
                sel2 = sel0
            if count < 4:
                sel3 = sel0
            txs = (x + moves[sel0, 0], x + moves[sel1, 0], x + moves[sel2, 0], x + moves[sel3, 0])
            tys = (y + moves[sel0, 1], y + moves[sel1, 1], y + moves[sel2, 1], y + moves[sel3, 1])
            p_t = (p[tys[0], txs[0]], p[tys[1], txs[1]], p[tys[2], txs[2]], p[tys[3], txs[3]])
            u_t = (logs[tys[0] * w + txs[0]], logs[tys[1] * w + txs[1]], logs[tys[2] * w + txs[2]],
                   logs[tys[3] * w + txs[3]])
            r = _score_group(pp, up, iv, total_p, total_u, likf, lloglf, manhf, h, w, txs, tys, p_t, u_t,
                             space_aware)
            scores[sel3] = r[3]  # a padded group repeats sel0: its own score written last
            scores[sel2] = r[2]
            scores[sel1] = r[1]
            scores[sel0] = r[0]
            count = 0
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
def all_probabilities(values):
    """Whether every value of the contiguous float64 array lies in ``[0, 1]`` (NaN does not): one
    pass, no temporary (``Infotaxis.decide`` checks its beliefs with it)."""
    flat = values.reshape(values.size)
    ok = True
    for i in range(flat.shape[0]):
        v = flat[i]
        ok &= (v >= 0.0) & (v <= 1.0)
    return ok


@njit(cache=True)
def _believe(p, lik, x, y):
    """Update ``p`` with the most likely hit at ``(x, y)`` (ties to the lowest hit)."""
    best_hit = 0
    best = -1.0
    for hit in range(lik.shape[0]):
        a = hit_mass(p, lik, hit, x, y)
        if a > best:
            best = a
            best_hit = hit
    if best > 0.0:
        update_belief(p, lik, x, y, best_hit)


@njit(cache=True)
def decide_group(belief, work, scratch, lik, llogl, manh, moves, pos, a0, a1, space_aware, rule,
                 scores, actions):
    """Actions of agents ``a0..a1-1`` that share ``belief`` ``(H, W)`` (read only).

    ``pos`` ``(M, 2)`` int32 ``(x, y)``; ``scores`` ``(M, K)`` and ``actions`` ``(M,)`` int64 out
    (rows ``a0..a1-1`` written); ``work`` ``(H, W)`` and ``scratch`` ``(3, H * (2W-1))``
    float64 scratch. With
    ``RULE_BELIEVER`` agents choose in order, each on the belief updated as if every earlier
    agent had moved and received its most likely hit (a "believer" heuristic: it makes agents
    that sit together spread out instead of repeating the same move).
    """
    if rule == RULE_BELIEVER and a1 - a0 > 1:
        work[:, :] = belief
        p = work
    else:
        p = belief
    for i in range(a0, a1):
        x = pos[i, 0]
        y = pos[i, 1]
        a = decide(p, scratch, lik, llogl, manh, moves, x, y, space_aware, scores[i])
        actions[i] = a
        if rule == RULE_BELIEVER and i + 1 < a1 and a >= 0:
            _believe(p, lik, x + moves[a, 0], y + moves[a, 1])


@njit(cache=True, parallel=True)
def decide_batch(beliefs, group_start, pos, lik, llogl, manh, moves, space_aware, rule, work,
                 scratch, scores, actions, group_active):
    """Actions of every agent: group ``g`` (agents ``group_start[g]..group_start[g+1]-1``) shares
    ``beliefs[g]`` ``(G, H, W)`` float64. ``group_start`` ``(G+1,)`` int64; ``pos`` ``(M, 2)``
    int32; ``scores`` ``(M, K)`` float64 and ``actions`` ``(M,)`` int64 out. ``work``
    ``(T, H, W)`` and ``scratch`` ``(T, 3, H * (2W-1))`` float64: one per thread (``T`` at least
    ``numba.config.NUMBA_NUM_THREADS``), so scratch stays in cache. ``group_active`` ``(G,)``
    bool: groups where it is False are skipped (actions 0, scores ``inf``). Parallel over groups;
    each writes only its own rows and overwrites its scratch before reading it, so the results
    do not depend on the thread count."""
    for g in prange(beliefs.shape[0]):
        if not group_active[g]:
            for i in range(group_start[g], group_start[g + 1]):
                actions[i] = 0
                scores[i, :] = np.inf
            continue
        tid = numba.get_thread_id()
        decide_group(beliefs[g], work[tid], scratch[tid], lik, llogl, manh, moves, pos,
                     group_start[g], group_start[g + 1], space_aware, rule, scores, actions)


@njit(cache=True)
def start_world(seed, episode, first_hit_cdf, lik, x0, y0, source_x, source_y, belief):
    """The start of a protocol episode for an agent at ``(x0, y0)``: the first hit, the belief
    after it (``belief`` ``(H, W)``, in place) and the source, as ``plumes.PoissonHits``' reset
    draws them: the first hit from ``first_hit_cdf`` and the source from the belief, or, for a
    fixed source (``source_x >= 0``), the first hit given the source's offset. Returns
    ``(first_hit, source_x, source_y)``."""
    if source_x < 0:
        h0 = draw_first_hit(seed, episode, first_hit_cdf)
        init_belief(belief, lik, x0, y0, h0)
        sx, sy = draw_source(seed, episode, belief)
        return h0, sx, sy
    h0 = draw_first_hit_at(seed, episode, lik, source_x - x0, source_y - y0)
    init_belief(belief, lik, x0, y0, h0)
    return h0, source_x, source_y


@njit(cache=True)
def run_world(seed, episode, n_agents, shared, rule, space_aware, first_hit_cdf, lik, llogl,
              manh, moves, max_steps, x0, y0, source_x, source_y, beliefs, work, scratch, pos, scores,
              actions):
    """One protocol episode of a world of ``n_agents`` searchers that start at ``(x0, y0)``.

    The first hit is drawn, the belief(s) start from it, the source is drawn from that belief
    (or is the fixed ``(source_x, source_y)`` when ``source_x >= 0``; ``start_world``); then
    each step every agent chooses a move (infotaxis, ``decide_group``), moves, and the search
    ends when one stands on the source; otherwise each agent draws a hit and the belief(s) are
    updated. ``shared``: one belief for all agents (``beliefs`` ``(1, H, W)``), else one each
    (``(n_agents, H, W)``); ``work`` ``(H, W)`` and ``scratch`` ``(3, H * (2W-1))`` float64
    scratch; ``pos`` ``(n_agents, 2)`` int32, ``scores`` ``(n_agents, K)``, ``actions``
    ``(n_agents,)`` int64.

    Returns ``(steps, found, first_hit, source_x, source_y)``: steps taken (``max_steps`` when
    not found).
    """
    h0, sx, sy = start_world(seed, episode, first_hit_cdf, lik, x0, y0, source_x, source_y, beliefs[0])
    n_beliefs = 1 if shared else n_agents
    for g in range(1, n_beliefs):
        beliefs[g, :, :] = beliefs[0]
    for k in range(n_agents):
        pos[k, 0] = x0
        pos[k, 1] = y0
    key = rng.stream_key(seed, episode, STREAM_HITS)
    for t in range(1, max_steps + 1):
        if shared:
            decide_group(beliefs[0], work, scratch, lik, llogl, manh, moves, pos, 0, n_agents,
                         space_aware, rule, scores, actions)
        else:
            for k in range(n_agents):
                decide_group(beliefs[k], work, scratch, lik, llogl, manh, moves, pos, k, k + 1,
                             space_aware, rule, scores, actions)
        found = False
        for k in range(n_agents):
            a = actions[k]
            pos[k, 0] += moves[a, 0]
            pos[k, 1] += moves[a, 1]
            if pos[k, 0] == sx and pos[k, 1] == sy:
                found = True
        if found:
            return t, True, h0, sx, sy
        for k in range(n_agents):
            hit = draw_hit(key, t, k, lik, sx - pos[k, 0], sy - pos[k, 1])
            update_belief(beliefs[0 if shared else k], lik, pos[k, 0], pos[k, 1], hit)
    return max_steps, False, h0, sx, sy


@njit(cache=True, parallel=True)
def run_worlds(seeds, episode, n_agents, shared, rule, space_aware, first_hit_cdf, lik, llogl,
               manh, moves, max_steps, x0, y0, source_x, source_y, beliefs, work, scratch, pos, scores,
               actions, out_steps, out_found, out_first_hit, out_source):
    """``run_world`` for each seed ``seeds[b]`` ``(B,)`` int64, in parallel over worlds.

    Per-world buffers are stacked: ``beliefs``, ``work`` ``(B * G, H, W)``, ``scratch``
    ``(B * G, 3, H * (2W-1))`` with ``G = 1``
    if ``shared`` else ``n_agents``; ``pos`` ``(B * n_agents, 2)`` int32, ``scores``
    ``(B * n_agents, K)``, ``actions`` ``(B * n_agents,)``. Outputs ``(B,)``: ``out_steps``
    int64, ``out_found`` bool, ``out_first_hit`` int64, ``out_source`` ``(B, 2)`` int64.
    """
    g = 1 if shared else n_agents
    for b in prange(seeds.shape[0]):
        tid = numba.get_thread_id()
        s, f, h0, sx, sy = run_world(
            seeds[b], episode, n_agents, shared, rule, space_aware, first_hit_cdf, lik, llogl,
            manh, moves, max_steps, x0, y0, source_x, source_y, beliefs[b * g:(b + 1) * g], work[tid], scratch[tid],
            pos[b * n_agents:(b + 1) * n_agents],
            scores[b * n_agents:(b + 1) * n_agents], actions[b * n_agents:(b + 1) * n_agents])
        out_steps[b] = s
        out_found[b] = f
        out_first_hit[b] = h0
        out_source[b, 0] = sx
        out_source[b, 1] = sy
