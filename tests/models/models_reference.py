"""A plain, obviously-correct reference of every model: Python loops, one agent at a time.

Written from the models' docstrings (plume_multi/models/**) and docs/developing-models.md,
independently of the kernels and of the generated step drivers:

* trigonometry, exponentials and logarithms per element with ``math`` (the libm the kernels call);
* counter-based draws from a Python-int transcription of ``plume_multi/engine/rng.py``'s hash;
* start cells from ``numpy.random.default_rng`` (episode 0) and ``tests/simulator_reference.py``'s counter starts.

The second half holds the Hypothesis strategies and fixed scenarios the tests/models/ tests
modules share.

``NaiveSim(scenario, num_worlds)`` mirrors ``Simulator`` under ``autoreset="next_step"``, walls and
team episodes included: ``reset(seed)`` and ``step(actions)`` return ``(obs, reward, terminated, truncated)``
as NumPy arrays, and expose ``pos``, ``heading``, ``xy``, ``sources``, ``movie_start``,
``wall_index``.
"""

from __future__ import annotations

import math
import sys
from collections import deque
from pathlib import Path

import numpy as np
from hypothesis import strategies as st

from simulator_reference import (counter_free_starts, counter_starts, numpy_free_starts, numpy_starts, stop_at_walls,
                                 wall_mask_index)
from plume_multi import Scenario
from plume_multi import plumes, rewards, sensors
from plume_multi import bodies as A
from plume_multi import plumes as P
from plume_multi import sensors as S

M64 = (1 << 64) - 1
F32 = np.float32

# the streams of the models (each model file's STREAM constant, written out here on purpose)
STREAM_GAUSSIAN = 0x6A09E667
STREAM_MOVIE = 0xBB67AE85
STREAM_ORIENTED = 0x3C6EF372
STREAM_RUN_TUMBLE = 0xA54FF53A
STREAM_CONTINUOUS = 0x510E527F
STREAM_WIND = 0x9B05688C


# ----------------------------------------------------------------------------- counter-based draws
def _fmix64(z: int) -> int:
    z ^= z >> 33
    z = (z * 0xFF51AFD7ED558CCD) & M64
    z ^= z >> 33
    z = (z * 0xC4CEB9FE1A85EC53) & M64
    return z ^ (z >> 33)


def stream_key(seed: int, episode: int, stream: int) -> int:
    z = _fmix64((seed + 0x9E3779B97F4A7C15) & M64)
    z = _fmix64(z ^ ((episode * 0xD1B54A32D192ED03) & M64))
    return _fmix64(z ^ ((stream * 0xA0761D6478BD642F + 0x632BE59BD9B4E019) & M64))


def random_u64(key: int, a: int, b: int) -> int:
    z = _fmix64(key ^ ((a * 0x8CB92BA72F3D8DD7 + 1) & M64))
    return _fmix64(z ^ ((b * 0xE7037ED1A0B428DB + 0x1D8E4E27C47D124F) & M64))


def uniform(key: int, a: int, b: int) -> float:
    """53 random bits in [0, 1)."""
    return (random_u64(key, a, b) >> 11) / 9007199254740992.0


def normal(key: int, a: int, b: int) -> float:
    """Box-Muller from the uniforms at counters (a, 2b) and (a, 2b + 1)."""
    u1 = 1.0 - uniform(key, a, 2 * b)
    u2 = uniform(key, a, 2 * b + 1)
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


# ----------------------------------------------------------------------------- small helpers
def round_half_away_9(v: float) -> float:
    """Round to 9 decimals, then to the nearest integer, halves away from zero."""
    v = math.floor(v * 1e9 + 0.5) / 1e9
    return math.floor(v + 0.5) if v >= 0.0 else -math.floor(-v + 0.5)


def grid_step(heading: float, step: int) -> tuple[int, int]:
    rad = heading * (math.pi / 180.0)
    return int(round_half_away_9(step * math.cos(rad))), int(round_half_away_9(step * math.sin(rad)))


def clamp(v, lo, hi):
    return lo if v < lo else (hi if v > hi else v)


def wrap_degrees(h: float) -> float:
    h = h % 360.0
    return h if h < 360.0 else 0.0


def inv_side(side: int) -> float:
    """``1 / (side - 1)`` rounded to float32 (0 for a side of one cell), as a Python float."""
    return float(F32(1.0 / (side - 1))) if side > 1 else 0.0


def bilinear(field: np.ndarray, x: float, y: float) -> float:
    """Bilinear interpolation in float64 of a (H, W) field inside [0, W-1] x [0, H-1]."""
    h, w = field.shape
    x0 = min(int(x), w - 1)
    y0 = min(int(y), h - 1)
    x1 = min(x0 + 1, w - 1)
    y1 = min(y0 + 1, h - 1)
    fx = x - x0
    fy = y - y0
    top = (1.0 - fx) * float(field[y0, x0]) + fx * float(field[y0, x1])
    bottom = (1.0 - fx) * float(field[y1, x0]) + fx * float(field[y1, x1])
    return (1.0 - fy) * top + fy * bottom


