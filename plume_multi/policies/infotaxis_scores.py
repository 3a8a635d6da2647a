"""The window sums of an infotaxis decision: ``score_moves``, one entry point that picks, by the
belief's dimension, the loop measured fastest for it.

For a move to ``x'``, with ``p`` the belief and ``L_h(x) = Pr(h | x - x')`` (0 at ``x'``),
``A_h = sum_x p(x) L_h(x)`` is ``(1 - p_end) P(h)`` and
``B_h = sum_x p(x) L_h(x) (log p(x) + log L_h(x)) = sum_x u(x) L_h(x) + sum_x p(x) M_h(x)``
with ``u = p log p`` (once per decision, by a vectorized logarithm) and ``M_h = L_h log L_h`` (a
table); the entropy (nats) of the posterior after hit ``h`` is ``S_h = log A_h - B_h / A_h``.

* Infotaxis, the expected entropy ``E[S] = sum_h A_h S_h = sum_h A_h log A_h - sum_h B_h``, and
  ``sum_h B_h = sum_{x != x'} u(x) + sum_x p(x) N(x)`` with ``N = sum_h M_h`` (one table, the
  plume's ``centred_likelihood_log[n_hits]``).
* Space-aware infotaxis needs each ``S_h`` and ``C_h = sum_x p(x) L_h(x) D(x)``, ``D(x)`` the
  distance from ``x'`` to ``x``: the Manhattan distance (a centred table) in open space, the
  length of the shortest free path among walls (``paths.free_path_distances``: laid out as the
  belief, one array per move). Hit 0 from the totals (``sum_h L_h = 1`` off the target).

Two loops, picked by ``score_moves`` (the same quantities; each is faster on its own dimension):

* planes (2-D): the moves four at a time, each pass reading the belief once for four windows;
  on long rows only the cells from the first to the last above ``NEGLIGIBLE_P`` of each row
  (``_support``: on otto-benchmark's 53 x 53 case about 40 % of the cells are below 1e-30, and the
  windy cases have exact zeros upwind). The volume loop below on a one-plane volume took 1.9-2.6x
  as long per decision as this one on otto-benchmark's 2-D cases (``benchmarks/otto_benchmark.py``
  beliefs; 19 x 19 and 53 x 53, infotaxis and space-aware), and sums in another order (otto's
  episodes are kept bit for bit).
* volumes (3-D): away from the faces the six moves in one pass per hit, run by run, three windows
  per inner loop: the windows of neighbouring targets overlap, so the table entries one inner loop
  reads are still in cache for the next (a 3-D table does not fit in a core's cache: two separate
  passes of three cost 1.3x as much on 39^3).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import types
from numba.extending import overload

from ..engine.jit import njit
from . import paths

__all__ = ["score_moves", "NEGLIGIBLE_P", "ROWS_FROM", "INV_LN2", "p_log_p"]

ROWS_FROM = 32  # beliefs at least this wide are read row by row, narrower ones padded (_geometry)
# Long rows (_support): the cells at either end of a row whose probability is at most this are left
# out of a decision's window sums (their mass counts for hit 0). Together they hold at most
# d = n * 1e-30 of the probability (3e-27 on 53 x 53). An infotaxis score, sum_h A_h log A_h minus
# sums linear in p, moves by at most (n_hits + 1) d (1 + |log d|) nats (1e-24 bits on 53 x 53); a
# space-aware one by at most ~n_hits d (12 + max |log p|) bits (< 1e-22): seven or more orders of
# magnitude below a score's rounding error (~1e-15).
NEGLIGIBLE_P = 1e-30
INV_LN2 = 1.0 / np.log(2.0)

# Vectorizable reductions need reassociation; no 'nnan'/'ninf' (scores use inf for masked moves).
_FAST = {"reassoc", "contract", "nsz", "arcp"}

# A 2-D belief laid out for the window sums: ``pp`` the belief (rows ``bs`` apart), ``up`` its
# ``p log p`` laid out alike, ``iv`` the runs (``_support``), ``n_runs``, ``ww`` the tables' row stride.
Plane = namedtuple("Plane", "pp up iv n_runs ww bs")
# A 3-D belief laid out for the window sums (``_geometry3``).
Volume = namedtuple("Volume", "pp up n_runs run rows plane_b plane_t ww bs d h w")


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
def p_log_p(x, out):
    """``out[i] = x[i] log(x[i])`` (0 where ``x[i] == 0``) for 1-D contiguous float64 arrays of
    probabilities; returns ``(sum x, sum out)``.

    libm's ``log`` does not vectorize and costs as much as the rest of a decision; this one does
    (one branch-free loop): ``x = m 2^k`` with ``m`` in ``[sqrt(2)/2, sqrt(2))`` by integer
    operations on the bits, ``log m = 2s + s R(s^2)``, ``s = (m - 1)/(m + 1)``, ``R`` fdlibm's
    polynomial: within 3 ulp of ``np.log`` for normal numbers (4 ulp for ``x log x``), 1.5x faster
    per decision than libm's. ``x = 0`` gives ``log x = -1023 log 2``, subnormal ``x`` a wrong but
    finite logarithm: multiplied by ``x``, they change nothing visible.
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


