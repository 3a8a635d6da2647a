"""Scores of a task's episodes: the interquartile mean (IQM) with a stratified-bootstrap 95 %
interval, as rliable computes it (Agarwal et al., "Deep reinforcement learning at the edge of the
statistical precipice", NeurIPS 2021), and ``TaskResult``.

The interval comes from ``rliable.library.get_interval_estimates`` (percentile method, the
episodes of each task resampled within that task) when rliable imports
(``pip install "plume-multi[bench]"``), else from ``scipy.stats.bootstrap`` (percentile method:
one task is one stratum, so the two are the same procedure; their draws differ). rliable that is
missing, or fails to import for any reason (arch 7.2, which it imports, raises ``TypeError`` under
pandas 3), falls back to SciPy, with one warning per process saying why. Both are seeded (rliable
through NumPy's global generator, whose state is restored after): the same scores give the same
interval. ``ci_method`` says which computed it. A ``TaskResult`` computes its interval when first
asked, so a run's rows can be written before.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import warnings

import numpy as np

from ..evaluation import EvaluationResult
from .task import Protocol

__all__ = ["TaskResult", "iqm", "iqm_interval", "rliable_library", "BOOTSTRAP_REPS", "BENCH_EXTRA"]

BOOTSTRAP_REPS = 2000
BOOTSTRAP_SEED = 0
BENCH_EXTRA = "pip install 'plume-multi[bench]' (or pip install rliable)"


def iqm(scores) -> float:
    """The interquartile mean: the mean of the middle 50 %, ``int(n / 4)`` values cut from each end
    (``scipy.stats.trim_mean(x, 0.25)``, rliable's ``aggregate_iqm``, without their per-call cost:
    the bootstrap calls it thousands of times)."""
    x = np.sort(np.asarray(scores, dtype=np.float64), axis=None)
    if not x.size:
        return math.nan
    cut = int(0.25 * x.size)
    return float(x[cut:x.size - cut].mean())


_RLIABLE: dict = {}


def rliable_library():
    """``rliable.library``, or None (said once per process, with the reason) when rliable is
    missing or fails to import."""
    if "library" not in _RLIABLE:
        try:
            from rliable import library
        except Exception as exc:  # not only ImportError: arch 7.2 raises TypeError under pandas 3
            library = None
            reason = "not installed" if isinstance(exc, ImportError) else f"fails to import: {type(exc).__name__}: {exc}"
            warnings.warn(f"plume_multi: rliable {reason}; the IQM intervals come from scipy.stats.bootstrap "
                          f"(the same percentile method; ci_method 'scipy'). {BENCH_EXTRA}", RuntimeWarning, stacklevel=3)
        _RLIABLE["library"] = library
    return _RLIABLE["library"]


def iqm_interval(scores, reps: int = BOOTSTRAP_REPS) -> tuple[float, float, str]:
    """``(low, high, method)``: the 95 % stratified-bootstrap interval of the IQM of ``scores``
    (``(E,)`` of one task, or ``(E, T)``: E runs of T tasks, each task a stratum)."""
    scores = np.asarray(scores, dtype=np.float64)
    matrix = scores.reshape(-1, 1) if scores.ndim == 1 else scores
    if matrix.shape[0] < 2 or np.all(matrix == matrix.flat[0]):
        value = iqm(matrix)
        return value, value, "none"
    library = rliable_library()
    if library is None:
        from scipy.stats import bootstrap, trim_mean

        res = bootstrap((matrix.ravel(),), lambda x, axis: trim_mean(x, 0.25, axis=axis), n_resamples=reps,
                        method="percentile", confidence_level=0.95, random_state=np.random.default_rng(BOOTSTRAP_SEED))
        return float(res.confidence_interval.low), float(res.confidence_interval.high), "scipy"
    with seeded_global_numpy(BOOTSTRAP_SEED):
        _, intervals = library.get_interval_estimates(
            {"scores": matrix}, lambda x: np.array([iqm(x)]), reps=reps)
    low, high = intervals["scores"][:, 0]
    return float(low), float(high), "rliable"


@contextlib.contextmanager
def seeded_global_numpy(seed: int):
    """NumPy's global generator seeded for the block, and given back its state after it.

    rliable 1.2's ``StratifiedBootstrap`` draws its resamples from ``np.random.choice`` (the
    global generator), whatever ``random_state`` it is given: seeding that generator is the only
    way to the same interval for the same scores. The caller's own draws are left as they were."""
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        with warnings.catch_warnings():  # arch's notice that random_state= (which rliable passes) will change
            warnings.simplefilter("ignore", FutureWarning)
            yield
    finally:
        np.random.set_state(state)