def trilinear(field: np.ndarray, x: float, y: float, z: float) -> float:
    """Trilinear interpolation in float64 of a (D, H, W) field: the planes z0 and z1 around z
    interpolated bilinearly, then weighted (1 - fz, fz)."""
    d = field.shape[0]
    z0 = min(int(z), d - 1)
    z1 = min(z0 + 1, d - 1)
    fz = z - z0
    return (1.0 - fz) * bilinear(field[z0], x, y) + fz * bilinear(field[z1], x, y)


def gaussian_volume(w: int, h: int, d: int, sx: float, sy: float, sz: float, sigma: float) -> np.ndarray:
    """(D, H, W) float32: exp(-|r - r_s|^2 / (2 sigma^2)), computed per cell in float64."""
    out = np.zeros((d, h, w), np.float32)
    for z in range(d):
        for y in range(h):
            for x in range(w):
                d2 = (x - sx) ** 2 + (y - sy) ** 2 + (z - sz) ** 2
                out[z, y, x] = F32(math.exp(-d2 / (2.0 * sigma ** 2)))
    return out


def gaussian_grid(w: int, h: int, sx: float, sy: float, sigma: float) -> np.ndarray:
    """(H, W) float32: exp(-d^2 / (2 sigma^2)), computed in float64."""
    x = np.arange(w, dtype=np.float64) - sx
    y = np.arange(h, dtype=np.float64) - sy
    d2 = x[None, :] ** 2 + y[:, None] ** 2
    return np.exp(-d2 / (2.0 * sigma ** 2)).astype(np.float32)


# ----------------------------------------------------------------------------- the reference
# ---------------------------------------------------------------- references found by model class
# Each model's plain reference registers itself for its class; ``reference(table, model)`` finds it
# by the model's class and its bases (Moore is a Cardinal), so a new model adds one entry, and a
# model without a reference is named, never silently skipped.
PLUMES: dict = {}  # plume class -> reference class (reset, concentration, wind of one world)
BODY_RESETS: dict = {}  # body class -> fn(sim, i, n, b)
BODY_MOVES: dict = {}  # body class -> fn(sim, i, n, b, action)
READINGS: dict = {}  # per-agent sensor class -> fn(sim, sensor, i, n, b) -> list of float32


def registers(table: dict, *classes):
    def decorate(fn):
        for cls in classes:
            table[cls] = fn
        return fn
    return decorate


def reference(table: dict, model):
    for cls in type(model).__mro__:
        if cls in table:
            return table[cls]
    raise NotImplementedError(f"no plain reference for {type(model).__name__} in tests/models_reference.py")


@registers(PLUMES, P.Gaussian)
def _gaussian_reference(sim):
    """One source that stays: ``GaussianReference``; several, drawn or moving ones (2-D): the
    reference of tests/models/sources/sources_reference.py."""
    plume = sim.plume
    if plume.source_count() == 1 and not plume.source_motion.moves:
        return GaussianReference(sim)
    folder = str(Path(__file__).parent / "sources")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    from sources_reference import GaussianSourcesReference

    return GaussianSourcesReference(sim)


class GaussianReference:
    """2-D and 3-D: cells and points are ``(x, y)`` or ``(x, y, z)``."""

    def __init__(self, sim):
        self.sim = sim
        self.plume = plume = sim.plume
        self.random_source = plume.source == "random"
        if not self.random_source:
            if sim.dims == 3:
                self.field = gaussian_volume(sim.W, sim.H, sim.D, *plume.source, plume.sigma)
            else:
                self.field = gaussian_grid(sim.W, sim.H, *plume.source, plume.sigma)

    def reset(self, b, seed, ep):
        if self.random_source:
            key = stream_key(seed, ep, STREAM_GAUSSIAN)
            sizes = (self.sim.W, self.sim.H, self.sim.D)[:self.sim.dims]
            self.sim.sources[b] = [math.floor(uniform(key, 0, c) * n) for c, n in enumerate(sizes)]
        else:
            self.sim.sources[b] = self.plume.source

    def _analytic(self, b, point):
        d2 = 0.0
        for c, v in enumerate(point):
            dc = v - self.sim.sources[b, c]
            d2 = d2 + dc * dc
        return F32(math.exp(-d2 / (2.0 * self.plume.sigma ** 2)))

    def conc_cell(self, b, *cell):
        return self._analytic(b, cell) if self.random_source else self.field[tuple(reversed(cell))]

    def conc_at(self, b, *point):
        if self.random_source:
            return self._analytic(b, point)
        return F32(trilinear(self.field, *point) if len(point) == 3 else bilinear(self.field, *point))

    def wind_at(self, b, *point):
        return (tuple(self.plume.wind) + (0.0,))[:len(point)]


