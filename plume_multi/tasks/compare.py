"""``compare(policies, scenario_or_task)``: several policies on the same seeded episodes of a
scenario, or of a benchmark task by its protocol; a table and the search-time distributions.

It stands above ``tasks`` (a task's id, protocol and partners; the IQM scores) and
``plume_multi.evaluation`` (each policy's run); ``plume_multi.compare`` is this ``compare``.
"""

from __future__ import annotations

import csv
import dataclasses
import math
from collections.abc import Mapping
from pathlib import Path

from .. import files
from ..errors import ValidationError
from ..evaluation import as_scenario, check_policy, describe_scenario, evaluate, out_path, plot_results, pyplot
from . import running
from .registry import get
from .scores import iqm, iqm_interval, steps_of
from .task import Task

__all__ = ["compare", "ComparisonResult", "COMPARE_COLUMNS"]

COMPARE_COLUMNS = ("policy", "episodes", "success_rate", "success_low", "success_high", "mean_steps", "mean_low",
                   "mean_high", "median_steps", "iqm_steps", "iqm_low", "iqm_high", "ci_method")


@dataclasses.dataclass(frozen=True)
class ComparisonResult:
    """What ``compare`` returns: every policy on the same seeded episodes.

    Attributes:
        rows: one dict per policy (``COMPARE_COLUMNS``): ``success_rate`` with its 95 % Wilson
            interval (``success_low``, ``success_high``); ``mean_steps`` (successful episodes) with
            its 95 % interval; ``median_steps`` (successful episodes); ``iqm_steps``, the
            interquartile mean of the steps of every episode (a failure counted at the step cap,
            as the benchmark scores) with its stratified-bootstrap 95 % interval (``ci_method``:
            ``"rliable"``, ``"scipy"`` or ``"none"``). NaN where no episode succeeded.
        results: ``{policy label: EvaluationResult}``, in the order given.
        title: what they were compared on (the task's id, or the scenario in words).
        seed: episode ``e`` of every policy was seeded ``seed + e``.
    """

    rows: list
    results: dict
    title: str
    seed: int

    def table(self) -> str:
        """The rows as a Markdown table (steps; intervals in brackets)."""

        def steps(value, low=None, high=None):
            if value != value:  # NaN: no success
                return "-"
            return f"{value:.1f}" if low is None or low != low else f"{value:.1f} [{low:.1f}, {high:.1f}]"

        lines = ["| policy | success (95 % interval) | mean steps | median steps | IQM steps (failures at the cap) |",
                 "|---|---:|---:|---:|---:|"]
        for row in self.rows:
            lines.append(f"| {row['policy']} | {row['success_rate']:.1%} [{row['success_low']:.1%}, "
                         f"{row['success_high']:.1%}] | {steps(row['mean_steps'], row['mean_low'], row['mean_high'])} "
                         f"| {steps(row['median_steps'])} | {steps(row['iqm_steps'], row['iqm_low'], row['iqm_high'])} |")
        return "\n".join(lines)

    def to_csv(self, path) -> Path:
        """One row per policy, ``COMPARE_COLUMNS`` (empty where NaN)."""
        path = out_path(path, ".csv", "ComparisonResult.to_csv")
        with files.writing(path, "ComparisonResult.to_csv", "a .csv file name", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(COMPARE_COLUMNS))
            writer.writeheader()
            writer.writerows([{k: ("" if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
                              for row in self.rows])
        return path

    def plot(self, path) -> Path:
        """The search-time distributions (a violin per policy) and their ECDFs: ``plot_results``."""
        return plot_results(list(self.results.values()), path, labels=list(self.results), title=self.title)


def _labelled(policies) -> list:
    """``[(label, policy)]``: a mapping's keys, else each name or the object's ``name``,
    ``__name__`` or class name; labels must differ."""
    if isinstance(policies, Mapping):
        pairs = [(str(label), policy) for label, policy in policies.items()]
    elif isinstance(policies, (list, tuple)):
        pairs = []
        for policy in policies:
            name = policy if isinstance(policy, str) else getattr(policy, "name", None)
            if not isinstance(name, str):
                name = getattr(policy, "__name__", None) or type(policy).__name__
            pairs.append((name, policy))
    else:
        raise ValidationError(f"policies: got {type(policies).__name__}; expected a list of policies (names such as "
                              "'random', or objects) or a mapping {label: policy}")
    labels = [label for label, _ in pairs]
    if not pairs or len(set(labels)) != len(labels):
        raise ValidationError(f"policies: got the labels {labels}; expected at least one policy, each with its own "
                              "label (give a mapping {label: policy})")
    return pairs


def compare(policies, scenario_or_task, episodes: int | None = None, seed: int | None = None, *,
            num_worlds: int | None = None, executor: str = "local", until: str | None = None,
            progress: bool = True, plot=None) -> ComparisonResult:
    """Run several policies on the same seeded episodes; a table and the search-time distributions.

    Args:
        policies: a list of policies, each a built-in's name (``"random"``, ``"gradient"``,
            ``"infotaxis"``, ...; ``"infotaxis,greedy"`` is a team) or anything ``evaluate``
            takes; or a mapping ``{label: policy}``.
        scenario_or_task: a ``Scenario`` (or a dict of its fields), or a benchmark task (its id,
            ``"otto/isotropic-19x19-v0"``, or a ``tasks.Task``): then its scenario, protocol and
            partners (``tasks.evaluate``).
        episodes: per policy; default the task's protocol, else 1000.
        seed: episode ``e`` of every policy is seeded ``seed + e`` (the same starts and sources);
            default the task's evaluation seed, else 0.
        num_worlds, executor: as for ``evaluate``.
        until: ``"first"`` or ``"all"`` (a scenario's; a task's protocol says its own).
        progress: a tqdm bar per policy.
        plot: a ``.png`` path: write the figure there (``ComparisonResult.plot``).

    Returns:
        A ``ComparisonResult``: ``rows`` (success, mean, median, IQM with intervals), ``table()``,
        ``results``, ``plot(path)``, ``to_csv(path)``.

    Example:
        >>> import plume_multi
        >>> scenario = plume_multi.Scenario(grid_size=(32, 32), sigma=8.0, max_steps=200)
        >>> result = plume_multi.compare(["random", "gradient"], scenario, episodes=200, progress=False)
        >>> tuple(result.results)
        ('random', 'gradient')
    """
    pairs = _labelled(policies)
    if plot is not None:
        out_path(plot, ".png")  # a bad path is refused before anything runs
        pyplot()
    task = get(scenario_or_task) if isinstance(scenario_or_task, (str, Task)) else None
    if task is None:
        scenario = as_scenario(scenario_or_task)
        episodes = 1000 if episodes is None else episodes
        seed = 0 if seed is None else seed
        until = "first" if until is None else until
        for label, policy in pairs:  # every refusal before the first run
            check_policy(policy, scenario)
        title = describe_scenario(scenario)
    else:
        if until is not None and until != task.protocol.until:
            raise ValidationError(f"until: got {until!r}; the task {task.id} scores {task.protocol.until!r} (its "
                                  "protocol): leave it out")
        title = task.id
    results = {}
    for label, policy in pairs:
        if task is None:
            results[label] = evaluate(policy, scenario, episodes, seed, num_worlds=num_worlds, executor=executor,
                                      progress=progress, until=until)
        else:
            results[label] = running.evaluate(task, policy, episodes, seed, executor, num_worlds=num_worlds,
                                              progress=progress, name=label).evaluation
    rows = []
    for label, result in results.items():
        lo, hi = result.success_interval()
        mlo, mhi = result.mean_interval()
        steps = steps_of(result)
        ilo, ihi, method = iqm_interval(steps)
        rows.append({"policy": label, "episodes": result.episodes, "success_rate": result.success_rate,
                     "success_low": lo, "success_high": hi, "mean_steps": result.mean, "mean_low": mlo,
                     "mean_high": mhi, "median_steps": result.percentiles((50,))[50], "iqm_steps": iqm(steps),
                     "iqm_low": ilo, "iqm_high": ihi, "ci_method": method})
    comparison = ComparisonResult(rows, results, title, next(iter(results.values())).seed)
    if plot is not None:
        comparison.plot(plot)
    return comparison
