"""Surge upwind on a whiff, cast crosswind when the odour is lost: moths in a puff plume.

Agents fly in a ``plumes.Puffs`` plume (pompy's meandering wind), each with a heading, two
antennae (concentration at two points ahead, left and right) and a wind sensor. The rule, after
Kennedy's and Baker's descriptions of moth flight:

* a whiff (either antenna above a threshold) starts a surge: fly upwind, turning towards the
  antenna that smells more, for ``surge`` steps;
* without one, cast: fly crosswind, reversing at growing intervals, drifting slightly upwind.

It is compared with a walker that keeps a random heading for a while, then turns. A searcher
succeeds when it comes within ``--radius`` cells of the source. Everything but the plume is
plain NumPy over all agents of all worlds at once.

    python examples/surge_cast.py [--worlds 32] [--agents 8] [--steps 3000] [--seed 0]
"""

from __future__ import annotations

import argparse

import numpy as np

from plume_multi.models.plumes import PuffPlume, Puffs

ANTENNA_ANGLE = np.pi / 6  # antennae at +-30 degrees from the heading
ANTENNA_LENGTH = 1.0  # cells ahead of the body


def antennae(pos, heading):
    """Cells ``(B, 2N, 2)`` of the left and right antennae of every agent (``pos`` (B, N, 2))."""
    left = pos + ANTENNA_LENGTH * np.stack([np.cos(heading + ANTENNA_ANGLE), np.sin(heading + ANTENNA_ANGLE)], -1)
    right = pos + ANTENNA_LENGTH * np.stack([np.cos(heading - ANTENNA_ANGLE), np.sin(heading - ANTENNA_ANGLE)], -1)
    return np.concatenate([left, right, pos], axis=1)  # then the body, where the wind is read


class SurgeCast:
    """The surge-and-cast rule over ``(B, N)`` agents."""

    def __init__(self, shape, threshold, surge=60, cast=40, seed=0):
        rng = np.random.default_rng(seed)
        self.threshold = threshold
        self.surge = surge
        self.cast = cast
        self.since_hit = np.full(shape, 10 ** 6)
        self.side = rng.choice([-1.0, 1.0], shape)
        self.cast_left = np.full(shape, cast)

    def __call__(self, left, right, wind, heading):
        upwind = np.arctan2(-wind[..., 1], -wind[..., 0])
        hit = np.maximum(left, right) > self.threshold
        self.since_hit = np.where(hit, 0, self.since_hit + 1)
        surging = self.since_hit < self.surge
        steer = 0.4 * np.sign(left - right)  # towards the stronger antenna
        surge_heading = upwind + np.where(hit, steer, 0.0)
        # casting: crosswind, a little upwind, reversing after cast_left steps (which grows)
        self.cast_left -= 1
        flip = ~surging & (self.cast_left <= 0)
        self.side = np.where(flip, -self.side, self.side)
        self.cast_left = np.where(surging, self.cast, np.where(flip, self.cast + self.since_hit // 4, self.cast_left))
        cast_heading = upwind + self.side * (np.pi / 2 - 0.3)
        return np.where(surging, surge_heading, cast_heading)


class RandomHeading:
    """Keeps a random heading for 50 steps on average, then draws a new one."""

    def __init__(self, shape, seed=0):
        self.rng = np.random.default_rng(seed)
        self.heading = self.rng.uniform(-np.pi, np.pi, shape)

    def __call__(self, left, right, wind, heading):
        turn = self.rng.random(self.heading.shape) < 0.02
        self.heading = np.where(turn, self.rng.uniform(-np.pi, np.pi, self.heading.shape), self.heading)
        return self.heading


def run(policy_name, worlds, agents, steps, seed, radius=4.0, speed=0.2, threshold=0.5, grid=(200, 100)):
    """Returns (found fraction, mean steps to the source of those that found it)."""
    w, h = grid
    source = np.array([w * 0.05, h * 0.5])
    plume = PuffPlume(Puffs(source=tuple(source), spin_up_steps=4000), grid, num_worlds=worlds)
    plume.reset(seed=seed)
    rng = np.random.default_rng(seed + 1)
    shape = (worlds, agents)
    pos = np.stack([rng.uniform(0.3 * w, 0.5 * w, shape), rng.uniform(0.35 * h, 0.65 * h, shape)], -1)
    heading = rng.uniform(-np.pi, np.pi, shape)
    policy = SurgeCast(shape, threshold, seed=seed) if policy_name == "surge-cast" else RandomHeading(shape, seed)
    found_at = np.full(shape, -1)
    for t in range(steps):
        conc, wind = plume.step_and_sample(antennae(pos, heading))
        left, right, body_wind = conc[:, :agents], conc[:, agents:2 * agents], wind[:, 2 * agents:]
        heading = policy(left, right, body_wind, heading)
        active = found_at < 0
        step = speed * np.stack([np.cos(heading), np.sin(heading)], -1)
        pos = np.where(active[..., None], np.clip(pos + step, 0, [w - 1, h - 1]), pos)
        arrived = active & (np.hypot(*(pos - source).transpose(2, 0, 1)) <= radius)
        found_at[arrived] = t + 1
    found = found_at >= 0
    return found.mean(), (found_at[found].mean() if found.any() else float("nan"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", type=int, default=32)
    parser.add_argument("--agents", type=int, default=8)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(f"{args.worlds} worlds x {args.agents} searchers, {args.steps} steps, pompy's default puff plume "
          f"on a 200x100 grid (cells of 0.25, dt 0.01)\n")
    print(f"{'policy':<14}  {'found the source':>16}  {'mean steps':>10}")
    for name in ("surge-cast", "random heading"):
        frac, mean_steps = run(name, args.worlds, args.agents, args.steps, args.seed)
        print(f"{name:<14}  {frac:>15.0%}  {mean_steps:>10.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