@registers(PLUMES, P.Movie)
class MovieReference:
    """Frames ``(T, H, W)`` in 2-D, volumes ``(T, D, H, W)`` in 3-D: cells and points are ``(x, y)``
    or ``(x, y, z)``. A stored value ``v`` reads ``clip((v - offset) * scale, 0, 1)`` in float32,
    ``fill`` when not finite; float reads interpolate the stored values (non-finite ones replaced
    by ``fill_raw``, the value that reads ``fill``), then apply the rule."""

    def __init__(self, sim):
        self.sim = sim
        self.plume = m = sim.plume
        self.frames = m.frames
        self.T = m.frames.shape[0]
        finite = m.frames[np.isfinite(m.frames)]
        if m.normalize == "minmax":
            lo, hi = float(finite.min()), float(finite.max())
            self.offset, self.scale = F32(lo), F32(1.0 / (hi - lo))
        elif m.normalize is not None:
            raise NotImplementedError("the reference normalises with 'minmax' only")
        else:
            self.offset = F32(0.0)
            default = 1.0 if m.frames.dtype.kind == "f" else 1.0 / np.iinfo(m.frames.dtype).max
            self.scale = F32(default if m.scale is None else m.scale)
        self.fill = F32(0.0 if m.nan is None else m.nan)
        fill_raw = float(self.offset) + float(self.fill) / float(self.scale)
        self.values = np.where(np.isfinite(m.frames), m.frames.astype(np.float64), fill_raw)
        n = m.frames.ndim - 1
        wind = m.wind
        if wind is None:
            self.wind = np.zeros((1,) * (n + 1) + (n,), np.float32)
        else:
            arr = np.asarray(wind, np.float64)
            if arr.ndim == 1:
                arr = arr.reshape((1,) * (n + 1) + (n,))
            elif arr.ndim == 2:
                arr = arr.reshape((self.T,) + (1,) * n + (n,))
            self.wind = arr.astype(np.float32)
        self.start = sim.movie_start  # shared: tests compare it with the plume's state

    def reset(self, b, seed, ep):
        m = self.plume
        if m.start == "random":
            self.start[b] = int(uniform(stream_key(seed, ep, STREAM_MOVIE), 0, 0) * self.T)
        else:
            self.start[b] = m.start
        self.sim.sources[b] = m.source

    def frame(self, b) -> int:
        f = int(self.start[b] + self.sim.t[b])
        return f % self.T if self.plume.end == "wrap" else min(f, self.T - 1)

    def rule(self, v) -> np.float32:
        """The concentration of a stored (or interpolated, float32) value."""
        if not np.isfinite(v):
            return self.fill
        return min(max(F32(F32(v) - self.offset) * self.scale, F32(0.0)), F32(1.0))

    def conc_cell(self, b, *cell):
        return self.rule(self.frames[(self.frame(b),) + tuple(reversed(cell))])

    def conc_at(self, b, *point):
        values = self.values[self.frame(b)]
        return self.rule(F32(trilinear(values, *point) if len(point) == 3 else bilinear(values, *point)))

    def wind_at(self, b, *point):
        wind = self.wind
        f = self.frame(b) if wind.shape[0] > 1 else 0
        cell = [clamp(math.floor(c + 0.5), 0, side - 1) for c, side in zip(point, wind.shape[-2:0:-1])]
        return tuple(float(c) for c in wind[(f,) + tuple(reversed(cell))])


@registers(BODY_RESETS, A.Cardinal)
def _table_reset(sim, i, n, b):
    pass


@registers(BODY_RESETS, A.Oriented)
def _oriented_reset(sim, i, n, b):
    body = sim.body
    if body.initial_heading is not None:
        sim.heading[i] = body.initial_heading
    else:
        n_dirs = max(1, int(round(360.0 / body.turn_degrees)))
        k = math.floor(uniform(stream_key(int(sim.seed[b]), int(sim.episode[b]), STREAM_ORIENTED), 0, n) * n_dirs)
        sim.heading[i] = (k * body.turn_degrees) % 360.0


@registers(BODY_RESETS, A.RunTumble)
def _run_tumble_reset(sim, i, n, b):
    body = sim.body
    sim.heading[i] = (body.initial_heading if body.initial_heading is not None
                      else uniform(stream_key(int(sim.seed[b]), int(sim.episode[b]), STREAM_RUN_TUMBLE), 0, n) * 360.0)


@registers(BODY_RESETS, A.Continuous)
def _continuous_reset(sim, i, n, b):
    body = sim.body
    if sim.dims == 3:  # no heading: the float position starts on the cell
        sim.xy[i] = sim.pos[i]
        return
    sim.heading[i] = (body.initial_heading if body.initial_heading is not None
                      else uniform(stream_key(int(sim.seed[b]), int(sim.episode[b]), STREAM_CONTINUOUS), 0, n) * 360.0)
    sim.xy[i] = sim.pos[i]


@registers(BODY_MOVES, A.Cardinal)
def _table_move(sim, i, n, b, action):
    move = (type(sim.body).MOVES if sim.dims == 2 else type(sim.body).MOVES_3D)[action]
    for c, (delta, side) in enumerate(zip(move, sim.sizes)):
        sim.pos[i, c] = clamp(sim.pos[i, c] + delta, 0, side - 1)


@registers(BODY_MOVES, A.Oriented)
def _oriented_move(sim, i, n, b, action):
    body = sim.body
    if action == 0:
        sim.forward(i, body.step)
    elif action == 1:
        sim.heading[i] = wrap_degrees(sim.heading[i] + body.turn_degrees)
    else:
        sim.heading[i] = wrap_degrees(sim.heading[i] - body.turn_degrees)


