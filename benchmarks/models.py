#!/usr/bin/env python
"""Agent-steps per second of each model family, beside a vectorized NumPy step doing the same work.

    python benchmarks/models.py [--quick] [--repeats 5] [--only LABEL ...]

Rows (one agent per world unless the label says otherwise):

* default scenario (Gaussian, Cardinal, Concentration + Position, SparseGoal) at B*N = 4,096 and
  65,536, and 1,024 worlds x 64 agents;
* Oriented body with Antennae, Wind and Heading sensors (Gaussian plume with a constant wind);
* Continuous body with Concentration read bilinearly at the float position (and Position);
* Movie plume, T = 1000 frames of 128 x 128, every world on its own frame clock (``start="random"``),
  uint8 and float32 frames;
* Gaussian plume with ``source="random"`` (each world its own source, evaluated analytically);
* the 3-D default scenario ``Scenario(grid_size=(64, 64, 64))``: Gaussian with its ``(D, H, W)``
  field, ``Cardinal`` with six moves, ``Concentration`` + ``Position`` (three columns);
* Gaussian plume of three sources drifting at constant velocities (``sources.Drift``, reflected
  at the grid's edges; the concentration the clipped sum of the three, evaluated analytically).

Each row times ``Simulator.step`` on one thread (``numba.set_num_threads(1)``, the serial kernel)
and on Numba's default thread count (the threaded kernel), and ``NumpyModels.step``, the same step
in vectorized NumPy, in the same process: interleaved rounds, medians, and the median of the
per-round ratios (1 thread / NumPy). Actions are drawn beforehand, outside the timing. ``measure``
returns the rows as dicts; ``benchmarks/throughput.py`` runs this table too.
"""

from __future__ import annotations

import argparse
import os
import statistics

import numba
import numpy as np

from plume_multi import Scenario, Simulator
from plume_multi.cli.bench import _rate
from plume_multi.models import bodies, plumes, rewards, sensors
from plume_multi.models.sources import Drift

__all__ = ["NumpyModels", "ROWS", "measure", "format_table", "main"]


