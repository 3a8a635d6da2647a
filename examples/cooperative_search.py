"""Cooperative search: a team of searchers that sense their nearest neighbours.

``Scenario(team=True)``: the first searcher to reach the source ends the search for its whole
team, and every team member earns the reward. ``n_neighbours=k``: each observation also holds
``(dx / (W-1), dy / (H-1))`` to the k nearest team-mates (columns 3, 4, then 5, 6, ...).

The script runs many worlds at once and compares two team policies on the same starts:
* independent: each searcher climbs the concentration it senses (run-and-tumble);
* keep apart: the same, except that a searcher outside the plume steps away from a team-mate
  closer than ``--apart`` cells, so two searchers do not sweep the same ground.
It prints how often the team found the source and the mean steps to the first arrival. Whether
keeping apart pays depends on the scenario (grid, plume width, team size): measure, don't guess.

    python examples/cooperative_search.py [--agents 8] [--neighbours 1] [--worlds 128]
                                          [--size 96 64] [--steps 400] [--apart 4] [--seed 0]
"""

from __future__ import annotations

import argparse

import numpy as np

from plume_multi import Scenario, Simulator
from plume_multi.policies import GradientClimber

UP, RIGHT, DOWN, LEFT = range(4)


class KeepApart:
    """Run-and-tumble, but outside the plume step away from the nearest team-mate if it is close."""

    def __init__(self, scenario: Scenario, apart: float, seed: int, plume_edge: float = 0.3):
        self.climber = GradientClimber(scenario.n_actions, seed=seed)
        self.cells = np.array([scenario.width - 1, scenario.height - 1], dtype=np.float32)
        self.apart = apart
        self.plume_edge = plume_edge

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        actions = self.climber(obs)
        dx, dy = (obs[:, 3:5] * self.cells).T  # nearest team-mate, in cells
        close = (np.abs(dx) + np.abs(dy) <= self.apart) & (obs[:, 0] < self.plume_edge)
        away = np.where(np.abs(dx) >= np.abs(dy), np.where(dx > 0, LEFT, RIGHT), np.where(dy > 0, DOWN, UP))
        actions[close] = away[close]
        return actions


def team_search(scenario: Scenario, policy, worlds: int, seed: int) -> np.ndarray:
    """Steps to the first arrival in each world (-1 where nobody found the source in time)."""
    sim = Simulator(scenario, num_worlds=worlds, autoreset="disabled")
    obs = sim.reset(seed=seed)
    first = np.full(worlds, -1)
    for step in range(1, scenario.max_steps + 1):
        obs, reward, terminated, truncated = sim.step(policy(obs))
        # team mode: the first arrival terminates every agent of the world at once
        over = terminated.reshape(worlds, scenario.n_agents).all(axis=1) & (first < 0)
        first[over] = step
        if (first >= 0).all():
            break
    return first


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=8, help="team size (default 8)")
    parser.add_argument("--neighbours", type=int, default=1, help="team-mates each searcher senses (default 1)")
    parser.add_argument("--worlds", type=int, default=128, help="independent teams run at once (default 128)")
    parser.add_argument("--size", type=int, nargs=2, default=(96, 64), metavar=("WIDTH", "HEIGHT"))
    parser.add_argument("--steps", type=int, default=400, help="step limit (default 400)")
    parser.add_argument("--apart", type=float, default=4.0, help="keep-apart distance in cells (default 4)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.neighbours < 1:
        parser.error(f"--neighbours: got {args.neighbours}; expected >= 1 (keep apart needs to sense a team-mate)")

    scenario = Scenario(n_agents=args.agents, grid_size=tuple(args.size), n_neighbours=args.neighbours,
                        team=True, max_steps=args.steps)
    print(f"{args.worlds} teams of {args.agents} on a {args.size[0]}x{args.size[1]} grid, "
          f"each searcher senses {args.neighbours} team-mate(s); the first arrival ends the search")
    policies = {
        "independent": GradientClimber(scenario.n_actions, seed=args.seed),
        f"keep apart ({args.apart:g} cells)": KeepApart(scenario, args.apart, seed=args.seed),
    }
    for name, policy in policies.items():
        first = team_search(scenario, policy, args.worlds, args.seed)
        found = first >= 0
        mean = f"{first[found].mean():.1f}" if found.any() else "-"
        print(f"  {name:<24} found in {found.mean():6.1%} of worlds, mean steps to the first arrival {mean}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