@registers(BODY_MOVES, A.RunTumble)
def _run_tumble_move(sim, i, n, b, action):
    if action == 1:
        key = stream_key(int(sim.seed[b]), int(sim.episode[b]), STREAM_RUN_TUMBLE)
        sim.heading[i] = uniform(key, int(sim.t[b]), n) * 360.0
    sim.forward(i, sim.body.step)


@registers(BODY_MOVES, A.Continuous)
def _continuous_move(sim, i, n, b, action):
    body = sim.body
    if sim.dims == 3:  # a velocity, scaled to max_speed when longer
        v = [float(c) for c in action]
        n2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
        if n2 > body.max_speed * body.max_speed:
            f = body.max_speed / math.sqrt(n2)
            v = [c * f for c in v]
        for c in range(3):
            sim.xy[i, c] = clamp(sim.xy[i, c] + v[c], 0.0, sim.sizes[c] - 1.0)
            sim.pos[i, c] = math.floor(sim.xy[i, c] + 0.5)
        return
    speed = clamp(float(action[0]), 0.0, body.max_speed)
    turn = clamp(float(action[1]), -body.max_turn_degrees, body.max_turn_degrees)
    h = wrap_degrees(sim.heading[i] + turn)
    sim.heading[i] = h
    rad = h * (math.pi / 180.0)
    x = clamp(sim.xy[i, 0] + speed * math.cos(rad), 0.0, sim.W - 1.0)
    y = clamp(sim.xy[i, 1] + speed * math.sin(rad), 0.0, sim.H - 1.0)
    sim.xy[i] = (x, y)
    sim.pos[i] = (math.floor(x + 0.5), math.floor(y + 0.5))


def _here(sim, i, b):
    """Concentration where the agent is, as Concentration and Binary read it."""
    if sim.continuous:
        return sim.conc_at(b, *sim.location(i))
    return sim.conc_cell(b, *(int(c) for c in sim.pos[i]))


def _heading(sim, i):
    return float(sim.heading[i]) if sim.oriented else 0.0


@registers(READINGS, S.Concentration)
def _concentration(sim, sensor, i, n, b):
    return [_here(sim, i, b)]


@registers(READINGS, S.Position)
def _position(sim, sensor, i, n, b):
    return [F32(a * inv_side(side)) for a, side in zip(sim.location(i), sim.sizes)]


@registers(READINGS, S.Heading)
def _heading_reading(sim, sensor, i, n, b):
    rad = _heading(sim, i) * (math.pi / 180.0)
    return [F32(math.cos(rad)), F32(math.sin(rad))]


@registers(READINGS, S.Binary)
def _binary(sim, sensor, i, n, b):
    return [F32(1.0) if _here(sim, i, b) > F32(sensor.threshold) else F32(0.0)]


@registers(READINGS, S.Antennae)
def _antennae(sim, sensor, i, n, b):
    ax, ay = sim.location(i)
    out = []
    for angle in sensor.angles:
        rad = (_heading(sim, i) + angle) * (math.pi / 180.0)
        out.append(sim.conc_at(b, ax + sensor.distance * math.cos(rad), ay + sensor.distance * math.sin(rad)))
    return out


@registers(READINGS, S.Wind)
def _wind(sim, sensor, i, n, b):
    """The plume's wind at the agent (turned into the body's frame for a body with a heading, 2-D),
    each of its D components with noise at counters (t, D n + j)."""
    wind = list(sim.wind_at(b, *sim.location(i)))
    if sim.oriented:
        rad = _heading(sim, i) * (math.pi / 180.0)
        c, s = math.cos(rad), math.sin(rad)
        u, v = wind
        wind = [u * c + v * s, -u * s + v * c]
    if sensor.noise_std > 0.0:
        key = stream_key(int(sim.seed[b]), int(sim.episode[b]), STREAM_WIND)
        t = int(sim.t[b])
        wind = [w + sensor.noise_std * normal(key, t, len(wind) * n + j) for j, w in enumerate(wind)]
    return [F32(w) for w in wind]


