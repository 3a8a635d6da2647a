"""``decide_kinds``: the kernel call that ``Greedy`` and ``Team`` share (its own module, so that
``team`` may use ``Greedy`` and ``greedy`` this call without a circle)."""

from __future__ import annotations

import numpy as np

from ..engine.threads import PARALLEL_LOCK
from ..errors import ValidationError
from . import team_kernels as tk
from .belief_state import decision_inputs
from .infotaxis import TEAM_RULES, decision_scratch

__all__: list = []  # decide_kinds is internal: the kernel call Greedy and Team share


def decide_kinds(who: str, plume, beliefs, positions, kinds, team_rule: str, *, groups=None, moves=None,
                 active=None, given=None):
    """Actions of M agents that decide on ``beliefs`` by kind (``team_kernels.KIND_*``).

    ``kinds``: ``(M,)`` ints, or a function ``m -> kinds`` (broadcast); ``given`` ``(M,)`` int
    actions of the ``KIND_GIVEN`` agents (in ``0..K-1``); the other arguments as
    ``belief_state.decision_inputs``: 2-D beliefs ``(G, H, W)`` with cells ``(M, 2)``, or 3-D ones
    ``(G, D, H, W)`` with cells ``(M, 3)`` (the plume's dimension; one compiled kernel, specialized
    per dimension). Returns ``(actions (M,) int64, scores (M, K) float64)``.
    """
    d = decision_inputs(who, plume, beliefs, positions, groups, moves, active)
    m, k = d.positions.shape[0], d.moves.shape[0]
    # writable copies whatever was given: mutability is part of the kernel's compiled signature
    kinds = np.array(np.broadcast_to(kinds(m) if callable(kinds) else kinds, (m,)), dtype=np.int64)
    given = np.zeros(m, dtype=np.int64) if given is None else np.array(given, dtype=np.int64)
    asked = given[kinds == tk.KIND_GIVEN]
    if asked.size and (asked.min() < 0 or asked.max() >= k):
        raise ValidationError(f"{who}: a policy of observations gave actions in {asked.min()}..{asked.max()}; "
                              f"expected integers in 0..{k - 1}")
    work, scratch = decision_scratch(plume.shape)  # per thread, not per agent: it stays in cache
    scores, actions = np.empty((m, k)), np.empty(m, dtype=np.int64)
    with PARALLEL_LOCK:  # a parallel kernel: one launch at a time (engine/threads.py)
        tk.decide_batch(d.beliefs, d.starts, d.positions, kinds, given, np.ascontiguousarray(plume.centred_likelihood),
                        np.ascontiguousarray(plume.centred_likelihood_log),
                        np.ascontiguousarray(plume.centred_manhattan), d.moves, TEAM_RULES[team_rule], work, scratch,
                        scores, actions, d.group_active)
    return actions, scores
