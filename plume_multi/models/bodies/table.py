"""Compiled functions of the grid bodies whose actions are a displacement table (``Cardinal``,
``Moore``): action ``k`` moves the agent by ``moves[k] = (dx, dy)`` (``(dx, dy, dz)`` in 3-D),
then the cell is clamped into the grid. No heading: sensors that use one see 0 degrees (+x).
"""

from __future__ import annotations

from collections import namedtuple

from ...engine.jit import njit
from ...engine.shared import first_invalid_action
from ..base import BodyKernels

# moves: (K, dims) int32 displacements; n_actions: K
TableParams = namedtuple("TableParams", "moves n_actions")


@njit(inline="always")
def first_invalid(P, actions):
    return first_invalid_action(actions, P.n_actions)


@njit(inline="always")
def move(P, S, i, actions, pos, shape, seed, episode, t):
    a = actions[i]
    for c in range(len(shape)):
        v = pos[i, c] + P.moves[a, c]
        v_max = shape[c] - 1
        pos[i, c] = 0 if v < 0 else (v_max if v > v_max else v)


KERNELS = BodyKernels(first_invalid=first_invalid, move=move)
