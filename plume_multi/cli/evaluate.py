"""``plume-multi eval``: evaluate a policy on many seeded episodes (``plume_multi.evaluate``), with a
progress bar; write per-episode results (CSV, JSON) and a plot of the search times (PNG)."""

from __future__ import annotations

import argparse

from . import POLICY_HELP, UsageError, check_extras, output_paths
from .policies import policy_for_evaluate
from .scenario_flags import add_scenario_arguments, scenario_from_args

DEFAULT_AGENTS, DEFAULT_STEPS = 1, 1000


def add_parser(sub) -> None:
    """Add the ``eval`` command to the subparsers ``sub``."""
    ev = sub.add_parser(
        "eval",
        help="evaluate a policy on many seeded episodes: statistics, CSV, JSON and a plot",
        description="Run EPISODES episodes of a scenario (episode e seeded SEED + e) as parallel worlds, until\n"
                    "every agent has arrived or the step limit; write per-episode results (CSV, JSON) and a\n"
                    "plot of the search-time distribution (PNG).",
        epilog=POLICY_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    g = ev.add_argument_group("evaluation")
    g.add_argument("--policy", default="gradient", metavar="POLICY",
                   help="a built-in name (random, gradient, surge-cast, infotaxis, space-aware-infotaxis, greedy), "
                        "a comma-separated team of them, a trained policy's FILE.pt, a solved Perseus FILE.npz, or "
                        "MODULE:NAME (see below; "
                        "default gradient)")
    g.add_argument("--episodes", type=int, default=1000, metavar="E", help="episodes (default 1000)")
    g.add_argument("--seed", type=int, default=0, metavar="S", help="episode e is seeded S + e (default 0)")
    g.add_argument("--worlds", type=int, default=None, metavar="B", help="worlds run at once (default min(E, 1024))")
    g.add_argument("--until", choices=("first", "all"), default="first",
                   help="search time: until the first agent arrives, or all (default first)")
    g.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help="shard the episodes across Ray tasks; ADDRESS of a running cluster (default: "
                        "RAY_ADDRESS, else a local Ray)")
    g.add_argument("--tasks", type=int, default=None, metavar="T", help="Ray tasks (default: 2 per cluster CPU)")
    add_scenario_arguments(ev, agents=DEFAULT_AGENTS, steps=DEFAULT_STEPS)
    g = ev.add_argument_group("output")
    g.add_argument("--out", default="eval_output/eval", metavar="PREFIX",
                   help="writes PREFIX.csv, PREFIX.json, PREFIX.png (default eval_output/eval)")
    g.add_argument("--no-plot", action="store_true", help="no PNG (matplotlib not needed)")
    g.add_argument("--quiet", action="store_true", help="no progress bar")


def executor_for(ray_address) -> str:
    """``"local"`` without ``--ray``; with it, Ray started (or joined: ``ray_address``, else
    ``RAY_ADDRESS`` or a local Ray) and ``"ray"``."""
    if ray_address is None:
        return "local"
    try:
        import ray
    except ImportError as exc:
        raise UsageError("--ray needs Ray: pip install 'plume-multi[rllib]'") from exc
    ray.init(address=ray_address or None, logging_level="ERROR", log_to_driver=False, ignore_reinit_error=True)
    return "ray"


def run(args) -> int:
    """``plume-multi eval``: ``plume_multi.evaluate`` with a progress bar, then CSV, JSON and PNG."""
    from ..evaluation import evaluate
    from ..simulator import MAX_SEED

    if args.episodes < 1:
        raise UsageError(f"--episodes: got {args.episodes}; expected an integer >= 1")
    for name in ("worlds", "tasks"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            raise UsageError(f"--{name}: got {getattr(args, name)}; expected an integer >= 1")
    if not 0 <= args.seed <= MAX_SEED - args.episodes + 1:
        raise UsageError(f"--seed: got {args.seed}; expected an integer in 0..{MAX_SEED - args.episodes + 1}")
    scenario = scenario_from_args(args, agents=DEFAULT_AGENTS, steps=DEFAULT_STEPS)
    paths = output_paths(args.out, (".csv", ".json", *(() if args.no_plot else (".png",))), "--out")
    if not args.no_plot:
        check_extras(False)
    # Built-ins as factories, so every chunk of worlds gets its own seeded policy (a team: a list
    # of them); MODULE:NAME as given (a factory is called per chunk, a plain policy copied per chunk).
    policy = policy_for_evaluate(args.policy, scenario, seed=args.seed)
    executor = executor_for(args.ray)
    grid = "x".join(str(side) for side in scenario.grid_size)
    print(f"{args.policy}: {args.episodes} episodes of {scenario.n_agents} agent(s) on a {grid} grid "
          f"({scenario.plume.name}, {scenario.action_model.name}{', team' if scenario.team else ''}), at most "
          f"{scenario.max_steps} steps (seeds {args.seed}..{args.seed + args.episodes - 1}, {executor})")
    result = evaluate(policy, scenario, args.episodes, args.seed, num_worlds=args.worlds, executor=executor,
                      progress=not args.quiet, until=args.until, tasks=args.tasks)
    lo, hi = result.success_interval()
    meaning = "the first agent's arrival" if args.until == "first" else "every searcher's arrival"
    print(f"success: {result.success_rate:.1%} (95% interval {lo:.1%}..{hi:.1%}; success = {meaning})")
    if scenario.n_agents > 1:
        print(f"first arrival in {result.success_first.mean():.1%} of the episodes, every searcher in "
              f"{result.success_all.mean():.1%}; {result.arrival_rate:.1%} of the searchers arrived")
    if result.success.any():
        mlo, mhi = result.mean_interval()
        pct = ", ".join(f"p{k} {v:g}" for k, v in result.percentiles().items())
        print(f"steps until {'the first' if args.until == 'first' else 'every'} arrival: mean {result.mean:.1f} "
              f"(95% interval {mlo:.1f}..{mhi:.1f}); {pct}")
    for path in (result.to_csv(paths[0]), result.to_json(paths[1]),
                 *(() if args.no_plot else (result.plot(paths[2], labels=[args.policy]),))):
        print(f"wrote {path}")
    return 0

