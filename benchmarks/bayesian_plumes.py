#!/usr/bin/env python
"""Bayesian searchers in realistic plumes: a calibrated likelihood against a mismatched one, beside
surge-and-cast, gradient climbing and the learned PPO-GRU (the table of docs/likelihoods.md).

    python benchmarks/bayesian_plumes.py [--episodes 20] [--worlds 32] [--steps 200]
                                         [--results bayesian_plumes.json] [--rows ...] [--force]
                                         [--table-only] [--quick]

Rows: the four puff regimes (``tasks.make("puffs/<regime>-v0").scenario()``), the walls task and
the synthetic recorded task, each at its protocol's step cap, ``--episodes`` episodes seeded from
0 (the same seeds for every column). Columns:

* ``infotaxis``, ``space-aware``, ``greedy``: the Bayesian searchers with the likelihood calibrated
  from the row's own plume (``calibrate(scenario, worlds=--worlds, steps=--steps)``: one detection
  threshold, ``default_thresholds``; cached on disk; its time is printed);
* ``infotaxis, Poisson model``: infotaxis with a mismatched model, the closed form of otto's windy
  Poisson plume (``WindyPoissonHits(R_bar=2.5, V_bar=2, tau_bar=150)`` on the row's grid, mean wind
  along +x as in the puff and recorded plumes) with one threshold, 0: any odour read as a hit;
* ``surge-cast``, ``gradient``: the row's task baselines, on the task's own body and sensors;
* ``ppo-gru``: quoted from docs/benchmark.md (trained there; not run here).

The Bayesian searchers need a grid body: on the puff rows ``scenario_for`` replaces the task's
continuous flyer (0.2 cells a step, turns of 30 degrees at most) by ``bodies.Cardinal()`` (one cell a
step), so there they fly another body than surge-cast and gradient: not the same task, and the
table says so. Each cell: the IQM of the steps to the source (a failure counted at the cap) with its
stratified-bootstrap 95 % interval, and the success rate with its Wilson 95 % interval.

Resumable: every cell is written to ``--results`` (JSON, atomically) as soon as it is measured, and
a later run with the same settings reuses it (``--force`` measures again; ``--table-only`` prints
what the file holds). A cell whose run raises (a likelihood that empties a belief) keeps the error,
printed below the table. ``--quick`` runs a tiny
puff plume (24 x 12 cells, a grid body) instead: a check that it runs.
"""

from __future__ import annotations

import argparse
import json
import re
import time
import warnings
from pathlib import Path


__all__ = ["ROWS", "COLUMNS", "QUOTED", "measure", "table", "main"]

ROWS = ("puffs/constant-v0", "puffs/switch-once-v0", "puffs/switch-many-v0", "puffs/sparse-v0",
        "walls/gaussian-baffles-v0", "recorded/synthetic-v0")
BAYESIAN = ("infotaxis", "space-aware", "greedy")
MISMATCHED = "infotaxis, Poisson model"
OWN_BODY = ("surge-cast", "gradient")
COLUMNS = BAYESIAN + (MISMATCHED,) + OWN_BODY + ("ppo-gru",)
# docs/benchmark.md, the ppo-gru column: IQM [95 % interval] (success rate), 1000 episodes
QUOTED = {("walls/gaussian-baffles-v0", "ppo-gru"): "389 [372, 400] (27 %)",
          ("recorded/synthetic-v0", "ppo-gru"): "47 [44, 52] (80 %)"}


def _quick_rows() -> dict:
    """One tiny row (what tests/models/test_likelihoods.py compiles and calibrates: a puff plume on
    24 x 12 cells with a grid body) for ``--quick``."""
    from plume_multi import Scenario
    from plume_multi.models import bodies, plumes, sensors

    puffs = Scenario(grid_size=(24, 12), plume=plumes.Puffs(source=(2.0, 6.0), cell_size=0.25, spin_up_steps=300),
                     action_model=bodies.Cardinal(), sensors=(sensors.Concentration(),), max_steps=30)
    return {"tiny puffs": (puffs, ())}