# ----------------------------------------------------------------------------- the NumPy step
class NumpyModels:
    """``Simulator.step`` (NEXT_STEP autoreset, no team) for the models of this table, in NumPy.

    Built from a simulator after its ``reset``: it copies the state (cells, headings, float
    positions, sources, frame clocks), so until a world is reset both compute the same numbers
    (``tests/benchmarks/test_models_table.py`` checks it). New episodes draw from ``numpy.random`` (the
    simulator's counter-based draws are not reproduced, the work is the same).

    Bodies: ``Cardinal``, ``Moore``, ``Oriented``, ``Continuous``. Plumes: ``Gaussian`` (fixed or
    random source, constant wind; several fixed sources moved by ``sources.Drift``), ``Movie``
    (constant wind). Sensors: ``Concentration``,
    ``Position``, ``Antennae``, ``Wind``, ``Heading``. Rewards: ``SparseGoal``, ``StepPenalty``.
    In 3-D: the table bodies, ``Gaussian`` (fixed or random source), ``Concentration`` at cells
    and ``Position``. Walls (``Scenario(walls=...)``) with the table bodies: moves into a solid cell
    refused, a mask drawn per world and episode, start cells drawn again while solid.
    """

    def __init__(self, sim: Simulator, seed: int = 0):
        sc = self.sc = sim.scenario
        self.B, self.N = sim.num_worlds, sc.n_agents
        self.w, self.h = sc.grid_size[:2]
        self.sizes = np.array(sc.grid_size)
        self.dims = len(sc.grid_size)  # (not sc.dims: the script also measures versions before 3-D)
        self.rng = np.random.default_rng(seed)
        st = sim.state
        self.pos = st.pos.astype(np.int64)
        self.active = st.active.copy()
        self.ep_length = st.ep_length.copy()
        self.t = st.world_t.astype(np.int64)
        self.done = st.world_done.copy()
        self.obs = st.obs.copy()
        self.goal_d2 = sc.goal_d2()
        self.goal_reward, self.step_reward = (np.float32(v) for v in sc.reward.values())
        if isinstance(sc.reward, rewards.SparseGoal):
            self.step_reward = np.float32(0.0)

        body = self.body = sc.action_model
        self.kind = "continuous" if body.continuous else ("oriented" if body.oriented else "table")
        if self.dims == 3 and self.kind != "table":
            raise ValueError(f"NumpyModels covers the table bodies only in 3-D, not {body.name}")
        if self.kind == "table":
            self.moves = sc.moves().astype(np.int64)
        walls = getattr(sc, "walls", None)  # (scenarios of versions before walls have none)
        self.walls = None if walls is None else walls.masks
        if self.walls is not None:
            if self.kind != "table":
                raise ValueError(f"NumpyModels covers walls with the table bodies only, not {body.name}")
            self.wall_index = sim.wall_index.copy()
        self.heading = sim.model_state("body.heading").copy() if body.oriented else None
        self.xy = sim.model_state("body.xy").copy() if body.continuous else None

        plume = self.plume = sc.plume
        if isinstance(plume, plumes.Movie):
            self.plume_kind = "movie"
            self.frames, self.scale = plume.frames, np.float32(plume._scale)
            self.start = sim.model_state("plume.start").copy()
            self.T = plume.frames.shape[0]
            wind = plume._wind  # (Tw, Hw, Ww, 2), or (Tw, Dw, Hw, Ww, 3) for volumes
            if wind.shape[:-1] != (1,) * (wind.ndim - 1):
                raise ValueError("NumpyModels covers a constant movie wind only")
            self.wind = tuple(float(v) for v in wind.reshape(-1)[:2])
        elif plume.source_count() > 1 and isinstance(plume.source_motion, Drift):
            self.plume_kind = "drifting"
            self.src = sim.model_state("plume.source").copy()  # (B, K, 2)
            self.vel = sim.model_state("plume.motion").copy()  # (B, K, 2): each source's velocity now
            self.starts = self.src[0].copy()
            self.two_sigma2 = 2.0 * plume.sigma ** 2
            self.wind = plume.wind
        elif plume.random_source:
            self.plume_kind = "analytic"
            self.src = sim.model_state("plume.source").copy()
            self.two_sigma2 = 2.0 * plume.sigma ** 2
            self.wind = plume.wind
        else:
            self.plume_kind = "field"
            self.field = sim.plume_image(0)
            self.wind = plume.wind
        if self.plume_kind not in ("analytic", "drifting"):
            self.src_rows = np.tile(np.array(plume.sources(None, None, 1)[0] if self.plume_kind == "movie"
                                             else plume.source, np.float64), (self.B * self.N, 1))
        self.sensors = sc.sensors
        for s in self.sensors:
            if not isinstance(s, (sensors.Concentration, sensors.Position, sensors.Antennae, sensors.Wind,
                                  sensors.Heading)):
                raise ValueError(f"NumpyModels does not cover the sensor {s.name}")
        self.pos_scale = np.array([1.0 / (n - 1) if n > 1 else 0.0 for n in sc.grid_size], np.float32)

    # ------------------------------------------------------------------ per-row views of the worlds
    def _rows(self, per_world):
        return per_world if self.N == 1 else np.repeat(per_world, self.N, axis=0)

    def _sources(self):
        """Per row: the world's source ``(B*N, dims)``, or its sources ``(B*N, K, 2)``."""
        return self._rows(self.src) if self.plume_kind in ("analytic", "drifting") else self.src_rows

    def _frame_rows(self):
        return self._rows((self.start + self.t) % self.T)

    def _location(self):
        return self.xy if self.kind == "continuous" else self.pos.astype(np.float64)

    def _headings(self):
        return self.heading if self.heading is not None else np.zeros(len(self.pos))

    # ------------------------------------------------------------------ the plume
    def _gather(self, ix, iy, frame):
        """Stored values (a movie's unscaled) at cells."""
        if self.plume_kind == "movie":
            return self.frames[frame, iy, ix]
        return self.field[iy, ix]

    def _summed(self, x, y, src):
        """``min(1, sum_k exp(-d_k^2 / (2 sigma^2)))`` for sources ``src`` (rows, K, 2)."""
        d2 = (x[:, None] - src[:, :, 0]) ** 2 + (y[:, None] - src[:, :, 1]) ** 2
        return np.minimum(np.exp(-d2 / self.two_sigma2).sum(axis=1), 1.0).astype(np.float32)

    def sample_cells(self, pos, src, frame):
        """Concentration at the cells ``pos`` ``(M, dims)``."""
        if self.dims == 2:
            return self.sample_cell(pos[:, 0], pos[:, 1], src, frame)
        if self.plume_kind == "analytic":
            d2 = ((pos - src) ** 2).sum(axis=1)
            return np.exp(-d2 / self.two_sigma2).astype(np.float32)
        if self.plume_kind == "movie":  # volumes (T, D, H, W)
            return self.frames[frame, pos[:, 2], pos[:, 1], pos[:, 0]].astype(np.float32) * self.scale
        return self.field[pos[:, 2], pos[:, 1], pos[:, 0]]

    def sample_cell(self, ix, iy, src, frame):
        if self.plume_kind == "drifting":
            return self._summed(ix.astype(np.float64), iy.astype(np.float64), src)
        if self.plume_kind == "analytic":
            d2 = (ix - src[:, 0]) ** 2 + (iy - src[:, 1]) ** 2
            return np.exp(-d2 / self.two_sigma2).astype(np.float32)
        if self.plume_kind == "movie":
            return self._gather(ix, iy, frame).astype(np.float32) * self.scale
        return self._gather(ix, iy, frame)

    def sample_at(self, x, y, src, frame):
        """Bilinear concentration at float positions; 0 off the grid."""
        inside = (x >= 0) & (y >= 0) & (x <= self.w - 1) & (y <= self.h - 1)
        if self.plume_kind == "drifting":
            return np.where(inside, self._summed(x, y, src), np.float32(0.0))
        if self.plume_kind == "analytic":
            d2 = (x - src[:, 0]) ** 2 + (y - src[:, 1]) ** 2
            return np.where(inside, np.exp(-d2 / self.two_sigma2), 0.0).astype(np.float32)
        xc = np.clip(x, 0, self.w - 1)
        yc = np.clip(y, 0, self.h - 1)
        x0 = np.minimum(xc.astype(np.int64), self.w - 1)
        y0 = np.minimum(yc.astype(np.int64), self.h - 1)
        x1 = np.minimum(x0 + 1, self.w - 1)
        y1 = np.minimum(y0 + 1, self.h - 1)
        fx = xc - x0
        fy = yc - y0
        top = (1.0 - fx) * self._gather(x0, y0, frame) + fx * self._gather(x1, y0, frame)
        bottom = (1.0 - fx) * self._gather(x0, y1, frame) + fx * self._gather(x1, y1, frame)
        value = ((1.0 - fy) * top + fy * bottom).astype(np.float32)
        if self.plume_kind == "movie":  # interpolates the stored values, then scales (as the model)
            value = (value * self.scale).astype(np.float32)
        return np.where(inside, value, np.float32(0.0))

    # ------------------------------------------------------------------ the body
    def _solid(self, cells):
        """``(M,)`` bool: each row's cell is solid in its world's wall mask."""
        return self.walls[(self._rows(self.wall_index), *(cells[:, c] for c in reversed(range(self.dims))))]

    def _move(self, a, moving):
        if self.kind == "table":
            new = np.clip(self.pos + self.moves[a], 0, self.sizes - 1)
            if self.walls is not None:  # a move into a solid cell is refused
                new = np.where(self._solid(new)[:, None], self.pos, new)
            self.pos = np.where(moving[:, None], new, self.pos)
        elif self.kind == "oriented":
            P = self.body
            fwd = moving & (a == 0)
            rad = np.deg2rad(self.heading)
            step = np.stack([_round_half_away(P.step * np.cos(rad)), _round_half_away(P.step * np.sin(rad))], 1)
            new = np.clip(self.pos + step.astype(np.int64), 0, [self.w - 1, self.h - 1])
            self.pos = np.where(fwd[:, None], new, self.pos)
            turn = np.where(a == 1, P.turn_degrees, -P.turn_degrees)
            turned = (self.heading + turn) % 360.0
            turned = np.where(turned < 360.0, turned, 0.0)
            self.heading = np.where(moving & (a != 0), turned, self.heading)
        else:
            P = self.body
            speed = np.clip(a[:, 0], 0.0, P.max_speed)
            turn = np.clip(a[:, 1], -P.max_turn_degrees, P.max_turn_degrees)
            h = (self.heading + turn) % 360.0
            h = np.where(h < 360.0, h, 0.0)
            rad = np.deg2rad(h)
            xy = np.stack([np.clip(self.xy[:, 0] + speed * np.cos(rad), 0.0, self.w - 1.0),
                           np.clip(self.xy[:, 1] + speed * np.sin(rad), 0.0, self.h - 1.0)], 1)
            self.heading = np.where(moving, h, self.heading)
            self.xy = np.where(moving[:, None], xy, self.xy)
            self.pos = np.floor(self.xy + 0.5).astype(np.int64)

    def _reset_rows(self, rows, worlds):
        n = int(rows.sum())
        for c, side in enumerate(self.sizes):
            self.pos[rows, c] = self.rng.integers(0, side, n)
        if self.walls is not None:  # a mask per world, and start cells drawn again while solid
            self.wall_index[worlds] = self.rng.integers(0, len(self.walls), int(worlds.sum()))
            again = rows & self._solid(self.pos)
            while again.any():
                for c, side in enumerate(self.sizes):
                    self.pos[again, c] = self.rng.integers(0, side, int(again.sum()))
                again &= self._solid(self.pos)
        self.active[rows] = True
        self.ep_length[rows] = 0
        self.t[worlds] = 0
        if self.kind == "oriented":
            k = self.rng.integers(0, max(1, int(round(360.0 / self.body.turn_degrees))), n)
            self.heading[rows] = (k * self.body.turn_degrees) % 360.0
        elif self.kind == "continuous":
            self.heading[rows] = self.rng.random(n) * 360.0
            self.xy[rows] = self.pos[rows]
        if self.plume_kind == "drifting":
            self.src[worlds] = self.starts
            self.vel[worlds] = self.plume.source_motion.velocity
        elif self.plume_kind == "analytic":
            m = int(worlds.sum())
            self.src[worlds] = np.floor(self.rng.random((m, self.dims)) * self.sizes)
        elif self.plume_kind == "movie":
            self.start[worlds] = self.rng.integers(0, self.T, int(worlds.sum()))

    # ------------------------------------------------------------------ sensors
    def _drift(self, worlds):
        """The sources of ``worlds`` move by their velocities, reflected at the grid's edges."""
        for axis, side in ((0, self.w), (1, self.h)):
            high = side - 1.0
            x = self.src[worlds, :, axis] + self.vel[worlds, :, axis]
            folds = np.floor(x / high)
            y = x % (2.0 * high)
            self.src[worlds, :, axis] = np.where(y > high, 2.0 * high - y, y)
            self.vel[worlds, :, axis] = np.where(folds % 2 != 0, -self.vel[worlds, :, axis], self.vel[worlds, :, axis])

    def _observe(self):
        src = self._sources() if self.plume_kind in ("analytic", "drifting") else None
        frame = self._frame_rows() if self.plume_kind == "movie" else None
        loc = self._location()
        hd = self._headings()
        col = 0
        for s in self.sensors:
            if isinstance(s, sensors.Concentration):
                if self.kind == "continuous":
                    self.obs[:, col] = self.sample_at(loc[:, 0], loc[:, 1], src, frame)
                else:
                    self.obs[:, col] = self.sample_cells(self.pos, src, frame)
                col += 1
            elif isinstance(s, sensors.Position):
                self.obs[:, col:col + self.dims] = (loc if self.kind == "continuous" else self.pos) * self.pos_scale
                col += self.dims
            elif isinstance(s, sensors.Antennae):
                for j, angle in enumerate(s.angles):
                    rad = np.deg2rad(hd + angle)
                    self.obs[:, col + j] = self.sample_at(loc[:, 0] + s.distance * np.cos(rad),
                                                          loc[:, 1] + s.distance * np.sin(rad), src, frame)
                col += len(s.angles)
            elif isinstance(s, sensors.Wind):
                u, v = self.wind
                if self.body.oriented:
                    rad = np.deg2rad(hd)
                    c, sn = np.cos(rad), np.sin(rad)
                    self.obs[:, col], self.obs[:, col + 1] = u * c + v * sn, -u * sn + v * c
                else:
                    self.obs[:, col], self.obs[:, col + 1] = u, v
                col += 2
            else:  # Heading
                rad = np.deg2rad(hd)
                self.obs[:, col], self.obs[:, col + 1] = np.cos(rad), np.sin(rad)
                col += 2

    # ------------------------------------------------------------------ the step
    def step(self, actions):
        reset_w = self.done
        reset_r = self._rows(reset_w)
        moving = self.active & ~reset_r
        self.t += ~reset_w
        if self.plume_kind == "drifting":
            self._drift(~reset_w)
        self._move(actions, moving)
        self.ep_length += moving
        if self.plume_kind == "drifting":  # arrival at any source
            d = self._location()[:, None, :] - self._sources()
            arrived = moving & ((d * d).sum(axis=2).min(axis=1) <= self.goal_d2)
        else:
            d = self._location() - self._sources()
            arrived = moving & ((d * d).sum(axis=1) <= self.goal_d2)
        self.active &= ~arrived
        self.reward = np.where(arrived, self.goal_reward, np.where(moving, self.step_reward, np.float32(0.0)))
        self.terminated = ~self.active & ~reset_r
        trunc_w = (self.t >= self.sc.max_steps) & ~reset_w
        self.truncated = self._rows(trunc_w)
        if reset_w.any():
            self._reset_rows(reset_r, reset_w)
        self._observe()
        self.done = ((self.t >= self.sc.max_steps) | ~self.active.reshape(self.B, self.N).any(axis=1)) & ~reset_w
        return self.obs, self.reward, self.terminated, self.truncated


