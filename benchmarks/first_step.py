#!/usr/bin/env python
"""Latency from a new combination of models to its first step: compile and cache costs.

    python benchmarks/first_step.py [--repeats 1] [--rows NAME ...] [--import-repeats 7] [--json out.json]

First, the import alone: ``import plume_multi`` beside ``import numpy, numba`` (what any Numba
package pays), each in a fresh child, in turn (A B A B ..., after one of each not counted), CPU
seconds of the import statement (``time.process_time()``); the table gives the medians and the
median of the pairwise ratios. ``--import-repeats 0`` leaves it out; ``--rows`` with no name runs
it alone.

Then every figure comes from a fresh child process (``sys.executable``), which measures:

* ``import plume_multi``: CPU seconds (``time.process_time()``, every thread of the process; Numba
  compiles in the calling thread) and wall seconds;
* from just before ``Simulator(scenario, num_worlds=16)`` to the end of the first
  ``step(actions)``, ``reset(seed=0)`` included: CPU and wall seconds (also split into the
  constructor, the reset and the step, in the JSON output).

Cold rows run with empty, new cache folders: ``PLUME_MULTI_CACHE_DIR`` and ``NUMBA_CACHE_DIR``
each point at a new temporary folder, so every kernel the combination needs is compiled.

1. ``default``: ``Scenario()``, one agent per world;
2. ``default, 4 agents``: ``Scenario(n_agents=4)``;
3. ``oriented + antennae + wind + heading``: ``plumes.Gaussian(wind=(1, 0))``, ``Oriented(45)``,
   ``Antennae``, ``Wind``, ``Heading``, ``StepPenalty`` (the row of ``benchmarks/models.py``);
4. ``poisson team + belief``: ``scenarios.poisson_search(1.0, 2.0, n_agents=4, team=True)``,
   sensors ``Hits`` + ``Belief`` (the infotaxis team of the Turbulent search page);
5. ``puffs + continuous + antennae + wind``: the surge-and-cast scenario of docs/moving-sources.md (no spin-up);
6. ``3-D default``: ``Scenario(grid_size=(64, 64, 64))`` (Gaussian, ``Cardinal`` with six moves,
   ``Concentration`` + ``Position``), one agent per world;
7. ``puffs among walls``: the scene of tests/models/sources/test_walls_scene.py (a 32 x 16 grid with
   three walls, a puff plume of two sources that walk at random, a wind that switches, two agents
   per world; ``Cardinal``, ``Concentration`` + ``Position``).

Warm rows (``warm: ...``) measure what a change of numbers costs once a related combination is
cached. One cache (both folders) is filled first by a child that runs ``Scenario(n_agents=4)`` (the
fill is reported as the row ``warm: fill``); each warm row then runs in a fresh child on its own
copy of that filled cache (``shutil.copytree`` keeps file times, which Numba's index checks), so
rows do not depend on each other or on their order. ``warm: same combination`` repeats the fill's
scenario: the floor (loading from the cache), and a check that the copies are valid caches.

Actions are zeros (int64; float32 ``(speed, turn)`` pairs for the continuous body). Only the
public API is used (``Scenario``, ``Simulator``, the model families, ``scenarios``), so the script
measures any version of the package: it reports which ``plume_multi`` the children imported (to
measure another checkout, put it first on ``PYTHONPATH``; children run in a temporary working
folder, so the current folder never shadows it). With ``--repeats R`` every row runs R times (each
in a new child, with new folders) and the table gives medians; the JSON output holds every sample.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

NUM_WORLDS = 16

# What a child runs: the scenarios are built from the public API. ``bodies`` is the new name of
# the ``actions`` family; either works.
_SCENARIOS = {
    "default": "Scenario()",
    "default, 4 agents": "Scenario(n_agents=4)",
    "oriented + antennae + wind + heading": (
        "Scenario(plume=plumes.Gaussian(wind=(1.0, 0.0)), action_model=bodies.Oriented(turn_degrees=45),"
        " sensors=(sensors.Antennae(), sensors.Wind(), sensors.Heading()), reward=rewards.StepPenalty())"),
    "poisson team + belief": (
        "plume_multi.scenarios.poisson_search(1.0, 2.0, n_agents=4, team=True,"
        " sensors=(sensors.Hits(), sensors.Belief()))"),
    "puffs + continuous + antennae + wind": (
        "Scenario(grid_size=(200, 100), plume=plumes.Puffs(source=(10, 50)),"
        " action_model=bodies.Continuous(max_speed=0.2, max_turn_degrees=30),"
        " sensors=(sensors.Antennae(angles=(30, -30)), sensors.Wind()), n_agents=8, max_steps=2000,"
        " goal_radius=4.0, start_region=((60, 35), (110, 65)))"),
    "3-D default": "Scenario(grid_size=(64, 64, 64))",
    "puffs among walls": "puffs_among_walls()",
    # warm rows: one number changed from the fill's Scenario(n_agents=4)
    "warm: fill": "Scenario(n_agents=4)",
    "warm: same combination": "Scenario(n_agents=4)",
    "warm: n_agents 4 -> 8": "Scenario(n_agents=8)",
    "warm: grid size 128x128 -> 96x64": "Scenario(n_agents=4, grid_size=(96, 64))",
    "warm: max_steps 1000 -> 500": "Scenario(n_agents=4, max_steps=500)",
    "warm: Gaussian sigma 12 -> 8": "Scenario(n_agents=4, plume=plumes.Gaussian(sigma=8.0))",
    "warm: n_agents 4 -> 1": "Scenario(n_agents=1)",
}
CONTINUOUS = {"puffs + continuous + antennae + wind"}
COLD_ROWS = [name for name in _SCENARIOS if not name.startswith("warm:")]
WARM_ROWS = [name for name in _SCENARIOS if name.startswith("warm:") and name != "warm: fill"]
FILL_ROW = "warm: fill"

# the scene of tests/models/sources/test_walls_scene.py
_PUFFS_AMONG_WALLS = r"""
def puffs_among_walls():
    from plume_multi import sources
    walls = np.zeros((16, 32), bool)
    walls[2:14, 7] = True
    walls[:10, 16] = True
    walls[6, 22:28] = True
    plume = plumes.Puffs(source=[(4, 4), (4, 11)], region=((0.0, 16.0), (0.0, 8.0)),
                         source_motion=sources.RandomWalk(speed=0.6, persistence=4.0),
                         wind=plumes.Wind(u=3.0, regime="switch-many", switch_every=0.1, switch_jitter=0.02,
                                          grid=(5, 5)),
                         puff_release_rate=100.0, puff_init_rad=0.3, puff_spread_rate=0.02, conc_scale=0.05,
                         init_num_puffs=5, max_num_puffs=200)
    return Scenario(n_agents=2, max_steps=500, grid_size=(32, 16), plume=plume, walls=walls, goal_radius=0.5)