@dataclasses.dataclass(frozen=True)
class TaskResult:
    """A policy's evaluation on a task.

    Attributes:
        task_id: the task.
        policy: the policy's name (or ``repr``).
        protocol: the protocol run (a reduced one when ``reduced``).
        reduced: fewer episodes or a lower step cap than the task's protocol.
        evaluation: the ``EvaluationResult`` (per-episode arrival times).
        iqm_steps: the IQM of ``steps``; ``iqm_low``, ``iqm_high``: its 95 % interval (computed
            when first asked: ``rows()`` need not wait for the bootstrap).
        ci_method: ``"rliable"``, ``"scipy"`` or ``"none"`` (every score equal).
    """

    task_id: str
    policy: str
    protocol: Protocol
    reduced: bool
    evaluation: EvaluationResult
    iqm_steps: float

    @classmethod
    def of(cls, task_id: str, policy: str, protocol: Protocol, reduced: bool, evaluation: EvaluationResult):
        return cls(task_id, policy, protocol, reduced, evaluation, iqm(steps_of(evaluation)))

    @functools.cached_property
    def _interval(self) -> tuple:
        return iqm_interval(self.steps)

    @property
    def iqm_low(self) -> float:
        return self._interval[0]

    @property
    def iqm_high(self) -> float:
        return self._interval[1]

    @property
    def ci_method(self) -> str:
        return self._interval[2]

    @property
    def steps(self) -> np.ndarray:
        """``(E,)`` float64 steps to the source, failures counted at the step cap."""
        return steps_of(self.evaluation)

    @property
    def success_rate(self) -> float:
        return self.evaluation.success_rate

    @property
    def mean_steps(self) -> float:
        """Mean steps to the source of the successful episodes (NaN if none)."""
        return self.evaluation.mean

    @property
    def median_steps(self) -> float:
        """Median steps to the source of the successful episodes (NaN if none)."""
        return self.evaluation.percentiles((50,))[50]

    def summary(self) -> dict:
        """One row of the table: JSON-able scalars."""
        lo, hi = self.evaluation.success_interval()
        return {"task": self.task_id, "policy": self.policy, "episodes": self.evaluation.episodes,
                "eval_seed": self.evaluation.seed, "max_steps": self.protocol.max_steps, "reduced": self.reduced,
                "success_rate": self.success_rate, "success_low": lo, "success_high": hi,
                "mean_steps": self.mean_steps, "median_steps": self.median_steps, "iqm_steps": self.iqm_steps,
                "iqm_low": self.iqm_low, "iqm_high": self.iqm_high, "ci_method": self.ci_method}

    def rows(self) -> list:
        """One dict per episode (what ``plume-multi benchmark run`` writes)."""
        ev = self.evaluation
        time = ev.search_time
        return [{"task": self.task_id, "policy": self.policy, "episode": e, "seed": int(ev.seed + e),
                 "success": bool(ok), "steps": float(s), "search_time": float(t), "max_steps": self.protocol.max_steps,
                 "reduced": self.reduced}
                for e, (ok, s, t) in enumerate(zip(ev.success, self.steps, time))]


def steps_of(evaluation: EvaluationResult) -> np.ndarray:
    """``(E,)`` steps to the source, failures at the scenario's step cap."""
    return np.where(evaluation.success, evaluation.search_time, float(evaluation.scenario.max_steps))
