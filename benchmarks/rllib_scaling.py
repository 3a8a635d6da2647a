"""Env-steps per second sampled by RLlib's PPO env runners: native vector env vs RLlib's default.

Three ways of sampling the same single-agent search (compact observation, NEXT_STEP autoreset):

* ``native vector env, PlumeVectorEnvRunner``: ``plume_multi.rllib.ppo_config()`` as it is: each
  runner steps its B worlds in one engine call and collects the batch as arrays;
* ``native vector env, stock runner``: the same vector env under RLlib's ``SingleAgentEnvRunner``
  (``gym_env_vectorize_mode="vector_entry_point"``);
* ``SyncVectorEnv (RLlib's default)``: RLlib's default, a Gymnasium ``SyncVectorEnv`` of B
  ``PlumeSearchEnv`` copies (``gym_env_vectorize_mode="sync"``) under the stock runner.

For 1 and 2 remote env runners each: build the PPO algorithm, sample once to warm up, then time
``rounds`` rounds of one ``sample()`` on every runner at once (``foreach_env_runner``); the rate is
the env steps returned over the wall time, median over rounds. Policy inference (the PPO
module's forward pass, one torch thread per runner) is included, training is not.

    python benchmarks/rllib_scaling.py                       # the README's table
    python benchmarks/rllib_scaling.py --envs 16 --fragment 4 --rounds 1 --runners 0   # a smoke run
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ROUTES = {
    "native vector env, PlumeVectorEnvRunner": dict(fast_runner=True),
    "native vector env, stock runner": dict(fast_runner=False),
    "SyncVectorEnv of PlumeSearchEnv (RLlib's default)": dict(fast_runner=False, vectorize="sync"),
}


def measure(route: dict, runners: int, envs: int, fragment: int, rounds: int, scenario: dict) -> float:
    """Median env-steps/s of ``runners`` remote runners sampling ``envs`` worlds each."""
    import gymnasium as gym

    from plume_multi.rllib import ppo_config

    config = ppo_config(num_env_runners=runners, num_envs_per_env_runner=envs, rollout_fragment_length=fragment,
                        fast_runner=route["fast_runner"], **scenario)
    if route.get("vectorize") == "sync":
        config.env_runners(gym_env_vectorize_mode=gym.VectorizeMode.SYNC)
    config.env_runners(num_cpus_per_env_runner=1)
    config.learners(num_learners=0)
    algo = config.build_algo()
    try:
        group = algo.env_runner_group

        def one_thread(runner):  # the same for every route: one torch thread per runner's CPU
            import torch

            torch.set_num_threads(1)

        group.foreach_env_runner(one_thread, local_env_runner=False)

        def sample_all():
            # runners=0 samples in this process (the tests' smoke run)
            episodes = group.foreach_env_runner(lambda runner: sum(len(e) for e in runner.sample()),
                                                local_env_runner=runners == 0)
            return sum(episodes)

        sample_all()  # warm-up: compiles, first reset
        rates = []
        for _ in range(rounds):
            start = time.perf_counter()
            steps = sample_all()
            rates.append(steps / (time.perf_counter() - start))
        return statistics.median(rates)
    finally:
        algo.stop()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", type=int, default=1024, help="worlds per env runner (default 1024)")
    parser.add_argument("--fragment", type=int, default=32, help="steps per world in one sample (default 32)")
    parser.add_argument("--rounds", type=int, default=3, help="timed samples per configuration (default 3)")
    parser.add_argument("--runners", type=int, nargs="+", default=[1, 2],
                        help="remote env runner counts (default 1 2; 0: sample in this process)")
    parser.add_argument("--grid", type=int, nargs=2, default=(32, 32), metavar=("W", "H"))
    parser.add_argument("--steps", type=int, default=200, help="max_steps of an episode (default 200)")
    args = parser.parse_args(argv)
    import ray

    scenario = dict(grid_size=tuple(args.grid), sigma=8.0, max_steps=args.steps)
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=max(args.runners) + 1, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    try:
        print(f"RLlib PPO env runners sampling a {args.grid[0]}x{args.grid[1]} search (sigma 8, "
              f"{args.steps} steps), {args.envs} worlds per runner, {args.fragment} steps per world per sample; "
              f"median of {args.rounds} rounds on {os.cpu_count()} cores\n")
        rows = {}
        for name, route in ROUTES.items():
            for runners in args.runners:
                rows[name, runners] = measure(route, runners, args.envs, args.fragment, args.rounds, scenario)
                print(f"  measured {name}, {runners} runner(s): {rows[name, runners]:,.0f} env-steps/s",
                      file=sys.stderr)
    finally:
        if started:
            ray.shutdown()
    base = list(ROUTES)[-1]
    header = ["sampling route"] + [f"{n} runner{'s' if n != 1 else ''}" for n in args.runners] + ["vs default"]
    table = []
    for name in ROUTES:
        cells = [f"{rows[name, n]:,.0f}" for n in args.runners]
        ratio = " / ".join(f"{rows[name, n] / rows[base, n]:.1f}x" for n in args.runners)
        table.append([name, *cells, ratio])
    widths = [max(len(r[i]) for r in [header, *table]) for i in range(len(header))]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in table:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |")
    print("\n(env-steps/s summed over the runners; 'vs default': against the SyncVectorEnv route "
          "with the same number of runners)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
