"""Compiled functions of the grid bodies whose actions are a displacement table (``Cardinal``,
``Moore``): action ``k`` moves the agent by ``moves[k] = (dx, dy)``, then the cell is clamped
into the grid. No heading: sensors that use one see 0 degrees (+x).

P = (moves (K, 2) int32, K); S = ().
"""

from __future__ import annotations

import numpy as np

from ...kernels.engine import first_invalid_action
from ...kernels.jit import njit


@njit(inline="always")
def first_invalid(P, actions):
    return first_invalid_action(actions, P[1])


@njit(inline="always")
def reset_agent(P, S, i, n, pos, seed, episode):
    pass


@njit(inline="always")
def move(P, S, i, actions, pos, width, height, seed, episode, t):
    a = actions[i]
    x = pos[i, 0] + P[0][a, 0]
    y = pos[i, 1] + P[0][a, 1]
    x_max = width - 1
    y_max = height - 1
    pos[i, 0] = 0 if x < 0 else (x_max if x > x_max else x)
    pos[i, 1] = 0 if y < 0 else (y_max if y > y_max else y)


@njit(inline="always")
def location(P, S, i, pos):
    return np.float64(pos[i, 0]), np.float64(pos[i, 1])


@njit(inline="always")
def heading(P, S, i):
    return 0.0