class NaiveSim:
    """Reference of ``Simulator(scenario, num_worlds)`` (autoreset ``next_step``). In a team
    (``scenario.team``) the first arrival in a world ends the episode of every agent of that world
    still searching: each is terminated with the goal's reward in the same step (with several
    sources, the arrival that finds the last of them)."""

    def __init__(self, scenario, num_worlds: int = 1):
        self.sc = sc = scenario
        self.B = num_worlds
        self.N = sc.n_agents
        self.dims = sc.dims
        self.sizes = tuple(sc.grid_size)
        self.W, self.H = sc.grid_size[:2]
        self.D = sc.depth
        self.plume = sc.plume
        self.body = sc.action_model
        n = self.B * self.N
        self.pos = np.zeros((n, self.dims), np.int64)
        self.heading = np.zeros(n)
        self.xy = np.zeros((n, self.dims))  # a continuous body's float position (x, y[, z])
        self.sources = np.zeros((self.B, self.dims))
        self.movie_start = np.zeros(self.B, np.int64)
        self.active = np.zeros(n, bool)
        self.terminated = np.zeros(n, bool)
        self.truncated = np.zeros(n, bool)
        self.reward = np.zeros(n, np.float32)
        self.ep_length = np.zeros(n, np.int64)
        self.t = np.zeros(self.B, np.int64)
        self.episode = np.zeros(self.B, np.int64)
        self.seed = np.zeros(self.B, np.int64)
        self.done = np.zeros(self.B, bool)
        self.columns = []  # (sensor, first column, width)
        col = 0
        for s in sc.sensors:
            width = len(s.columns(_Ctx(sc)))
            self.columns.append((s, col, width))
            col += width
        self.obs = np.zeros((n, col), np.float32)
        self.history = {}  # (row, slot) -> deque of readings
        self.plume_ref = reference(PLUMES, self.plume)(self)
        self.scale = getattr(self.plume_ref, "scale", None)  # a movie's stored-value scale
        self.walls = None if sc.walls is None else sc.walls.masks
        self.wall_index = np.zeros(self.B, np.int64)  # the mask each world drew

    # ---------------------------------------------------------------- walls
    def wall(self, b):
        """World b's mask now, indexed [y, x] ([z, y, x])."""
        return self.walls[self.wall_index[b]]

    def solid_point(self, b, point) -> bool:
        """The float point lies in a solid cell of world b (False without walls or off the grid)."""
        if self.walls is None:
            return False
        cell = [math.floor(c + 0.5) for c in point]
        if any(c < 0 or c >= side for c, side in zip(cell, self.sizes)):
            return False
        return bool(self.wall(b)[tuple(reversed(cell))])

    def _move_among_walls(self, i, n, b, action):
        """The body's move; among walls a grid body's move into a solid cell is refused (its cell
        put back), a continuous body stops at the first solid cell's face on its straight path."""
        if self.walls is None:
            self._move(i, n, b, action)
            return
        before_cell = self.pos[i].copy()
        before = self.location(i)
        self._move(i, n, b, action)
        if not self.continuous:
            if self.wall(b)[tuple(reversed(self.pos[i].tolist()))]:
                self.pos[i] = before_cell
            return
        point, hit = stop_at_walls(self.wall(b), before, self.location(i))
        if hit:
            self.xy[i] = point
            self.pos[i] = [math.floor(c + 0.5) for c in point]

    # ---------------------------------------------------------------- plume (its reference)
    def _plume_reset(self, b):
        self.plume_ref.reset(b, int(self.seed[b]), int(self.episode[b]))

    def conc_cell(self, b, *cell):
        """float32 concentration of cell (ix, iy[, iz]) of world b (0 in a solid cell)."""
        if self.walls is not None and self.wall(b)[tuple(reversed(cell))]:
            return F32(0.0)
        return self.plume_ref.conc_cell(b, *cell)

    def conc_at(self, b, *point):
        """float32 concentration at a float point (x, y[, z]) of world b: 0 in a solid cell. 2-D: within
        half a cell of the grid, at the nearest point of [0, W-1] x [0, H-1]; 0 farther out (and for
        NaN). 3-D: 0 off the grid."""
        if self.solid_point(b, point):
            return F32(0.0)
        if len(point) == 2:
            x, y = point
            if not (x >= -0.5 and y >= -0.5 and x <= self.W - 0.5 and y <= self.H - 0.5):
                return F32(0.0)
            return self.plume_ref.conc_at(b, clamp(x, 0.0, self.W - 1.0), clamp(y, 0.0, self.H - 1.0))
        if any(v < 0.0 or v > side - 1 for v, side in zip(point, self.sizes)):
            return F32(0.0)
        return self.plume_ref.conc_at(b, *point)

    def wind_at(self, b, *point):
        if self.solid_point(b, point):
            return (0.0,) * len(point)
        return self.plume_ref.wind_at(b, *point)

    def frame(self, b) -> int:
        """A movie's frame of world b now."""
        return self.plume_ref.frame(b)

    # ---------------------------------------------------------------- body
    @property
    def oriented(self):
        return self.body.oriented and self.dims == 2  # no body has a heading in 3-D

    @property
    def continuous(self):
        return self.body.continuous

    def _body_reset(self, i, n, b):
        reference(BODY_RESETS, self.body)(self, i, n, b)

    def forward(self, i, step):
        dx, dy = grid_step(self.heading[i], step)
        self.pos[i, 0] = clamp(self.pos[i, 0] + dx, 0, self.W - 1)
        self.pos[i, 1] = clamp(self.pos[i, 1] + dy, 0, self.H - 1)

    def _move(self, i, n, b, action):
        reference(BODY_MOVES, self.body)(self, i, n, b, action)

    def location(self, i):
        if self.continuous:
            return tuple(float(c) for c in self.xy[i])
        return tuple(float(c) for c in self.pos[i])

    def arrived(self, i, b) -> bool:
        d2 = 0.0
        for c, a in enumerate(self.location(i)):
            d2 = d2 + (a - self.sources[b, c]) ** 2
        src = self.sources[b]
        if self.continuous or not self.plume.on_cells() or not all(float(c).is_integer() for c in src):
            return d2 <= self.sc.goal_radius ** 2  # float distances: compared squared
        return math.sqrt(d2) <= self.sc.goal_radius  # integer d2: exactly the Euclidean rule

    # ---------------------------------------------------------------- sensors
    def _reading(self, sensor, i, n, b):
        """The columns of one per-agent sensor for row i (a list of float32)."""
        return reference(READINGS, sensor)(self, sensor, i, n, b)

    def _observe_agent(self, i, n, b, first):
        for slot, (sensor, col, width) in enumerate(self.columns):
            if sensor.per_world:
                continue
            if sensor.wraps is not None:  # History
                reading = self._reading(sensor.sensor, i, n, b)
                if first:
                    hist = deque([reading] * sensor.steps, maxlen=sensor.steps)
                    self.history[(i, slot)] = hist
                else:
                    hist = self.history[(i, slot)]
                    hist.append(reading)
                self.obs[i, col:col + width] = [v for r in hist for v in r]
            else:
                self.obs[i, col:col + width] = self._reading(sensor, i, n, b)

    def _observe_world(self, b):
        for sensor, col, width in self.columns:
            if not sensor.per_world:  # Neighbours
                continue
            base = b * self.N
            for n in range(self.N):
                i = base + n
                others = []
                for m in range(self.N):
                    if m != n:
                        delta = [int(self.pos[base + m, c] - self.pos[i, c]) for c in range(self.dims)]
                        others.append((sum(d * d for d in delta), m, delta))
                others.sort()
                row = []
                for _, _, delta in others[:sensor.k]:
                    row += [F32(d * inv_side(side)) for d, side in zip(delta, self.sizes)]
                self.obs[i, col:col + width] = row

    # ---------------------------------------------------------------- episodes
    def _reset_world(self, b, seeded):
        if seeded:
            self.episode[b] = 0
        else:
            self.episode[b] += 1
        seed, ep = int(self.seed[b]), int(self.episode[b])
        base = b * self.N
        if self.walls is not None:
            self.wall_index[b] = wall_mask_index(seed, ep, len(self.walls))
        if self.sc.start_positions is not None:
            starts = list(self.sc.start_positions)
        else:
            lo, hi = self.sc.start_region or ((0,) * self.dims, tuple(s - 1 for s in self.sizes))
            region = [b1 - a + 1 for a, b1 in zip(lo, hi)]
            if self.walls is not None:
                starts = (numpy_free_starts(seed, self.N, region, lo, self.wall(b)) if ep == 0
                          else counter_free_starts(seed, ep, self.N, region, lo, self.wall(b)))
            else:
                raw = numpy_starts(seed, self.N, *region) if ep == 0 else counter_starts(seed, ep, self.N, *region)
                starts = [tuple(c + a for c, a in zip(cell, lo)) for cell in raw]
        self.t[b] = 0
        self.done[b] = False
        for n in range(self.N):
            self.pos[base + n] = starts[n]
        self._plume_reset(b)
        for n in range(self.N):
            i = base + n
            self.active[i] = True
            self.ep_length[i] = 0
            self.terminated[i] = self.truncated[i] = False
            self.reward[i] = 0.0
            self._body_reset(i, n, b)
        for n in range(self.N):
            self._observe_agent(b * self.N + n, n, b, True)
        self._observe_world(b)

    def reset(self, seed: int):
        for b in range(self.B):
            self.seed[b] = seed + b
            self._reset_world(b, True)
        return self.obs.copy()

    def step(self, actions):
        goal_reward, step_reward = (F32(v) for v in self.sc.reward.values())
        advance = getattr(self.plume_ref, "advance", None)
        several = self.sc.plume.name == "Gaussian" and self.sc.plume.source_count() > 1
        reach = self.plume_ref.reach if several else None
        for b in range(self.B):
            if self.done[b]:
                self._reset_world(b, False)
                continue
            self.t[b] += 1
            if advance is not None:  # sources that move: before the agents do
                advance(b)
            trunc = self.t[b] >= self.sc.max_steps
            base = b * self.N
            n_active = 0
            someone_arrived = False
            for n in range(self.N):
                i = base + n
                if self.active[i]:
                    self._move_among_walls(i, n, b, actions[i])
                    self.ep_length[i] += 1
                    reached, ends_team = self.arrived(i, b), True
                    if reach is not None:  # several sources: the first that counts is found
                        reached, ends_team = reach(b, self.location(i))
                    if reached:
                        self.reward[i] = goal_reward
                        self.active[i] = False
                        self.terminated[i] = True
                        someone_arrived = someone_arrived or ends_team
                    else:
                        self.reward[i] = step_reward
                        self.terminated[i] = False
                else:
                    self.reward[i] = 0.0
                    self.terminated[i] = True
                self.truncated[i] = trunc
                n_active += self.active[i]
                self._observe_agent(i, n, b, False)
            if self.sc.team and someone_arrived:
                for i in range(base, base + self.N):
                    if self.active[i]:
                        self.reward[i] = goal_reward
                        self.active[i] = False
                        self.terminated[i] = True
                n_active = 0
            self._observe_world(b)
            self.done[b] = trunc or n_active == 0
        return self.obs.copy(), self.reward.copy(), self.terminated.copy(), self.truncated.copy()


