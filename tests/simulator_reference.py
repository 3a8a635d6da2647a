"""A plain, obviously-correct reference of the engine: Python loops, one agent at a time.

Written from the rules in plume_multi/kernels/step.py's docstring, independently of the kernels:
start cells of a world's seeded episode come from numpy.random.default_rng itself, and the
counter-based starts of later episodes from a Python-int transcription of the hash.
"""

from __future__ import annotations

import math

import numpy as np

M64 = (1 << 64) - 1


def fmix64(z: int) -> int:
    z ^= z >> 33
    z = (z * 0xFF51AFD7ED558CCD) & M64
    z ^= z >> 33
    z = (z * 0xC4CEB9FE1A85EC53) & M64
    z ^= z >> 33
    return z


def counter_u32(seed: int, episode: int, counter: int) -> int:
    z = fmix64((seed + 0x9E3779B97F4A7C15) & M64)
    z = fmix64(z ^ ((episode * 0xD1B54A32D192ED03) & M64))
    z = fmix64(z ^ ((counter * 0x8CB92BA72F3D8DD7 + 1) & M64))
    return z >> 32


def counter_integer(seed, episode, counter, bound):
    """One integer in ``[0, bound)`` from counters ``counter, counter + 1, ...`` (Lemire's
    multiply-and-reject): ``(value, next counter)``."""
    threshold = (2**32 - bound) % bound
    while True:
        m = counter_u32(seed, episode, counter) * bound
        counter += 1
        if (m & 0xFFFFFFFF) >= threshold:
            return m >> 32, counter


def counter_starts(seed, episode, n_agents, *sizes):
    """Start cells of a later episode: per agent one draw per axis of ``sizes`` ((W, H) or (W, H, D))."""
    out, counter = [], 0
    for _ in range(n_agents):
        cell = []
        for bound in sizes:
            value, counter = counter_integer(seed, episode, counter, bound)
            cell.append(value)
        out.append(tuple(cell))
    return out


def numpy_starts(seed, n_agents, *sizes):
    """Episode 0's start cells: ``default_rng(seed)`` draws ``integers(0, W)``, ``integers(0, H)``
    (and ``integers(0, D)`` in 3-D), agent by agent."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_agents):
        out.append(tuple(int(rng.integers(0, bound)) for bound in sizes))
    return out


def gaussian(grid_size, source, sigma):
    w, h = grid_size
    f = np.zeros((h, w), dtype=np.float32)
    for y in range(h):
        for x in range(w):
            d2 = (x - source[0]) ** 2 + (y - source[1]) ** 2
            f[y, x] = np.float32(min(max(math.exp(-d2 / (2.0 * sigma * sigma)), 0.0), 1.0))
    return f


class NaiveWorld:
    """One world of N agents, stepped agent by agent."""

    def __init__(self, scenario, field, autoreset):
        self.sc = scenario
        self.field = field
        self.autoreset = autoreset
        w, h = scenario.grid_size
        self.sx = np.float32(1.0 / (w - 1)) if w > 1 else np.float32(0.0)
        self.sy = np.float32(1.0 / (h - 1)) if h > 1 else np.float32(0.0)
        self.moves = scenario.moves()

    # -- state
    def reset(self, seed=None):
        sc = self.sc
        if seed is not None:
            self.seed, self.episode = seed, 0
        else:
            self.episode += 1
        if sc.start_positions is not None:
            self.pos = [tuple(p) for p in sc.start_positions]
        elif self.episode == 0:
            self.pos = numpy_starts(self.seed, sc.n_agents, *sc.grid_size)
        else:
            self.pos = counter_starts(self.seed, self.episode, sc.n_agents, *sc.grid_size)
        self.t = 0
        self.done = False
        self.active = [True] * sc.n_agents
        self.length = [0] * sc.n_agents
        self.reward = [0.0] * sc.n_agents
        self.terminated = [False] * sc.n_agents
        self.truncated = [False] * sc.n_agents
        self.obs = self.observe()
        self.final = None

    def observe(self):
        rows = []
        for n, (x, y) in enumerate(self.pos):
            row = [self.field[y, x], np.float32(x * float(self.sx)), np.float32(y * float(self.sy))]
            others = sorted(((px - x) ** 2 + (py - y) ** 2, m) for m, (px, py) in enumerate(self.pos) if m != n)
            for _, m in others[: self.sc.n_neighbours]:
                row.append(np.float32((self.pos[m][0] - x) * float(self.sx)))
                row.append(np.float32((self.pos[m][1] - y) * float(self.sy)))
            rows.append(row)
        return np.array(rows, dtype=np.float32).reshape(self.sc.n_agents, self.sc.obs_dim)

    def step(self, actions):
        sc = self.sc
        self.final = None
        if self.autoreset == "next_step" and self.done:
            self.reset()
            return
        self.t += 1
        w, h = sc.grid_size
        arrived = False
        for n in range(sc.n_agents):
            if self.active[n]:
                dx, dy = self.moves[actions[n]]
                x = min(max(self.pos[n][0] + int(dx), 0), w - 1)
                y = min(max(self.pos[n][1] + int(dy), 0), h - 1)
                self.pos[n] = (x, y)
                self.length[n] += 1
                if math.sqrt((x - sc.source_location[0]) ** 2 + (y - sc.source_location[1]) ** 2) <= sc.goal_radius:
                    self.reward[n], self.active[n], self.terminated[n] = 1.0, False, True
                    arrived = True
                else:
                    self.reward[n], self.terminated[n] = 0.0, False
            else:
                self.reward[n], self.terminated[n] = 0.0, True
            self.truncated[n] = self.t >= sc.max_steps
        if arrived and sc.team:
            for n in range(sc.n_agents):
                if self.active[n]:
                    self.reward[n], self.active[n], self.terminated[n] = 1.0, False, True
        self.obs = self.observe()
        self.done = self.t >= sc.max_steps or not any(self.active)
        if self.autoreset == "same_step" and self.done:
            final = (self.obs.copy(), list(self.length))
            reward, term, trunc = list(self.reward), list(self.terminated), list(self.truncated)
            self.reset()
            self.reward, self.terminated, self.truncated = reward, term, trunc
            self.final = final
            self.done = True  # "ended on the last step", though already reset


# ----------------------------------------------------------------------------------------- walls
STREAM_WALLS = 0x1F83D9AB  # plume_multi/engine/walls.py's WALLS_STREAM, written out on purpose


def _key(seed: int, episode: int, stream: int) -> int:
    z = fmix64((seed + 0x9E3779B97F4A7C15) & M64)
    z = fmix64(z ^ ((episode * 0xD1B54A32D192ED03) & M64))
    return fmix64(z ^ ((stream * 0xA0761D6478BD642F + 0x632BE59BD9B4E019) & M64))


def _uniform(key: int, a: int, b: int) -> float:
    z = fmix64(key ^ ((a * 0x8CB92BA72F3D8DD7 + 1) & M64))
    z = fmix64(z ^ ((b * 0xE7037ED1A0B428DB + 0x1D8E4E27C47D124F) & M64))
    return (z >> 11) / 9007199254740992.0


def wall_mask_index(seed: int, episode: int, n_masks: int) -> int:
    """The mask a world draws for an episode: 0 for one mask, else floor(u * K) of the uniform at
    counters (0, 0) of its walls stream."""
    if n_masks <= 1:
        return 0
    return min(int(_uniform(_key(seed, episode, STREAM_WALLS), 0, 0) * n_masks), n_masks - 1)


def _solid(wall, cell) -> bool:
    return bool(wall[tuple(reversed(cell))])


def numpy_free_starts(seed, n_agents, sizes, origin, wall):
    """Episode 0's start cells among walls: per agent, ``default_rng(seed)`` draws one integer per
    axis of ``sizes`` (plus ``origin``), and draws the whole cell again while it is solid."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_agents):
        while True:
            cell = tuple(int(rng.integers(0, bound)) + o for bound, o in zip(sizes, origin))
            if not _solid(wall, cell):
                break
        out.append(cell)
    return out


