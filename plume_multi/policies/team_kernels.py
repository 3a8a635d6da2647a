"""Decisions of teams whose agents run different policies on one shared belief, compiled.

Each agent has a kind: infotaxis, space-aware infotaxis, greedy, or ``KIND_GIVEN`` (its action
was chosen outside, by a policy of observations). Agents that share a belief decide in agent order;
under ``RULE_BELIEVER`` each decides on the belief updated as if every earlier agent of its group
had made its move and received its most likely hit (``infotaxis_kernels._believe``, in 3-D
``infotaxis_kernels_3d._believe3``), whatever their policies; under ``RULE_INDEPENDENT`` each
decides on the shared belief alone. A uniform team of infotaxis agents decides here exactly as
``infotaxis_kernels.decide_group`` (``infotaxis_kernels_3d.decide_group3`` in 3-D).

One kernel for 2-D beliefs ``(G, H, W)`` and 3-D ones ``(G, D, H, W)``: Numba compiles one
specialization per dimension and drops the other dimension's branch from it (a test on the
argument's ``ndim`` is a compile-time constant), so the 2-D code is what it was.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from ..engine.jit import njit
from . import greedy_kernels as gk
from . import infotaxis_kernels as ik
from . import infotaxis_kernels_3d as ik3

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
    ``beliefs[g]`` ``(G, H, W)`` (2-D) or ``(G, D, H, W)`` (3-D) float64 (read only); agents decide
    in order within a group.

    ``group_start`` ``(G+1,)`` int64; ``pos`` ``(M, dims)`` int32 cells ``(x, y[, z])``; ``kinds``
    ``(M,)`` int64 (``KIND_*``); ``given`` ``(M,)`` int64, the actions of ``KIND_GIVEN`` agents (in
    ``0..K-1``; their scores are NaN); ``lik``, ``llogl``, ``manh`` the plume's centred tables;
    ``moves`` ``(K, dims)`` int32; ``scores`` ``(M, K)`` float64 and ``actions`` ``(M,)`` int64 out;
    ``work`` ``(T, *belief)`` and ``scratch`` ``(T, 3, (cells / W) * (2W-1))`` float64, one per
    thread (``T`` at least ``numba.config.NUMBA_NUM_THREADS``). Under ``rule == RULE_BELIEVER`` the
    belief of a group of several is copied to ``work`` and updated after each agent's move
    (clamped into the grid, as bodies do) with its most likely hit. Groups where ``group_active``
    ``(G,)`` is False are skipped (actions 0, scores ``inf``). Parallel over groups; each writes
    only its own rows and overwrites its scratch before reading it, so the results do not depend
    on the thread count.
    """
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
            if beliefs.ndim == 3:  # 2-D beliefs (a copy per dimension: `p[...] =` compiles 1 s longer)
                p[:, :] = beliefs[g]
            else:
                p[:, :, :] = beliefs[g]
        for i in range(a0, a1):
            kind = kinds[i]
            if kind == KIND_GREEDY:
                a = gk.decide(p, moves, pos[i], scores[i])
            elif kind == KIND_GIVEN:
                scores[i, :] = np.nan  # not scored here
                a = given[i]
            elif beliefs.ndim == 3:  # 2-D beliefs: a compile-time constant, the other branch is dropped
                a = ik.decide(p, scratch[tid], lik, llogl, manh, moves, pos[i, 0], pos[i, 1],
                              kind == KIND_SPACE_AWARE, scores[i])
            else:
                a = ik3.decide3(p, scratch[tid], lik, llogl, manh, moves, pos[i, 0], pos[i, 1], pos[i, 2],
                                kind == KIND_SPACE_AWARE, scores[i])
            actions[i] = a
            if believer and i + 1 < a1 and a >= 0:
                # the move clamped into the grid (a given action may leave it), as bodies do
                x = min(max(pos[i, 0] + moves[a, 0], 0), p.shape[-1] - 1)
                y = min(max(pos[i, 1] + moves[a, 1], 0), p.shape[-2] - 1)
                if beliefs.ndim == 3:
                    ik._believe(p, lik, x, y)
                else:
                    ik3._believe3(p, lik, x, y, min(max(pos[i, 2] + moves[a, 2], 0), p.shape[-3] - 1))
