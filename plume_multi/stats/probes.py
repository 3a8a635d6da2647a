"""The sampling protocol: probes at fixed offsets from the source, in the wind's frame, sampled
every step in many worlds through the ``Simulator`` (so every plume model works).

Protocol (``sample_signals``):

1. The wind direction ``theta`` is the plume's mean wind (``plume_wind``), or the one given
   (``Probes.direction``); a calm plume (a Gaussian without wind, ``PoissonHits``) uses +x.
2. Probe ``(d, c)`` is the point ``source + d (cos theta, sin theta) + c (-sin theta, cos theta)``
   (``d`` cells downwind, ``c`` cells to the left of the wind), read at its nearest cell, in every
   world, relative to that world's own source (drawn at reset for ``Gaussian(source="random")``
   and ``PoissonHits``). A probe off the grid, or on the source, is not valid there: for a plume
   with a fixed source that is an error; for per-world sources those worlds leave it out.
3. ``num_worlds`` worlds, world ``b`` seeded ``seed + b``, are reset, advanced ``warmup`` steps
   (the plume develops; a ``Puffs`` plume also runs its own ``spin_up_steps`` at reset), then
   sampled after each of ``steps`` further steps. The probes do not move: they are agents of a
   ``Moore`` body that stays put, and the signal is the first column of their first sensor:
   ``Concentration``, or ``Hits`` for a Poisson-hit plume (``PoissonHits``, ``WindyPoissonHits``: the
   number of odour hits, drawn each step).
   A probe that stops being active (a moving source reaching it) is left out of that world.
4. Walls: the probes sample the plume among the scenario's walls (``Scenario(walls=...)``). A probe
   whose cell is solid in the mask a world drew reads nothing there (every sensor reads 0 inside a
   wall): it is left out of that world and marked (``ProbeSignals.in_wall``); a probe left out of
   every world has no statistics, and ``OdorStatistics.status`` says why (never a NaN without a
   word).

The probes keep the scenario's sensors, reward and ``team`` when its first sensor is that signal
sensor (the default scenario's ``(Concentration(), Position())``, ``poisson_search``'s ``(Hits(),
Belief())``): the step compiled for the scenario then samples the probes too,
with no new compilation (Moore and Cardinal run one compiled body). Otherwise they sense
``(Concentration(), Position())`` or ``(Hits(),)``; ``sensors=`` chooses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Optional

import numpy as np

from ..checks import check_bool, check_int, check_real, fail, is_real
from ..errors import ValidationError
from ..models import bodies
from ..models import sensors as sensor_models
from ..models.plumes import Movie, Puffs
from ..models.plumes.poisson_hits.plume import PoissonHitPlume
from ..scenario import Scenario
from ..simulator import Simulator

__all__ = ["Probes", "ProbeSignals", "sample_signals", "plume_wind", "time_step", "MAX_PROBES"]

MAX_PROBES = 4096
MAX_OFFSET = 1e5  # cells: more than any grid side
STAY = 8  # Moore's "stay" action


def _offsets(name: str, values) -> tuple:
    try:
        values = tuple(np.ravel(np.asarray(values, dtype=object)).tolist())
    except (TypeError, ValueError):
        values = None
    if not values or not all(is_real(v) and math.isfinite(float(v)) and abs(float(v)) <= MAX_OFFSET for v in values):
        fail("Probes", name, values, f"one or more finite numbers of cells within +-{MAX_OFFSET:g}")
    return tuple(float(v) for v in values)


@dataclass(frozen=True)
class Probes:
    """Where signals are sampled: every combination of a distance downwind of the source and an
    offset across the wind (``len(downwind) * len(crosswind)`` probes, downwind-major).

    Args:
        downwind: distances along the wind from the source, cells (negative: upwind).
        crosswind: offsets across the wind, cells, positive to the left of the wind (``+y`` for
            a wind along ``+x``).
        direction: the wind direction in degrees (0 = +x, 90 = +y); ``None``: the plume's mean
            wind (``plume_wind``), +x for a calm plume.
    """

    downwind: tuple = (5.0, 10.0, 20.0, 40.0)
    crosswind: tuple = (0.0,)
    direction: Optional[float] = None

    def __post_init__(self):
        object.__setattr__(self, "downwind", _offsets("downwind", self.downwind))
        object.__setattr__(self, "crosswind", _offsets("crosswind", self.crosswind))
        if len(self.downwind) * len(self.crosswind) > MAX_PROBES:
            fail("Probes", "downwind x crosswind", f"{len(self.downwind)} x {len(self.crosswind)} probes",
                 f"at most {MAX_PROBES} probes")
        if self.direction is not None:
            object.__setattr__(self, "direction", check_real("Probes", "direction", self.direction, -1e6, 1e6))

    @property
    def n_probes(self) -> int:
        return len(self.downwind) * len(self.crosswind)

    @property
    def downwind_offsets(self) -> np.ndarray:
        """``(P,)`` float64: the downwind distance of each probe."""
        return np.repeat(np.array(self.downwind), len(self.crosswind))

    @property
    def crosswind_offsets(self) -> np.ndarray:
        """``(P,)`` float64: the crosswind offset of each probe."""
        return np.tile(np.array(self.crosswind), len(self.downwind))

    def points(self, source, direction: float) -> np.ndarray:
        """``(..., P, 2)`` float64: the probes' points ``(x, y)`` for sources ``(..., 2)`` and a
        wind direction in degrees."""
        a = math.radians(direction)
        along = np.array([math.cos(a), math.sin(a)])
        left = np.array([-math.sin(a), math.cos(a)])
        offset = self.downwind_offsets[:, None] * along + self.crosswind_offsets[:, None] * left
        return np.asarray(source, dtype=np.float64)[..., None, :] + offset


def plume_wind(plume) -> Optional[tuple]:
    """The plume's mean wind ``(u, v)`` (its own units; only the direction is used), or ``None``
    for a calm plume or one without a wind.

    Read from the plume's ``mean_wind()`` when it has one, else from its ``wind``: a ``Wind``-like
    record (``u``, ``v``), a pair (or triple), or per-frame / per-cell arrays (a ``Movie``'s,
    averaged; a movie file's ``u``/``v`` too).
    """
    if callable(getattr(plume, "mean_wind", None)):
        wind = plume.mean_wind()
    else:
        wind = getattr(plume, "wind", None)
        if wind is None and isinstance(plume, Movie):
            wind = plume._wind  # the file's u/v, loaded by the model
    if wind is None:
        return None
    if hasattr(wind, "u") and hasattr(wind, "v"):
        u, v = float(wind.u), float(wind.v)
    else:
        arr = np.asarray(wind, dtype=np.float64)
        if arr.ndim == 0 or arr.shape[-1] not in (2, 3):
            return None
        u, v = arr.reshape(-1, arr.shape[-1])[:, :2].mean(axis=0)
    if not (math.isfinite(u) and math.isfinite(v)) or (u == 0.0 and v == 0.0):
        return None
    return float(u), float(v)


def time_step(plume) -> tuple:
    """``(dt, unit)``: the time of one step of ``plume``: a ``Puffs``'s ``dt`` (pompy's unit, s),
    ``1 / fps`` s for a ``Movie`` with a frame rate, else 1 ``"steps"``."""
    if isinstance(plume, Puffs):
        return float(plume.dt), "s"
    if isinstance(plume, Movie) and plume.fps:
        return 1.0 / float(plume.fps), "s"
    return 1.0, "steps"


@dataclass(frozen=True, eq=False)
class ProbeSignals:
    """Signals sampled at probes (``sample_signals``): ``W`` worlds, ``P`` probes, ``T`` steps.

    Attributes:
        values: ``(W, P, T)`` float32: the concentration (hits for ``PoissonHits``) at each probe
            after each sampled step (a series that is not ``valid`` holds what its probe read where
            it waited: no sample of the plume).
        valid: ``(W, P)`` bool: the probe was on the grid, off the source, outside the walls and
            active all along.
        cells: ``(W, P, 2)`` int64: the cell ``(x, y)`` each probe read.
        sources: ``(W, 2)`` float64: each world's source when sampling began, cells.
        downwind, crosswind: ``(W, P)`` float64: the offsets of those cells from the source in
            the wind's frame (the nominal ones, rounded to cells), cells.
        probes: the ``Probes``, with ``direction`` resolved (degrees).
        direction_from: ``"plume"`` (its mean wind), ``"given"``, or ``"calm (+x)"``.
        signal: ``"concentration"`` or ``"hits"``.
        dt, time_unit: the time of one step and its unit (``time_step``).
        cell_size, length_unit: the length of a cell (``Puffs``: its ``cell_size`` in m; else 1 cell).
        plume: the plume model sampled.
        scenario: the probes' ``Scenario`` (the plume on the scenario's grid).
        seed, warmup: world ``b`` was seeded ``seed + b`` and ran ``warmup`` steps before sampling.
        in_wall: ``(W, P)`` bool: the probe's cell is solid in the wall mask world ``b`` drew (it
            read nothing there: not ``valid``); ``None`` for signals made without it.
    """

    values: np.ndarray
    valid: np.ndarray
    cells: np.ndarray
    sources: np.ndarray
    downwind: np.ndarray
    crosswind: np.ndarray
    probes: Probes
    direction_from: str
    signal: str
    dt: float
    time_unit: str
    cell_size: float
    length_unit: str
    plume: object
    scenario: Scenario
    seed: int
    warmup: int
    extra: dict = field(default_factory=dict)
    in_wall: Optional[np.ndarray] = None

    @property
    def shape(self) -> tuple:
        return self.values.shape

    def describe(self) -> str:
        """One line for captions: the plume, the grid, worlds x steps, the wind direction."""
        W, P, T = self.values.shape
        grid = "x".join(str(n) for n in self.scenario.grid_size)
        return (f"{self.plume.name} on {grid} cells, {W} worlds x {T} steps (warm-up {self.warmup}), "
                f"{P} probes, wind {self.probes.direction:g} deg ({self.direction_from})")


def _signal_sensor(plume):
    """The sensor class whose first column is the signal of ``plume``, and its name."""
    if isinstance(plume, PoissonHitPlume):  # PoissonHits, WindyPoissonHits: the hits, not their mean
        return sensor_models.Hits, "hits"
    return sensor_models.Concentration, "concentration"


def _probe_sensors(sc: Scenario, chosen) -> tuple:
    """The probes' sensors: ``chosen``, else the scenario's when they start with the signal sensor."""
    kind, _ = _signal_sensor(sc.plume)
    if chosen is None:
        if isinstance(sc.sensors[0], kind):
            return sc.sensors
        if kind is sensor_models.Hits:
            return (sensor_models.Hits(),)
        return sensor_models.Concentration(), sensor_models.Position()
    if not isinstance(chosen, (tuple, list)) or not chosen or not isinstance(chosen[0], kind):
        fail("sample_signals", "sensors", chosen,
             f"None or a tuple of sensors models starting with {kind.__name__}() (the signal of {sc.plume.name})")
    return tuple(chosen)


def _probe_scenario(sc: Scenario, chosen, cells: np.ndarray, total_steps: int) -> Scenario:
    return Scenario(grid_size=sc.grid_size, plume=sc.plume, n_agents=len(cells), action_model=bodies.Moore(),
                    sensors=_probe_sensors(sc, chosen), reward=sc.reward, team=sc.team, walls=sc.walls,
                    start_positions=tuple(map(tuple, cells.tolist())), max_steps=min(total_steps, 2**31 - 1))


def _free_cell(walls, near) -> np.ndarray:
    """``(2,)`` int64: a cell free in every wall mask, the farthest from ``near`` ``(x, y)`` (where a
    probe waits that reads nothing: it must not stand on a source)."""
    ys, xs = np.nonzero(~walls.masks.any(axis=0))
    if not xs.size:  # every cell solid in some mask: the scenario's drawn starts are free per mask
        raise ValidationError(f"sample_signals: got walls whose {walls.n_masks} masks leave no cell free in all of "
                              "them; expected one (the probes wait there in worlds where their cell is solid)")
    k = int(np.argmax((xs - near[0]) ** 2 + (ys - near[1]) ** 2))
    return np.array([xs[k], ys[k]], dtype=np.int64)


def _solid(walls, wall_index: np.ndarray, cells: np.ndarray, on_grid: np.ndarray) -> np.ndarray:
    """``(W, P)`` bool: probe ``p``'s cell is solid in the mask world ``b`` drew."""
    h, w = walls.masks.shape[1:]
    x = np.clip(cells[..., 0], 0, w - 1)
    y = np.clip(cells[..., 1], 0, h - 1)
    return on_grid & walls.masks[wall_index[:, None], y, x]


