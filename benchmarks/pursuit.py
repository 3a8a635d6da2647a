#!/usr/bin/env python
"""Olfactory pursuit: infotaxis against the greedy searcher after a target that runs and tumbles.

    python benchmarks/pursuit.py [--episodes 2000] [--speed 0.5] [--steps 300] [--seed 0] [--quick]

The Poisson-hit search of ``scenarios.poisson_search(1.0, 2.0)`` (19 x 19 cells, one searcher
starting at the centre, a first hit, the target drawn from its belief) with a target that moves on
cells, ``sources.RandomWalk(speed, persistence)``: one cell along its heading with probability
``speed`` per step, a new cardinal heading with probability ``1 / persistence`` (runs of
``persistence`` steps on average). The belief predicts the target's motion before each update (the
walk with no memory: exact at ``persistence=1``) and both searchers decide on it one step ahead:
``policies.Infotaxis`` (the move that most reduces the expected entropy) and ``policies.Greedy``
(towards the most likely cell). Success: standing on the target within ``--steps``; time: the
mean steps of those that caught it, with its 95 % interval.
"""

from __future__ import annotations

import argparse

import numpy as np

from plume_multi import Simulator, sources
from plume_multi.policies import Greedy, Infotaxis
from plume_multi.scenarios import poisson_search

PERSISTENCES = (1.0, 3.0, 10.0, 30.0, 100.0)


def pursue(policy, persistence: float, speed: float, episodes: int, steps: int, seed: int):
    """``(caught fraction, mean steps of the caught, half-width of its 95 % interval)``."""
    sc = poisson_search(1.0, 2.0, max_steps=steps,
                        source_motion=sources.RandomWalk(speed=speed, persistence=persistence))
    sim = Simulator(sc, num_worlds=episodes, autoreset="disabled")
    sim.reset(seed=seed)
    caught_at = np.full(episodes, -1)
    for t in range(1, steps + 1):
        _, reward, terminated, truncated = sim.step(policy.act(sim))
        caught_at[(caught_at < 0) & (reward > 0)] = t
        if (terminated | truncated).all():
            break
    caught = caught_at[caught_at > 0]
    if not caught.size:
        return 0.0, float("nan"), float("nan")
    half = 1.96 * caught.std(ddof=1) / np.sqrt(caught.size) if caught.size > 1 else float("nan")
    return caught.size / episodes, caught.mean(), half


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--speed", type=float, default=0.5, help="the target's moves per step (<= 1)")
    parser.add_argument("--steps", type=int, default=300, help="step cap")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="a tiny run (for the tests)")
    args = parser.parse_args(argv)
    persistences = PERSISTENCES
    if args.quick:
        args.episodes, args.steps, persistences = 4, 10, (1.0, 30.0)
    from tqdm import tqdm

    rows = []
    for persistence in tqdm(persistences, desc="persistence", disable=None):
        row = [persistence]
        for policy in (Infotaxis(), Greedy()):
            row += pursue(policy, persistence, args.speed, args.episodes, args.steps, args.seed)
        rows.append(row)
    print(f"{args.episodes} episodes per cell, 19 x 19 cells, target speed {args.speed:g} cells per step, "
          f"step cap {args.steps}, seed {args.seed}\n")
    print("| persistence (steps) | infotaxis caught | infotaxis mean steps | greedy caught | greedy mean steps |")
    print("|---:|---:|---:|---:|---:|")
    for p, f1, m1, h1, f2, m2, h2 in rows:
        print(f"| {p:g} | {f1:.1%} | {m1:.1f} ± {h1:.1f} | {f2:.1%} | {m2:.1f} ± {h2:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
