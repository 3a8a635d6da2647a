#!/usr/bin/env python
"""Surge-and-cast searchers in the four plume regimes of Singh et al. (2023): success and time.

    python benchmarks/wind_regimes.py [--worlds 64] [--agents 8] [--steps 2000] [--seed 0] [--quick]

The puff plume of ``examples/surge_cast.py`` (pompy's default plume on a 200 x 100 grid, cells of
0.25, dt 0.01, 30 s of spin-up before each episode; searchers with a heading, two antennae and a
wind sensor start 12-25 length units downwind) with ``plumes.Wind(regime=...)``: ``constant``,
``switch-once`` (a 45-degree turn 0-30 s before the episode starts, since it comes 0-30 s after
the reset), ``switch-many`` (a new direction every 3 +- 0.3 s), ``sparse`` (0.4 x the puffs).
Each regime runs the surge-and-cast rule (``policies.SurgeCast`` when the package has it, else the
rule of ``examples/surge_cast.py``; the output says which) and the example's random flight, on the
same seeds.
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

import numpy as np

from plume_multi import Scenario, Simulator, bodies, plumes, sensors
from plume_multi.models.plumes.puffs.regimes import REGIMES

ROOT = Path(__file__).resolve().parents[1]
MAX_SPEED, MAX_TURN = 0.2, 30.0  # the example's: cells per step (5 x the mean wind), degrees per step


def scenario(regime: str, n_agents: int, max_steps: int, spin_up: int = 3000) -> Scenario:
    return Scenario(
        grid_size=(200, 100), plume=plumes.Puffs(source=(10, 50), wind=plumes.Wind(regime=regime),
                                                 spin_up_steps=spin_up),
        action_model=bodies.Continuous(max_speed=MAX_SPEED, max_turn_degrees=MAX_TURN),
        sensors=(sensors.Concentration(), sensors.Antennae(angles=(30.0, -30.0), distance=1.0), sensors.Wind()),
        n_agents=n_agents, max_steps=max_steps, goal_radius=4.0, start_region=((60, 35), (110, 65)))


def _example():
    """``examples/surge_cast.py`` as a module (its random flight, and its rule when the package has none)."""
    spec = importlib.util.spec_from_file_location("surge_cast_example", ROOT / "examples" / "surge_cast.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    return example


def surge_cast(sc: Scenario, n: int, seed: int):
    """``(policy, where it comes from)``: the library's SurgeCast, else the example's rule."""
    try:
        from plume_multi.policies import SurgeCast

        return SurgeCast(sc, seed=seed), "policies.SurgeCast"
    except ImportError:
        return _example().SurgeCast(n, seed=seed), "the rule of examples/surge_cast.py"


def run(regime: str, policy_name: str, worlds: int, agents: int, steps: int, seed: int, spin_up: int):
    """``(fraction that found the source, mean steps of those that did, policy's origin)``."""
    sc = scenario(regime, agents, steps, spin_up)
    sim = Simulator(sc, num_worlds=worlds, autoreset="disabled")
    obs = sim.reset(seed=seed)
    if policy_name == "surge-cast":
        policy, origin = surge_cast(sc, sim.total_agents, seed)
    else:
        policy, origin = _example().RandomFlight(sim.total_agents, seed), "random"
    found_at = np.full(sim.total_agents, -1)
    for t in range(steps):
        obs, reward, terminated, truncated = sim.step(policy(obs))
        found_at[(found_at < 0) & (reward > 0)] = t + 1
        if truncated.all() or terminated.all():
            break
    found = found_at >= 0
    return found.mean(), (found_at[found].mean() if found.any() else float("nan")), origin


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", type=int, default=64)
    parser.add_argument("--agents", type=int, default=8)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--spin-up", type=int, default=3000, help="plume steps before each episode")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="a tiny run (for the tests)")
    args = parser.parse_args(argv)
    if args.quick:
        args.worlds, args.agents, args.steps, args.spin_up = 2, 2, 20, 20
    from tqdm import tqdm

    rows, origin = [], None
    with tqdm(total=2 * len(REGIMES), desc="regimes", disable=None) as bar:
        for regime in REGIMES:
            surge = run(regime, "surge-cast", args.worlds, args.agents, args.steps, args.seed, args.spin_up)
            bar.update()
            flight = run(regime, "random flight", args.worlds, args.agents, args.steps, args.seed, args.spin_up)
            bar.update()
            origin = surge[2]
            rows.append((regime, surge[0], surge[1], flight[0]))
    print(f"{args.worlds} worlds x {args.agents} searchers per regime, {args.steps} steps after {args.spin_up} "
          f"of spin-up; surge-and-cast: {origin}\n")
    print("| regime | surge-and-cast found the source | mean steps (found) | random flight found the source |")
    print("|---|---:|---:|---:|")
    for regime, found, mean_steps, random_found in rows:
        print(f"| {regime} | {found:.0%} | {mean_steps:.0f} | {random_found:.0%} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
