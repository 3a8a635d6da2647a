"""``decide_kinds``: the kernel call that ``Infotaxis``, ``Greedy`` and ``Team`` share (its own
module, so that ``team`` may use ``Greedy`` and ``greedy`` this call without a circle)."""

from __future__ import annotations

import numpy as np

from ..engine.threads import PARALLEL_LOCK
from ..errors import ValidationError
from . import team_kernels as tk
from .infotaxis_kernels import RULE_BELIEVER, RULE_INDEPENDENT
from .belief_state import decision_inputs, scratch_for, tables_of

__all__: list = []  # decide_kinds is internal: the kernel call Infotaxis, Greedy and Team share

TEAM_RULES = {"independent": RULE_INDEPENDENT, "believer": RULE_BELIEVER}


def decide_kinds(who: str, plume, beliefs, positions, kinds, team_rule: str, *, groups=None, moves=None,
                 active=None, given=None, walls=None):
    """Actions of M agents that decide on ``beliefs`` by kind (``team_kernels.KIND_*``).

    ``kinds``: ``(M,)`` ints, or a function ``m -> kinds`` (broadcast); ``given`` ``(M,)`` int
    actions of the ``KIND_GIVEN`` agents (in ``0..K-1``); the other arguments as
    ``belief_state.decision_inputs``: 2-D beliefs ``(G, H, W)`` with cells ``(M, 2)``, or 3-D ones
    ``(G, D, H, W)`` with cells ``(M, 3)`` (the plume's dimension; one compiled kernel, specialized
    per dimension), ``walls`` None or the walls of each belief's world. Returns ``(actions (M,)
    int64, scores (M, K) float64)``; an active agent left without an allowed move (walls all
    around) is a ``ValidationError``.
    """
    d = decision_inputs(who, plume, beliefs, positions, groups, moves, active, walls)
    m, k = d.positions.shape[0], d.moves.shape[0]
    # writable copies whatever was given: mutability is part of the kernel's compiled signature
    if callable(kinds):  # one kind for every agent
        kinds = np.full(m, kinds(m), dtype=np.int64)
    else:
        kinds = np.array(np.broadcast_to(kinds, (m,)), dtype=np.int64)
    if given is None:
        given = np.zeros(m, dtype=np.int64)
    else:
        given = np.array(given, dtype=np.int64)
        asked = given[kinds == tk.KIND_GIVEN]
        if asked.size and (asked.min() < 0 or asked.max() >= k):
            raise ValidationError(f"{who}: a policy of observations gave actions in {asked.min()}..{asked.max()}; "
                                  f"expected integers in 0..{k - 1}")
    out = tk.Decisions(np.empty((m, k)), np.empty(m, dtype=np.int64))
    searchers = tk.Searchers(d.positions, kinds, given, d.moves, TEAM_RULES[team_rule])
    with PARALLEL_LOCK:  # a parallel kernel: one launch at a time (engine/threads.py)
        tk.decide_batch(tk.Groups(d.beliefs, d.starts, d.group_active), searchers, tables_of(plume),
                        _scratch(plume.shape, d.walls is not None), out, d.walls)
    stuck = out.actions < 0
    if active is not None:
        stuck &= np.asarray(active)
    if stuck.any():
        i = int(np.flatnonzero(stuck)[0])
        raise ValidationError(f"{who}: agent {i} at {tuple(int(v) for v in d.positions[i])} has no move that stays "
                              f"inside the grid {plume.shape[::-1]} and out of walls (moves {d.moves.tolist()}); "
                              "expected at least one allowed move")
    return out.actions, out.scores


_SCRATCH: dict = {}  # the last per-thread scratch made for each belief shape (used under PARALLEL_LOCK)


def _scratch(shape: tuple, walls: bool):
    """The decisions' per-thread scratch for beliefs of ``shape``, kept from one call to the next
    (every launch holds ``PARALLEL_LOCK``, so no two use it at once): not allocated at every step."""
    import numba

    key = (tuple(shape), walls, numba.config.NUMBA_NUM_THREADS)
    if key not in _SCRATCH:
        if len(_SCRATCH) >= 4:
            _SCRATCH.pop(next(iter(_SCRATCH)))
        _SCRATCH[key] = scratch_for(shape, walls)
    return _SCRATCH[key]
