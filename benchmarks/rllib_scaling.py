"""Env-steps per second sampled by RLlib's PPO env runners: native vector env vs RLlib's default.

Three ways of sampling the same single-agent search (compact observation, NEXT_STEP autoreset):

* ``native vector env, PlumeVectorEnvRunner``: ``plume_multi.integrations.rllib.ppo_config()`` as it is: each
  runner steps its B worlds in one engine call and collects the batch as arrays;
* ``native vector env, stock runner``: the same vector env under RLlib's ``SingleAgentEnvRunner``
  (``gym_env_vectorize_mode="vector_entry_point"``);
* ``SyncVectorEnv (RLlib's default)``: RLlib's default, a Gymnasium ``SyncVectorEnv`` of B
  ``PlumeSearchEnv`` copies (``gym_env_vectorize_mode="sync"``) under the stock runner.

With ``--agents N`` (default 4) a second table compares the two ways of training one policy
shared by N searchers per world: ``shared_policy_ppo_config`` (the searchers of all worlds as rows
of one vector env, ``PlumeVectorEnvRunner``) and ``multi_agent_ppo_config`` (RLlib's multi-agent
runner over ``PlumeMultiAgentEnv`` copies), in agent-steps per second.

For 1 and 2 remote env runners each: build the PPO algorithm, sample once to warm up, then time
``rounds`` rounds of one ``sample()`` on every runner at once (``foreach_env_runner``); the rate is
the env steps returned over the wall time, median over rounds. Policy inference (the PPO
module's forward pass, one torch thread per runner) is included, training is not.

    python benchmarks/rllib_scaling.py                       # the tables of docs/ray.md
    python benchmarks/rllib_scaling.py --envs 16 --ma-envs 4 --fragment 4 --rounds 1 --runners 0   # a smoke run
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


# Multi-agent (--agents N): the same shared policy, two ways of sampling N searchers per world.
MULTI_ROUTES = {
    "searchers as rows of one vector env (shared_policy_ppo_config)": dict(rows=True),
    "PlumeMultiAgentEnv, RLlib's multi-agent runner (multi_agent_ppo_config)": dict(rows=False),
}


def _config(route: dict, runners: int, envs: int, fragment: int, scenario: dict):
    import gymnasium as gym

    from plume_multi.integrations.rllib import multi_agent_ppo_config, ppo_config, shared_policy_ppo_config

    if "rows" in route:
        if route["rows"]:
            return shared_policy_ppo_config(num_env_runners=runners, worlds_per_env_runner=envs,
                                            rollout_fragment_length=fragment, **scenario)
        return multi_agent_ppo_config(num_env_runners=runners, num_envs_per_env_runner=envs,
                                      rollout_fragment_length=fragment, **scenario)
    config = ppo_config(num_env_runners=runners, num_envs_per_env_runner=envs, rollout_fragment_length=fragment,
                        fast_runner=route["fast_runner"], **scenario)
    if route.get("vectorize") == "sync":
        config.env_runners(gym_env_vectorize_mode=gym.VectorizeMode.SYNC)
    return config


def _agent_steps(episodes) -> int:
    """Agent steps in a sample: single-agent chunks count their length, multi-agent ones their agents' steps."""
    return sum(e.agent_steps() if hasattr(e, "agent_episodes") else len(e) for e in episodes)


def measure(route: dict, runners: int, envs: int, fragment: int, rounds: int, scenario: dict) -> float:
    """Median agent-steps/s (env-steps/s with one agent) of ``runners`` remote runners, ``envs`` worlds each."""
    config = _config(route, runners, envs, fragment, scenario)
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
            episodes = group.foreach_env_runner(lambda runner: _agent_steps(runner.sample()),
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


def _table(rows: dict, routes, counts, unit: str) -> None:
    base = list(routes)[-1]
    header = ["sampling route"] + [f"{n} runner{'s' if n != 1 else ''}" for n in counts] + ["vs default"]
    table = []
    for name in routes:
        cells = [f"{rows[name, n]:,.0f}" for n in counts]
        ratio = " / ".join(f"{rows[name, n] / rows[base, n]:.1f}x" for n in counts)
        table.append([name, *cells, ratio])
    widths = [max(len(r[i]) for r in [header, *table]) for i in range(len(header))]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in table:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |")
    print(f"\n({unit} summed over the runners; 'vs default': against the last route with the same number "
          "of runners)\n")


def _measure_all(routes, counts, envs, args, scenario, unit) -> dict:
    rows = {}
    for name, route in routes.items():
        for runners in counts:
            rows[name, runners] = measure(route, runners, envs, args.fragment, args.rounds, scenario)
            print(f"  measured {name}, {runners} runner(s): {rows[name, runners]:,.0f} {unit}", file=sys.stderr)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", type=int, default=1024, help="worlds per env runner (default 1024)")
    parser.add_argument("--fragment", type=int, default=32, help="steps per world in one sample (default 32)")
    parser.add_argument("--rounds", type=int, default=3, help="timed samples per configuration (default 3)")
    parser.add_argument("--runners", type=int, nargs="+", default=[1, 2],
                        help="remote env runner counts (default 1 2; 0: sample in this process)")
    parser.add_argument("--grid", type=int, nargs=2, default=(32, 32), metavar=("W", "H"))
    parser.add_argument("--steps", type=int, default=200, help="max_steps of an episode (default 200)")
    parser.add_argument("--agents", type=int, default=4,
                        help="searchers per world of the multi-agent table (default 4; 0: no such table)")
    parser.add_argument("--ma-envs", type=int, default=64, help="worlds per env runner, multi-agent table (default 64)")
    args = parser.parse_args(argv)
    import ray

    scenario = dict(grid_size=tuple(args.grid), sigma=8.0, max_steps=args.steps)
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=max(args.runners) + 1, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    try:
        single = _measure_all(ROUTES, args.runners, args.envs, args, scenario, "env-steps/s")
        multi = {}
        if args.agents:
            multi = _measure_all(MULTI_ROUTES, args.runners, args.ma_envs, args, {**scenario, "n_agents": args.agents},
                                 "agent-steps/s")
    finally:
        if started:
            ray.shutdown()
    print(f"RLlib PPO env runners sampling a {args.grid[0]}x{args.grid[1]} search (sigma 8, {args.steps} steps), "
          f"{args.fragment} steps per world per sample; median of {args.rounds} rounds on {os.cpu_count()} cores\n")
    print(f"Single agent, {args.envs} worlds per runner, env-steps/s:\n")
    _table(single, ROUTES, args.runners, "env-steps/s")
    if args.agents:
        print(f"{args.agents} searchers per world, one shared policy, {args.ma_envs} worlds per runner, agent-steps/s:\n")
        _table(multi, MULTI_ROUTES, args.runners, "agent-steps/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
