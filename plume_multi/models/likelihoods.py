"""Likelihoods: the observation model a Bayesian searcher's belief follows, as a model of its own.

A likelihood gives ``Pr(outcome | offset of the source from the agent)`` for every offset of a
grid, centred as ``BeliefTables`` reads it: ``(K, 2H-1, 2W-1)`` float64, entry
``[o, dy + H-1, dx + W-1]`` for the source at offset ``(dx, dy)`` from the agent (3-D:
``(K, 2D-1, 2H-1, 2W-1)``, entry ``[o, dz + D-1, dy + H-1, dx + W-1]``), 0 at the centre for every
outcome (an agent on the source has found it: the belief puts no mass on its own cell). The same
code serves 2-D and 3-D: the table has one axis per grid axis.

An **outcome** is ``0..K-1``:

* ``thresholds=None``: the plume's own hits (a Poisson-hit plume, ``sensors.Hits``): ``K = n_hits``;
* ``thresholds=(c_1 < c_2 < ...)``: a detection level, the number of thresholds the concentration
  at the agent's cell (``sensors.Concentration``'s reading) is strictly above (``K = len + 1``;
  one threshold: 0 no detection, 1 detection, as ``sensors.Binary``).

Two kinds:

* ``PoissonLikelihood(plume)``: the closed form of a Poisson-hit plume (``PoissonHits``,
  ``WindyPoissonHits``): its own tables, bit for bit what the belief sensor and the decisions read
  today. With ``thresholds`` it is a *mismatched* model of another plume: its hits ``0..n_hits-1``
  are read as the detection levels of those thresholds (``len(thresholds) == n_hits - 1``).
* ``CalibratedLikelihood``, made by ``calibrate(scenario, thresholds)``: measured on the engine.
  Every free cell of the scenario's grid holds an agent that stays put (a ``Moore`` body) and
  reads the signal; ``worlds`` independent worlds (world ``b`` seeded ``seed + b``, the
  scenario's own source placement and wall mask) run ``warmup`` steps, then ``steps`` sampled
  steps. Each sample counts for the offset ``round(source) - cell``. The estimate is the pooled
  frequency ``p = sum_b c_b / sum_b n_b`` (``c_b`` samples of the outcome at that offset in world
  ``b``, ``n_b`` all its samples there). Successive steps of a world are correlated (a puff stays
  several steps), so a world is the unit of independence: the standard error is the
  cluster (batch-of-worlds) error of a ratio, ``se^2 = W / (W - 1) * sum_b (c_b - p n_b)^2 /
  (sum_b n_b)^2`` over the ``W`` worlds that sampled the offset, which holds whatever the
  correlation within a world; at least the binomial error of independent samples,
  ``q (1 - q) / n`` with ``q = (c + 1/2) / (n + 1)`` (so that a frequency of 0 or 1 from a few
  worlds, all alike, still has an error); ``inf`` where fewer than two worlds sampled the offset.

**Unsampled offsets** (no world ever had its source there, e.g. upwind of a fixed source farther
than the grid allows, or inside walls): the rule is *no detection*, outcome 0 (``sampled`` marks
the offsets that were measured). **The floor**: a belief multiplied by a zero likelihood can never
recover, and a frequency of 0 from finite samples is not a probability of 0, so the table the belief
reads is ``(1 - K floor) p + floor`` (every outcome at least ``floor``; ``estimate`` keeps ``p``).

**Not translation-invariant plumes** (walls, a recorded movie, a source near an edge): the model
pools every (cell, source) pair by its offset, so the table is the average over the cells of the
scenario's own source placement(s) and wall masks, used as if the plume were translation-invariant:
a stated approximation, exact for a plume that is (``PoissonHits``, a Gaussian plume away from the
edges) and measured, not assumed, everywhere else.

**Cache**: a calibration is stored on disk under the package's cache folder
(``$PLUME_MULTI_CACHE_DIR/.../likelihoods/``, ``engine/jit.py``), keyed on the plume, the grid, the
walls (their masks' bytes), the thresholds, the sample budget, the seed, the floor and the package
version; written atomically (``plume_multi.files``); read back only when it holds that key and
arrays of the right shapes, types and ranges (a corrupt or foreign file is recomputed, with a
warning, never trusted).
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import math
import os
import warnings
from functools import cached_property

import numpy as np

from ..checks import check_bool, check_int, check_real, fail, is_real, shown
from ..errors import ValidationError
from .plumes.poisson_hits.kernels import BeliefTables
from .plumes.poisson_hits.plume import (MOVES_2D, MOVES_3D, PoissonHitPlume, log_where_positive, readonly)

__all__ = ["Likelihood", "PoissonLikelihood", "CalibratedLikelihood", "calibrate", "likelihood_for",
           "default_thresholds", "outcomes_of", "likelihood_from_metadata"]

MAX_THRESHOLDS = 15  # outcomes 0..15: a belief update per outcome, scored per move by the decisions
CACHE_VERSION = 1  # the layout of a cached calibration


def _tables(lik: np.ndarray, shape: tuple, cdf: np.ndarray) -> BeliefTables:
    """``BeliefTables`` of a centred likelihood ``lik`` on a grid of belief shape ``shape``."""
    m = lik * log_where_positive(lik)
    grids = np.meshgrid(*[np.arange(1 - n, n) for n in shape], indexing="ij")
    manhattan = sum(np.abs(g) for g in grids).astype(np.float64)
    return BeliefTables(readonly(lik), readonly(np.concatenate([m, m.sum(axis=0)[None]])), readonly(manhattan),
                        readonly(cdf))


def check_thresholds(owner: str, thresholds) -> tuple | None:
    """``None`` or a tuple of 1..15 finite, non-negative, strictly increasing concentrations."""
    if thresholds is None:
        return None
    expected = f"None (a Poisson-hit plume's own hits) or 1..{MAX_THRESHOLDS} finite concentrations >= 0, increasing"
    if is_real(thresholds):
        thresholds = (thresholds,)
    try:
        values = tuple(thresholds)
    except TypeError:
        fail(owner, "thresholds", thresholds, expected)
    if not 1 <= len(values) <= MAX_THRESHOLDS or not all(is_real(v) and math.isfinite(float(v)) and float(v) >= 0
                                                          for v in values):
        fail(owner, "thresholds", thresholds, expected)
    values = tuple(float(v) for v in values)
    if any(b <= a for a, b in zip(values, values[1:])):
        fail(owner, "thresholds", thresholds, expected)
    return values


def outcomes_of(values: np.ndarray, thresholds) -> np.ndarray:
    """The outcome of each signal in ``values``: the hits themselves (``thresholds`` None, an
    integer count) or the number of ``thresholds`` each value is strictly above; int64."""
    v = np.asarray(values)
    if thresholds is None:
        return v.astype(np.int64)
    out = np.zeros(v.shape, dtype=np.int64)
    for t in thresholds:
        out += v > np.float32(t)
    return out


class Likelihood:
    """Base of the likelihoods (module docstring). A subclass sets ``shape`` (the belief's,
    ``(H, W)`` or ``(D, H, W)``), ``thresholds`` and ``centred_likelihood``.

    Attributes:
        shape: the belief's shape, ``(H, W)`` (``(D, H, W)`` in 3-D).
        dims: 2 or 3.
        thresholds: ``None`` (the plume's hits are the outcomes) or the detection thresholds.
        n_outcomes: ``K``.
        centred_likelihood: ``(K, 2H-1, 2W-1)`` float64 read-only (module docstring).
        moves: ``(2 dims, dims)`` int32, the cardinal moves (a decision's default).
    """

    shape: tuple = ()
    thresholds = None

    @property
    def dims(self) -> int:
        return len(self.shape)

    @property
    def n_outcomes(self) -> int:
        return int(self.centred_likelihood.shape[0])

    @property
    def n_hits(self) -> int:
        """``n_outcomes``, under the name the Poisson plumes use."""
        return self.n_outcomes

    def natural_grid_size(self) -> tuple:
        """``(W, H)`` (``(W, H, D)``): the grid this likelihood is for."""
        return tuple(self.shape[::-1])

    @cached_property
    def moves(self) -> np.ndarray:
        return readonly(np.array(MOVES_3D if self.dims == 3 else MOVES_2D, dtype=np.int32))

    @cached_property
    def tables(self) -> BeliefTables:
        """What the compiled decisions read (``BeliefTables``)."""
        return _tables(self.centred_likelihood, self.shape, self.first_hit_cdf)

    @property
    def centred_likelihood_log(self) -> np.ndarray:
        return self.tables.likelihood_log

    @property
    def centred_manhattan(self) -> np.ndarray:
        return self.tables.manhattan

    @cached_property
    def first_hit_cdf(self) -> np.ndarray:
        """Cumulative law of an outcome pooled over the offsets (not read by the decisions)."""
        lik = self.centred_likelihood
        mass = lik.reshape(lik.shape[0], -1).sum(axis=1)
        c = np.cumsum(mass / mass.sum()) if mass.sum() > 0 else np.linspace(0.0, 1.0, lik.shape[0])
        c[-1] = 1.0
        return readonly(c)

    def check_grid(self, owner: str, grid_size) -> None:
        """Refuse a scenario whose grid is not this likelihood's."""
        if tuple(grid_size) != self.natural_grid_size():
            fail(owner, "likelihood", self, f"a likelihood of the scenario's grid {tuple(grid_size)} (this one is of "
                                            f"{self.natural_grid_size()})")

    def metadata(self) -> dict:
        raise NotImplementedError


class PoissonLikelihood(Likelihood):
    """The closed-form likelihood of a Poisson-hit plume (``PoissonHits``, ``WindyPoissonHits``):
    its own ``centred_likelihood`` (the same array: bit for bit today's belief and decisions).

    Args:
        plume: the Poisson-hit plume.
        thresholds: ``None`` (its hits are the outcomes: for that plume), or ``n_hits - 1``
            concentrations: a mismatched model of another plume, whose detection levels are read
            as hits (e.g. ``PoissonLikelihood(PoissonHits(...), thresholds=(0.0,))`` with
            ``n_hits=2``: any odour is a hit).
    """

    def __init__(self, plume, thresholds=None):
        if not isinstance(plume, PoissonHitPlume):
            fail("PoissonLikelihood", "plume", plume, "a Poisson-hit plume (plumes.PoissonHits, WindyPoissonHits)")
        thresholds = check_thresholds("PoissonLikelihood", thresholds)
        if thresholds is not None and len(thresholds) != plume.n_hits - 1:
            fail("PoissonLikelihood", "thresholds", thresholds,
                 f"{plume.n_hits - 1} thresholds (one outcome per hit value 0..{plume.n_hits - 1})")
        self.plume = plume
        self.thresholds = thresholds
        self.shape = tuple(plume.shape)

    @property
    def dims(self) -> int:
        return len(self.shape)

    @property
    def centred_likelihood(self) -> np.ndarray:
        return self.plume.centred_likelihood

    @property
    def first_hit_cdf(self) -> np.ndarray:
        return self.plume.first_hit_cdf

    @cached_property
    def tables(self) -> BeliefTables:
        p = self.plume
        return BeliefTables(np.ascontiguousarray(p.centred_likelihood), np.ascontiguousarray(p.centred_likelihood_log),
                            np.ascontiguousarray(p.centred_manhattan), np.ascontiguousarray(p.first_hit_cdf))

    def metadata(self) -> dict:
        return {"likelihood": "PoissonLikelihood", "plume": self.plume.metadata(),
                "thresholds": None if self.thresholds is None else list(self.thresholds)}

    def __repr__(self) -> str:
        given = "" if self.thresholds is None else f", thresholds={self.thresholds}"
        return f"PoissonLikelihood({self.plume.name}, grid {self.natural_grid_size()}{given})"


class CalibratedLikelihood(Likelihood):
    """A likelihood measured on the engine (``calibrate``; module docstring).

    Attributes:
        estimate: ``(K, *centred)`` float64: the sampled frequency ``p`` of each outcome per
            offset (0 where never sampled).
        stderr: ``(K, *centred)`` float64: its standard error between worlds (``inf`` where fewer
            than two worlds sampled the offset).
        samples: ``centred`` int64: samples per offset (worlds x steps x cells at that offset).
        worlds_sampled: ``centred`` int64: worlds that sampled each offset.
        sampled: ``centred`` bool: ``samples > 0`` (elsewhere: no detection, by rule).
        floor: the least probability of an outcome in ``centred_likelihood``.
        settings: the calibration's settings (worlds, steps, warmup, seed, thresholds, floor).
        key: the cache key (a hex digest of the scenario and the settings).
        max_stderr: the largest finite standard error of the sampled offsets.
    """

    def __init__(self, shape, thresholds, estimate, stderr, samples, worlds_sampled, floor, settings, key, scenario=None):
        self.shape = tuple(int(n) for n in shape)
        self.thresholds = thresholds
        self.estimate = readonly(estimate)
        self.stderr = readonly(stderr)
        self.samples = readonly(samples)
        self.worlds_sampled = readonly(worlds_sampled)
        self.floor = float(floor)
        self.settings = dict(settings)
        self.key = key
        self.scenario = scenario

    @cached_property
    def sampled(self) -> np.ndarray:
        return readonly(self.samples > 0)

    @cached_property
    def centred_likelihood(self) -> np.ndarray:
        k = self.estimate.shape[0]
        lik = self.estimate * (1.0 - k * self.floor) + self.floor
        never = ~self.sampled
        lik[:, never] = self.floor
        lik[0, never] = 1.0 - (k - 1) * self.floor
        lik[(slice(None),) + tuple(n - 1 for n in self.shape)] = 0.0  # on the source: found, no outcome
        return readonly(lik)

    @property
    def max_stderr(self) -> float:
        se = self.stderr[:, self.sampled]
        se = se[np.isfinite(se)]
        return float(se.max()) if se.size else math.inf

    def summary(self) -> str:
        """A few lines: the grid, the outcomes, the budget, the offsets sampled and the error."""
        s = self.settings
        n = int(self.sampled.sum())
        return (f"CalibratedLikelihood on grid {self.natural_grid_size()}, {self.n_outcomes} outcomes "
                f"(thresholds {self.thresholds}), {s['worlds']} worlds x {s['steps']} steps (warm-up {s['warmup']}, "
                f"seed {s['seed']}): {n} of {self.sampled.size} offsets sampled, largest standard error "
                f"{self.max_stderr:.3g}, floor {self.floor:g}")

    def __repr__(self) -> str:
        return f"<{self.summary()}>"

    def metadata(self) -> dict:
        return {"likelihood": "CalibratedLikelihood", "key": self.key, "settings": self.settings,
                "scenario": None if self.scenario is None else self.scenario.metadata()}


def default_thresholds(plume) -> tuple | None:
    """The outcomes a plume's likelihood uses when none are given: a Poisson-hit plume's hits
    (``None``); else one threshold, ``1e-3`` times the plume's largest concentration when it is
    bounded (a Gaussian plume's), and ``0.0`` (any odour: the intermittency definition) when it is
    not (puffs, a recorded movie whose values are not normalized)."""
    if isinstance(plume, PoissonHitPlume):
        return None
    hi = float(plume.concentration_bounds()[1])
    return (1e-3 * hi,) if math.isfinite(hi) and hi > 0 else (0.0,)


# ----------------------------------------------------------------------------- calibration
def _digest_value(value, h) -> None:
    """Feed ``value`` (a model field) to the hash ``h``: arrays by content, paths with their size and
    modification time, models by their fields."""
    if isinstance(value, np.ndarray):
        h.update(f"array{value.shape}{value.dtype}".encode())
        h.update(np.ascontiguousarray(value).tobytes())
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        h.update(type(value).__qualname__.encode())
        for f in dataclasses.fields(value):
            h.update(f.name.encode())
            _digest_value(getattr(value, f.name), h)
    elif isinstance(value, (tuple, list)):
        h.update(b"[")
        for v in value:
            _digest_value(v, h)
        h.update(b"]")
    elif isinstance(value, (str, os.PathLike)) and os.path.exists(value):
        st = os.stat(value)
        h.update(f"path{os.fspath(value)}:{st.st_size}:{st.st_mtime_ns}".encode())
    else:
        h.update(repr(value).encode())


def _key(scenario, settings: dict) -> str:
    from .. import __version__

    h = hashlib.sha256()
    h.update(json.dumps({**settings, "version": __version__, "layout": CACHE_VERSION,
                         "grid_size": list(scenario.grid_size)}, sort_keys=True).encode())
    _digest_value(scenario.plume, h)
    if scenario.walls is not None:
        _digest_value(scenario.walls.masks, h)
    return h.hexdigest()[:32]


def _cache_path(key: str):
    from ..engine.jit import CACHE_DIR

    return None if CACHE_DIR is None else CACHE_DIR / "likelihoods" / f"{key}.npz"


_FIELDS = ("key", "thresholds", "estimate", "stderr", "samples", "worlds_sampled")


def _load(path, key: str, shape: tuple, k: int):
    """The arrays of the cached calibration at ``path`` when it is one of ``key`` with arrays of the
    expected shapes, types and ranges; else None (with a warning when a file was there)."""
    from .. import files

    if not files.is_file(path):
        return None
    centred = tuple(2 * n - 1 for n in shape)
    try:
        with np.load(io.BytesIO(files.read_bytes(path, "calibrate", limit=1 << 32)), allow_pickle=False) as z:
            data = {name: z[name] for name in _FIELDS}
        ok = (str(data["key"]) == key and data["estimate"].shape == (k,) + centred and data["estimate"].dtype == np.float64
              and data["stderr"].shape == (k,) + centred and data["stderr"].dtype == np.float64
              and data["samples"].shape == centred and data["samples"].dtype == np.int64
              and data["worlds_sampled"].shape == centred and data["worlds_sampled"].dtype == np.int64
              and np.all(np.isfinite(data["estimate"])) and np.all((data["estimate"] >= 0) & (data["estimate"] <= 1))
              and not np.any(np.isnan(data["stderr"])) and np.all(data["stderr"] >= 0)
              and np.all(data["samples"] >= 0) and np.all(data["worlds_sampled"] >= 0))
    except Exception as exc:  # a truncated, corrupt or foreign file: never trusted
        ok, why = False, f"{type(exc).__name__}: {exc}"
    else:
        why = "it is not this calibration's (key, shapes, types or ranges differ)"
    if not ok:
        warnings.warn(f"calibrate: the cached calibration {path} cannot be used ({shown(why, 160)}); calibrating again",
                      RuntimeWarning, stacklevel=3)
        return None
    return data


def _store(path, key: str, thresholds, arrays: dict) -> None:
    from .. import files

    buf = io.BytesIO()
    np.savez(buf, key=np.array(key), thresholds=np.array(thresholds if thresholds is not None else [], np.float64),
             **arrays)
    try:
        with files.writing(path, "calibrate", text=False) as f:
            f.write(buf.getvalue())
    except (OSError, ValidationError) as exc:  # a cache that cannot be written is not an error
        warnings.warn(f"calibrate: could not cache the calibration in {path} ({exc})", RuntimeWarning, stacklevel=3)


def _probe_cells(scenario) -> np.ndarray:
    """``(N, dims)`` int64: every cell free in all the scenario's wall masks (every cell without)."""
    shape = tuple(scenario.grid_size[::-1])
    free = np.ones(shape, dtype=bool) if scenario.walls is None else ~scenario.walls.masks.any(axis=0)
    idx = np.nonzero(free)  # axis order [z,] y, x
    return np.stack(idx[::-1], axis=1).astype(np.int64)


def _probe_scenario(scenario, cells: np.ndarray, thresholds, total_steps: int):
    from ..scenario import Scenario
    from . import bodies, sensors

    signal = sensors.Hits() if thresholds is None else sensors.Concentration()
    return Scenario(grid_size=scenario.grid_size, plume=scenario.plume, n_agents=len(cells), action_model=bodies.Moore(),
                    sensors=(signal,), reward=scenario.reward, team=False, walls=scenario.walls, goal_radius=1e-6,
                    start_positions=tuple(map(tuple, cells.tolist())), max_steps=min(total_steps, 2**31 - 1))


def calibrate(scenario, thresholds="default", *, worlds: int = 32, steps: int = 200, warmup: int = 0, seed: int = 0,
              floor: float = 1e-3, progress: bool = True, cache: bool = True) -> CalibratedLikelihood:
    """Measure the likelihood of ``scenario``'s plume on the engine (module docstring).

    Args:
        scenario: a ``Scenario`` (its plume, grid, walls and source placement; its agents, body
            and sensors are not used).
        thresholds: the detection thresholds (concentrations; outcome = how many the signal is
            strictly above), ``None`` for a Poisson-hit plume's own hits, or ``"default"``
            (``default_thresholds``).
        worlds: independent worlds, 2..65536 (world ``b`` seeded ``seed + b``).
        steps: sampled steps per world, 1..10,000,000.
        warmup: steps run before sampling (a ``Puffs`` plume also spins up at reset).
        seed: the first world's seed.
        floor: the least probability of an outcome in the belief's table, ``[0, 1 / K)``.
        progress: a tqdm bar while calibrating.
        cache: read and write the on-disk cache.

    Returns:
        A ``CalibratedLikelihood`` (the same arrays, bit for bit, for the same arguments, whatever
        the thread count).

    Raises:
        ValidationError: a bad argument; a plume whose sources move or are several (the likelihood
            is of one source that stays); ``thresholds=None`` for a plume without hits.
    """
    from ..scenario import Scenario
    from ..simulator import Simulator

    if not isinstance(scenario, Scenario):
        fail("calibrate", "scenario", scenario, "a Scenario")
    plume = scenario.plume
    if isinstance(thresholds, str) and thresholds == "default":
        thresholds = default_thresholds(plume)
    thresholds = check_thresholds("calibrate", thresholds)
    if thresholds is None and not isinstance(plume, PoissonHitPlume):
        fail("calibrate", "thresholds", None, f"detection thresholds: {plume.name} has no hits of its own (thresholds=None "
                                              "is for plumes.PoissonHits and WindyPoissonHits)")
    if plume.sources_move() or plume.source_count() > 1:
        fail("calibrate", "scenario", f"{plume.name} with {'moving' if plume.sources_move() else 'several'} sources",
             "one source that stays (a likelihood is of the offset to one fixed source)")
    worlds = check_int("calibrate", "worlds", worlds, 2, 1 << 16)
    steps = check_int("calibrate", "steps", steps, 1, 10_000_000)
    warmup = check_int("calibrate", "warmup", warmup, 0, 10_000_000)
    seed = check_int("calibrate", "seed", seed, 0, 2**62)
    k = plume.n_hits if thresholds is None else len(thresholds) + 1
    floor = check_real("calibrate", "floor", floor, 0.0, 1.0 / k, high_open=True)
    progress = check_bool("calibrate", "progress", progress)
    cache = check_bool("calibrate", "cache", cache)
    shape = tuple(scenario.grid_size[::-1])
    settings = {"worlds": worlds, "steps": steps, "warmup": warmup, "seed": seed, "floor": floor,
                "thresholds": None if thresholds is None else list(thresholds)}
    key = _key(scenario, settings)
    path = _cache_path(key) if cache else None
    data = None if path is None else _load(path, key, shape, k)
    if data is None:
        cells = _probe_cells(scenario)
        probe = _probe_scenario(scenario, cells, thresholds, warmup + steps)
        arrays = _sample(probe, cells, shape, k, thresholds, worlds, steps, warmup, seed, progress, Simulator)
        if path is not None:
            _store(path, key, thresholds, arrays)
        data = arrays
    return CalibratedLikelihood(shape, thresholds, data["estimate"], data["stderr"], data["samples"],
                                data["worlds_sampled"], floor, settings, key, scenario)


# the most agents x worlds one simulator of the calibration holds at once (its observations, counts)
CHUNK_AGENTS = 1 << 20


def _sample(probe, cells, shape, k, thresholds, worlds, steps, warmup, seed, progress, Simulator) -> dict:
    """Run the probes' scenario and return the estimate, its error and the sample counts."""
    from tqdm.auto import tqdm

    n = len(cells)
    dims = len(shape)
    centred = tuple(2 * s - 1 for s in shape)
    size = int(np.prod(centred))
    strides = np.array([int(np.prod(centred[a + 1:])) for a in range(dims)], dtype=np.int64)  # [z,] y, x
    chunk = max(1, min(worlds, CHUNK_AGENTS // max(n, 1)))
    s_c = np.zeros((k, size))
    s_cc = np.zeros((k, size))
    s_cn = np.zeros((k, size))
    s_n = np.zeros(size)
    s_nn = np.zeros(size)
    n_worlds = np.zeros(size, dtype=np.int64)
    cells_rev = cells[:, ::-1]  # [z,] y, x
    with tqdm(total=worlds * (warmup + steps), desc="calibrate likelihood", unit="world-step", disable=not progress,
              leave=False, dynamic_ncols=True) as bar:
        for first in range(0, worlds, chunk):
            b = min(chunk, worlds - first)
            sim = Simulator(probe, num_worlds=b, autoreset="disabled")
            sim.reset(seed=seed + first)
            stay = np.full(sim.total_agents, sim.n_actions - 1, dtype=np.int64)  # Moore's last move: stay
            src = np.floor(np.asarray(sim.sources, dtype=np.float64)[:, :dims] + 0.5).astype(np.int64)[:, ::-1]
            off = src[:, None, :] - cells_rev[None, :, :] + (np.array(shape) - 1)  # (b, N, dims), [z,] y, x
            inside = np.all((off >= 0) & (off < np.array(centred)), axis=2)
            flat = (np.clip(off, 0, np.array(centred) - 1) * strides).sum(axis=2)  # (b, N)
            rows = np.arange(b, dtype=np.int64)[:, None]
            counts = np.zeros(b * k * size, dtype=np.int64)
            for t in range(warmup + steps):
                obs = sim.step(stay)[0]
                bar.update(b)
                if t < warmup:
                    continue
                o = np.minimum(outcomes_of(obs[:, 0].reshape(b, n), thresholds), k - 1)
                live = inside & sim.active.reshape(b, n)
                index = ((rows * k + o) * size + flat)[live]
                counts += np.bincount(index, minlength=b * k * size)
            c = counts.reshape(b, k, size).astype(np.float64)
            nb = c.sum(axis=1)
            s_c += c.sum(axis=0)
            s_cc += (c * c).sum(axis=0)
            s_cn += (c * nb[:, None, :]).sum(axis=0)
            s_n += nb.sum(axis=0)
            s_nn += (nb * nb).sum(axis=0)
            n_worlds += (nb > 0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(s_n > 0, s_c / np.where(s_n > 0, s_n, 1.0), 0.0)
        resid = np.maximum(s_cc - 2.0 * p * s_cn + p * p * s_nn, 0.0)
        w = n_worlds.astype(np.float64)
        n = np.where(s_n > 0, s_n, 1.0)
        var = resid * w / np.maximum(w - 1.0, 1.0) / n ** 2
        q = (s_c + 0.5) / (n + 1.0)  # the binomial error of independent samples, never 0
        var = np.where(n_worlds >= 2, np.maximum(var, q * (1.0 - q) / n), np.inf)
    return {"estimate": p.reshape((k,) + centred), "stderr": np.sqrt(var).reshape((k,) + centred),
            "samples": s_n.astype(np.int64).reshape(centred), "worlds_sampled": n_worlds.reshape(centred)}


def likelihood_for(scenario, thresholds="default", **calibration) -> Likelihood:
    """The likelihood a Bayesian searcher uses in ``scenario`` when none is given: the closed form
    of a Poisson-hit plume (``PoissonLikelihood``; with ``thresholds`` left ``"default"``), else
    ``calibrate(scenario, thresholds, **calibration)`` (cached)."""
    if isinstance(scenario.plume, PoissonHitPlume) and isinstance(thresholds, str) and thresholds == "default":
        return PoissonLikelihood(scenario.plume)
    return calibrate(scenario, thresholds, **calibration)


def likelihood_from_metadata(meta: dict) -> Likelihood:
    """The likelihood a ``metadata()`` describes (a scenario read back from JSON): a
    ``PoissonLikelihood`` from its plume, a ``CalibratedLikelihood`` calibrated again from its
    scenario and settings (a cache hit when the cache holds it)."""
    from .registry import from_metadata
    from ..scenario import scenario_from_metadata

    kind = meta.get("likelihood") if isinstance(meta, dict) else None
    if kind == "PoissonLikelihood":
        return PoissonLikelihood(from_metadata(meta["plume"]), meta.get("thresholds"))
    if kind == "CalibratedLikelihood" and isinstance(meta.get("scenario"), dict):
        s = meta["settings"]
        return calibrate(scenario_from_metadata(meta["scenario"]), s["thresholds"], worlds=s["worlds"], steps=s["steps"],
                         warmup=s["warmup"], seed=s["seed"], floor=s["floor"], progress=False)
    fail("Belief", "likelihood", meta, "the metadata of a PoissonLikelihood or a CalibratedLikelihood")
