"""RLlib PPO on plume_multi's native vector env, sampled by remote env runners.

Each of ``--runners`` env runners (Ray actors) steps ``--envs`` single-agent worlds in one engine
call per step (``plume_multi.integrations.rllib.ppo_config``: the vector entry point of
``"plume_multi:PlumeSearchCompact-v0"`` and ``PlumeVectorEnvRunner``). Every iteration prints the
mean return (1.0 = the source was found within ``--max-steps``) and episode length of the
episodes that ended in it, and the env steps per second. All worlds start together, so the
first iterations see only the short (successful) episodes end: the returns that tell are the
evaluations, before and after training, on 1000 held-out seeds with ``plume_multi.evaluate``
(the sampled policy, as PPO trains it, and the greedy one, which takes its most likely action).

    python examples/rllib_vector_ppo.py                    # 2 runners x 1024 worlds, 8 iterations
    RAY_ADDRESS=auto python examples/rllib_vector_ppo.py --runners 8 --envs 4096   # on a cluster
    python examples/rllib_vector_ppo.py --iterations 1 --envs 16 --fragment 8     # a smoke run

Needs ``pip install "plume-multi[rllib]"``.
"""

from __future__ import annotations

import argparse
import os
import time


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runners", type=int, default=2, help="remote env runners (default 2)")
    p.add_argument("--envs", type=int, default=1024, help="worlds per env runner (default 1024)")
    p.add_argument("--fragment", type=int, default=32, help="steps per world in one sample (default 32)")
    p.add_argument("--iterations", type=int, default=8, help="training iterations (default 8)")
    p.add_argument("--grid", type=int, nargs=2, default=(32, 32), metavar=("W", "H"), help="grid size (default 32 32)")
    p.add_argument("--sigma", type=float, default=8.0, help="plume spread in cells (default 8)")
    p.add_argument("--max-steps", type=int, default=200, help="steps per episode (default 200)")
    p.add_argument("--lr", type=float, default=1e-3, help="Adam step size (default 1e-3)")
    p.add_argument("--eval-episodes", type=int, default=1000, help="greedy evaluation episodes (default 1000; 0: none)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--num-cpus", type=int, default=None,
                   help="CPUs of the local Ray started when RAY_ADDRESS is unset (default: all)")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse(argv)
    import ray

    import plume_multi
    from plume_multi.integrations.rllib import module_policy, ppo_config

    scenario = dict(grid_size=tuple(args.grid), sigma=args.sigma, max_steps=args.max_steps)
    if not ray.is_initialized():
        # joins the cluster named by RAY_ADDRESS when set, else starts a local Ray
        ray.init(num_cpus=None if os.environ.get("RAY_ADDRESS") else args.num_cpus,
                 include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    config = (ppo_config(num_env_runners=args.runners, num_envs_per_env_runner=args.envs,
                         rollout_fragment_length=args.fragment, **scenario)
              .training(lr=args.lr, entropy_coeff=0.01)
              .debugging(seed=args.seed))
    algo = config.build_algo()

    def report(when, explore):
        result = plume_multi.evaluate(module_policy(algo, explore=explore), plume_multi.Scenario(**scenario),
                                      args.eval_episodes, seed=1_000_000, progress=False)
        found = (result.arrival_time >= 0).mean()
        print(f"{when}, {'sampled' if explore else 'greedy'} policy on {args.eval_episodes} held-out episodes: "
              f"{found:.1%} found the source (mean {result.mean:.1f} steps to it)")

    try:
        print(f"PPO, {args.runners} env runner(s) x {args.envs} worlds of a {args.grid[0]}x{args.grid[1]} grid, "
              f"{args.fragment * args.envs * max(1, args.runners):,} steps per iteration")
        if args.eval_episodes:
            report("before training", True)
        for it in range(1, args.iterations + 1):
            start = time.perf_counter()
            result = algo.train()
            elapsed = time.perf_counter() - start
            runners = result["env_runners"]
            ret = runners.get("episode_return_mean", float("nan"))
            steps = runners.get("num_env_steps_sampled", 0)
            print(f"iteration {it}: return {ret:.3f}, episode length {runners.get('episode_len_mean', float('nan')):.1f}, "
                  f"{steps:,} env steps in {elapsed:.1f} s ({steps / elapsed:,.0f} steps/s with training)")
        for explore in (False, True) if args.eval_episodes else ():
            report("after training", explore)
    finally:
        algo.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
