"""Compiled helpers every step driver shares (``assemble.py``): start cells and action checks."""

from __future__ import annotations

import numpy as np

from .assemble import C_START_MODE, C_X0, C_X1, C_Y0, C_Y1, C_Z0, C_Z1, START_FIXED
from .jit import njit
from .rng import counter_cells, counter_starts, pcg64_cells, pcg64_starts


@njit(inline="always")
def place_starts(b, n_agents, cfg, starts, pos, seed, episode):
    """Start cells of world ``b``'s agents (rows ``b * n_agents ...``).

    Fixed starts are copied. Otherwise each agent draws ``(x, y)`` uniformly in the start region
    ``[x0, x1] x [y0, y1]`` (the whole grid by default): episode 0 exactly as
    ``numpy.random.default_rng(seed)`` draws ``integers(0, w)`` then ``integers(0, h)``, agent by
    agent; later episodes from the counter-based stream of ``(seed, episode)``.
    """
    base = b * n_agents
    if cfg[C_START_MODE] == START_FIXED:
        for n in range(n_agents):
            pos[base + n, 0] = starts[n, 0]
            pos[base + n, 1] = starts[n, 1]
        return
    x0 = cfg[C_X0]
    y0 = cfg[C_Y0]
    w = cfg[C_X1] - x0 + 1
    h = cfg[C_Y1] - y0 + 1
    if episode == 0:
        pcg64_starts(seed, n_agents, w, h, pos, base)
    else:
        counter_starts(seed, episode, n_agents, w, h, pos, base)
    if x0 != 0 or y0 != 0:
        for n in range(n_agents):
            pos[base + n, 0] += x0
            pos[base + n, 1] += y0


@njit(inline="always")
def place_starts3(b, n_agents, cfg, starts, pos, seed, episode):
    """``place_starts`` in 3-D: each agent draws ``(x, y, z)`` in the start box ``[x0, x1] x
    [y0, y1] x [z0, z1]``: episode 0 exactly as ``numpy.random.default_rng(seed)`` draws
    ``integers(0, w)``, ``integers(0, h)``, ``integers(0, d)``, agent by agent; later episodes
    from the counter-based stream of ``(seed, episode)``."""
    base = b * n_agents
    if cfg[C_START_MODE] == START_FIXED:
        for n in range(n_agents):
            for c in range(3):
                pos[base + n, c] = starts[n, c]
        return
    x0 = cfg[C_X0]
    y0 = cfg[C_Y0]
    z0 = cfg[C_Z0]
    sizes = (cfg[C_X1] - x0 + 1, cfg[C_Y1] - y0 + 1, cfg[C_Z1] - z0 + 1)
    if episode == 0:
        pcg64_cells(seed, n_agents, sizes, pos, base)
    else:
        counter_cells(seed, episode, n_agents, sizes, pos, base)
    for n in range(n_agents):
        pos[base + n, 0] += x0
        pos[base + n, 1] += y0
        pos[base + n, 2] += z0


@njit
def first_invalid_action(actions, n_actions):
    """Index of the first action outside ``0..n_actions-1``, or -1 when all are valid."""
    limit = np.uint64(n_actions)
    bad = False
    for i in range(actions.shape[0]):  # branch-free, so it vectorizes; negatives wrap to huge
        bad |= np.uint64(actions[i]) >= limit
    if not bad:
        return -1
    for i in range(actions.shape[0]):
        if np.uint64(actions[i]) >= limit:
            return i
    return -1


@njit
def first_nonfinite_row(actions):
    """Index of the first row of ``(rows, k)`` float actions holding NaN or an infinity, or -1."""
    for i in range(actions.shape[0]):
        for j in range(actions.shape[1]):
            if not np.isfinite(actions[i, j]):
                return i
    return -1
