"""Compiled helpers every step driver shares (``assemble.py``): start cells and action checks."""

from __future__ import annotations

import numpy as np

from .assemble import C_N_AGENTS, C_START_MODE, C_X0, C_X1, C_Y0, C_Y1, C_Z0, C_Z1, START_FIXED
from .jit import njit
from .rng import counter_cells, pcg64_cells
from .tuples import take


@njit(inline="always")
def start_box(cfg, shape):
    """``(origin, sizes)`` of the start region as tuples as long as ``shape``: its lowest corner
    and its number of cells along each axis (the whole grid by default)."""
    origin = take((cfg[C_X0], cfg[C_Y0], cfg[C_Z0]), shape)
    sizes = take((cfg[C_X1] - cfg[C_X0] + 1, cfg[C_Y1] - cfg[C_Y0] + 1, cfg[C_Z1] - cfg[C_Z0] + 1), shape)
    return origin, sizes


@njit(inline="always")
def fixed_starts(b, cfg, starts, pos, shape):
    """World ``b``'s agents at the scenario's fixed start cells ``starts`` (``(n_agents, dims)``)."""
    n_agents = cfg[C_N_AGENTS]
    base = b * n_agents
    for n in range(n_agents):
        for c in range(len(shape)):
            pos[base + n, c] = starts[n, c]


@njit(inline="always")
def place_starts(b, cfg, starts, pos, shape, seed, episode):
    """Start cells of world ``b``'s agents (rows ``b * n_agents ...``), on a grid of ``shape``.

    Fixed starts are copied. Otherwise each agent draws its cell uniformly in the start box
    ``[x0, x1] x [y0, y1]`` (``x [z0, z1]`` in 3-D; the whole grid by default): episode 0 exactly
    as ``numpy.random.default_rng(seed)`` draws ``integers(0, w)``, ``integers(0, h)`` (then
    ``integers(0, d)``), agent by agent; later episodes from the counter-based stream of
    ``(seed, episode)``.
    """
    n_agents = cfg[C_N_AGENTS]
    base = b * n_agents
    if cfg[C_START_MODE] == START_FIXED:
        fixed_starts(b, cfg, starts, pos, shape)
        return
    origin, sizes = start_box(cfg, shape)
    if episode == 0:
        pcg64_cells(seed, n_agents, sizes, pos, base)
    else:
        counter_cells(seed, episode, n_agents, sizes, pos, base)
    for n in range(n_agents):
        for c in range(len(shape)):
            pos[base + n, c] += origin[c]


place_starts3 = place_starts  # deprecated: one function for every dimension


@njit(no_cpython_wrapper=True)  # called from compiled code only (a body's first_invalid)
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


@njit(no_cpython_wrapper=True)
def first_nonfinite_row(actions):
    """Index of the first row of ``(rows, k)`` float actions holding NaN or an infinity, or -1."""
    for i in range(actions.shape[0]):
        for j in range(actions.shape[1]):
            if not np.isfinite(actions[i, j]):
                return i
    return -1