def _round_half_away(v):
    """``Oriented``'s rounding of a forward step: to 9 decimals first, then halves away from zero."""
    v = np.floor(v * 1e9 + 0.5) / 1e9
    return np.where(v >= 0.0, np.floor(v + 0.5), -np.floor(-v + 0.5))


# ----------------------------------------------------------------------------- the rows
def _movie(dtype, T=1000, size=128, seed=0):
    """A synthetic movie ``(T, size, size)``: a Gaussian puff drifting along x, with noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:size, 0:size].astype(np.float32)
    frames = np.empty((T, size, size), np.float32)
    for t in range(T):
        cx = (t * 0.25) % size
        frames[t] = np.exp(-((x - cx) ** 2 + (y - size / 2) ** 2) / (2 * 15.0 ** 2))
    frames = np.clip(frames + 0.02 * rng.random(frames.shape, np.float32), 0.0, 1.0)
    if dtype == np.uint8:
        return np.round(frames * 255).astype(np.uint8)
    return frames


def _scenarios(movie_T: int, movie_size: int) -> dict:
    """``{label: (scenario factory, continuous)}`` of every model family row (the 3-D grid's side
    is half the movie's: 64 in the full table)."""
    return {
        "default": (lambda N: Scenario(n_agents=N), False),
        "oriented + antennae + wind + heading": (lambda N: Scenario(
            n_agents=N, plume=plumes.Gaussian(wind=(1.0, 0.0)), action_model=bodies.Oriented(turn_degrees=45),
            sensors=(sensors.Antennae(), sensors.Wind(), sensors.Heading()), reward=rewards.StepPenalty()), False),
        "continuous + bilinear concentration": (lambda N: Scenario(
            n_agents=N, action_model=bodies.Continuous(),
            sensors=(sensors.Concentration(), sensors.Position())), True),
        "movie uint8 (T=%d, per-world clocks)" % movie_T: (lambda N: Scenario(
            n_agents=N, plume=plumes.Movie(_MOVIES(np.uint8, movie_T, movie_size), source=(10, movie_size // 2))),
            False),
        "movie float32 (T=%d, per-world clocks)" % movie_T: (lambda N: Scenario(
            n_agents=N, plume=plumes.Movie(_MOVIES(np.float32, movie_T, movie_size), source=(10, movie_size // 2))),
            False),
        "gaussian, random source": (lambda N: Scenario(n_agents=N, plume=plumes.Gaussian(source="random")), False),
        "gaussian, 3 drifting sources": (lambda N: Scenario(n_agents=N, plume=plumes.Gaussian(
            source=[(20, 30), (64, 100), (110, 50)], source_motion=Drift(velocity=(0.3, -0.2)))), False),
        THREE_D % ((movie_size // 2,) * 3): (lambda N: Scenario(n_agents=N, grid_size=(movie_size // 2,) * 3), False),
        THREE_D_MOVIE % (min(movie_T, 200), *(movie_size // 2,) * 3): (lambda N: Scenario(
            n_agents=N, plume=plumes.Movie(_volumes(min(movie_T, 200), movie_size // 2),
                                           source=(4.0, movie_size // 4, movie_size // 4))), False),
    }


THREE_D = "3-D default (%dx%dx%d)"
THREE_D_MOVIE = "3-D movie uint8 (T=%d, %dx%dx%d)"


def _volumes(T: int, side: int) -> np.ndarray:
    """Volumes ``(T, side, side, side)`` uint8: the synthetic movie's frames, fading with height."""
    key = ("volumes", T, side)
    if key not in _movie_cache:
        frames = _MOVIES(np.uint8, T, side)  # (T, side, side)
        fade = np.linspace(1.0, 0.25, side)[None, :, None, None]
        _movie_cache[key] = (frames[:, None, :, :] * fade).astype(np.uint8)
    return _movie_cache[key]


_movie_cache: dict = {}


def _MOVIES(dtype, T, size):
    key = (np.dtype(dtype).str, T, size)
    if key not in _movie_cache:
        _movie_cache[key] = _movie(dtype, T, size)
    return _movie_cache[key]


def ROWS(quick: bool = False) -> list[tuple[str, int, int]]:
    """``(label, num_worlds, n_agents)`` of every row."""
    if quick:
        big, small = 64, 16
    else:
        big, small = 65536, 4096
    rows = [("default", small, 1), ("default", big, 1), ("default", big // 64, 64)]
    for label in list(_scenarios(*_SIZES[quick]))[1:]:
        rows.append((label, big, 1))
    return rows


_SIZES = {False: (1000, 128), True: (10, 16)}  # (movie frames, side): full rows, --quick rows


def _actions(sim: Simulator, rng, count: int = 8) -> list:
    BN = sim.total_agents
    if sim.scenario.continuous:
        body = sim.scenario.action_model
        return [np.stack([rng.uniform(0.0, body.max_speed, BN),
                          rng.uniform(-body.max_turn_degrees, body.max_turn_degrees, BN)], 1) for _ in range(count)]
    return [rng.integers(0, sim.n_actions, BN) for _ in range(count)]


def measure(quick: bool = False, repeats: int = 5, min_seconds: float = 0.1, progress=None, only=None) -> list[dict]:
    """One dict per row: medians of agent-steps/s (1 thread, default threads, NumPy) and the ratio.
    ``only``: labels (or their beginnings) of the rows to run (default all)."""
    default_threads = numba.config.NUMBA_NUM_THREADS
    families = _scenarios(*_SIZES[quick])
    out = []
    for k, (label, B, N) in enumerate(ROWS(quick)):
        if only and not any(label.startswith(prefix) for prefix in only):
            continue
        make, _ = families[label]
        sc = make(N)
        serial = Simulator(sc, B, parallel=False)
        # --quick times the threaded driver on the first row only: each row's threaded driver is a
        # compile of its own, and the smoke test needs the code path, not every figure
        threaded = Simulator(sc, B, parallel=True) if default_threads > 1 and B > 1 and not (quick and out) else None
        for sim in filter(None, (serial, threaded)):
            sim.reset(seed=0)
        ref = NumpyModels(serial)
        rng = np.random.default_rng(k)
        acts = _actions(serial, rng)
        rounds = {"serial": [], "threaded": [], "numpy": []}
        for _ in range(repeats):
            numba.set_num_threads(1)
            rounds["serial"].append(_rate(serial.step, acts, B * N, min_seconds))
            numba.set_num_threads(default_threads)
            if threaded is not None:
                rounds["threaded"].append(_rate(threaded.step, acts, B * N, min_seconds))
            rounds["numpy"].append(_rate(ref.step, acts, B * N, min_seconds))
        out.append({
            "model": label, "num_worlds": B, "n_agents": N, "agents": B * N, "threads": default_threads,
            "serial": statistics.median(rounds["serial"]),
            "threaded": statistics.median(rounds["threaded"]) if rounds["threaded"] else None,
            "numpy": statistics.median(rounds["numpy"]),
            "ratio": statistics.median(s / n for s, n in zip(rounds["serial"], rounds["numpy"])),
        })
        if progress:
            progress(k + 1)
    return out


def rate_header(rows) -> list:
    """The columns of ``rate_cells``."""
    return ["worlds x agents", "Simulator 1 thread", f"Simulator {rows[0]['threads']} threads", "NumPy"]


def rate_cells(r: dict) -> list:
    """A row's shape and rates as table cells (agent-steps/s in millions)."""
    return [f"{r['num_worlds']:,} x {r['n_agents']}", f"{r['serial'] / 1e6:,.1f} M",
            f"{r['threaded'] / 1e6:,.1f} M" if r["threaded"] else "-", f"{r['numpy'] / 1e6:,.2f} M"]


def markdown_table(header: list, rows: list) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return "\n".join(lines + ["| " + " | ".join(cells) + " |" for cells in rows])


def format_table(rows) -> str:
    return markdown_table(["model", *rate_header(rows), "ratio (1 thread)"],
                          [[r["model"], *rate_cells(r), f"{r['ratio']:.1f}x"] for r in rows])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes and short rounds (a smoke test)")
    parser.add_argument("--repeats", type=int, default=5, help="interleaved rounds per row (default 5)")
    parser.add_argument("--only", nargs="+", metavar="LABEL",
                        help="rows whose label begins with one of these (e.g. default, '3-D')")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats: got {args.repeats}; expected >= 1")
    repeats = 2 if args.quick else args.repeats
    print(f"Agent-steps/s per model family: Simulator.step vs a vectorized NumPy step (same work), medians of "
          f"{repeats} interleaved rounds; {os.cpu_count()} CPUs, Numba {numba.__version__}, NumPy {np.__version__}, "
          f"{numba.config.NUMBA_NUM_THREADS} Numba threads by default")
    rows = measure(args.quick, repeats, 0.01 if args.quick else 0.1, only=args.only)
    if not rows:
        parser.error(f"--only: no row begins with {args.only}; rows: {sorted({r[0] for r in ROWS(args.quick)})}")
    print(format_table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
