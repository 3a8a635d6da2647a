"""Surge upwind on a whiff, cast crosswind when the odour is lost: moths in a puff plume.

Searchers with a heading (``bodies.Continuous``: speed and turn), two antennae
(``sensors.Antennae``) and a wind sensor in their own frame (``sensors.Wind``: forward, left) fly
in pompy's meandering puff plume (``plumes.Puffs``). The rule, after Kennedy's and Baker's
descriptions of moth flight:

* a whiff (the body or an antenna above a threshold) starts a surge: turn upwind, and towards the
  antenna that smells more, for ``surge`` steps;
* without one, cast: fly crosswind (a little upwind), reversing at growing intervals (up to 2x).

The rule is the library's ``plume_multi.policies.SurgeCast`` (plain NumPy over all agents of all
worlds; the engine does the rest). It is compared with searchers that fly straight and turn at
random. A searcher succeeds when it comes within ``goal_radius`` cells of the source.

    python examples/surge_cast.py [--worlds 32] [--agents 8] [--steps 2000] [--seed 0]
"""

from __future__ import annotations

import argparse

import numpy as np

from plume_multi import Scenario, Simulator, bodies, plumes, sensors
from plume_multi.policies import SurgeCast

MAX_SPEED = 0.2  # cells per step: 5 x the mean wind (0.04 cells per step)
MAX_TURN = 30.0  # degrees per step


def scenario(n_agents: int, max_steps: int, spin_up: int = 3000) -> Scenario:
    """pompy's default plume on a 200 x 100 grid (cells of 0.25, dt 0.01); searchers start 12-25
    length units downwind of the source."""
    return Scenario(
        grid_size=(200, 100), plume=plumes.Puffs(source=(10, 50), spin_up_steps=spin_up),
        action_model=bodies.Continuous(max_speed=MAX_SPEED, max_turn_degrees=MAX_TURN),
        sensors=(sensors.Concentration(), sensors.Antennae(angles=(30.0, -30.0), distance=1.0), sensors.Wind()),
        n_agents=n_agents, max_steps=max_steps, goal_radius=4.0, start_region=((60, 35), (110, 65)),
    )


class RandomFlight:
    """Full speed, a new random heading about every 50 steps."""

    def __init__(self, n: int, seed: int = 0):
        self.rng = np.random.default_rng(seed)
        self.n = n

    def __call__(self, obs):
        turn = np.where(self.rng.random(self.n) < 0.02, self.rng.uniform(-MAX_TURN, MAX_TURN, self.n), 0.0)
        return np.stack([np.full(self.n, MAX_SPEED), turn], axis=1).astype(np.float32)


def run(policy_name: str, worlds: int, agents: int, steps: int, seed: int, spin_up: int = 3000):
    """(fraction that found the source, mean steps of those that did)."""
    sc = scenario(agents, steps, spin_up)
    sim = Simulator(sc, num_worlds=worlds, autoreset="disabled")
    obs = sim.reset(seed=seed)
    policy = SurgeCast(sc, seed=seed) if policy_name == "surge-cast" else RandomFlight(sim.total_agents, seed)
    found_at = np.full(sim.total_agents, -1)
    for t in range(steps):
        obs, reward, terminated, truncated = sim.step(policy(obs))
        found_at[(found_at < 0) & (reward > 0)] = t + 1
        if truncated.all() or terminated.all():
            break
    found = found_at >= 0
    return found.mean(), (found_at[found].mean() if found.any() else float("nan"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", type=int, default=32)
    parser.add_argument("--agents", type=int, default=8)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--spin-up", type=int, default=3000, help="plume steps before each episode")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(f"{args.worlds} worlds x {args.agents} searchers, {args.steps} steps, pompy's default puff plume "
          f"on a 200x100 grid (cells of 0.25, dt 0.01)\n")
    print(f"{'policy':<14}  {'found the source':>16}  {'mean steps':>10}")
    for name in ("surge-cast", "random flight"):
        frac, mean_steps = run(name, args.worlds, args.agents, args.steps, args.seed, args.spin_up)
        print(f"{name:<14}  {frac:>15.0%}  {mean_steps:>10.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
