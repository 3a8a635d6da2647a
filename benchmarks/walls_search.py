#!/usr/bin/env python
"""How reliably the belief searchers find a source among walls, beside the same search without them.

    python benchmarks/walls_search.py [--quick] [--episodes 1000] [--seed 0] [--policies ...] [--geometries ...]

A Poisson-hit search (``PoissonHits(1.0, 2.0)``: 19 x 19 cells, the source fixed, every searcher
starting on the centre ``(9, 9)``, as ``run_search`` starts them) on three geometries where a free
path leads from the start to the source:

* ``wall``: one wall nine cells long between the start and the source ``(9, 17)``;
* ``corridor``: a corridor three cells wide across the grid (everything else solid), the source
  ``(17, 9)`` at its end;
* ``U``: a cup around the start, open downward, the source ``(9, 16)`` above its bottom: the way out
  leads away from the source.

Each row: ``evaluate`` of a policy (``Infotaxis``, space-aware, ``Greedy``, a team of two infotaxis
searchers sharing one belief, a random walk) for ``--episodes`` episodes of at most ``--max-steps``
steps, with the walls and without them (the same start and source in open space): the success
rate with its 95 % interval (Wilson's) and the mean steps of the episodes that found the source
(± 1.96 standard errors). Nothing here is timed.
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

__all__ = ["GEOMETRIES", "POLICIES", "scenario", "measure", "wilson", "main"]

SIDE = 19


START = (9, 9)  # the plume's start (the centre), where run_search starts its searchers too


def _wall() -> tuple:
    mask = np.zeros((SIDE, SIDE), bool)
    mask[13, 5:14] = True
    return START, (9, 17), mask


def _corridor() -> tuple:
    mask = np.ones((SIDE, SIDE), bool)
    mask[8:11, :] = False
    return START, (17, 9), mask


def _cup() -> tuple:
    mask = np.zeros((SIDE, SIDE), bool)
    mask[12, 6:13] = True  # the bottom of the cup, between the start and the source
    mask[6:13, 6] = True
    mask[6:13, 12] = True
    return START, (9, 16), mask


# name -> (start (x, y), source (x, y), mask (H, W) indexed [y, x])
GEOMETRIES = {"wall": _wall, "corridor": _corridor, "U": _cup}


def _policies():
    from plume_multi.policies import Greedy, Infotaxis, RandomPolicy

    return {"infotaxis": (1, lambda: Infotaxis()),
            "space-aware infotaxis": (1, lambda: Infotaxis(space_aware=True)),
            "greedy": (1, lambda: Greedy()),
            "2 infotaxis, one belief": (2, lambda: Infotaxis()),
            "random walk": (1, lambda: RandomPolicy(4, seed=0))}


POLICIES = ("infotaxis", "space-aware infotaxis", "greedy", "2 infotaxis, one belief", "random walk")


def scenario(geometry: str, walled: bool, n_agents: int = 1, max_steps: int = 300):
    """The ``Scenario`` of a geometry, with its walls or without them."""
    from plume_multi import Scenario
    from plume_multi.models.plumes import PoissonHits
    from plume_multi.models.sensors import Belief, Hits

    start, source, mask = GEOMETRIES[geometry]()
    plume = PoissonHits(1.0, 2.0, grid_size=SIDE, source=source)
    return Scenario(plume=plume, n_agents=n_agents, team=True, max_steps=max_steps,
                    start_positions=(start,) * n_agents, sensors=(Hits(), Belief()),
                    walls=mask if walled else None)


def wilson(k: int, n: int, z: float = 1.96) -> tuple:
    """Wilson's interval of a success rate ``k / n``."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def measure(geometry: str, policy: str, walled: bool, episodes: int, seed: int = 0, max_steps: int = 300) -> dict:
    """One row: ``evaluate`` of ``policy`` on ``geometry`` (with or without its walls)."""
    from plume_multi import evaluate

    n_agents, make = _policies()[policy]
    res = evaluate(make(), scenario(geometry, walled, n_agents, max_steps), episodes, seed, progress=False)
    found = np.asarray(res.success)
    steps = res.search_time[found]
    k = int(found.sum())
    return {"geometry": geometry, "policy": policy, "walls": walled, "episodes": episodes, "found": k,
            "interval": wilson(k, episodes), "mean_steps": float(steps.mean()) if k else math.nan,
            "steps_ci": float(1.96 * steps.std(ddof=1) / math.sqrt(k)) if k > 1 else math.nan}


def format_table(rows: list) -> str:
    lines = ["| geometry | policy | walls | episodes | found | 95 % interval | mean steps (found) |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lo, hi = r["interval"]
        steps = "—" if math.isnan(r["mean_steps"]) else f"{r['mean_steps']:.1f} ± {r['steps_ci']:.1f}"
        lines.append(f"| {r['geometry']} | {r['policy']} | {'yes' if r['walls'] else 'no'} | {r['episodes']} | "
                     f"{r['found'] / r['episodes']:.1%} | {lo:.1%}–{hi:.1%} | {steps} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--max-steps", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--policies", nargs="+", default=list(POLICIES), choices=list(POLICIES))
    parser.add_argument("--geometries", nargs="+", default=list(GEOMETRIES), choices=list(GEOMETRIES))
    parser.add_argument("--quick", action="store_true", help="a tiny run (the tests)")
    args = parser.parse_args(argv)
    if args.quick:
        args.episodes, args.max_steps, args.policies, args.geometries = 4, 40, ["greedy"], ["wall"]
    rows = []
    for geometry in args.geometries:
        for policy in args.policies:
            for walled in (True, False):
                rows.append(measure(geometry, policy, walled, args.episodes, args.seed, args.max_steps))
                print(format_table(rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
    print(f"# Poisson-hit search among walls: {SIDE} x {SIDE}, PoissonHits(1.0, 2.0), fixed source; "
          f"{args.episodes} episodes of at most {args.max_steps} steps per row")
    print(format_table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
