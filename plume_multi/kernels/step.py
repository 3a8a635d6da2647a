"""The fused step and reset of B worlds x N agents.

Layout (the Simulator allocates every buffer once; kernels only write into them):

* per agent, rows ``b * N + n``: ``pos`` (BN, 2) int32 cells ``(x, y)``; ``active`` (BN,) bool
  (still searching); ``terminated``, ``truncated`` (BN,) bool; ``obs`` (BN, D) float32;
  ``reward`` (BN,) float32; ``ep_length`` (BN,) int32 (steps taken while active this episode).
* per world: ``world_t`` (B,) int32 steps into the episode; ``world_done`` (B,) bool, the
  episode ended on the last step (``t >= max_steps`` or no agent active), kept so the next step
  need not scan the world; ``world_episode`` (B,) int32 (0 = first episode after a seeded
  reset); ``world_seed`` (B,) int64.
* shared, read-only: ``field`` (H, W) float32 indexed ``[y, x]``; ``moves`` (K, 2) int32
  displacement per action; ``starts`` (N, 2) int32 fixed start cells (or (0, 2) to draw them);
  ``cfg`` int64 scalars, indexed by the ``C_*`` constants below.

Semantics of one step of one world (``t`` is its step count):

1. ``autoreset == NEXT_STEP`` and ``world_done``: the world is reset instead (actions
   ignored, reward 0, flags False).
2. Otherwise ``t += 1``. Each active agent moves by ``moves[action]``, clamped into the grid;
   ``ep_length += 1``; if ``dx^2 + dy^2 <= goal_d2`` it earns 1.0 and becomes inactive
   (terminated). Inactive agents stay put and earn 0. With ``team``, one arrival terminates
   every active agent of the world and each earns 1.0. ``truncated = t >= max_steps`` for
   every agent of the world; ``terminated = not active``.
3. ``obs`` = [field at the cell, x / (W-1), y / (H-1), then (dx/(W-1), dy/(H-1)) of the
   ``n_neighbours`` nearest other agents (squared distance, ties by index)].
4. ``world_done = t >= max_steps or no agent active``.
   ``autoreset == SAME_STEP`` and the world is done: its rows of ``obs`` and
   ``ep_length`` are copied to ``final_obs`` / ``final_length`` and the world is reset;
   ``reward``, ``terminated``, ``truncated`` and ``world_done`` keep this step's values.

Randomness: a world's episode 0 starts as ``numpy.random.default_rng(world_seed)`` draws
(``rng.pcg64_starts``); episode ``e >= 1`` from ``rng.counter_starts(world_seed, e)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .rng import counter_starts, pcg64_starts

C_N_AGENTS, C_WIDTH, C_HEIGHT, C_SRC_X, C_SRC_Y, C_GOAL_D2, C_MAX_STEPS = 0, 1, 2, 3, 4, 5, 6
C_AUTORESET, C_TEAM, C_N_NEIGHBOURS, C_FIXED_STARTS = 7, 8, 9, 10
CFG_SIZE = 11

AUTORESET_DISABLED, AUTORESET_NEXT_STEP, AUTORESET_SAME_STEP = 0, 1, 2


@njit(cache=True, inline="always")
def _scale(side):
    return np.float32(1.0 / (side - 1)) if side > 1 else np.float32(0.0)


@njit(cache=True)
def observe_world(b, cfg, field, pos, obs):
    """Write the observation rows of world ``b`` from positions and the field."""
    n_agents = cfg[C_N_AGENTS]
    sx = _scale(cfg[C_WIDTH])
    sy = _scale(cfg[C_HEIGHT])
    base = b * n_agents
    for n in range(n_agents):
        i = base + n
        x = pos[i, 0]
        y = pos[i, 1]
        obs[i, 0] = field[y, x]
        obs[i, 1] = x * sx
        obs[i, 2] = y * sy
    if cfg[C_N_NEIGHBOURS] > 0:
        observe_neighbours(b, cfg, pos, obs)


@njit(cache=True)
def observe_neighbours(b, cfg, pos, obs):
    """Columns 3.. of world ``b``'s observations: (dx, dy) of each agent's k nearest others,
    by (squared distance, index), normalized by the grid size.

    One pass over the others per agent. While it runs, the agent's own 2k neighbour columns hold
    its best k so far as sorted (d2, index) pairs: both are below 2**24 (d2 <= 2 * 2047**2,
    index < MAX_AGENTS), so float32 holds them exactly and no scratch memory is needed.
    """
    n_agents = cfg[C_N_AGENTS]
    k = cfg[C_N_NEIGHBOURS]
    sx = _scale(cfg[C_WIDTH])
    sy = _scale(cfg[C_HEIGHT])
    base = b * n_agents
    for n in range(n_agents):
        i = base + n
        x = pos[i, 0]
        y = pos[i, 1]
        count = 0
        for m in range(n_agents):
            if m == n:
                continue
            j = base + m
            dx = pos[j, 0] - x
            dy = pos[j, 1] - y
            d2 = np.float32(dx * dx + dy * dy)
            if count < k:
                p = count
                count += 1
            elif d2 < obs[i, 1 + 2 * k]:  # the worst kept; on a tie it has the smaller index
                p = k - 1
            else:
                continue
            # insertion: others come in index order, so "strictly farther" keeps ties by index
            while p > 0 and obs[i, 1 + 2 * p] > d2:
                obs[i, 3 + 2 * p] = obs[i, 1 + 2 * p]
                obs[i, 4 + 2 * p] = obs[i, 2 + 2 * p]
                p -= 1
            obs[i, 3 + 2 * p] = d2
            obs[i, 4 + 2 * p] = np.float32(m)
        for r in range(k):
            j = base + np.int64(obs[i, 4 + 2 * r])
            obs[i, 3 + 2 * r] = (pos[j, 0] - x) * sx
            obs[i, 4 + 2 * r] = (pos[j, 1] - y) * sy


@njit(cache=True)
def reset_world(b, seeded, clear_outputs, cfg, field, starts, pos, active, terminated, truncated,
                obs, reward, ep_length, world_t, world_done, world_episode, world_seed):
    """Start a new episode in world ``b``.

    ``seeded``: the world's ``world_seed`` was just set; its episode 0 begins (PCG64 draws).
    Otherwise the world's next episode begins (counter-based draws).
    ``clear_outputs``: zero ``reward``, the flags and ``world_done`` (False under SAME_STEP
    autoreset, where the caller must still see the finishing step's values, and ``world_done``
    tells which worlds ended and were reset).
    """
    n_agents = cfg[C_N_AGENTS]
    base = b * n_agents
    if seeded:
        world_episode[b] = 0
    else:
        world_episode[b] += 1
    if cfg[C_FIXED_STARTS] != 0:
        for n in range(n_agents):
            pos[base + n, 0] = starts[n, 0]
            pos[base + n, 1] = starts[n, 1]
    elif world_episode[b] == 0:
        pcg64_starts(world_seed[b], n_agents, cfg[C_WIDTH], cfg[C_HEIGHT], pos, base)
    else:
        counter_starts(world_seed[b], world_episode[b], n_agents, cfg[C_WIDTH], cfg[C_HEIGHT], pos, base)
    world_t[b] = 0
    if clear_outputs:
        world_done[b] = False
    for i in range(base, base + n_agents):
        active[i] = True
        ep_length[i] = 0
        if clear_outputs:
            terminated[i] = False
            truncated[i] = False
            reward[i] = 0.0
    observe_world(b, cfg, field, pos, obs)


@njit(cache=True)
def _team_arrival(b, cfg, active, terminated, reward):
    """Team mode: an arrival ends the episode of every agent of world ``b``; all share the reward."""
    base = b * cfg[C_N_AGENTS]
    for i in range(base, base + cfg[C_N_AGENTS]):
        if active[i]:
            active[i] = False
            terminated[i] = True
            reward[i] = 1.0


@njit(cache=True)
def _save_final(b, cfg, obs, ep_length, final_obs, final_length):
    base = b * cfg[C_N_AGENTS]
    for i in range(base, base + cfg[C_N_AGENTS]):
        for d in range(obs.shape[1]):
            final_obs[i, d] = obs[i, d]
        final_length[i] = ep_length[i]


@njit(cache=True)
def advance_worlds(b_start, b_stop, actions, moves, field, starts, cfg, pos, active, terminated,
                   truncated, obs, reward, ep_length, world_t, world_done, world_episode,
                   world_seed, final_obs, final_length):
    """Advance worlds ``b_start..b_stop-1`` one step (the module docstring gives the rules).

    One flat loop over agents; a world's start and end are events inside it. Per-world helper
    calls or a nested agent loop cost more than the step itself at N = 1, so only the rare paths
    (resets, team arrivals, neighbour sensing, SAME_STEP copies) are calls.
    """
    n_agents = cfg[C_N_AGENTS]
    mode = cfg[C_AUTORESET]
    team = cfg[C_TEAM] != 0
    neighbours = cfg[C_N_NEIGHBOURS] > 0
    x_max = cfg[C_WIDTH] - 1
    y_max = cfg[C_HEIGHT] - 1
    src_x = cfg[C_SRC_X]
    src_y = cfg[C_SRC_Y]
    goal_d2 = cfg[C_GOAL_D2]
    max_steps = cfg[C_MAX_STEPS]
    sx = _scale(cfg[C_WIDTH])
    sy = _scale(cfg[C_HEIGHT])
    n = 0  # agent index within world b
    b = b_start
    skip = False  # world b is being reset by this step (NEXT_STEP)
    trunc = False
    arrived = False
    n_active = 0
    for i in range(b_start * n_agents, b_stop * n_agents):
        if n == 0:
            skip = mode == AUTORESET_NEXT_STEP and world_done[b]
            if skip:
                reset_world(b, False, True, cfg, field, starts, pos, active, terminated, truncated,
                            obs, reward, ep_length, world_t, world_done, world_episode, world_seed)
            else:
                t = world_t[b] + 1
                world_t[b] = t
                trunc = t >= max_steps
                arrived = False
                n_active = 0
        if not skip:
            if active[i]:
                a = actions[i]
                x = pos[i, 0] + moves[a, 0]
                y = pos[i, 1] + moves[a, 1]
                x = 0 if x < 0 else (x_max if x > x_max else x)
                y = 0 if y < 0 else (y_max if y > y_max else y)
                pos[i, 0] = x
                pos[i, 1] = y
                ep_length[i] += 1
                dx = x - src_x
                dy = y - src_y
                if dx * dx + dy * dy <= goal_d2:
                    reward[i] = 1.0
                    active[i] = False
                    terminated[i] = True
                    arrived = True
                else:
                    reward[i] = 0.0
                    terminated[i] = False
            else:
                reward[i] = 0.0
                terminated[i] = True
            truncated[i] = trunc
            n_active += active[i]
            # written for every agent, after the branch: measurably faster than inside it
            obs[i, 0] = field[pos[i, 1], pos[i, 0]]
            obs[i, 1] = pos[i, 0] * sx
            obs[i, 2] = pos[i, 1] * sy
        n += 1
        if n == n_agents:
            if not skip:
                if arrived and team:
                    _team_arrival(b, cfg, active, terminated, reward)
                    n_active = 0
                if neighbours:
                    observe_neighbours(b, cfg, pos, obs)
                done = trunc or n_active == 0
                world_done[b] = done
                if mode == AUTORESET_SAME_STEP and done:
                    _save_final(b, cfg, obs, ep_length, final_obs, final_length)
                    reset_world(b, False, False, cfg, field, starts, pos, active, terminated,
                                truncated, obs, reward, ep_length, world_t, world_done,
                                world_episode, world_seed)
            n = 0
            b += 1


@njit(cache=True)
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


@njit(cache=True)
def step_kernel(actions, moves, field, starts, cfg, pos, active, terminated, truncated, obs,
                reward, ep_length, world_t, world_done, world_episode, world_seed, final_obs,
                final_length):
    """Validate every action, then advance every world by one step (serial).

    Returns -1 on success, else the index of the first invalid action (nothing was changed).
    """
    bad = first_invalid_action(actions, moves.shape[0])
    if bad >= 0:
        return bad
    advance_worlds(0, world_t.shape[0], actions, moves, field, starts, cfg, pos, active,
                   terminated, truncated, obs, reward, ep_length, world_t, world_done,
                   world_episode, world_seed, final_obs, final_length)
    return -1


PARALLEL_CHUNKS = 64


@njit(cache=True, parallel=True)
def step_kernel_parallel(actions, moves, field, starts, cfg, pos, active, terminated, truncated,
                         obs, reward, ep_length, world_t, world_done, world_episode, world_seed,
                         final_obs, final_length):
    """``step_kernel`` with chunks of worlds on threads. Each world writes only its own rows,
    so the result is identical to the serial kernel's, whatever the thread count."""
    bad = first_invalid_action(actions, moves.shape[0])
    if bad >= 0:
        return bad
    n_worlds = world_t.shape[0]
    chunks = min(PARALLEL_CHUNKS, n_worlds)
    for c in prange(chunks):
        advance_worlds(c * n_worlds // chunks, (c + 1) * n_worlds // chunks, actions, moves,
                       field, starts, cfg, pos, active, terminated, truncated, obs, reward,
                       ep_length, world_t, world_done, world_episode, world_seed, final_obs,
                       final_length)
    return -1


@njit(cache=True)
def reset_kernel(mask, seed, cfg, field, starts, pos, active, terminated, truncated, obs, reward,
                 ep_length, world_t, world_done, world_episode, world_seed):
    """Reset the worlds where ``mask`` (B,) is True.

    ``seed >= 0``: world ``b`` is seeded ``seed + b`` and begins its episode 0.
    ``seed < 0``: each world begins its next episode from its own stream.
    """
    for b in range(world_t.shape[0]):
        if mask[b]:
            if seed >= 0:
                world_seed[b] = seed + b
            reset_world(b, seed >= 0, True, cfg, field, starts, pos, active, terminated, truncated,
                        obs, reward, ep_length, world_t, world_done, world_episode, world_seed)