def _distances(df, dbases, j, base, o, ob, run):
    """In compiled code: the run of distances of window ``j``: the centred table ``df`` at
    ``base + o`` (the table's layout; ``dbases`` None, open space), or the ``j``-th free-path
    distances laid out as the belief, at ``dbases[j] + ob`` (among walls)."""


@overload(_distances, inline="always")
def _distances_impl(df, dbases, j, base, o, ob, run):
    if isinstance(dbases, types.NoneType):
        return lambda df, dbases, j, base, o, ob, run: df[base + o:base + o + run]
    return lambda df, dbases, j, base, o, ob, run: df[dbases[j] + ob:dbases[j] + ob + run]


# ------------------------------------------------------------------------------------------ planes
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
    totals = p_log_p(p.reshape(h * w), logs)
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
def _window_sums(pp, iv, geometry, t0, t1, windows, both):
    """``sum_x p(x) T(x - x'_j)`` of the table ``t0`` (and, with ``both``, of ``t1``) over the four
    windows ``windows = (bases, dbases)`` (``t1`` read at ``dbases``, see ``_distances``): the belief
    ``pp`` is read once for every window and table (8 sums, 8 independent accumulators); ``iv`` the
    runs and ``geometry`` ``(n_runs, ww, bs)`` as in ``Plane``. Returns ``(t0 sums of the 4
    windows, t1 sums of the 4 windows)`` (0 when not ``both``). (Arrays, not a ``Plane``: a record
    of arrays passed to a call costs each array's reference count, per pass.)"""
    n_runs, ww, bs = geometry
    bases, dbases = windows
    b0, b1, b2, b3 = bases
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
            k0 = _distances(t1, dbases, 0, b0, o, ob, run)
            k1 = _distances(t1, dbases, 1, b1, o, ob, run)
            k2 = _distances(t1, dbases, 2, b2, o, ob, run)
            k3 = _distances(t1, dbases, 3, b3, o, ob, run)
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
def _hit_sums(pp, up, iv, geometry, lf, mf, df, windows):
    """Space-aware infotaxis' sums of one hit value over the four windows ``windows = (bases,
    dbases)``: ``A = sum p L``, ``B = sum (u L + p M)``, ``C = sum p L D`` (``lf``, ``mf`` the flat
    ``L`` and ``L log L`` tables; ``df`` the distances, see ``_distances``). Returns ``(A, B, C)``
    of each window, 12 values, window by window; the belief and its runs as in ``_window_sums``."""
    n_runs, ww, bs = geometry
    bases, dbases = windows
    b0, b1, b2, b3 = bases
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
        d0 = _distances(df, dbases, 0, b0, o, ob, run)
        d1 = _distances(df, dbases, 1, b1, o, ob, run)
        d2 = _distances(df, dbases, 2, b2, o, ob, run)
        d3 = _distances(df, dbases, 3, b3, o, ob, run)
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


