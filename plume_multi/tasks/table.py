"""The benchmark's files: per-episode results (CSV, or Parquet with pyarrow), the summary of each
(task, policy), the Markdown table (tasks x policies) and the performance-profile figure.

A results file has one row per episode: ``task, policy, episode, seed, success, steps,
search_time, max_steps, reduced`` (``steps``: to the source, a failure counted at ``max_steps``;
``search_time`` empty for a failure). The table and the figure are computed from these rows only,
so results written by anyone, anywhere, combine.

The performance profile (Agarwal et al. 2021, as rliable draws it) is over the episode score
``1 - steps / max_steps`` (1 for finding the source at once, 0 for a failure): for each ``tau`` the
share of episodes scoring above ``tau``, averaged over the tasks a policy ran (each task weighs
the same), with stratified-bootstrap 95 % bands (seeded: the same rows, the same figure).
"""

from __future__ import annotations

import csv
import math
import os
from collections import defaultdict
from pathlib import Path

import numpy as np

from .. import files as _files
from ..errors import PlumeError, RenderingError, ValidationError
from .scores import BENCH_EXTRA, BOOTSTRAP_SEED, iqm, iqm_interval, rliable_library, seeded_global_numpy

__all__ = ["COLUMNS", "write_rows", "read_rows", "summarise", "markdown_table", "performance_profile",
           "write_summary"]

COLUMNS = ("task", "policy", "episode", "seed", "success", "steps", "search_time", "max_steps", "reduced")
SUFFIXES = (".csv", ".parquet")
PARQUET_EXTRA = "pip install pyarrow"
# The learned baselines (plume_multi.training.POLICIES, named here without importing torch): their
# columns follow the built-in policies' (benchmarks/learned_baselines.py writes their rows).
LEARNED = ("ppo-mlp", "ppo-gru")
PROFILE_TAUS = np.linspace(0.0, 1.0, 101)
PROFILE_REPS = 500


# ----------------------------------------------------------------------------------------- files
def _suffix(path, what: str) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise ValidationError(f"{what}: got {str(path)!r}; expected a file name ending in .csv or .parquet")
    return suffix


def write_rows(rows, path) -> Path:
    """Write per-episode rows (``TaskResult.rows()``, concatenated) to ``path`` (.csv or .parquet)."""
    p = Path(path)
    suffix = _suffix(p, "path")
    p.parent.mkdir(parents=True, exist_ok=True)
    clean = [{k: ("" if k == "search_time" and isinstance(row[k], float) and math.isnan(row[k]) else row[k])
              for k in COLUMNS} for row in rows]
    if suffix == ".parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError as exc:
            raise PlumeError(f"Parquet files need pyarrow: {PARQUET_EXTRA} (or write .csv)") from exc
        for row in clean:
            row["search_time"] = None if row["search_time"] == "" else row["search_time"]
        pq.write_table(pa.Table.from_pylist(clean), p)
        return p
    with p.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(COLUMNS))
        writer.writeheader()
        writer.writerows(clean)
    return p


def _typed(row: dict, where: str) -> dict:
    try:
        return {"task": str(row["task"]), "policy": str(row["policy"]), "episode": int(row["episode"]),
                "seed": int(row["seed"]), "success": str(row["success"]) in ("True", "true", "1"),
                "steps": float(row["steps"]),
                "search_time": math.nan if row["search_time"] in ("", None) else float(row["search_time"]),
                "max_steps": int(row["max_steps"]), "reduced": str(row["reduced"]) in ("True", "true", "1")}
    except (KeyError, TypeError, ValueError) as exc:
        raise ValidationError(f"{where}: a row {row!r} is not a benchmark result ({exc}); expected the columns "
                              f"{list(COLUMNS)}") from None


def read_rows(source) -> list:
    """The rows of a results file, or of every ``.csv`` / ``.parquet`` file in a folder (sorted by name)."""
    expected = "a results file (.csv or .parquet) or a folder of them"
    p = _files.check_path(source, "results", expected)
    if os.path.isdir(p):
        files = sorted(f for f in p.iterdir() if f.suffix.lower() in SUFFIXES)
        if not files:
            raise ValidationError(f"results: the folder {str(source)!r} holds no .csv or .parquet results")
    else:
        _files.check_file(p, "results", expected)
        _suffix(p, "results")
        files = [p]
    rows = []
    for f in files:
        if f.suffix.lower() == ".parquet":
            try:
                import pyarrow.parquet as pq
            except ImportError as exc:
                raise PlumeError(f"{f}: reading Parquet needs pyarrow: {PARQUET_EXTRA}") from exc
            with _files.open_file(f, "results", expected) as handle:
                raw = pq.read_table(handle).to_pylist()
        else:
            with _files.open_text(f, "results", expected, newline="") as handle:
                raw = list(csv.DictReader(handle))
        rows.extend(_typed(row, str(f)) for row in raw)
    return rows


# ----------------------------------------------------------------------------------------- summary
def _groups(rows) -> dict:
    """``{(task, policy): rows in episode order}``, in the order first seen; a repeated episode is refused."""
    groups = defaultdict(dict)
    for row in rows:
        key = (row["task"], row["policy"])
        if row["episode"] in groups[key]:
            raise ValidationError(f"results: episode {row['episode']} of {key[0]} under {key[1]} appears twice "
                                  "(two runs in one folder?)")
        groups[key][row["episode"]] = row
    return {key: [eps[e] for e in sorted(eps)] for key, eps in groups.items()}


