"""Calibration: a plume's likelihood measured on the engine (``calibrate``), cached on disk, and the
likelihood a Bayesian searcher uses when none is given (``likelihood_for``).

The model, its error and its approximations are described in ``plume_multi.models.likelihoods``
(the likelihood records); this module runs the ``Simulator`` to measure one: every free cell of
the scenario's grid holds an agent that stays put and reads the signal, in ``worlds`` independent
worlds, each seeded, and the counts per offset give the estimate and its between-worlds error.
A calibration is stored under the package's cache folder (``likelihoods/KEY.npz``), keyed on the
plume (arrays by content, files by size and time), the grid, the walls, the thresholds, the budget,
the seed, the floor and the source of the code that measures it; written whole (``plume_multi.files``) and read back
only when it holds that key and arrays of the right shapes, types and ranges.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import sys
import warnings
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from . import files
from .checks import check_bool, check_int, check_real, fail, shown
from .engine import jit
from .errors import ValidationError
from .models import bodies, sensors
from .models.likelihoods import (ARRAYS, CalibratedLikelihood, Likelihood, PoissonLikelihood, check_thresholds,
                                 checked_arrays, default_thresholds, outcomes_of)
from .models.plumes.poisson_hits.plume import PoissonHitPlume
from .scenario import Scenario
from .simulator import Simulator

__all__ = ["calibrate", "likelihood_for"]

CACHE_VERSION = 1  # the layout of a cached calibration

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
    # the code that measures (this file, the simulator's and the plume's modules and every module of
    # the package they reach: the engine, the models): an edited source is another key, so a cached
    # calibration is never stale
    code = jit.source_digest([sys.modules[Simulator.__module__], sys.modules[type(scenario.plume).__module__]])
    code += hashlib.sha1(Path(__file__).read_bytes()).hexdigest()[:20]
    h = hashlib.sha256()
    h.update(json.dumps({**settings, "code": code, "layout": CACHE_VERSION,
                         "grid_size": list(scenario.grid_size)}, sort_keys=True).encode())
    _digest_value(scenario.plume, h)
    if scenario.walls is not None:
        _digest_value(scenario.walls.masks, h)
    return h.hexdigest()[:32]


def _cache_path(key: str):
    return None if jit.CACHE_DIR is None else jit.CACHE_DIR / "likelihoods" / f"{key}.npz"




def _load(path, key: str, shape: tuple, k: int):
    """The arrays of the cached calibration at ``path`` when it is one of ``key`` with arrays of the
    expected shapes, types and ranges; else None (with a warning when a file was there)."""
    if not files.is_file(path):
        return None
    try:
        with np.load(io.BytesIO(files.read_bytes(path, "calibrate", limit=1 << 32)), allow_pickle=False) as z:
            found = str(z["key"])
            data = {name: z[name] for name in ARRAYS}
        why = "it is another calibration's" if found != key else checked_arrays(data, shape, k)
    except Exception as exc:  # a truncated, corrupt or foreign file: never trusted
        why = f"{type(exc).__name__}: {exc}"
    if why is not None:
        warnings.warn(f"calibrate: the cached calibration {path} cannot be used ({shown(why, 160)}); calibrating again",
                      RuntimeWarning, stacklevel=3)
        return None
    return data


def _store(path, key: str, thresholds, arrays: dict) -> None:
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
        arrays = _sample(probe, cells, shape, k, thresholds, worlds, steps, warmup, seed, progress)
        if path is not None:
            _store(path, key, thresholds, arrays)
        data = arrays
    return CalibratedLikelihood(shape, thresholds, data["estimate"], data["stderr"], data["samples"],
                                data["worlds_sampled"], floor, settings, key)


# the most agents x worlds one simulator of the calibration holds at once (its observations, counts)
CHUNK_AGENTS = 1 << 20


def _sample(probe, cells, shape, k, thresholds, worlds, steps, warmup, seed, progress) -> dict:
    """Run the probes' scenario and return the estimate, its error and the sample counts."""
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