class _Ctx:
    """What a sensor's ``columns`` reads."""

    def __init__(self, sc):
        self.grid_size = sc.grid_size
        self.dims = sc.dims
        self.n_agents = sc.n_agents
        self.plume = sc.plume
        self.body = sc.action_model
        self.continuous = sc.action_model.continuous
        self.oriented = sc.action_model.oriented and sc.dims == 2  # no body has a heading in 3-D
        self.sensors = sc.sensors


# =============================================================================================
# Scenarios shared by the tests/models/ tests modules.
#
# Every combination of models compiles its own step driver, so the model tests use a small fixed
# set of combinations (COMBOS) and vary only numbers: grid, seeds, sigma, thresholds, angles, turn
# sizes, frames... The sensor tuple always has the same kinds and widths (its column offsets are
# part of the driver's text), so every combination compiles exactly once. With this sensor set a
# combination takes about 15 s to compile, so the strategies below draw only combinations whose
# compiled code differs (see TABLE_BODY and SOURCES).

HISTORY_STEPS = 3


def sensor_set(threshold=0.5, angles=(45.0, -45.0), distance=1.0, noise_std=0.0, k=1, history_angle=90.0,
               history_distance=2.0, oriented=True):
    """The fixed sensor kinds (widths fixed: two antennae, three and two history steps; k is last).

    Columns: 0 concentration, 1-2 position, 3-4 heading, 5 detection, 6-7 antennae, 8-9 wind,
    10-12 concentration history, 13-14 history of one antenna, then 2k neighbour columns. A body
    without a heading (``oriented=False``) cannot have a ``Heading`` sensor: columns 3-4 are then
    the position again.
    """
    return (sensors.Concentration(), sensors.Position(), sensors.Heading() if oriented else sensors.Position(),
            sensors.Binary(threshold),
            sensors.Antennae(angles, distance), sensors.Wind(noise_std),
            sensors.History(sensors.Concentration(), steps=HISTORY_STEPS),
            sensors.History(sensors.Antennae((history_angle,), history_distance), steps=2),
            sensors.Neighbours(k))


