#!/usr/bin/env python
"""Agent-steps per second of the default scenario among walls, beside the same scenario without
walls and a vectorized NumPy step doing the same work.

    python benchmarks/walls.py [--quick] [--repeats 5] [--masks 4]

Rows: the default scenario (``Scenario()``: 128 x 128 Gaussian, ``Cardinal``, ``Concentration`` +
``Position``) at B*N = 4,096 and 65,536 (one agent per world) and 1,024 worlds x 64 agents,
without walls and with ``walls=`` a maze of rooms 24 cells wide (``maze``: 6 % of the cells solid; ``--masks K``:
K such mazes, each world drawing one per episode). Each row times ``Simulator.step`` on one thread
and on Numba's default thread count, and ``NumpyModels.step`` (``benchmarks/models.py``: moves
into a solid cell refused, start cells drawn again while solid), interleaved in one process;
the last column is the walls row's one-thread rate over the row without walls of the same size
(medians of the per-round ratios; the two rows of a size take their rounds in turn).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from models import NumpyModels, _actions, markdown_table, rate_cells, rate_header  # noqa: E402
from plume_multi import Scenario, Simulator  # noqa: E402
from plume_multi.cli.bench import _rate  # noqa: E402

__all__ = ["maze", "ROWS", "measure", "format_table", "main"]


def maze(side: int = 128, room: int = 24, seed: int = 0) -> np.ndarray:
    """``(side, side)`` bool: walls one cell thick every ``room`` cells, a door of ``room // 4``
    cells at a drawn place in each wall of each room, the centre (the default source) free."""
    rng = np.random.default_rng(seed)
    mask = np.zeros((side, side), bool)
    door = max(1, room // 4)
    for k in range(room, side, room):
        mask[k, :] = True
        mask[:, k] = True
    for k in range(room, side, room):
        for lo in range(0, side, room):
            for line in (mask[k], mask[:, k]):
                start = lo + 1 + int(rng.integers(0, max(1, room - door - 1)))
                line[start:start + door] = False
    mask[side // 2, side // 2] = False
    return mask


def ROWS(quick: bool = False) -> list:
    """``(walls?, num_worlds, n_agents)`` of every row, each shape without walls then with them."""
    shapes = [(16, 1), (64, 1), (4, 16)] if quick else [(4096, 1), (65536, 1), (1024, 64)]
    return [(walled, B, N) for B, N in shapes for walled in (False, True)]


def _scenario(walled: bool, n_agents: int, side: int, masks: int) -> Scenario:
    walls = [maze(side, max(3, side * 3 // 16), seed=k) for k in range(masks)] if walled else None
    return Scenario(grid_size=(side, side), n_agents=n_agents, walls=walls)


def measure(quick: bool = False, repeats: int = 5, min_seconds: float = 0.1, masks: int = 1, threads: bool = True,
            one_agent_only: bool = False, progress=None) -> list[dict]:
    """One dict per row: medians of agent-steps/s (1 thread, default threads, NumPy), the ratio to
    NumPy, and for walls rows the ratio to the same row without walls. The two rows of a shape are
    timed round by round in turn (the machine's load changes both alike). ``one_agent_only``: skip
    the rows of several agents per world (each is a compiled combination of its own)."""
    default_threads = numba.config.NUMBA_NUM_THREADS
    side = 16 if quick else 128
    out = []
    rows = [r for r in ROWS(quick) if not (one_agent_only and r[2] > 1)]
    for k in range(0, len(rows), 2):
        pair = []
        for walled, B, N in rows[k:k + 2]:
            sc = _scenario(walled, N, side, masks)
            serial = Simulator(sc, B, parallel=False)
            threaded = Simulator(sc, B, parallel=True) if threads and default_threads > 1 and B > 1 else None
            for sim in filter(None, (serial, threaded)):
                sim.reset(seed=0)
            pair.append(dict(walled=walled, B=B, N=N, serial=serial, threaded=threaded, ref=NumpyModels(serial),
                             acts=_actions(serial, np.random.default_rng(k // 2)),
                             rounds={"serial": [], "threaded": [], "numpy": []}))
        for _ in range(repeats):
            for p in pair:
                agents, rounds = p["B"] * p["N"], p["rounds"]
                numba.set_num_threads(1)
                rounds["serial"].append(_rate(p["serial"].step, p["acts"], agents, min_seconds))
                numba.set_num_threads(default_threads)
                if p["threaded"] is not None:
                    rounds["threaded"].append(_rate(p["threaded"].step, p["acts"], agents, min_seconds))
                rounds["numpy"].append(_rate(p["ref"].step, p["acts"], agents, min_seconds))
        for p in pair:
            rounds = p["rounds"]
            out.append({"walls": p["walled"], "masks": masks if p["walled"] else 0, "num_worlds": p["B"],
                        "n_agents": p["N"], "threads": default_threads, "serial": statistics.median(rounds["serial"]),
                        "threaded": statistics.median(rounds["threaded"]) if rounds["threaded"] else None,
                        "numpy": statistics.median(rounds["numpy"]),
                        "ratio": statistics.median(s / n for s, n in zip(rounds["serial"], rounds["numpy"])),
                        "rounds": rounds["serial"], "vs_no_walls": None})
        plain, walled = out[-2], out[-1]
        walled["vs_no_walls"] = statistics.median(w / p for w, p in zip(walled["rounds"], plain["rounds"]))
        if progress:
            progress(len(out))
    return out


def format_table(rows) -> str:
    def name(r):
        return "default" if not r["walls"] else f"default + walls ({r['masks']} mask{'s' if r['masks'] > 1 else ''})"

    return markdown_table(["scenario", *rate_header(rows), "ratio to NumPy (1 thread)", "walls / no walls (1 thread)"],
                          [[name(r), *rate_cells(r), f"{r['ratio']:.1f}x",
                            f"{r['vs_no_walls']:.2f}" if r["vs_no_walls"] is not None else "-"] for r in rows])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes and short rounds (a smoke test)")
    parser.add_argument("--repeats", type=int, default=5, help="interleaved rounds per row (default 5)")
    parser.add_argument("--masks", type=int, default=1, help="wall masks each world draws from (default 1)")
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.masks < 1:
        parser.error("--repeats and --masks: expected integers >= 1")
    repeats = 2 if args.quick else args.repeats
    print(f"Agent-steps/s of the default scenario with and without walls, Simulator.step beside a vectorized "
          f"NumPy step (same work), medians of {repeats} interleaved rounds; {os.cpu_count()} CPUs, Numba "
          f"{numba.__version__}, NumPy {np.__version__}, {numba.config.NUMBA_NUM_THREADS} Numba threads by default")
    rows = measure(args.quick, repeats, 0.01 if args.quick else 0.1, masks=args.masks)
    print(format_table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