# a function of its own, as are the pickers below and score_moves: compiled into their callers
# (inline), the decision of a 2-D team took 126 s of CPU to compile instead of 33 s, for no
# measurable speed (decide_speed: 3.5-4.1 against 3.8-4.0 us per decision on 19 x 19, 7.0-9.0
# against 7.7-8.1 on 37 x 37, alternating processes)
@njit(cache=True, error_model="numpy")
def _score_group(plane, totals, flat, group, space_aware):
    """Scores ``(4,)`` of the moves of one group (module docstring).

    ``totals``: ``(sum p, sum p log p)``; ``flat``: the flat tables ``(L (n_hits, .), L log L
    (n_hits + 1, .), distances)``; ``group``: ``(bases, dbases, p_t, u_t)``, the four windows'
    bases, their distances' (None: the centred table at ``bases``), and ``p`` and ``p log p`` at
    each target. Infotaxis: a pass per pair of the tables ``L_1 .. L_{n-1}, N``; space-aware: a pass
    per hit value ``h >= 1`` (``_hit_sums``) and one for ``N`` and ``D``. Hit 0 from the totals:
    ``A_0 = sum p - p_t - sum_{h>0} A_h`` (``sum_h L_h = 1`` off the target),
    ``B_0 = sum u - u_t + sum p N - sum_{h>0} B_h``, ``C_0 = sum p D - sum_{h>0} C_h``.
    """
    total_p, total_u = totals
    likf, lloglf, df = flat
    bases, dbases, p_t, u_t = group
    pp, up, iv = plane.pp, plane.up, plane.iv
    geometry = (plane.n_runs, plane.ww, plane.bs)
    open_space = (bases, None)
    nh = likf.shape[0]
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
            r = _window_sums(pp, iv, geometry, likf[k], likf[k + 1], open_space, True)
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
            r = _window_sums(pp, iv, geometry, likf[k], nf, open_space, True)
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
            r = _window_sums(pp, iv, geometry, nf, nf, open_space, False)
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
        r = _hit_sums(pp, up, iv, geometry, likf[hit], lloglf[hit], df, (bases, dbases))
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
    r = _window_sums(pp, iv, geometry, nf, df, (bases, dbases), True)
    return (s0 + _hit_value(rest0, e0 + r[0], c0 + r[4], True),
            s1 + _hit_value(rest1, e1 + r[1], c1 + r[5], True),
            s2 + _hit_value(rest2, e2 + r[2], c2 + r[6], True),
            s3 + _hit_value(rest3, e3 + r[3], c3 + r[7], True))


@njit(cache=True, inline="always")
def _plane_bases(h, w, ww, cell):
    """Where the flat tables' window of a move to ``cell`` starts."""
    return (h - 1 - cell[1]) * ww + (w - 1 - cell[0])


def _score_plane(p, scratch, tables, moves, cell, space_aware, scores, solid):
    """``score_moves`` on a 2-D belief ``(H, W)``: the allowed moves (``scores[m] == 0``) four at a
    time (``_score_group``; a last group of fewer repeats its first move). ``scratch`` ``(R, H *
    (2W-1))``: rows 0-2 the padded belief, ``p log p`` and the runs (``_support``); among walls
    (space-aware) row 3 the paths' queue and rows 4-7 the four moves' free-path distances."""
    h, w = p.shape
    k_moves = moves.shape[0]
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
    plane = Plane(pp, up, iv, n_runs, ww, bs)
    lik = tables.likelihood
    nh = lik.shape[0]
    size = lik.shape[1] * lik.shape[2]
    likf = lik.reshape((nh, size))
    lloglf = tables.likelihood_log.reshape((nh + 1, size))
    manhf = tables.manhattan.reshape(size)
    # the allowed moves four at a time (the last group padded with its first move)
    sel0 = sel1 = sel2 = sel3 = -1
    count = 0
    seen = 0
    n_allowed = 0
    for m in range(k_moves):
        n_allowed += scores[m] == 0.0
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
            t0 = (cell[0] + moves[sel0, 0], cell[1] + moves[sel0, 1])
            t1 = (cell[0] + moves[sel1, 0], cell[1] + moves[sel1, 1])
            t2 = (cell[0] + moves[sel2, 0], cell[1] + moves[sel2, 1])
            t3 = (cell[0] + moves[sel3, 0], cell[1] + moves[sel3, 1])
            bases = (_plane_bases(h, w, ww, t0), _plane_bases(h, w, ww, t1), _plane_bases(h, w, ww, t2),
                     _plane_bases(h, w, ww, t3))
            p_t = (p[t0[1], t0[0]], p[t1[1], t1[0]], p[t2[1], t2[0]], p[t3[1], t3[0]])
            u_t = (logs[t0[1] * w + t0[0]], logs[t1[1] * w + t1[0]], logs[t2[1] * w + t2[0]],
                   logs[t3[1] * w + t3[0]])
            r = _group_scores(solid, space_aware, scratch, (t0, t1, t2, t3), plane, (total_p, total_u),
                              (likf, lloglf, manhf), (bases, p_t, u_t))
            scores[sel3] = r[3]  # a padded group repeats sel0: its own score written last
            scores[sel2] = r[2]
            scores[sel1] = r[1]
            scores[sel0] = r[0]
            count = 0


