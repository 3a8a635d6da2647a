"""A PettingZoo ParallelEnv loop: N searchers in one plume, each climbing what it senses.

Every live agent gets an action each step; an agent that reaches the source leaves
``env.agents``, and the episode is over when no agent is left (or after ``max_cycles`` steps).
The actions come from a vectorized policy (one call for all agents): the observations dict is
packed into an array, the actions array unpacked into a dict.

    python examples/parallel_env_loop.py [--agents 8] [--size 64 48] [--steps 400] [--seed 0]
"""

from __future__ import annotations

import argparse

import numpy as np

from plume_multi import parallel_env
from plume_multi.policies import GradientClimber


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=8, help="searchers (default 8)")
    parser.add_argument("--size", type=int, nargs=2, default=(64, 48), metavar=("WIDTH", "HEIGHT"))
    parser.add_argument("--steps", type=int, default=400, help="max_cycles of the episode (default 400)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    env = parallel_env(n_agents=args.agents, grid_size=tuple(args.size), max_cycles=args.steps)
    observations, infos = env.reset(seed=args.seed)

    # The policy keeps per-agent memory by row, so it always sees every agent (finished ones keep
    # their last observation) and we pick out the actions of the live ones.
    policy = GradientClimber(n_actions=env.action_space(env.agents[0]).n, seed=args.seed)
    row = {agent: i for i, agent in enumerate(env.possible_agents)}
    obs = np.zeros((len(env.possible_agents),) + env.observation_space(env.agents[0]).shape, dtype=np.float32)
    found_at = {}
    step = 0
    while env.agents:
        for agent, observation in observations.items():
            obs[row[agent]] = observation
        chosen = policy(obs)
        actions = {agent: int(chosen[row[agent]]) for agent in env.agents}
        observations, rewards, terminations, truncations, infos = env.step(actions)
        step += 1
        found_at.update({agent: step for agent, reward in rewards.items() if reward > 0})
    env.close()

    print(f"{len(found_at)}/{args.agents} searchers found the source; the episode lasted {step} steps")
    for agent in env.possible_agents:
        print(f"  {agent}: " + (f"found it at step {found_at[agent]}" if agent in found_at else "still searching"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