def _place(points: np.ndarray, sources: np.ndarray, grid_size, goal_d2: float):
    """Cells ``(..., P, 2)`` int64 of the points, whether each is valid (on the grid, off the
    source), and whether each is on the grid."""
    cells = np.floor(points + 0.5).astype(np.int64)
    w, h = grid_size
    on_grid = (cells[..., 0] >= 0) & (cells[..., 0] < w) & (cells[..., 1] >= 0) & (cells[..., 1] < h)
    d = cells - sources[..., None, :]
    return cells, on_grid & ((d * d).sum(axis=-1) > goal_d2), on_grid


def sample_signals(scenario, probes: Probes | None = None, steps: int = 1000, *, num_worlds: int = 16,
                   seed: int = 0, warmup: int = 0, sensors=None, progress: bool = True) -> ProbeSignals:
    """Sample a plume at probes in many worlds (the protocol of this module's docstring).

    Args:
        scenario: a ``Scenario`` (its plume on its grid; its agents, starts and body are not
            used) or a plume model (on its own grid: a movie's, or the default).
        probes: a ``Probes`` (default ``Probes()``: 5, 10, 20 and 40 cells downwind).
        steps: samples per probe and world, 2..10,000,000.
        num_worlds: independent worlds (realisations), world ``b`` seeded ``seed + b``.
        seed: the first world's seed.
        warmup: steps run before sampling begins.
        sensors: the probes' sensors, the signal sensor first (``Concentration()``, or ``Hits()``
            for ``PoissonHits``); ``None``: the scenario's when they start with it, else
            ``(Concentration(), Position())`` or ``(Hits(),)`` (the module's docstring).
        progress: a tqdm bar over the steps (on stderr).

    Returns:
        ``ProbeSignals``; ``values`` takes ``4 * num_worlds * P * steps`` bytes.

    Raises:
        ValidationError: a bad argument; a 3-D scenario; a probe off the grid or on the source of
            a plume with a fixed source (naming the probe and its cell).
    """
    if not isinstance(scenario, Scenario):
        if getattr(scenario, "family", None) != "plume":
            fail("sample_signals", "scenario", scenario, "a Scenario or a plumes model")
        scenario = Scenario(plume=scenario)
    if scenario.dims != 2:
        fail("sample_signals", "scenario", f"a {scenario.dims}-D scenario", "a 2-D scenario (the probes are 2-D)")
    probes = Probes() if probes is None else probes
    if not isinstance(probes, Probes):
        fail("sample_signals", "probes", probes, "a stats.Probes")
    steps = check_int("sample_signals", "steps", steps, 2, 10_000_000)
    warmup = check_int("sample_signals", "warmup", warmup, 0, 10_000_000)
    num_worlds = check_int("sample_signals", "num_worlds", num_worlds, 1, 1 << 20)
    seed = check_int("sample_signals", "seed", seed, 0, 2**62)
    progress = check_bool("sample_signals", "progress", progress)

    plume = scenario.plume
    if probes.direction is not None:
        direction, direction_from = probes.direction, "given"
    else:
        wind = plume_wind(plume)
        direction, direction_from = ((math.degrees(math.atan2(wind[1], wind[0])), "plume") if wind
                                     else (0.0, "calm (+x)"))
    probes = replace(probes, direction=direction)
    goal_d2 = 0.0  # the probes' scenario keeps the default goal radius: only the source itself
    fixed = plume.fixed_source()
    P = probes.n_probes
    walls = scenario.walls
    if fixed is not None:
        source = np.asarray(fixed, dtype=np.float64)[:2]
        cells, ok, _ = _place(probes.points(source, direction), source, scenario.grid_size, goal_d2)
        if not ok.all():
            p = int(np.flatnonzero(~ok)[0])
            grid = "x".join(str(n) for n in scenario.grid_size)
            raise ValidationError(
                f"Probes: the probe {probes.downwind_offsets[p]:g} cells downwind, {probes.crosswind_offsets[p]:g} "
                f"across (wind {direction:g} deg) from the source {tuple(source.tolist())} reads cell "
                f"{tuple(cells[p].tolist())}, off the {grid} grid or on the source ({int((~ok).sum())} such "
                f"probes); expected every probe on the grid, off the source")
        starts = cells
        if walls is not None:  # a probe in a wall of some mask starts on a cell free in all of them
            park = _free_cell(walls, source)
            starts = np.where(_solid(walls, np.arange(walls.n_masks), cells, np.ones_like(ok)).any(axis=0)[:, None],
                              park, cells)
    else:
        centre = np.array([scenario.grid_size[0] // 2, scenario.grid_size[1] // 2], dtype=np.int64)
        if walls is not None and walls.solid_in(tuple(centre.tolist())):
            centre = _free_cell(walls, centre)
        starts = np.tile(centre, (P, 1))  # moved to each world's source after the reset
    sim = Simulator(_probe_scenario(scenario, sensors, starts, warmup + steps), num_worlds=num_worlds, autoreset="disabled")
    sim.reset(seed=seed)
    sources = np.array(sim.sources, dtype=np.float64)[:, :2]
    cells, valid, on_grid = _place(probes.points(sources, direction), sources, scenario.grid_size, goal_d2)
    in_wall = np.zeros_like(valid) if walls is None else _solid(walls, np.asarray(sim.wall_index), cells, on_grid)
    valid &= ~in_wall
    if fixed is None or walls is not None:
        # Per-world sources (and masks) are known only after the reset: move the probes there
        # (cells on the grid; an invalid probe waits on a cell away from its world's source, one
        # free in every mask when there are walls, and is left out).
        if fixed is None:
            far = np.where(sources[:, :1] < scenario.grid_size[0] / 2, scenario.grid_size[0] - 1, 0)
            spare = np.concatenate([far, np.zeros_like(far)], axis=1)[:, None, :]
        else:
            spare = starts[None, :, :]
        sim.state.pos[:] = np.where(valid[..., None], cells, spare).reshape(-1, 2)

    from tqdm.auto import tqdm

    actions = np.full(sim.total_agents, STAY, dtype=np.int64)
    values = np.empty((num_worlds, P, steps), dtype=np.float32)
    with tqdm(total=warmup + steps, desc="sample plume", unit="step", disable=not progress, leave=False,
              dynamic_ncols=True) as bar:
        for _ in range(warmup):
            sim.step(actions)
            bar.update()
        for t in range(steps):
            obs = sim.step(actions)[0]
            values[:, :, t] = obs[:, 0].reshape(num_worlds, P)
            bar.update()
    valid &= sim.active.reshape(num_worlds, P)  # a probe that stopped sensing (it stays inactive) is left out
    dt, unit = time_step(plume)
    cell = float(plume.cell_size) if isinstance(plume, Puffs) else 1.0
    rel = cells - sources[:, None, :]
    a = math.radians(direction)
    downwind = rel[..., 0] * math.cos(a) + rel[..., 1] * math.sin(a)
    crosswind = -rel[..., 0] * math.sin(a) + rel[..., 1] * math.cos(a)
    return ProbeSignals(values=values, valid=valid, cells=cells, sources=sources, downwind=downwind,
                        crosswind=crosswind, probes=probes, direction_from=direction_from,
                        signal=_signal_sensor(plume)[1], dt=dt,
                        time_unit=unit, cell_size=cell, length_unit="m" if isinstance(plume, Puffs) else "cells",
                        plume=plume, scenario=sim.scenario, seed=seed, warmup=warmup, in_wall=in_wall)