# ------------------------------------------------------------------------------------------ volumes
@njit(cache=True, inline="always")
def _run_offsets(vol, r):
    """Offsets of run ``r`` in the belief and in a table window: plane runs of the padded belief
    (``rows == 0``) or row runs (``rows`` = H) of the belief as it is."""
    if vol.rows == 0:
        return r * vol.plane_b, r * vol.plane_t
    z = r // vol.rows
    y = r - z * vol.rows
    return z * vol.plane_b + y * vol.bs, z * vol.plane_t + y * vol.ww


@njit(cache=True, fastmath=_FAST, error_model="numpy")
def _sums1(vol, tabs, base, dbases, with_lik, with_dist):
    """``(sum p L, sum u L, sum p M, sum p L D)`` over one window at ``base`` (terms not asked for
    are 0); ``tabs`` ``(L, M, D)`` flat, ``D`` read as ``_distances`` says (window 0 of ``dbases``)."""
    lf, mf, df = tabs
    pp, up, run = vol.pp, vol.up, vol.run
    a = 0.0
    b1 = 0.0
    b2 = 0.0
    c = 0.0
    for r in range(vol.n_runs):
        ob, ot = _run_offsets(vol, r)
        pr = pp[ob:ob + run]
        mr = mf[base + ot:base + ot + run]
        dr = _distances(df, dbases, 0, base, ot, ob, run)
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


@njit(cache=True, fastmath=_FAST, error_model="numpy")
def _run3(vol, tabs, ob, ot, ks, dks, with_lik, with_dist):
    """The twelve sums of three windows (bases ``ks``, distances at ``dks``) over one run (at
    ``ob`` in the belief, ``ot`` in the windows), window by window: ``(A, U, M, C) x 3``."""
    lf, mf, df = tabs
    run = vol.run
    k0, k1, k2 = ks
    a0 = a1 = a2 = 0.0
    u0 = u1 = u2 = 0.0
    m0 = m1 = m2 = 0.0
    c0 = c1 = c2 = 0.0
    pr = vol.pp[ob:ob + run]
    ur = vol.up[ob:ob + run]
    n0 = mf[k0 + ot:k0 + ot + run]
    n1 = mf[k1 + ot:k1 + ot + run]
    n2 = mf[k2 + ot:k2 + ot + run]
    l0 = lf[k0 + ot:k0 + ot + run]
    l1 = lf[k1 + ot:k1 + ot + run]
    l2 = lf[k2 + ot:k2 + ot + run]
    d0 = _distances(df, dks, 0, k0, ot, ob, run)
    d1 = _distances(df, dks, 1, k1, ot, ob, run)
    d2 = _distances(df, dks, 2, k2, ot, ob, run)
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


def _halves(dks):
    """In compiled code: the distances' bases of windows 0-2 and 3-5 (None stays None)."""


@overload(_halves, inline="always")
def _halves_impl(dks):
    if isinstance(dks, types.NoneType):
        return lambda dks: (None, None)
    return lambda dks: ((dks[0], dks[1], dks[2]), (dks[3], dks[4], dks[5]))