"""

_CHILD = r"""
import json, sys, time
c0, w0 = time.process_time(), time.perf_counter()
import plume_multi
c1, w1 = time.process_time(), time.perf_counter()
import numpy as np
import plume_multi.scenarios
from plume_multi import Scenario, Simulator, plumes, sensors, rewards
bodies = getattr(plume_multi, "bodies", None) or plume_multi.actions
{setup}
scenario = {scenario}
continuous = {continuous}
c2, w2 = time.process_time(), time.perf_counter()
sim = Simulator(scenario, {num_worlds})
c3, w3 = time.process_time(), time.perf_counter()
sim.reset(seed=0)
c4, w4 = time.process_time(), time.perf_counter()
n = sim.num_agents
actions = np.zeros((n, 2), np.float32) if continuous else np.zeros(n, np.int64)
sim.step(actions)
c5, w5 = time.process_time(), time.perf_counter()
print("RESULT " + json.dumps({{
    "file": plume_multi.__file__, "num_agents": int(n),
    "import_cpu": c1 - c0, "import_wall": w1 - w0,
    "first_step_cpu": c5 - c2, "first_step_wall": w5 - w2,
    "construct_cpu": c3 - c2, "reset_cpu": c4 - c3, "step_cpu": c5 - c4,
}}))
"""


_IMPORT_CHILD = r"""
import json, time
c0, w0 = time.process_time(), time.perf_counter()
import {modules}
c1, w1 = time.process_time(), time.perf_counter()
print("RESULT " + json.dumps({{"cpu": c1 - c0, "wall": w1 - w0}}))
"""
IMPORTS = {"import plume_multi": "plume_multi", "import numpy, numba": "numpy, numba"}


def _import_child(modules: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="first_step-cwd-") as cwd:
        proc = subprocess.run([sys.executable, "-c", _IMPORT_CHILD.format(modules=modules)], cwd=cwd,
                              capture_output=True, text=True)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"import {modules}: the child failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def measure_import(repeats: int) -> dict:
    """``{"import plume_multi": [sample, ...], "import numpy, numba": [...]}``, the two in turn
    (after one of each not counted: the first reads the files from disk)."""
    samples: dict = {name: [] for name in IMPORTS}
    for k in range(repeats + 1):
        for name, modules in IMPORTS.items():
            result = _import_child(modules)
            if k:
                samples[name].append(result)
    return samples


def format_import_table(samples: dict) -> str:
    ours, yardstick = samples["import plume_multi"], samples["import numpy, numba"]
    ratio = _median(a["cpu"] / b["cpu"] for a, b in zip(ours, yardstick))
    return "\n".join(["| import | CPU s | wall s | CPU vs `import numpy, numba` |", "|---|---:|---:|---:|",
                      *(f"| `{name}` | {_median(r['cpu'] for r in runs):.3f} | {_median(r['wall'] for r in runs):.3f} "
                        f"| {ratio if name == 'import plume_multi' else 1.0:.2f}x |" for name, runs in samples.items())])


def _run_child(row: str, cache_root: str) -> dict:
    """One measurement of ``row`` in a new process whose caches live under ``cache_root``."""
    env = dict(os.environ)
    env["PLUME_MULTI_CACHE_DIR"] = os.path.join(cache_root, "plume_multi")
    env["NUMBA_CACHE_DIR"] = os.path.join(cache_root, "numba")
    os.makedirs(env["PLUME_MULTI_CACHE_DIR"], exist_ok=True)
    os.makedirs(env["NUMBA_CACHE_DIR"], exist_ok=True)
    code = _CHILD.format(scenario=_SCENARIOS[row], continuous=row in CONTINUOUS, num_worlds=NUM_WORLDS,
                         setup=_PUFFS_AMONG_WALLS)
    with tempfile.TemporaryDirectory(prefix="first_step-cwd-") as cwd:
        proc = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"row {row!r}: the child failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def measure(rows: list[str], repeats: int = 1, report=None) -> dict:
    """``{row: [sample, ...]}`` for the rows asked for (warm rows bring their fill with them)."""
    samples: dict = {}
    warm = [row for row in rows if row in WARM_ROWS]
    order = [row for row in rows if row in COLD_ROWS] + ([FILL_ROW] if warm or FILL_ROW in rows else []) + warm
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="first_step-") as tmp:
            filled = None
            for k, row in enumerate(order):
                root = os.path.join(tmp, f"row{k}")
                if row in WARM_ROWS:
                    shutil.copytree(filled, root)
                result = _run_child(row, root)
                if row == FILL_ROW:
                    filled = root
                samples.setdefault(row, []).append(result)
                if report:
                    report(row, result)
    return samples


def _median(values):
    return statistics.median(values)


def format_table(samples: dict) -> str:
    lines = ["| row | import CPU s | Simulator()->first step CPU s | wall s |", "|---|---:|---:|---:|"]
    for row, runs in samples.items():
        lines.append(f"| {row} | {_median(r['import_cpu'] for r in runs):.2f} "
                     f"| {_median(r['first_step_cpu'] for r in runs):.2f} "
                     f"| {_median(r['first_step_wall'] for r in runs):.2f} |")
    return "\n".join(lines)


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def main(argv=None) -> int:
    names = COLD_ROWS + [FILL_ROW] + WARM_ROWS
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=1, help="children per row (new caches each); medians")
    parser.add_argument("--import-repeats", type=int, default=7, metavar="R",
                        help="children per import statement (default 7; 0: no import table)")
    parser.add_argument("--rows", nargs="*", metavar="NAME", choices=names,
                        help="rows to run (default all): " + "; ".join(repr(n) for n in names))
    parser.add_argument("--json", metavar="PATH", help="also write every sample to this JSON file")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats: got {args.repeats}; expected >= 1")
    if args.import_repeats < 0:
        parser.error(f"--import-repeats: got {args.import_repeats}; expected >= 0")
    rows = names if args.rows is None else args.rows

    load_before = _load()
    start = time.perf_counter()
    print(f"Simulator(scenario, {NUM_WORLDS}) -> first step, each in a fresh process ({sys.executable}); "
          f"{args.repeats} run(s) per row, medians; {os.cpu_count()} CPUs; load average {load_before}")

    def report(row, r):
        print(f"  {row}: import {r['import_cpu']:.2f} s CPU; Simulator() {r['construct_cpu']:.2f} + reset "
              f"{r['reset_cpu']:.2f} + step {r['step_cpu']:.2f} = {r['first_step_cpu']:.2f} s CPU, "
              f"{r['first_step_wall']:.2f} s wall", flush=True)

    imports = measure_import(args.import_repeats) if args.import_repeats else {}
    samples = measure(rows, args.repeats, report)
    files = sorted({r["file"] for runs in samples.values() for r in runs})
    load_after = _load()
    print(f"\nplume_multi from {', '.join(files) or 'the first on sys.path'}; load average after: {load_after}; "
          f"{time.perf_counter() - start:.0f} s in all\n")
    if imports:
        print(format_import_table(imports) + "\n")
    if samples:
        print(format_table(samples))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"python": sys.version, "platform": platform.platform(), "cpus": os.cpu_count(),
                       "num_worlds": NUM_WORLDS, "repeats": args.repeats, "plume_multi": files,
                       "load_before": load_before, "load_after": load_after, "imports": imports,
                       "scenarios": {row: _SCENARIOS[row] for row in samples}, "samples": samples}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