def counter_free_starts(seed, episode, n_agents, sizes, origin, wall):
    """A later episode's start cells among walls: the counter-based draws of ``counter_starts``,
    a solid cell drawn again from the next counters."""
    out, counter = [], 0
    for _ in range(n_agents):
        while True:
            cell = []
            for bound, o in zip(sizes, origin):
                value, counter = counter_integer(seed, episode, counter, bound)
                cell.append(value + o)
            if not _solid(wall, cell):
                break
        out.append(tuple(cell))
    return out


def stop_at_walls(wall, start, end):
    """Where a continuous body moving straight from ``start`` to ``end`` (float points, 2 or 3
    coordinates) stops among walls (``wall`` indexed [y, x] or [z, y, x]): ``(end, False)``, or the
    point on the face of the first solid cell the path enters and True.

    From the cell ``floor(c + 0.5)`` of the start, step by step toward the end's cell: the next cell
    is along the axis whose face the path crosses first, at ``t = (face - start) / (end - start)``
    (the face ``c + 0.5`` going up, ``c - 0.5`` going down), the lowest axis on a tie, only axes not
    yet at the end cell. At a solid cell entered along axis ``a`` at ``t``: coordinate ``a`` is the
    face on the free side (``c - 0.5`` going down, the largest float of cell ``c`` going up), the others
    ``start + t (end - start)``, each kept inside its cell's span ``[c - 0.5, c + 0.5)`` (the face
    ``c + 0.5`` itself is the next cell's: the largest float ``v`` with ``floor(v + 0.5) == c``).
    """
    def top(c):  # the largest float v with floor(v + 0.5) == c, computed in floats
        v = math.nextafter(c + 0.5, -math.inf)
        while math.floor(v + 0.5) > c:
            v = math.nextafter(v, -math.inf)
        return v

    dims = len(start)
    cell = [math.floor(c + 0.5) for c in start]
    last = [math.floor(c + 0.5) for c in end]
    step = [(e > c) - (e < c) for c, e in zip(cell, last)]
    delta = [e - s for s, e in zip(start, end)]
    for _ in range(sum(abs(e - c) for c, e in zip(cell, last))):
        t = [((cell[k] + 0.5 * step[k]) - start[k]) / delta[k] if cell[k] != last[k] else math.inf
             for k in range(dims)]
        a = min(range(dims), key=lambda k: (t[k], k))
        nxt = list(cell)
        nxt[a] += step[a]
        if _solid(wall, nxt):
            point = []
            for k in range(dims):
                if k == a:
                    point.append(top(cell[k]) if step[k] > 0 else cell[k] - 0.5)
                else:
                    v = start[k] + t[a] * delta[k]
                    point.append(min(max(v, cell[k] - 0.5), top(cell[k])))
            return tuple(point), True
        cell = nxt
    return tuple(end), False