def summarise(rows) -> list:
    """One dict per (task, policy): episodes, success rate, mean and median steps of the
    successful episodes, IQM of the steps with its 95 % interval, reduced."""
    out = []
    for (task, policy), group in _groups(rows).items():
        steps = np.array([r["steps"] for r in group])
        found = np.array([r["success"] for r in group])
        low, high, method = iqm_interval(steps)
        times = steps[found]
        out.append({"task": task, "policy": policy, "episodes": len(group), "max_steps": group[0]["max_steps"],
                    "reduced": any(r["reduced"] for r in group), "success_rate": float(found.mean()),
                    "mean_steps": float(times.mean()) if times.size else math.nan,
                    "median_steps": float(np.median(times)) if times.size else math.nan,
                    "iqm_steps": iqm(steps), "iqm_low": low, "iqm_high": high, "ci_method": method})
    return out


def write_summary(summary, path) -> Path:
    """The summary rows as CSV."""
    p = Path(path)
    if p.suffix.lower() != ".csv":
        raise ValidationError(f"path: got {str(path)!r}; expected a file name ending in .csv")
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(summary[0]))
        writer.writeheader()
        writer.writerows(summary)
    return p


def _order(values, preferred) -> list:
    seen = list(dict.fromkeys(values))
    return [v for v in preferred if v in seen] + [v for v in seen if v not in preferred]


def markdown_table(summary) -> str:
    """Tasks (rows) x policies (columns); each cell ``IQM [low, high] (success %)``: the
    interquartile mean of the steps to the source (failures at the cap; lower is better) with its
    stratified-bootstrap 95 % interval, and the share of episodes that found the source. A
    reduced run is marked ``*``; ``–``: the policy cannot act in the task or was not run. The
    built-in policies come first, then the learned baselines (``ppo-mlp``, ``ppo-gru``: the
    protocol's episodes shared among their training seeds), then any other."""
    from ..policies.named import NAMES
    from .registry import list as task_ids

    tasks = _order([s["task"] for s in summary], task_ids())
    policies = _order([s["policy"] for s in summary], NAMES + LEARNED)
    cells = {(s["task"], s["policy"]): s for s in summary}
    lines = ["| task | " + " | ".join(policies) + " |", "|---|" + "---:|" * len(policies)]
    for task in tasks:
        row = []
        for policy in policies:
            s = cells.get((task, policy))
            if s is None:
                row.append("–")
                continue
            star = "*" if s["reduced"] else ""
            row.append(f"{s['iqm_steps']:.0f} [{s['iqm_low']:.0f}, {s['iqm_high']:.0f}] "
                       f"({s['success_rate']:.0%}){star}")
        lines.append(f"| {task} | " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------------- figure
def profile_scores(rows) -> dict:
    """``{policy: (E, T) scores}``: ``1 - steps / max_steps`` of the first E episodes of each of the
    T tasks the policy ran (E the fewest episodes among them), tasks in the table's order."""
    from .registry import list as task_ids

    by_policy = defaultdict(dict)
    for (task, policy), group in _groups(rows).items():
        by_policy[policy][task] = np.array([1.0 - r["steps"] / r["max_steps"] for r in group])
    out = {}
    for policy, per_task in by_policy.items():
        order = _order(list(per_task), task_ids())
        e = min(len(per_task[t]) for t in order)
        out[policy] = np.stack([per_task[t][:e] for t in order], axis=1)
    return out


def performance_profile(rows, path, title: str | None = None) -> Path:
    """A PNG of the performance profiles of the policies in ``rows`` (rliable's
    ``create_performance_profile`` and ``plot_performance_profiles``; needs rliable and matplotlib)."""
    if rliable_library() is None:  # missing, or failing to import: the warning said why
        raise RenderingError(f"the performance profile needs rliable, which does not import here (the warning "
                             f"above says why): {BENCH_EXTRA}")
    from rliable import library, plot_utils
    from ..evaluation import _pyplot

    plt = _pyplot()
    p = Path(path)
    if p.suffix.lower() != ".png":
        raise ValidationError(f"path: got {str(path)!r}; expected a file name ending in .png")
    p.parent.mkdir(parents=True, exist_ok=True)
    scores = profile_scores(rows)
    with seeded_global_numpy(BOOTSTRAP_SEED):
        profiles, intervals = library.create_performance_profile(scores, PROFILE_TAUS, reps=PROFILE_REPS)
    labels = {k: f"{k} ({v.shape[1]} task{'s' if v.shape[1] != 1 else ''})" for k, v in scores.items()}
    fig, ax = plt.subplots(figsize=(7, 4.5))
    plot_utils.plot_performance_profiles({labels[k]: v for k, v in profiles.items()}, PROFILE_TAUS,
                                         performance_profile_cis={labels[k]: v for k, v in intervals.items()},
                                         ax=ax, xlabel=r"score $\tau$ = 1 - steps / step cap",
                                         ylabel=r"share of episodes scoring $> \tau$")
    ax.legend(fontsize="small", loc="upper right")
    ax.set_title(title or "Performance profiles over the tasks each policy ran", fontsize="medium")
    fig.tight_layout()
    fig.savefig(p, dpi=100)
    plt.close(fig)
    return p
