"""The belief searchers' decisions, compiled: agents that share one belief decide in turn, each with
its own policy (``Infotaxis``, ``Greedy`` and ``Team`` all decide here).

Each agent has a kind: infotaxis, space-aware infotaxis, greedy, or ``KIND_GIVEN`` (its action
was chosen outside, by a policy of observations). Agents that share a belief decide in agent order;
under ``RULE_BELIEVER`` each decides on the belief updated as if every earlier agent of its group
had made its move and received its most likely hit (``infotaxis_kernels.believe``), whatever their
policies; under ``RULE_INDEPENDENT`` each decides on the shared belief alone.

One source for 2-D beliefs ``(G, H, W)`` and 3-D ones ``(G, D, H, W)``: Numba compiles one
specialization per dimension (and one with walls, one without: ``walls`` is None or a
``WallMasks``), each with only its own branches.

Records (named tuples; what travels together):

* ``Searchers(pos, kinds, given, moves, rule)``: ``(M, dims)`` int32 cells, ``(M,)`` int64 kinds
  (``KIND_*``), ``(M,)`` int64 actions of the ``KIND_GIVEN`` agents, ``(K, dims)`` int32 moves, the
  team rule;
* ``Groups(beliefs, starts, active)``: ``(G, *belief)`` float64 (read only), ``(G+1,)`` int64
  (agents ``starts[g]..starts[g+1]-1`` share ``beliefs[g]``), ``(G,)`` bool (groups without an
  active agent are skipped);
* ``Scratch(work, scratch)``: per thread ``(T, *belief)`` and ``(T, R, (cells / W) * (2W-1))``
  float64 (a group's function gets one thread's pair);
* ``Decisions(scores, actions)``: ``(M, K)`` float64 and ``(M,)`` int64, out;
* ``WallMasks(masks, index)``: ``(K, *belief)`` bool masks, True where solid, and ``(G,)`` int64, the
  mask of each group's world.
"""

from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np
from numba import prange, types
from numba.extending import overload

from ..engine.jit import njit
from ..models.plumes.poisson_hits.kernels import cell_of, inside, moved, solid_at
from . import greedy_kernels as gk
from . import infotaxis_kernels as ik

__all__ = ["KIND_GIVEN", "KIND_INFOTAXIS", "KIND_SPACE_AWARE", "KIND_GREEDY", "Searchers", "Groups", "Scratch",
           "Decisions", "WallMasks", "decide_group", "decide_batch", "solid_of", "landing"]

KIND_GIVEN = -1  # the action is given (a policy of observations chose it)
KIND_INFOTAXIS = 0
KIND_SPACE_AWARE = 1
KIND_GREEDY = 2

Searchers = namedtuple("Searchers", "pos kinds given moves rule")
Groups = namedtuple("Groups", "beliefs starts active")
Scratch = namedtuple("Scratch", "work scratch")
Decisions = namedtuple("Decisions", "scores actions")
WallMasks = namedtuple("WallMasks", "masks index")


def solid_of(walls, g):
    """In compiled code: the solid cells of group ``g``'s world (``walls.masks[walls.index[g]]``), or
    None without walls."""


@overload(solid_of, inline="always")
def _solid_of(walls, g):
    if isinstance(walls, types.NoneType):
        return lambda walls, g: None
    return lambda walls, g: walls.masks[walls.index[g]]


@njit(cache=True)
def landing(p, cell, moves, a, solid):
    """Where an agent at ``cell`` stands after action ``a``: its move clamped into the grid of
    ``p``, or ``cell`` itself when the move's cell is solid (as the grid bodies do)."""
    new = moved(cell, moves, a)
    if not inside(p, new):
        if len(cell) == 2:
            new = (min(max(new[0], 0), p.shape[1] - 1), min(max(new[1], 0), p.shape[0] - 1))
        else:
            new = (min(max(new[0], 0), p.shape[2] - 1), min(max(new[1], 0), p.shape[1] - 1),
                   min(max(new[2], 0), p.shape[0] - 1))
    if solid_at(solid, new):
        if len(cell) == 2:
            return (np.int64(cell[0]), np.int64(cell[1]))
        return (np.int64(cell[0]), np.int64(cell[1]), np.int64(cell[2]))
    return new


@njit(cache=True)
def decide_group(belief, searchers, a0, a1, tables, scratch, out, solid):
    """Actions of agents ``a0..a1-1`` that share ``belief`` (``(H, W)`` or ``(D, H, W)``; read only),
    into ``out`` (their rows). ``scratch``: one thread's ``Scratch`` (``work`` a belief, ``scratch``
    the decisions' rows); ``solid`` None or the world's solid cells. Under ``RULE_BELIEVER`` a group
    of several decides on a copy in ``work``, updated after each agent's move (``landing``) with
    its most likely hit."""
    believer = searchers.rule == ik.RULE_BELIEVER and a1 - a0 > 1
    p = belief
    if believer:
        work = scratch.work.reshape(scratch.work.size)
        work[:] = belief.reshape(belief.size)
        p = scratch.work
    moves = searchers.moves
    for i in range(a0, a1):
        kind = searchers.kinds[i]
        cell = cell_of(searchers.pos, i, p)
        if kind == KIND_GREEDY:
            a = gk.decide(p, moves, cell, out.scores[i], solid, scratch.scratch)
        elif kind == KIND_GIVEN:
            out.scores[i, :] = np.nan  # not scored here
            a = searchers.given[i]
        else:
            a = ik.decide(p, scratch.scratch, tables, moves, cell, kind == KIND_SPACE_AWARE, out.scores[i], solid)
        out.actions[i] = a
        if believer and i + 1 < a1 and a >= 0:
            ik.believe(p, tables.likelihood, landing(p, cell, moves, a, solid))


@njit(cache=True, parallel=True)
def decide_batch(groups, searchers, tables, scratch, out, walls):
    """Actions of every agent: group ``g`` shares ``groups.beliefs[g]``; agents decide in order
    within a group (``decide_group``). ``tables`` a ``BeliefTables``; ``scratch`` the per-thread
    ``Scratch`` (``T`` at least ``numba.config.NUMBA_NUM_THREADS``); ``walls`` None or a
    ``WallMasks``. Groups where ``groups.active`` is False are skipped (actions 0, scores ``inf``).
    Given agents' scores are NaN. Parallel over groups; each writes only its own rows and overwrites
    its scratch before reading it, so the results do not depend on the thread count."""
    for g in prange(groups.beliefs.shape[0]):
        a0, a1 = groups.starts[g], groups.starts[g + 1]
        if not groups.active[g]:
            _skip(out, a0, a1)
            continue
        tid = numba.get_thread_id()
        decide_group(groups.beliefs[g], searchers, a0, a1, tables, Scratch(scratch.work[tid], scratch.scratch[tid]),
                     out, solid_of(walls, g))


# Stores into a record's arrays from a prange body go through a call (not inlined by Numba): Numba
# 0.68's parfors dropped such stores made in the body itself (its alias analysis does not see
# that a record's arrays are the caller's), silently.
@njit(cache=True)
def _skip(out, a0, a1):
    """Agents ``a0..a1-1`` of a group skipped: actions 0, scores ``inf``."""
    for i in range(a0, a1):
        out.actions[i] = 0
        out.scores[i, :] = np.inf
