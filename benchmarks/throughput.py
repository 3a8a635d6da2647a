#!/usr/bin/env python
"""Every benchmark table of plume_multi in one run: the engine, then each front-end.

    python benchmarks/throughput.py [--quick] [--only engine,models,single_agent,pettingzoo_api,vector]

* engine: ``Simulator.step`` at N·B in {1, 64, 4096, 65536, 1048576} beside a vectorized NumPy
  step doing the same work, reset cost, bytes of state per agent, peak RSS (``plume_multi.cli.bench``).
* models: each model family (oriented + antennae + wind, continuous, movie, random source) beside
  a vectorized NumPy step doing the same work (``benchmarks/models.py``).
* single_agent: ``PlumeSearchEnv.step`` on the default grid beside ``Simulator.step`` at N·B = 1.
* pettingzoo_api: ``parallel_env().step`` at N in {8, 64, 1024} beside ``Simulator.step``, and
  PettingZoo's ``performance_benchmark``.
* vector: ``vector_env(num_envs=4096).step`` beside Gymnasium's ``SyncVectorEnv`` of 16
  ``PlumeSearchEnv`` copies.

Figures are medians of interleaved rounds in one process; quote ratios from one run, since
absolute rates on a shared machine move with its load.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

TABLES = ("engine", "models", "single_agent", "pettingzoo_api", "vector")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: checks that every table still runs")
    parser.add_argument("--only", default=",".join(TABLES), help=f"comma-separated subset of {','.join(TABLES)}")
    args = parser.parse_args(argv)
    chosen = [t.strip() for t in args.only.split(",") if t.strip()]
    unknown = sorted(set(chosen) - set(TABLES))
    if unknown:
        parser.error(f"--only: unknown table(s) {unknown}; expected some of {list(TABLES)}")
    extra = ["--quick"] if args.quick else []
    for name in chosen:
        start = time.perf_counter()
        print(f"\n## {name}\n", flush=True)
        if name == "engine":
            from plume_multi.cli.bench import main as engine_main

            engine_main(extra)
        else:
            importlib.import_module(name).main(extra)
        print(f"\n({name}: {time.perf_counter() - start:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