@njit(cache=True, fastmath=_FAST, error_model="numpy")
def _sums6(vol, tabs, ks, dks, with_lik, with_dist):
    """The sums of six windows (bases ``ks``), run by run, three windows per inner loop: the table
    entries the first three read are still in cache for the other three (their windows overlap).
    24 values, window by window."""
    first, second = _halves(dks)
    t = (0.0,) * 24
    for r in range(vol.n_runs):
        ob, ot = _run_offsets(vol, r)
        x = _run3(vol, tabs, ob, ot, (ks[0], ks[1], ks[2]), first, with_lik, with_dist)
        y = _run3(vol, tabs, ob, ot, (ks[3], ks[4], ks[5]), second, with_lik, with_dist)
        t = (t[0] + x[0], t[1] + x[1], t[2] + x[2], t[3] + x[3], t[4] + x[4], t[5] + x[5], t[6] + x[6],
             t[7] + x[7], t[8] + x[8], t[9] + x[9], t[10] + x[10], t[11] + x[11], t[12] + y[0], t[13] + y[1],
             t[14] + y[2], t[15] + y[3], t[16] + y[4], t[17] + y[5], t[18] + y[6], t[19] + y[7], t[20] + y[8],
             t[21] + y[9], t[22] + y[10], t[23] + y[11])
    return t


@njit(cache=True, inline="always")
def _geometry3(d, h, w):
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
def _base(vol, cell):
    """Where the table window of a move to ``cell`` ``(tx, ty, tz)`` starts (flat, per hit)."""
    return (vol.d - 1 - cell[2]) * vol.plane_t + (vol.h - 1 - cell[1]) * vol.ww + (vol.w - 1 - cell[0])


@njit(cache=True, inline="always")
def _at_target(vol, a, cell):
    """``a`` laid out as the belief, at ``cell``."""
    return a[cell[2] * vol.plane_b + cell[1] * vol.bs + cell[0]]


@njit(cache=True, error_model="numpy")
def _move_score3(vol, totals, flat, target, dbases, space_aware):
    """Infotaxis (or space-aware) score of moving to ``target`` (one window; distances at
    ``dbases[0]`` among walls)."""
    total_p, total_u = totals
    likf, lloglf, df = flat
    base = _base(vol, target)
    rest_p = total_p - _at_target(vol, vol.pp, target)
    rest_u = total_u - _at_target(vol, vol.up, target)
    sum_c = 0.0
    total = 0.0
    for hit in range(1, likf.shape[0]):
        a, b1, b2, c = _sums1(vol, (likf[hit], lloglf[hit], df), base, dbases, True, space_aware)
        rest_p -= a
        rest_u -= b1
        sum_c += c
        total += _hit_value(a, b1 + b2, c, space_aware)
    _, _, b2, c_all = _sums1(vol, (likf[0], lloglf[0], df), base, dbases, False, space_aware)
    return total + _hit_value(rest_p, rest_u + b2, c_all - sum_c, space_aware)


@njit(cache=True, error_model="numpy")
def _score6(vol, totals, flat, targets, dks, space_aware, scores, buf):
    """``_move_score3`` of the six moves to ``targets`` (six cells) into ``scores``, one pass per
    hit (``_sums6``); ``buf`` ``(18,)`` float64 scratch."""
    total_p, total_u = totals
    likf, lloglf, df = flat
    ks = (_base(vol, targets[0]), _base(vol, targets[1]), _base(vol, targets[2]), _base(vol, targets[3]),
          _base(vol, targets[4]), _base(vol, targets[5]))
    rest_p = buf[0:6]
    rest_u = buf[6:12]
    sum_c = buf[12:18]
    for j in range(6):
        rest_p[j] = total_p - _at_target(vol, vol.pp, targets[j])
        rest_u[j] = total_u - _at_target(vol, vol.up, targets[j])
        sum_c[j] = 0.0
        scores[j] = 0.0
    for hit in range(1, likf.shape[0]):
        r = _sums6(vol, (likf[hit], lloglf[hit], df), ks, dks, True, space_aware)
        for j in range(6):
            rest_p[j] -= r[4 * j]
            rest_u[j] -= r[4 * j + 1]
            sum_c[j] += r[4 * j + 3]
            scores[j] += _hit_value(r[4 * j], r[4 * j + 1] + r[4 * j + 2], r[4 * j + 3], space_aware)
    r = _sums6(vol, (likf[0], lloglf[0], df), ks, dks, False, space_aware)
    for j in range(6):
        scores[j] += _hit_value(rest_p[j], rest_u[j] + r[4 * j + 2], r[4 * j + 3] - sum_c[j], space_aware)


