"""Compiled functions of the grid bodies whose actions are a displacement table (``Cardinal``,
``Moore``): action ``k`` moves the agent by ``moves[k] = (dx, dy)`` (``(dx, dy, dz)`` in 3-D),
then the cell is clamped into the grid. No heading: sensors that use one see 0 degrees (+x).
"""

from __future__ import annotations

from collections import namedtuple

from ...engine.jit import njit
from ...engine.shared import first_invalid_action
from ..base import BodyKernels, BodyKernels3D

# moves: (K, dims) int32 displacements; n_actions: K
TableParams = namedtuple("TableParams", "moves n_actions")


@njit(inline="always")
def first_invalid(P, actions):
    return first_invalid_action(actions, P.n_actions)


@njit(inline="always")
def move(P, S, i, actions, pos, width, height, seed, episode, t):
    a = actions[i]
    x = pos[i, 0] + P.moves[a, 0]
    y = pos[i, 1] + P.moves[a, 1]
    x_max = width - 1
    y_max = height - 1
    pos[i, 0] = 0 if x < 0 else (x_max if x > x_max else x)
    pos[i, 1] = 0 if y < 0 else (y_max if y > y_max else y)


KERNELS = BodyKernels(first_invalid=first_invalid, move=move)


@njit(inline="always")
def move3(P, S, i, actions, pos, width, height, depth, seed, episode, t):
    a = actions[i]
    x = pos[i, 0] + P.moves[a, 0]
    y = pos[i, 1] + P.moves[a, 1]
    z = pos[i, 2] + P.moves[a, 2]
    x_max = width - 1
    y_max = height - 1
    z_max = depth - 1
    pos[i, 0] = 0 if x < 0 else (x_max if x > x_max else x)
    pos[i, 1] = 0 if y < 0 else (y_max if y > y_max else y)
    pos[i, 2] = 0 if z < 0 else (z_max if z > z_max else z)


KERNELS_3D = BodyKernels3D(first_invalid=first_invalid, move=move3)
