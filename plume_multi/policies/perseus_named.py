"""The built-in policy ``"perseus"`` (``policies.named``): a task's scenario solved by
``Perseus.solve`` with a fixed iteration budget, once per process and once per machine.

The budget (``BUDGET``): ``beliefs`` points, ``iterations`` Perseus iterations, ``seed``; no wall-time
budget, so a solve does the same work on any machine and gives the same vectors bit for bit
(``Perseus.solve`` is deterministic for a seed): the benchmark's column is reproducible. A solve is
memoized in the process (``plume_multi.evaluate`` calls a built-in's factory once per chunk of worlds)
and cached on disk under ``engine.jit.CACHE_DIR / "perseus" / KEY.npz`` (a ``Perseus.save`` file),
``KEY`` a hash of the scenario solved (its JSON record, the likelihood's tables included), the budget
and the source of the code that solves (the solver's modules and every module of the package they
reach: the engine, the models): an edited source is another key, so a cached solve is never stale.
A file is written whole (``plume_multi.files``) and read back through ``Perseus.load`` (every value
checked) only when it holds that scenario and discount; a corrupt or foreign file is solved again,
with a warning.

The scenario solved is the task's as the searcher acts in it (``belief_state.scenario_with_belief``:
a ``sensors.Belief`` of the Poisson closed form, or of the likelihood calibrated from the plume,
cached) with one searcher (a team's agents each decide on the shared belief with the one-searcher
vectors), so the six team tasks, which share a plume and starts, share one solve.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import hashlib
import json
import sys
import warnings

from .. import files
from ..checks import shown
from ..engine import jit
from ..errors import ValidationError

__all__ = ["BUDGET", "solved"]

#: The solve budget of the named policy (``Perseus.solve``'s arguments): 300 belief points (what
#: docs/perseus.md's 53x53 and windy solves used), at most 200 iterations (most tasks converge on their
#: points before; with 40 the windy case's vectors cycled in a third of its episodes), seed 0. An
#: iteration budget, not a wall-time one: the vectors do not depend on the machine. Replace it (a dict
#: with these three keys) for a smaller or larger column: the cache key holds it.
BUDGET = {"beliefs": 300, "iterations": 200, "seed": 0}
CACHE_VERSION = 1  # the layout of a cached solve (a Perseus.save file)

_solved: dict = {}  # key -> Perseus, this process's solves
_BAR = contextvars.ContextVar("plume_multi_perseus_bar", default=True)  # a solve shows its progress bar


@contextlib.contextmanager
def progress_shown(on: bool):
    """Within it, a solve of ``solved`` shows its progress bar only when ``on``: ``evaluate`` (and
    so ``tasks.evaluate`` and ``plume-multi benchmark run --quiet``) passes its own ``progress``."""
    token = _BAR.set(bool(on))
    try:
        yield
    finally:
        _BAR.reset(token)


def one_searcher(scenario):
    """The scenario the named policy solves for ``scenario``: a ``sensors.Belief`` of its belief model
    (``scenario_with_belief``), one searcher, no team (a flag that changes nothing for one searcher:
    the solves of a task and of its team share a key)."""
    from .belief_state import scenario_with_belief
    from .perseus_solve import single_searcher

    single = single_searcher(scenario_with_belief("Perseus", scenario))
    return single.replace(team=False) if single.team else single


def _budget() -> dict:
    if not isinstance(BUDGET, dict) or set(BUDGET) != {"beliefs", "iterations", "seed"}:
        raise ValidationError(f"perseus_named.BUDGET: got {shown(BUDGET)}; expected a dict of beliefs, iterations "
                              "and seed (Perseus.solve's arguments)")
    return dict(BUDGET)


def cache_key(scenario, budget: dict) -> str:
    """The key of the solve of ``scenario`` (``one_searcher``'s) with ``budget``: a hash of its JSON
    record, the budget, the discount and the source of the solver and of what it reaches."""
    from ..simulator import Simulator
    from . import perseus_solve
    from .perseus_problem import DEFAULT_DISCOUNT

    modules = [perseus_solve, sys.modules[Simulator.__module__], sys.modules[type(scenario.plume).__module__],
               sys.modules[__name__]]
    record = {"scenario": scenario.metadata(), "budget": budget, "discount": DEFAULT_DISCOUNT,
              "layout": CACHE_VERSION, "code": jit.source_digest(modules)}
    return hashlib.sha256(json.dumps(record, sort_keys=True, default=repr).encode()).hexdigest()[:32]


def cache_path(key: str):
    """Where the solve of ``key`` is cached (None: no cache folder)."""
    return None if jit.CACHE_DIR is None else jit.CACHE_DIR / "perseus" / f"{key}.npz"


def _load(path, scenario):
    """The cached policy at ``path`` when it solves ``scenario``; else None (with a warning when a
    file was there)."""
    from .perseus import Perseus
    from .perseus_problem import DEFAULT_DISCOUNT

    if not files.is_file(path):
        return None
    try:
        policy = Perseus.load(path)
        why = None
        if policy.scenario.metadata() != scenario.metadata():
            why = "it solves another scenario"
        elif policy.discount != DEFAULT_DISCOUNT:
            why = f"its discount is {policy.discount}, not {DEFAULT_DISCOUNT}"
    except ValidationError as exc:  # a truncated, corrupt or foreign file: never trusted
        why = str(exc)
    if why is not None:
        warnings.warn(f"perseus: the cached solve {path} cannot be used ({shown(why, 200)}); solving again",
                      RuntimeWarning, stacklevel=3)
        return None
    return policy


def _store(path, policy) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        policy.save(path)
    except (OSError, ValidationError) as exc:  # a cache that cannot be written is not an error
        warnings.warn(f"perseus: could not cache the solve in {path} ({exc})", RuntimeWarning, stacklevel=3)


def solved(scenario):
    """The named policy's ``Perseus`` for ``scenario`` (refused by ``Perseus.solve`` with a
    ``ValidationError`` where it cannot act): from this process's solves, else from the disk
    cache, else solved with ``BUDGET`` (a progress bar, unless within ``progress_shown(False)``) and
    cached. A shallow copy each call (the vectors shared, never written)."""
    from .perseus_problem import fit_problem

    budget = _budget()
    problem = fit_problem(scenario, model=False)  # what no likelihood changes: before one is calibrated
    if problem:
        raise ValidationError(f"Perseus: {problem}")
    sc = one_searcher(scenario)
    key = cache_key(sc, budget)
    policy = _solved.get(key)
    if policy is None:
        path = cache_path(key)
        policy = None if path is None else _load(path, sc)
        if policy is None:
            from .perseus import Perseus

            policy = Perseus.solve(sc, beliefs=budget["beliefs"], iterations=budget["iterations"],
                                   seed=budget["seed"], progress=_BAR.get())
            if path is not None:
                _store(path, policy)
        _solved[key] = policy
    return copy.deepcopy(policy)
