"""RLlib multi-agent PPO: N searchers in one plume, one shared policy, remote env runners.

Every searcher of ``plume_multi.integrations.rllib.PlumeMultiAgentEnv`` (one world of the engine, N agents)
maps to the one policy ``"shared"`` (``plume_multi.integrations.rllib.multi_agent_ppo_config``). ``--team``:
the first arrival ends the search for all and every searcher still searching shares the reward;
``--neighbours K``: each searcher also senses where its K nearest team-mates are. ``--rows``
trains the same shared policy at array speed (``shared_policy_ppo_config``): the searchers of
``--envs`` worlds per runner are the rows of one vector env, one engine call per step. Every iteration
prints the mean return per searcher (1.0 = it found the source, or its team did, within
``--max-steps``) and the mean episode length. Before and after training, the shared policy is
evaluated on held-out seeds with ``plume_multi.evaluate`` (sampled, as PPO trains it, and greedy).

    python examples/rllib_multiagent_ppo.py                         # 4 searchers, 2 runners, 10 iterations
    python examples/rllib_multiagent_ppo.py --team --neighbours 2
    python examples/rllib_multiagent_ppo.py --rows --envs 256              # the searchers of 256 worlds as rows
    RAY_ADDRESS=auto python examples/rllib_multiagent_ppo.py --runners 8 --agents 16   # on a cluster
    python examples/rllib_multiagent_ppo.py --iterations 1 --batch 200 --agents 2     # a smoke run

Needs ``pip install "plume-multi[rllib]"``.
"""

from __future__ import annotations

import argparse
import os
import time


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runners", type=int, default=2, help="remote env runners (default 2)")
    p.add_argument("--envs", type=int, default=4, help="worlds per env runner (default 4)")
    p.add_argument("--agents", type=int, default=4, help="searchers per world (default 4)")
    p.add_argument("--team", action="store_true", help="the first arrival ends the search for all")
    p.add_argument("--rows", action="store_true",
                   help="train the shared policy at array speed: the searchers of --envs worlds per runner as the "
                        "rows of one vector env (shared_policy_ppo_config), --batch ignored")
    p.add_argument("--fragment", type=int, default=32, help="with --rows: steps per world in one sample (default 32)")
    p.add_argument("--neighbours", type=int, default=0, help="team-mates each searcher senses (default 0)")
    p.add_argument("--iterations", type=int, default=10, help="training iterations (default 10)")
    p.add_argument("--batch", type=int, default=2000, help="env steps per iteration (default 2000)")
    p.add_argument("--grid", type=int, nargs=2, default=(16, 16), metavar=("W", "H"), help="grid size (default 16 16)")
    p.add_argument("--sigma", type=float, default=4.0, help="plume spread in cells (default 4)")
    p.add_argument("--max-steps", type=int, default=100, help="steps per episode (default 100)")
    p.add_argument("--lr", type=float, default=1e-3, help="Adam step size (default 1e-3)")
    p.add_argument("--eval-episodes", type=int, default=500, help="greedy evaluation episodes (default 500; 0: none)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--num-cpus", type=int, default=None,
                   help="CPUs of the local Ray started when RAY_ADDRESS is unset (default: all)")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse(argv)
    import ray

    import plume_multi
    from plume_multi.integrations.rllib import module_policy, multi_agent_ppo_config, shared_policy_ppo_config

    scenario = dict(n_agents=args.agents, grid_size=tuple(args.grid), sigma=args.sigma, max_steps=args.max_steps,
                    team=args.team, n_neighbours=args.neighbours)
    if not ray.is_initialized():
        ray.init(num_cpus=None if os.environ.get("RAY_ADDRESS") else args.num_cpus,
                 include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    if args.rows:
        config = (shared_policy_ppo_config(num_env_runners=args.runners, worlds_per_env_runner=args.envs,
                                           rollout_fragment_length=args.fragment, **scenario)
                  .training(lr=args.lr, entropy_coeff=0.01))
    else:
        config = (multi_agent_ppo_config(num_env_runners=args.runners, num_envs_per_env_runner=args.envs, **scenario)
                  .training(lr=args.lr, train_batch_size_per_learner=args.batch,
                            minibatch_size=min(args.batch, 1024), num_epochs=4, entropy_coeff=0.01))
    config.debugging(seed=args.seed)
    algo = config.build_algo()

    def report(when, explore):
        result = plume_multi.evaluate(module_policy(algo, explore=explore), plume_multi.Scenario(**scenario),
                                      args.eval_episodes, seed=1_000_000, progress=False, until="all")
        found = (result.arrival_time >= 0).mean()
        print(f"{when}, {'sampled' if explore else 'greedy'} shared policy on {args.eval_episodes} held-out episodes: "
              f"{found:.1%} of searchers found the source; all of a world's in {result.success_rate:.1%} of "
              f"episodes (mean {result.mean:.1f} steps until the last arrival)")

    try:
        print(f"multi-agent PPO: {args.agents} searchers{' (team)' if args.team else ''} sharing one policy, "
              f"{args.runners} env runner(s) x {args.envs} worlds of a {args.grid[0]}x{args.grid[1]} grid"
              f"{' as rows of one vector env' if args.rows else ''}")
        if args.eval_episodes:
            report("before training", True)
        for it in range(1, args.iterations + 1):
            start = time.perf_counter()
            result = algo.train()
            elapsed = time.perf_counter() - start
            runners = result["env_runners"]
            # multi-agent episodes sum their searchers' returns; rows are one searcher each
            per_agent = runners.get("episode_return_mean", float("nan")) / (1 if args.rows else args.agents)
            print(f"iteration {it}: return per searcher {per_agent:.3f}, episode length "
                  f"{runners.get('episode_len_mean', float('nan')):.1f} ({elapsed:.1f} s)")
        for explore in (False, True) if args.eval_episodes else ():
            report("after training", explore)
    finally:
        algo.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
