"""A plain reference of the source motions and of the Gaussian plume of several sources: Python
floats and loops, one source and one agent at a time, written from the docstrings of
plume_multi/models/sources/*.py and plume_multi/models/plumes/gaussian_sources.py.

``MotionRef(motion, lattice)`` starts and moves one world's sources; ``NaiveSourcesWorld`` is one
world of ``Simulator`` (``autoreset="next_step"``) for a ``Gaussian`` of several, drawn or moving
sources with a table body, the sensors ``Concentration`` and ``Position`` and the reward
``SparseGoal``: team episodes included.
"""

from __future__ import annotations

import math

import numpy as np

from models_reference import F32, bilinear, stream_key, uniform
from simulator_reference import counter_starts, numpy_starts
from plume_multi import sources

# each model file's STREAM constant, written out here on purpose
STREAM_GAUSSIAN = 0x6A09E667
STREAM_RANDOM_WALK = 0x3F84D5B5


def reflect(x: float, high: float):
    """``x`` folded into ``[0, high]`` by mirrors at both edges; True after an odd number of them."""
    if high <= 0.0:
        return 0.0, False
    folds = math.floor(x / high)
    y = x % (2.0 * high)
    if y > high:
        y = 2.0 * high - y
    return y, folds % 2 != 0


class MotionRef:
    """The sources of one world: ``xy`` (K, 2) floats, ``state`` (K, W) floats."""

    def __init__(self, motion, lattice: bool = False):
        self.motion = motion
        self.lattice = lattice

    def start(self, xy, state, k, seed, episode):
        m = self.motion
        if isinstance(m, sources.Drift):
            state[k] = list(m.velocity)
        elif isinstance(m, sources.RandomWalk):
            u = uniform(stream_key(seed, episode, STREAM_RANDOM_WALK), 0, k)
            state[k][0] = 90.0 * math.floor(4.0 * u) if self.lattice else 360.0 * u
        elif isinstance(m, sources.Waypoints):
            state[k][0] = 0.0

    def move(self, xy, state, k, t, width, height, seed, episode):
        m = self.motion
        if isinstance(m, sources.Drift):
            for axis, side in ((0, width), (1, height)):
                xy[k][axis], flip = reflect(xy[k][axis] + state[k][axis], side - 1.0)
                if flip:
                    state[k][axis] = -state[k][axis]
        elif isinstance(m, sources.RandomWalk):
            key = stream_key(seed, episode, STREAM_RANDOM_WALK)
            heading = state[k][0]
            if uniform(key, t, 3 * k) < 1.0 / m.persistence:
                u = uniform(key, t, 3 * k + 1)
                heading = 90.0 * math.floor(4.0 * u) if self.lattice else 360.0 * u
            if self.lattice:
                if uniform(key, t, 3 * k + 2) < m.speed:
                    dx, dy = {0: (1, 0), 1: (0, 1), 2: (-1, 0), 3: (0, -1)}[int(heading) // 90]
                    x, y = xy[k][0] + dx, xy[k][1] + dy
                    if 0 <= x <= width - 1 and 0 <= y <= height - 1:
                        xy[k] = [x, y]
            else:
                rad = heading * (math.pi / 180.0)
                xy[k][0], flip_x = reflect(xy[k][0] + m.speed * math.cos(rad), width - 1.0)
                xy[k][1], flip_y = reflect(xy[k][1] + m.speed * math.sin(rad), height - 1.0)
                if flip_x:
                    heading = (540.0 - heading) % 360.0
                if flip_y:
                    heading = (360.0 - heading) % 360.0
            state[k][0] = heading
        elif isinstance(m, sources.Waypoints):
            pts = m.points
            leg = min(max(int(state[k][0]), 0), len(pts))
            left = m.speed
            x, y = xy[k]
            for _ in range(len(pts) + 1):
                if leg >= len(pts):
                    if not m.loop:
                        break
                    leg = 0
                dx, dy = pts[leg][0] - x, pts[leg][1] - y
                d = math.sqrt(dx * dx + dy * dy)
                if d <= left:
                    x, y = pts[leg]
                    left -= d
                    leg += 1
                else:
                    x += dx / d * left
                    y += dy / d * left
                    left = 0.0
                if left <= 0.0:
                    break
            xy[k] = [x, y]
            state[k][0] = float(leg)


def summed(xy, x, y, sigma):
    """float32 ``min(1, sum_k exp(-d_k^2 / (2 sigma^2)))``."""
    total = 0.0
    for sx, sy in xy:
        dx, dy = x - sx, y - sy
        total += math.exp(-(dx * dx + dy * dy) / (2.0 * sigma ** 2))
    return F32(min(total, 1.0))


def summed_field(w, h, cells, sigma):
    """The shared field of fixed sources: the same sum at every cell (NumPy's exp on the grid)."""
    x = np.arange(w, dtype=np.float64)
    y = np.arange(h, dtype=np.float64)
    total = np.zeros((h, w))
    for sx, sy in cells:
        total += np.exp(-((x[None, :] - sx) ** 2 + (y[:, None] - sy) ** 2) / (2.0 * sigma ** 2))
    return np.minimum(total, 1.0).astype(np.float32)


class NaiveSourcesWorld:
    """One world of a ``Gaussian`` of several, drawn or moving sources (module docstring)."""

    def __init__(self, scenario):
        self.sc = sc = scenario
        self.plume = p = sc.plume
        self.w, self.h = sc.grid_size
        self.moves = sc.moves()
        self.motion = MotionRef(p.source_motion)
        self.cells = [] if p.source == "random" else ([p.source] if isinstance(p.source[0], int) else list(p.source))
        self.k = p.source_count()
        self.on_cells = not p.source_motion.moves
        self.field = summed_field(self.w, self.h, self.cells, p.sigma) if p.source != "random" and self.on_cells else None
        self.sx = F32(1.0 / (self.w - 1)) if self.w > 1 else F32(0.0)
        self.sy = F32(1.0 / (self.h - 1)) if self.h > 1 else F32(0.0)

    def reset(self, seed=None):
        sc, p = self.sc, self.plume
        if seed is not None:
            self.seed, self.episode = seed, 0
        else:
            self.episode += 1
        if self.episode == 0:
            self.pos = numpy_starts(self.seed, sc.n_agents, self.w, self.h)
        else:
            self.pos = counter_starts(self.seed, self.episode, sc.n_agents, self.w, self.h)
        key = stream_key(self.seed, self.episode, STREAM_GAUSSIAN)
        self.xy, self.state, self.found = [], [], [False] * self.k
        for k in range(self.k):
            if p.source == "random":
                self.xy.append([float(math.floor(uniform(key, 0, 2 * k) * self.w)),
                                float(math.floor(uniform(key, 0, 2 * k + 1) * self.h))])
            else:
                self.xy.append([float(c) for c in self.cells[k]])
            self.state.append([0.0] * p.source_motion.state_width())
            self.motion.start(self.xy, self.state, k, self.seed, self.episode)
        self.t = 0
        self.done = False
        self.active = [True] * sc.n_agents
        self.reward = [0.0] * sc.n_agents
        self.terminated = [False] * sc.n_agents
        self.truncated = [False] * sc.n_agents
        self.obs = self.observe()

    def concentration(self, x, y):
        if self.field is not None:
            return self.field[y, x]
        return summed(self.xy, float(x), float(y), self.plume.sigma)

    def observe(self):
        return np.array([[self.concentration(x, y), F32(x * float(self.sx)), F32(y * float(self.sy))]
                         for x, y in self.pos], dtype=np.float32)

    def within(self, x, y, k) -> bool:
        d2 = (x - self.xy[k][0]) ** 2 + (y - self.xy[k][1]) ** 2
        if self.on_cells:
            return math.sqrt(d2) <= self.sc.goal_radius  # integer d2: exactly the Euclidean rule
        return d2 <= self.sc.goal_radius ** 2

    def reach(self, x, y):
        for k in range(self.k):
            if not (self.sc.team and self.found[k]) and self.within(x, y, k):
                self.found[k] = True
                return True
        return False

    def step(self, actions):
        sc = self.sc
        if self.done:
            self.reset()
            return
        self.t += 1
        for k in range(self.k):
            self.motion.move(self.xy, self.state, k, self.t, self.w, self.h, self.seed, self.episode)
        everything = False
        for n in range(sc.n_agents):
            if self.active[n]:
                dx, dy = self.moves[actions[n]]
                x = min(max(self.pos[n][0] + int(dx), 0), self.w - 1)
                y = min(max(self.pos[n][1] + int(dy), 0), self.h - 1)
                self.pos[n] = (x, y)
                if self.reach(x, y):
                    self.reward[n], self.active[n], self.terminated[n] = 1.0, False, True
                    everything = all(self.found)
                else:
                    self.reward[n], self.terminated[n] = 0.0, False
            else:
                self.reward[n], self.terminated[n] = 0.0, True
            self.truncated[n] = self.t >= sc.max_steps
        if sc.team and everything:
            for n in range(sc.n_agents):
                if self.active[n]:
                    self.reward[n], self.active[n], self.terminated[n] = 1.0, False, True
        self.obs = self.observe()
        self.done = self.t >= sc.max_steps or not any(self.active)


class GaussianSourcesReference:
    """``NaiveSim``'s reference of a ``Gaussian`` of several, drawn or moving sources (2-D): the
    plume's part of one world at a time, for every body and sensor ``NaiveSim`` steps. ``xy[b]``:
    world b's source points ``[[x, y], ...]``; ``found[b]``: which were found this episode."""

    def __init__(self, sim):
        self.sim = sim
        self.plume = p = sim.plume
        self.motion = MotionRef(p.source_motion)
        self.cells = [] if p.source == "random" else ([p.source] if isinstance(p.source[0], int) else list(p.source))
        self.k = p.source_count()
        self.on_cells = not p.source_motion.moves
        self.field = summed_field(sim.W, sim.H, self.cells, p.sigma) if p.source != "random" and self.on_cells \
            else None
        self.xy = [None] * sim.B
        self.state = [None] * sim.B
        self.found = [None] * sim.B

    def reset(self, b, seed, ep):
        key = stream_key(seed, ep, STREAM_GAUSSIAN)
        xy, state = [], []
        for k in range(self.k):
            if self.plume.source == "random":
                xy.append([float(math.floor(uniform(key, 0, 2 * k) * self.sim.W)),
                           float(math.floor(uniform(key, 0, 2 * k + 1) * self.sim.H))])
            else:
                xy.append([float(c) for c in self.cells[k]])
            state.append([0.0] * self.plume.source_motion.state_width())
            self.motion.start(xy, state, k, seed, ep)
        self.xy[b], self.state[b], self.found[b] = xy, state, [False] * self.k
        self.sim.sources[b] = xy[0]

    def advance(self, b):
        """The sources' move at the start of world b's step (its clock already advanced)."""
        sim = self.sim
        for k in range(self.k):
            self.motion.move(self.xy[b], self.state[b], k, int(sim.t[b]), sim.W, sim.H, int(sim.seed[b]),
                             int(sim.episode[b]))
        sim.sources[b] = self.xy[b][0]

    def conc_cell(self, b, x, y):
        if self.field is not None:
            return self.field[y, x]
        return summed(self.xy[b], float(x), float(y), self.plume.sigma)

    def conc_at(self, b, x, y):
        if self.field is not None:
            return F32(bilinear(self.field, x, y))
        return summed(self.xy[b], x, y, self.plume.sigma)

    def wind_at(self, b, x, y):
        return tuple(self.plume.wind)

    def reach(self, b, point):
        """``(reached, every source found)`` for an agent at ``point`` of world b: the first source
        within the goal radius that counts (with a team, one not found yet) is marked found."""
        sc = self.sim.sc
        reached = False
        for k in range(self.k):
            if not reached and not (sc.team and self.found[b][k]):
                d2 = (point[0] - self.xy[b][k][0]) ** 2 + (point[1] - self.xy[b][k][1]) ** 2
                within = math.sqrt(d2) <= sc.goal_radius if self.on_cells and not self.sim.continuous \
                    else d2 <= sc.goal_radius ** 2
                if within:
                    self.found[b][k] = True
                    reached = True
        return reached, all(self.found[b])