# The stored movie dtype per body in every test (each dtype compiles a driver of its own):
# integer frames with the grid bodies, float frames with the continuous one (bilinear reads).
MOVIE_DTYPES = {"table": (np.uint8,), "oriented": (np.uint8,), "run_tumble": (np.uint8,),
                "continuous": (np.float32, np.float64)}
BODIES = ("table", "oriented", "run_tumble", "continuous")
# Oriented is checked with the movie (its wind and frame clock), the other bodies with the Gaussian.
COMBOS = (("gaussian", "table"), ("gaussian", "run_tumble"), ("gaussian", "continuous"),
          ("movie", "oriented"), ("movie", "continuous"))

# The table body of these tests: Cardinal and Moore are one model (Moore subclasses Cardinal; both
# run models/bodies/table.py's compiled functions and share one driver, only the moves table, a
# parameter, differs). Moore's nine moves include Cardinal's four; Cardinal is checked against its
# reference in tests/test_simulator.py.
TABLE_BODY = A.Moore
# The Gaussian's source kinds drawn per body: a random source and a fixed one ("none": the grid's
# centre, "cell": a drawn cell) are two compiled variants of the plume (a compile-time flag). Grid
# bodies read the plume through the same compiled sample_cell, so the table body draws both kinds
# and run-and-tumble the random one; the continuous body reads it through sample_at: both kinds.
SOURCES = {"table": ("random", "none", "cell"), "run_tumble": ("random",),
           "continuous": ("random", "none", "cell")}


@st.composite
def bodies(draw, kind):
    random_heading = draw(st.booleans())
    heading = None if random_heading else draw(st.floats(-720.0, 720.0, allow_nan=False))
    if kind == "table":
        return TABLE_BODY()
    if kind == "oriented":
        turn = draw(st.sampled_from([90.0, 45.0, 30.0, 60.0, 120.0, 180.0, 22.5, 37.0]))
        return A.Oriented(turn_degrees=turn, step=draw(st.integers(1, 3)), initial_heading=heading)
    if kind == "run_tumble":
        return A.RunTumble(step=draw(st.integers(1, 3)), initial_heading=heading)
    return A.Continuous(max_speed=draw(st.floats(0.1, 3.0)), max_turn_degrees=draw(st.floats(0.0, 180.0)),
                              initial_heading=heading)


@st.composite
def movies(draw, max_side=12, dtypes=(np.uint8, np.uint16, np.float32, np.float64)):
    """Random movies; each stored dtype (uint8, uint16, float32) compiles its own driver."""
    t = draw(st.integers(1, 6))
    h = draw(st.integers(1, max_side))
    w = draw(st.integers(1, max_side))
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if dtype.kind == "u":
        frames = rng.integers(0, np.iinfo(dtype).max + 1, size=(t, h, w)).astype(dtype)
        scale = draw(st.sampled_from([None, 1.0 / np.iinfo(dtype).max / 2]))
    else:
        frames = rng.random((t, h, w)).astype(dtype)
        scale = None
    wind_kind = draw(st.sampled_from(["none", "constant", "frames", "cells"]))
    wind = {"none": None, "constant": tuple(rng.normal(size=2)), "frames": rng.normal(size=(t, 2)),
            "cells": rng.normal(size=(t, h, w, 2))}[wind_kind]
    start = draw(st.one_of(st.just("random"), st.integers(0, t - 1)))
    source = (draw(st.floats(0, w - 1)), draw(st.floats(0, h - 1)))
    if draw(st.booleans()):  # a source on a cell, so that grid bodies can reach it
        source = (float(int(source[0])), float(int(source[1])))
    return plumes.Movie(frames, source=source, start=start, end=draw(st.sampled_from(["wrap", "clamp"])),
                        wind=wind, scale=scale)


