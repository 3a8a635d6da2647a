"""Decisions of teams whose agents run different policies on one shared belief, compiled.

Each agent has a kind: infotaxis, space-aware infotaxis, greedy, or ``KIND_GIVEN`` (its action
was chosen outside, by a policy of observations). Agents that share a belief decide in agent order;
under ``RULE_BELIEVER`` each decides on the belief updated as if every earlier agent of its group
had made its move and received its most likely hit (``infotaxis_kernels._believe``), whatever
their policies; under ``RULE_INDEPENDENT`` each decides on the shared belief alone. A uniform
team of infotaxis agents decides here exactly as ``infotaxis_kernels.decide_group``.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from ..engine.jit import njit
from . import greedy_kernels as gk
from . import infotaxis_kernels as ik

__all__ = ["KIND_GIVEN", "KIND_INFOTAXIS", "KIND_SPACE_AWARE", "KIND_GREEDY", "decide_batch"]

KIND_GIVEN = -1  # the action is given (a policy of observations chose it)
KIND_INFOTAXIS = 0
KIND_SPACE_AWARE = 1
KIND_GREEDY = 2


# One compiled function (no compiled helpers of its own): each cached function re-optimizes the
# code of every function it calls, and infotaxis' decision is large.
@njit(cache=True, parallel=True)
def decide_batch(beliefs, group_start, pos, kinds, given, lik, llogl, manh, moves, rule, work, scratch,
                 scores, actions, group_active):
    """Actions of every agent: group ``g`` (agents ``group_start[g]..group_start[g+1]-1``) shares
    ``beliefs[g]`` ``(G, H, W)`` float64 (read only); agents decide in order within a group.

    ``group_start`` ``(G+1,)`` int64; ``pos`` ``(M, 2)`` int32; ``kinds`` ``(M,)`` int64
    (``KIND_*``); ``given`` ``(M,)`` int64, the actions of ``KIND_GIVEN`` agents (in ``0..K-1``;
    their scores are NaN); ``scores`` ``(M, K)`` float64 and ``actions`` ``(M,)`` int64 out;
    ``work`` ``(T, H, W)`` and ``scratch`` ``(T, 3, H * (2W-1))`` float64, one per thread (``T`` at
    least ``numba.config.NUMBA_NUM_THREADS``). Under ``rule == RULE_BELIEVER`` the belief of a group
    of several is copied to ``work`` and updated after each agent's move (clamped into the grid, as
    bodies do) with its most likely hit. Groups where ``group_active`` ``(G,)`` is False are skipped
    (actions 0, scores ``inf``). Parallel over groups; each writes only its own rows and overwrites
    its scratch before reading it, so the results do not depend on the thread count.
    """
    h, w = beliefs.shape[1], beliefs.shape[2]
    for g in prange(beliefs.shape[0]):
        a0, a1 = group_start[g], group_start[g + 1]
        if not group_active[g]:
            for i in range(a0, a1):
                actions[i] = 0
                scores[i, :] = np.inf
            continue
        tid = numba.get_thread_id()
        believer = rule == ik.RULE_BELIEVER and a1 - a0 > 1
        p = work[tid] if believer else beliefs[g]
        if believer:
            p[:, :] = beliefs[g]
        for i in range(a0, a1):
            x = pos[i, 0]
            y = pos[i, 1]
            kind = kinds[i]
            if kind == KIND_GREEDY:
                a = gk.decide(p, moves, x, y, scores[i])
            elif kind == KIND_GIVEN:
                scores[i, :] = np.nan  # not scored here
                a = given[i]
            else:
                a = ik.decide(p, scratch[tid], lik, llogl, manh, moves, x, y, kind == KIND_SPACE_AWARE, scores[i])
            actions[i] = a
            if believer and i + 1 < a1 and a >= 0:
                ik._believe(p, lik, min(max(x + moves[a, 0], 0), w - 1), min(max(y + moves[a, 1], 0), h - 1))
