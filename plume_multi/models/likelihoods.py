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
* ``CalibratedLikelihood``, made by ``plume_multi.calibration.calibrate(scenario, thresholds)``:
  measured on the engine.
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

**Cache and files**: ``calibrate`` stores a calibration on disk under the package's cache folder
(``plume_multi.calibration``); a scenario's JSON keeps a calibrated likelihood's measured arrays
(``metadata``), so reading it back (``likelihood_from_metadata``) runs nothing.
"""

from __future__ import annotations

import base64
import io
import math
import zipfile
from functools import cached_property

import numpy as np

from ..checks import fail, is_real
from .plumes.poisson_hits.kernels import BeliefTables
from .plumes.poisson_hits.plume import (MOVES_2D, MOVES_3D, PoissonHitPlume, log_where_positive, readonly)

__all__ = ["Likelihood", "PoissonLikelihood", "CalibratedLikelihood", "default_thresholds", "outcomes_of",
           "likelihood_from_metadata", "checked_arrays", "ARRAYS"]

MAX_THRESHOLDS = 15  # outcomes 0..15: a belief update per outcome, scored per move by the decisions


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

ARRAYS = ("estimate", "stderr", "samples", "worlds_sampled")  # what a calibration measured


def checked_arrays(data: dict, shape: tuple, k: int) -> str | None:
    """Why the measured arrays ``data`` (``ARRAYS``) cannot be a calibration of ``k`` outcomes on
    beliefs of ``shape`` (their shapes, types or ranges), or None when they can."""
    centred = tuple(2 * n - 1 for n in shape)
    for name, tail, dtype in (("estimate", (k,), np.float64), ("stderr", (k,), np.float64),
                              ("samples", (), np.int64), ("worlds_sampled", (), np.int64)):
        a = data.get(name)
        if not isinstance(a, np.ndarray) or a.shape != tail + centred or a.dtype != dtype:
            return f"{name} is not {dtype.__name__} of shape {tail + centred}"
    e, se = data["estimate"], data["stderr"]
    if not (np.all(np.isfinite(e)) and np.all((e >= 0) & (e <= 1))):
        return "estimate holds values outside [0, 1]"
    if np.any(np.isnan(se)) or np.any(se < 0):
        return "stderr holds NaN or negative values"
    if np.any(data["samples"] < 0) or np.any(data["worlds_sampled"] < 0):
        return "samples or worlds_sampled hold negative counts"
    return None


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

    def __init__(self, shape, thresholds, estimate, stderr, samples, worlds_sampled, floor, settings, key):
        self.shape = tuple(int(n) for n in shape)
        self.thresholds = thresholds
        self.estimate = readonly(estimate)
        self.stderr = readonly(stderr)
        self.samples = readonly(samples)
        self.worlds_sampled = readonly(worlds_sampled)
        self.floor = float(floor)
        self.settings = dict(settings)
        self.key = key

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
        """The record a scenario's JSON keeps: the settings, the key and the measured arrays
        themselves (a compressed ``.npz``, base64), so that reading it back needs no calibration."""
        buf = io.BytesIO()
        np.savez_compressed(buf, **{name: getattr(self, name) for name in ARRAYS})
        return {"likelihood": "CalibratedLikelihood", "key": self.key, "settings": self.settings,
                "shape": list(self.shape), "thresholds": None if self.thresholds is None else list(self.thresholds),
                "floor": self.floor, "arrays": base64.b64encode(buf.getvalue()).decode("ascii")}


def default_thresholds(plume) -> tuple | None:
    """The outcomes a plume's likelihood uses when none are given: a Poisson-hit plume's hits
    (``None``); else one threshold, ``1e-3`` times the plume's largest concentration when it is
    bounded (a Gaussian plume's), and ``0.0`` (any odour: the intermittency definition) when it is
    not (puffs, a recorded movie whose values are not normalized)."""
    if isinstance(plume, PoissonHitPlume):
        return None
    hi = float(plume.concentration_bounds()[1])
    return (1e-3 * hi,) if math.isfinite(hi) and hi > 0 else (0.0,)


def likelihood_from_metadata(meta: dict) -> Likelihood:
    """The likelihood a ``metadata()`` describes (a scenario read back from JSON): a
    ``PoissonLikelihood`` from its plume, a ``CalibratedLikelihood`` from the arrays it carries
    (checked: shapes, types and ranges)."""
    from .plumes.poisson_hits import PoissonHits, WindyPoissonHits

    expected = "the metadata of a PoissonLikelihood or a CalibratedLikelihood"
    kind = meta.get("likelihood") if isinstance(meta, dict) else None
    if kind == "PoissonLikelihood":
        # the plume's own fields (Model.metadata()): the two Poisson-hit plumes, read here, below the
        # registry (which imports the sensors, this one's reader among them)
        plume = meta.get("plume") if isinstance(meta.get("plume"), dict) else {}
        cls = {"PoissonHits": PoissonHits, "WindyPoissonHits": WindyPoissonHits}.get(plume.get("model"))
        if cls is None:
            fail("Belief", "likelihood", meta, "a PoissonLikelihood of plumes.PoissonHits or WindyPoissonHits")
        try:
            made = cls(**{k: v for k, v in plume.items() if k not in ("model", "family")})
        except TypeError as exc:
            fail("Belief", "likelihood", f"a PoissonLikelihood record whose plume cannot be made ({exc})", expected)
        return PoissonLikelihood(made, meta.get("thresholds"))
    if kind != "CalibratedLikelihood":
        fail("Belief", "likelihood", meta, expected)
    try:
        shape = tuple(int(n) for n in meta["shape"])
        thresholds = check_thresholds("Belief.likelihood", meta["thresholds"])
        raw = base64.b64decode(meta["arrays"].encode("ascii"), validate=True)
        with np.load(io.BytesIO(raw), allow_pickle=False) as z:
            data = {name: z[name] for name in ARRAYS}
        settings, key, floor = dict(meta["settings"]), str(meta["key"]), float(meta["floor"])
    except (KeyError, TypeError, ValueError, AttributeError, OSError, EOFError, zipfile.BadZipFile) as exc:
        fail("Belief", "likelihood", f"a CalibratedLikelihood record that cannot be read ({type(exc).__name__})", expected)
    k = len(thresholds) + 1 if thresholds is not None else data["estimate"].shape[0]
    why = None if len(shape) in (2, 3) and min(shape) >= 1 else "a shape of 2 or 3 axes"
    why = why or checked_arrays(data, shape, k)
    if why is not None or not 0.0 <= floor < 1.0 / k:
        fail("Belief", "likelihood", f"a CalibratedLikelihood record whose {why or 'floor'} is wrong", expected)
    return CalibratedLikelihood(shape, thresholds, data["estimate"], data["stderr"], data["samples"],
                                data["worlds_sampled"], floor, settings, key)