@st.composite
def scenarios(draw, plume_kind, body_kind, max_side=12, max_agents=4):
    body = draw(bodies(body_kind))
    n = draw(st.integers(2, max_agents))
    if plume_kind == "gaussian":
        w = draw(st.integers(1, max_side))
        h = draw(st.integers(1, max_side))
        source_kind = draw(st.sampled_from(SOURCES[body_kind]))
        source = {"random": "random", "none": None}.get(source_kind) or \
            draw(st.tuples(st.integers(0, w - 1), st.integers(0, h - 1)))
        wind = (draw(st.floats(-3, 3)), draw(st.floats(-3, 3)))
        plume = plumes.Gaussian(source=source, sigma=draw(st.floats(0.3, 20.0)), wind=wind)
    else:
        plume = draw(movies(max_side, MOVIE_DTYPES[body_kind]))
        w, h = plume.natural_grid_size()
    region = None
    if draw(st.booleans()):
        x0, x1 = sorted((draw(st.integers(0, w - 1)), draw(st.integers(0, w - 1))))
        y0, y1 = sorted((draw(st.integers(0, h - 1)), draw(st.integers(0, h - 1))))
        region = ((x0, y0), (x1, y1))
    reward = draw(st.one_of(st.just(rewards.SparseGoal()),
                            st.builds(rewards.StepPenalty, st.floats(-5, 5), st.floats(0, 1))))
    sens = sensor_set(threshold=draw(st.floats(0.0, 1.0)),
                      angles=(draw(st.floats(-360, 360)), draw(st.floats(-360, 360))),
                      distance=draw(st.floats(0.0, 4.0)), noise_std=draw(st.sampled_from([0.0, 0.0, 0.3, 2.0])),
                      k=draw(st.integers(1, n - 1)), history_angle=draw(st.floats(-360, 360)),
                      history_distance=draw(st.floats(0.0, 3.0)), oriented=body.oriented)
    return Scenario(grid_size=None if plume_kind == "movie" else (w, h), plume=plume, n_agents=n,
                    goal_radius=draw(st.sampled_from([1e-45, 1.0, 1.5, 2.5])), max_steps=draw(st.integers(1, 15)),
                    action_model=body, sensors=sens, reward=reward, start_region=region)


def random_actions(sc, num_worlds, steps, seed):
    """``steps`` action arrays for ``num_worlds`` worlds of ``sc``, continuous ones partly outside the box."""
    rng = np.random.default_rng(seed)
    rows = num_worlds * sc.n_agents
    if sc.continuous:
        body = sc.action_model
        out = []
        for _ in range(steps):
            a = np.empty((rows, 2))
            a[:, 0] = rng.uniform(-0.5, 1.5 * body.max_speed, rows)
            a[:, 1] = rng.uniform(-1.5 * body.max_turn_degrees - 1, 1.5 * body.max_turn_degrees + 1, rows)
            out.append(a)
        return out
    return [rng.integers(0, sc.n_actions, rows).astype(np.int64) for _ in range(steps)]


def simple_scenario(plume_kind, body_kind, **numbers):
    """One fixed scenario of a combination (for property tests that do not need Hypothesis)."""
    body = {"table": A.Moore(), "oriented": A.Oriented(turn_degrees=45.0),
            "run_tumble": A.RunTumble(), "continuous": A.Continuous(max_speed=1.5)}[body_kind]
    if plume_kind == "gaussian":
        plume = plumes.Gaussian(source=numbers.get("source", "random"), sigma=3.0, wind=(0.5, -0.25))
        grid = numbers.get("grid", (11, 7))
    else:
        rng = np.random.default_rng(3)
        t = numbers.get("frames", 5)
        frames = rng.integers(0, 256, (t, 7, 11)).astype(np.uint8)
        if body_kind == "continuous":  # the stored dtype is part of the compiled signature
            frames = MOVIE_DTYPES[body_kind][0](frames / 255.0)
        plume = plumes.Movie(frames, source=(5.0, 3.0),
                             start=numbers.get("start", "random"), wind=rng.normal(size=(t, 7, 11, 2)))
        grid = None
    return Scenario(grid_size=grid, plume=plume, n_agents=numbers.get("n_agents", 3), action_model=body,
                    sensors=sensor_set(noise_std=numbers.get("noise_std", 0.5), k=1, oriented=body.oriented),
                    goal_radius=numbers.get("goal_radius", 1.0), max_steps=numbers.get("max_steps", 9))


def run(sim, acts):
    """Observations, rewards, flags, positions and model state after each step (copies)."""
    out = []
    for a in acts:
        obs, rew, term, trunc = sim.step(a)
        out.append((obs.copy(), rew.copy(), term.copy(), trunc.copy(), sim.positions.copy(),
                    {k: v.copy() for k, v in sim.state.models.items()}))
    return out


