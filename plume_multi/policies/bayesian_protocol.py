"""otto-benchmark's Bayesian protocol: episodes without a source, scored by the expected search time.

How ``evaluate.py`` of otto-benchmark (Loisy & Heinonen 2023; and of otto, Loisy & Eloy 2022)
scores a policy when ``DRAW_SOURCE = False``: no source is drawn. At each step the agent moves;
the probability that it has just found the source is its belief at its new cell, ``p_end``; the
episode's expected search time accumulates ``T += p_not_found`` and then
``p_not_found *= 1 - p_end``; if it goes on, a hit is drawn from its predictive law given that the
source is elsewhere, ``Pr(h) = sum_x p(x) L_h(x) / (1 - p_end)``, and the belief is updated with
it. The episode stops when ``p_not_found < stop_p`` (``1e-6``), when ``p_end > 1 - 1e-10``, or
after ``max_steps`` (then it failed); in the isotropic setup of otto and otto-benchmark also when
the agent is stuck, back on the cell it left two steps before for more than ``stuck_after``
(8) steps in a row (then it failed too; ``stuck_after = 0`` turns that off, as their windy setup
does). ``T`` has the same mean as the number of steps of episodes
with a source drawn from the first belief (the policy sees the same law of hits), with a smaller
variance.

Random draws are counter-based as in the drawn-source protocol (first hit at ``(0, 0)`` of its
stream, the hit of step ``t`` at ``(t, 0)`` of ``STREAM_HITS``): results never depend on thread
count or batch split.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from ..engine import rng
from ..engine.jit import njit
from ..models.plumes.poisson_hits.kernels import STREAM_HITS, draw_weighted, hit_mass, update_belief
from ..models.plumes.poisson_hits.kernels_3d import hit_mass3, update_belief3
from .infotaxis_kernels import decide_group, start_world
from .infotaxis_kernels_3d import decide_group3, start_world3

__all__ = ["run_bayesian_world", "run_bayesian_worlds", "run_bayesian_world3", "run_bayesian_worlds3", "END_TOL"]

END_TOL = 1e-10  # otto-benchmark's EPSILON: p_end > 1 - END_TOL ends the episode


@njit(cache=True)
def _predictive_hit(belief, lik, x, y, u):
    """A hit drawn from ``Pr(h) ∝ sum_x p(x) L_h(x - (x, y))`` with the uniform ``u`` (the
    ``L_h`` vanish at the agent's cell, so this is the law given the source is elsewhere)."""
    masses = np.empty(lik.shape[0])
    for hit in range(lik.shape[0]):
        masses[hit] = hit_mass(belief, lik, hit, x, y)
    return draw_weighted(masses, 0, u)


@njit(cache=True)
def run_bayesian_world(seed, episode, space_aware, first_hit_cdf, lik, llogl, manh, moves, max_steps, stop_p,
                       stuck_after, x0, y0, belief, work, scratch, pos, scores, actions):
    """One episode of the Bayesian protocol for one infotaxis agent starting at ``(x0, y0)``.

    ``belief`` ``(1, H, W)``, ``work`` ``(H, W)``, ``scratch`` ``(3, H * (2W-1))`` float64;
    ``pos`` ``(1, 2)`` int32; ``scores`` ``(1, K)``; ``actions`` ``(1,)`` int64.
    Returns ``(steps, expected_time, p_not_found, first_hit, stuck)``."""
    h0, _, _ = start_world(seed, episode, first_hit_cdf, lik, x0, y0, -1, -1, belief[0])
    p = belief[0]
    pos[0, 0] = x0
    pos[0, 1] = y0
    key = rng.stream_key(seed, episode, STREAM_HITS)
    expected = 0.0
    p_not_found = 1.0
    x1, y1 = -1, -1  # the cells one and two steps ago (none yet)
    x2, y2 = -1, -1
    repeats = 0
    for t in range(1, max_steps + 1):
        decide_group(p, work, scratch, lik, llogl, manh, moves, pos, 0, 1, space_aware, 0, scores, actions)
        a = actions[0]
        x2, y2 = x1, y1
        x1, y1 = pos[0, 0], pos[0, 1]
        x = x1 + moves[a, 0]
        y = y1 + moves[a, 1]
        pos[0, 0] = x
        pos[0, 1] = y
        repeats = repeats + 1 if (x == x2 and y == y2) else 0
        p_end = p[y, x]
        expected += p_not_found
        p_not_found *= 1.0 - p_end
        if p_not_found < stop_p or p_end > 1.0 - END_TOL:
            return t, expected, p_not_found, h0, False
        if t >= max_steps:
            break
        if stuck_after > 0 and repeats > stuck_after:
            return t, expected, p_not_found, h0, True
        hit = _predictive_hit(p, lik, x, y, rng.uniform(key, t, 0))
        if update_belief(p, lik, x, y, hit) <= 0.0:
            return t, expected, p_not_found, h0, False  # nothing left to find (not reached: hits are drawn possible)
    return max_steps, expected, p_not_found, h0, False


@njit(cache=True, parallel=True)
def run_bayesian_worlds(seeds, episode, space_aware, first_hit_cdf, lik, llogl, manh, moves, max_steps, stop_p,
                        stuck_after, x0, y0, beliefs, work, scratch, pos, scores, actions, out_steps, out_time,
                        out_not_found, out_first_hit, out_stuck):
    """``run_bayesian_world`` for each seed ``seeds[b]`` ``(B,)`` int64, in parallel over episodes.

    ``beliefs`` ``(B, H, W)``; ``work`` ``(T, H, W)``, ``scratch`` ``(T, 3, H * (2W-1))`` one per
    thread; ``pos`` ``(B, 2)``, ``scores`` ``(B, K)``, ``actions`` ``(B,)``. Outputs ``(B,)``:
    steps (int64), expected search time and probability not found (float64), first hit (int64),
    stuck (bool)."""
    for b in prange(seeds.shape[0]):
        tid = numba.get_thread_id()
        s, e, q, h0, stuck = run_bayesian_world(seeds[b], episode, space_aware, first_hit_cdf, lik, llogl, manh,
                                                moves, max_steps, stop_p, stuck_after, x0, y0, beliefs[b:b + 1],
                                                work[tid], scratch[tid], pos[b:b + 1], scores[b:b + 1],
                                                actions[b:b + 1])
        out_steps[b] = s
        out_time[b] = e
        out_not_found[b] = q
        out_first_hit[b] = h0
        out_stuck[b] = stuck



# ------------------------------------------------------------------------------------------ 3-D
@njit(cache=True)
def _predictive_hit3(belief, lik, x, y, z, u):
    """``_predictive_hit`` in 3-D."""
    masses = np.empty(lik.shape[0])
    for hit in range(lik.shape[0]):
        masses[hit] = hit_mass3(belief, lik, hit, x, y, z)
    return draw_weighted(masses, 0, u)


@njit(cache=True)
def run_bayesian_world3(seed, episode, space_aware, first_hit_cdf, lik, llogl, manh, moves, max_steps, stop_p,
                        stuck_after, start, belief, work, scratch, pos, scores, actions):
    """``run_bayesian_world`` in 3-D (``start`` ``(3,)`` int64, ``belief`` ``(1, D, H, W)``, ``pos``
    ``(1, 3)``)."""
    no_source = np.full(3, -1, dtype=np.int64)
    h0, _, _, _ = start_world3(seed, episode, first_hit_cdf, lik, start[0], start[1], start[2], no_source, belief[0])
    p = belief[0]
    pos[0, 0] = start[0]
    pos[0, 1] = start[1]
    pos[0, 2] = start[2]
    key = rng.stream_key(seed, episode, STREAM_HITS)
    expected = 0.0
    p_not_found = 1.0
    x1, y1, z1 = -1, -1, -1
    x2, y2, z2 = -1, -1, -1
    repeats = 0
    for t in range(1, max_steps + 1):
        decide_group3(p, work, scratch, lik, llogl, manh, moves, pos, 0, 1, space_aware, 0, scores, actions)
        a = actions[0]
        x2, y2, z2 = x1, y1, z1
        x1, y1, z1 = pos[0, 0], pos[0, 1], pos[0, 2]
        x = x1 + moves[a, 0]
        y = y1 + moves[a, 1]
        z = z1 + moves[a, 2]
        pos[0, 0] = x
        pos[0, 1] = y
        pos[0, 2] = z
        repeats = repeats + 1 if (x == x2 and y == y2 and z == z2) else 0
        p_end = p[z, y, x]
        expected += p_not_found
        p_not_found *= 1.0 - p_end
        if p_not_found < stop_p or p_end > 1.0 - END_TOL:
            return t, expected, p_not_found, h0, False
        if t >= max_steps:
            break
        if stuck_after > 0 and repeats > stuck_after:
            return t, expected, p_not_found, h0, True
        hit = _predictive_hit3(p, lik, x, y, z, rng.uniform(key, t, 0))
        if update_belief3(p, lik, x, y, z, hit) <= 0.0:
            return t, expected, p_not_found, h0, False
    return max_steps, expected, p_not_found, h0, False


@njit(cache=True, parallel=True)
def run_bayesian_worlds3(seeds, episode, space_aware, first_hit_cdf, lik, llogl, manh, moves, max_steps, stop_p,
                         stuck_after, start, beliefs, work, scratch, pos, scores, actions, out_steps, out_time,
                         out_not_found, out_first_hit, out_stuck):
    """``run_bayesian_worlds`` in 3-D."""
    for b in prange(seeds.shape[0]):
        tid = numba.get_thread_id()
        s, e, q, h0, stuck = run_bayesian_world3(seeds[b], episode, space_aware, first_hit_cdf, lik, llogl, manh,
                                                 moves, max_steps, stop_p, stuck_after, start, beliefs[b:b + 1],
                                                 work[tid], scratch[tid], pos[b:b + 1], scores[b:b + 1],
                                                 actions[b:b + 1])
        out_steps[b] = s
        out_time[b] = e
        out_not_found[b] = q
        out_first_hit[b] = h0
        out_stuck[b] = stuck