def _score_volume(p, scratch, tables, moves, cell, space_aware, scores, solid):
    """``score_moves`` on a 3-D belief ``(D, H, W)``: the six moves in one pass per hit when all six
    are allowed (``_score6``), else each allowed one alone (``_move_score3``). ``scratch`` ``(R, D *
    H * (2W-1))``: rows 0-2 the padded belief and ``p log p``; among walls (space-aware) row 3 the
    paths' queue and rows 4.. one free-path distance array per move."""
    d, h, w = p.shape
    ww, bs, plane_b, plane_t, n_runs, run, rows = _geometry3(d, h, w)
    n = d * h * w
    flat = p.reshape(n)
    if bs == ww:  # narrow: both padded
        pp = scratch[0]
        up = scratch[1]
        logs = scratch[2, :n]
        total_p, total_u = p_log_p(flat, logs)  # over the cells only: p log p, and the totals
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
        total_p, total_u = p_log_p(pp, up)
    vol = Volume(pp, up, n_runs, run, rows, plane_b, plane_t, ww, bs, d, h, w)
    lik = tables.likelihood
    nh = lik.shape[0]
    size = lik.shape[1] * lik.shape[2] * lik.shape[3]
    likf = lik.reshape((nh, size))
    lloglf = tables.likelihood_log.reshape((tables.likelihood_log.shape[0], size))  # n planes, then their sum
    manhf = tables.manhattan.reshape(size)
    k_moves = moves.shape[0]
    n_allowed = 0
    for m in range(k_moves):
        n_allowed += scores[m] == 0.0
    totals = (total_p, total_u)
    if k_moves == 6 and n_allowed == 6:  # away from the faces: the six moves in one pass per hit
        six = ((cell[0] + moves[0, 0], cell[1] + moves[0, 1], cell[2] + moves[0, 2]),
               (cell[0] + moves[1, 0], cell[1] + moves[1, 1], cell[2] + moves[1, 2]),
               (cell[0] + moves[2, 0], cell[1] + moves[2, 1], cell[2] + moves[2, 2]),
               (cell[0] + moves[3, 0], cell[1] + moves[3, 1], cell[2] + moves[3, 2]),
               (cell[0] + moves[4, 0], cell[1] + moves[4, 1], cell[2] + moves[4, 2]),
               (cell[0] + moves[5, 0], cell[1] + moves[5, 1], cell[2] + moves[5, 2]))
        _six_scores(solid, space_aware, scratch, six, vol, totals, (likf, lloglf, manhf), scores)
        return
    for m in range(k_moves):
        if scores[m] == 0.0:
            target = (cell[0] + moves[m, 0], cell[1] + moves[m, 1], cell[2] + moves[m, 2])
            scores[m] = _one_score(solid, space_aware, scratch, target, vol, totals, (likf, lloglf, manhf))


# ------------------------------------------------------------------------------------------ among walls
# What walls change in the loops above, picked by the type of ``solid`` (None: open space): the
# loops themselves hold no test of it, each picker compiling the one its types call for.
def _group_scores(solid, space_aware, scratch, targets, plane, totals, flat, group):
    """In compiled code: ``_score_group`` of the four ``targets`` (``group``: ``(bases, p_t,
    u_t)``); space-aware among walls, with each target's free-path distances (scratch rows 4-7,
    laid out as the belief ``plane.pp``, one plane)."""