def _task_rows(names) -> dict:
    """``{task id: (its scenario at the protocol's step cap, its own-body baselines run here)}``."""
    from plume_multi import tasks

    out = {}
    for name in names:
        task = tasks.make(name)
        scenario = task.scenario().replace(max_steps=task.protocol.max_steps)
        out[name] = (scenario, tuple(b for b in OWN_BODY if b in task.baselines))
    return out


def mismatched(scenario):
    """The Poisson closed form on ``scenario``'s grid: otto's windy plume, one threshold at 0."""
    from plume_multi.models.likelihoods import PoissonLikelihood
    from plume_multi.models.plumes import WindyPoissonHits

    w, h = scenario.grid_size
    return PoissonLikelihood(WindyPoissonHits(R_bar=2.5, V_bar=2.0, tau_bar=150.0, grid_size=(w, h),
                                              start=(w - 1, h // 2)), thresholds=(0.0,))


def _calibrate(scenario, worlds: int, steps: int):
    from plume_multi.calibration import calibrate

    return calibrate(scenario, worlds=worlds, steps=steps, progress=False)


def _cell(result) -> dict:
    from plume_multi.tasks.scores import iqm, iqm_interval, steps_of

    steps = steps_of(result)
    low, high, _ = iqm_interval(steps)
    s_low, s_high = result.success_interval()
    return {"iqm": iqm(steps), "iqm_low": low, "iqm_high": high, "success": result.success_rate,
            "success_low": s_low, "success_high": s_high, "episodes": int(result.episodes)}


def _policy(column: str, likelihood):
    from plume_multi.policies import Greedy, Infotaxis

    if column == "infotaxis" or column == MISMATCHED:
        return Infotaxis(likelihood=likelihood)
    if column == "space-aware":
        return Infotaxis(space_aware=True, likelihood=likelihood)
    if column == "greedy":
        return Greedy(likelihood=likelihood)
    return column  # a built-in's name: surge-cast, gradient


def _key(row: str, column: str, episodes: int, max_steps: int, worlds: int, steps: int) -> str:
    cal = f"|calibrated {worlds}x{steps}" if column in BAYESIAN else ""
    return f"{row}|{column}|{episodes} episodes|cap {max_steps}{cal}"


def _save(path: Path, data: dict) -> None:
    from plume_multi.files import writing

    with writing(path, "bayesian_plumes") as f:
        json.dump(data, f, indent=1, sort_keys=True)


def measure(rows: dict, episodes: int, worlds: int, steps: int, results=None, force: bool = False,
            log=print, run: bool = True) -> dict:
    """``{key: cell}`` for every row and column (``_key``), read from ``results`` when there and
    not ``force``, else measured (unless not ``run``: then left out) and written there at once;
    ``"calibration"`` entries hold each row's calibration time and largest standard error."""
    from plume_multi import evaluate
    from plume_multi.errors import PlumeError

    data = {}
    if results is not None and Path(results).is_file() and not force:
        data = json.loads(Path(results).read_text(encoding="utf-8"))
    for row, (scenario, own) in rows.items():
        lik = None
        for column in BAYESIAN + (MISMATCHED,) + own:
            key = _key(row, column, episodes, scenario.max_steps, worlds, steps)
            if key in data or not run:
                continue
            if column in BAYESIAN and lik is None:
                cal = f"{row}|calibration {worlds}x{steps}"
                started = time.perf_counter()
                lik = _calibrate(scenario, worlds, steps)
                if cal not in data:  # the first time: a later one reads the disk cache
                    data[cal] = {"seconds": time.perf_counter() - started, "max_stderr": lik.max_stderr,
                                 "sampled": int(lik.sampled.sum()), "summary": lik.summary()}
            model = mismatched(scenario) if column == MISMATCHED else lik
            started = time.perf_counter()
            try:
                with warnings.catch_warnings():
                    warnings.filterwarnings("ignore", message=".*has no table of moves.*")  # said in the table
                    result = evaluate(_policy(column, model), scenario, episodes, seed=0, progress=False)
                data[key] = {**_cell(result), "seconds": time.perf_counter() - started}
            except PlumeError as exc:  # kept as the cell: a model that cannot follow this plume
                data[key] = {"error": str(exc.__cause__ or exc), "seconds": time.perf_counter() - started}
            log(f"{key}: {data[key]}")
            if results is not None:
                _save(Path(results), data)
    return data


def _fmt(cell: dict) -> str:
    if "error" in cell:
        return "fails (see below)"
    return (f"{cell['iqm']:.0f} [{cell['iqm_low']:.0f}, {cell['iqm_high']:.0f}] "
            f"({100 * cell['success']:.0f} %, {100 * cell['success_low']:.0f}-{100 * cell['success_high']:.0f})")


def table(data: dict, rows: dict, episodes: int, worlds: int, steps: int) -> list:
    """Markdown: one row per scenario, one column per policy, and the body the Bayesian ones fly."""
    lines = ["| task | Bayesian searchers' body | " + " | ".join(COLUMNS) + " |",
             "|---|---|" + "---:|" * len(COLUMNS)]
    for row, (scenario, own) in rows.items():
        task_body = scenario.action_model
        moves = hasattr(task_body, "moves")
        speed = getattr(task_body, "max_speed", None)
        flies = task_body.name + ("" if speed is None else f", {speed:g} cells/step")
        body = f"the task's ({task_body.name})" if moves else f"**Cardinal, 1 cell/step** (task: {flies})"
        cells = []
        runs = BAYESIAN + (MISMATCHED,) + own
        for column in COLUMNS:
            key = _key(row, column, episodes, scenario.max_steps, worlds, steps)
            if key in data:
                cells.append(_fmt(data[key]))
            else:  # "–": the policy cannot act in the task (or was not trained there)
                cells.append("not run" if column in runs else QUOTED.get((row, column), "–"))
        lines.append(f"| {row} | {body} | " + " | ".join(cells) + " |")
    return lines


def failures(data: dict, rows: dict, episodes: int, worlds: int, steps: int) -> list:
    """The cells whose run raised, with the error."""
    out = []
    for row, (scenario, own) in rows.items():
        for column in COLUMNS:
            cell = data.get(_key(row, column, episodes, scenario.max_steps, worlds, steps), {})
            if "error" in cell:
                out.append(f"- {row}, {column}: " + re.sub(r" object at 0x[0-9a-f]+", "", cell["error"]))
    return out


def calibrations(data: dict, rows: dict, worlds: int, steps: int) -> list:
    out = []
    for row in rows:
        cal = data.get(f"{row}|calibration {worlds}x{steps}")
        if cal:
            out.append(f"- {row}: calibrated in {cal['seconds']:.0f} s; {cal['summary']}")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--worlds", type=int, default=32, help="calibration: independent worlds")
    parser.add_argument("--steps", type=int, default=200, help="calibration: sampled steps per world")
    parser.add_argument("--rows", nargs="+", default=list(ROWS), choices=ROWS)
    parser.add_argument("--results", default=None, help="JSON file of the cells (resumable)")
    parser.add_argument("--force", action="store_true", help="measure again the cells --results holds")
    parser.add_argument("--table-only", action="store_true", help="print the cells --results holds, run nothing")
    parser.add_argument("--quick", action="store_true", help="a tiny puff plume: checks that the table still runs")
    args = parser.parse_args(argv)
    if args.episodes < 2 or args.worlds < 2 or args.steps < 1:
        parser.error("--episodes and --worlds must be >= 2, --steps >= 1")
    if args.quick:
        rows, episodes, worlds, steps = _quick_rows(), 2, 32, 200  # the calibration the tests already cache
    else:
        rows, episodes, worlds, steps = _task_rows(args.rows), args.episodes, args.worlds, args.steps
    started = time.perf_counter()
    data = measure(rows, episodes, worlds, steps, args.results, args.force, log=(lambda *_: None) if args.quick else print,
                   run=not args.table_only)
    print(f"## Steps to the source, {episodes} episodes per cell (seeds 0..{episodes - 1}, the same for every column), "
          "IQM [95 % interval] (success rate, Wilson 95 % interval); each row at its task's step cap\n")
    for line in table(data, rows, episodes, worlds, steps):
        print(line)
    failed = failures(data, rows, episodes, worlds, steps)
    if failed:
        print("\nFailed cells:")
        for line in failed:
            print(line)
    print(f"\nCalibrations ({worlds} worlds x {steps} steps, one threshold):")
    for line in calibrations(data, rows, worlds, steps):
        print(line)
    print(f"\n({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