@overload(_group_scores)
def _group_scores_impl(solid, space_aware, scratch, targets, plane, totals, flat, group):
    if isinstance(solid, types.NoneType):
        return lambda solid, space_aware, scratch, targets, plane, totals, flat, group: _score_group(
            plane, totals, flat, (group[0], None, group[1], group[2]), space_aware)

    def impl(solid, space_aware, scratch, targets, plane, totals, flat, group):
        if not space_aware:
            return _score_group(plane, totals, flat, (group[0], None, group[1], group[2]), space_aware)
        stride = scratch.shape[1]
        queue = scratch[3].view(np.int64)
        for j in range(4):
            paths.free_path_distances(solid, targets[j], scratch[4 + j], queue, (stride, plane.bs))
        return _score_group(plane, totals, (flat[0], flat[1], scratch[4:8].reshape(4 * stride)),
                            (group[0], (0, stride, 2 * stride, 3 * stride), group[1], group[2]), space_aware)
    return impl


def _six_scores(solid, space_aware, scratch, six, vol, totals, flat, scores):
    """In compiled code: ``_score6`` of the six cells ``six`` into ``scores``; space-aware among
    walls, with each target's free-path distances (scratch rows 4-9, laid out as ``vol.pp``)."""


@overload(_six_scores)
def _six_scores_impl(solid, space_aware, scratch, six, vol, totals, flat, scores):
    # buf: the logarithms' row, free again once they are laid out as vol.up
    if isinstance(solid, types.NoneType):
        return lambda solid, space_aware, scratch, six, vol, totals, flat, scores: _score6(
            vol, totals, flat, six, None, space_aware, scores, scratch[2, :18])

    def impl(solid, space_aware, scratch, six, vol, totals, flat, scores):
        if not space_aware:
            _score6(vol, totals, flat, six, None, space_aware, scores, scratch[2, :18])
            return
        stride = scratch.shape[1]
        queue = scratch[3].view(np.int64)
        for j in range(6):
            paths.free_path_distances(solid, six[j], scratch[4 + j], queue, (vol.plane_b, vol.bs))
        _score6(vol, totals, (flat[0], flat[1], scratch[4:10].reshape(6 * stride)), six,
                (0, stride, 2 * stride, 3 * stride, 4 * stride, 5 * stride), space_aware, scores, scratch[2, :18])
    return impl


def _one_score(solid, space_aware, scratch, target, vol, totals, flat):
    """In compiled code: ``_move_score3`` of ``target``; space-aware among walls, with its free-path
    distances (scratch row 4, laid out as ``vol.pp``)."""


@overload(_one_score)
def _one_score_impl(solid, space_aware, scratch, target, vol, totals, flat):
    if isinstance(solid, types.NoneType):
        return lambda solid, space_aware, scratch, target, vol, totals, flat: _move_score3(
            vol, totals, flat, target, None, space_aware)

    def impl(solid, space_aware, scratch, target, vol, totals, flat):
        if not space_aware:
            return _move_score3(vol, totals, flat, target, None, space_aware)
        paths.free_path_distances(solid, target, scratch[4], scratch[3].view(np.int64), (vol.plane_b, vol.bs))
        return _move_score3(vol, totals, (flat[0], flat[1], scratch[4]), target, (0,), space_aware)
    return impl


# ------------------------------------------------------------------------------------------ the picker
def score_moves(p, scratch, tables, moves, cell, space_aware, scores, solid):
    """In compiled code: the infotaxis (or space-aware) score, in bits, of each allowed move
    (``scores[m] == 0`` on entry; the others are left as they are) of an agent at ``cell`` with
    belief ``p`` (``(H, W)`` or ``(D, H, W)``, C-contiguous); ``tables`` a ``BeliefTables``;
    ``moves`` ``(K, dims)``; ``scratch`` ``(R, (cells / W) * (2W-1))`` float64, overwritten (``R``
    3, or 4 + K among walls for space-aware infotaxis); ``solid`` None or the world's solid cells
    (the distances ``D`` follow free paths among them). Picks, by the belief's type, the loop of
    its dimension (module docstring: the figures): ``_score_plane``'s body or
    ``_score_volume``'s, the other not compiled."""


@overload(score_moves)
def _score_moves(p, scratch, tables, moves, cell, space_aware, scores, solid):
    # a call of its own (see _score_group: compiled inline, a decision took 4x as long to compile)
    return _score_plane if p.ndim == 2 else _score_volume
