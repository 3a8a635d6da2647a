"""``plume-multi compare``: several policies on the same seeded episodes of a scenario or a task
(``plume_multi.compare``): the table on stdout, the rows in a CSV, the search-time distributions
in a PNG."""

from __future__ import annotations

import argparse
from pathlib import Path

from . import POLICY_HELP, UsageError, check_extras, check_writable
from .policies import policy_for_evaluate
from .scenario_flags import add_scenario_arguments, scenario_from_args

DEFAULT_AGENTS, DEFAULT_STEPS = 1, 1000


def add_parser(sub) -> None:
    """Add the ``compare`` command to the subparsers ``sub``."""
    cmp = sub.add_parser(
        "compare",
        help="several policies on the same seeded episodes: a table, a CSV and the search-time distributions",
        description="Run each policy on the same EPISODES episodes (episode e seeded SEED + e: the same starts and\n"
                    "sources) of a scenario or a benchmark task; print the table (success with its 95% interval,\n"
                    "mean and median steps of the successes, IQM of the steps with failures at the cap); write it\n"
                    "as CSV and the search-time distributions (a violin per policy, their ECDFs) as PNG.",
        epilog=POLICY_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    g = cmp.add_argument_group("comparison")
    g.add_argument("--policies", nargs="+", required=True, metavar="POLICY",
                   help="two or more policies, each as --policy takes it: a built-in name, a comma-separated team "
                        "of them, a trained policy's FILE.pt or MODULE:NAME (see below)")
    g.add_argument("--task", default=None, metavar="ID",
                   help="a benchmark task (plume-multi benchmark list): its scenario, protocol and partners, "
                        "instead of the scenario flags")
    g.add_argument("--episodes", type=int, default=None, metavar="E",
                   help="episodes per policy (default: the task's protocol, else 1000)")
    g.add_argument("--seed", type=int, default=None, metavar="S",
                   help="episode e is seeded S + e (default: the task's evaluation seed, else 0)")
    g.add_argument("--worlds", type=int, default=None, metavar="B", help="worlds run at once (default min(E, 1024))")
    add_scenario_arguments(cmp, agents=DEFAULT_AGENTS, steps=DEFAULT_STEPS)
    g = cmp.add_argument_group("output")
    g.add_argument("--out", default="compare_output/compare", metavar="PREFIX",
                   help="writes PREFIX.csv and PREFIX.png (default compare_output/compare)")
    g.add_argument("--no-plot", action="store_true", help="no PNG (matplotlib not needed)")
    g.add_argument("--quiet", action="store_true", help="no progress bar")


_SCENARIO_DESTS = ("scenario", "agents", "grid", "source", "sigma", "steps", "goal_radius", "action_model", "plume",
                   "body", "sensors", "reward", "neighbours", "team", "walls")


def run(args) -> int:
    """``plume-multi compare``: ``plume_multi.compare``, then the table, CSV and PNG."""
    from .. import tasks
    from ..errors import ValidationError
    from ..tasks.compare import compare

    for name in ("episodes", "worlds"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            raise UsageError(f"--{name}: got {getattr(args, name)}; expected an integer >= 1")
    if args.seed is not None and args.seed < 0:
        raise UsageError(f"--seed: got {args.seed}; expected an integer >= 0")
    if len(set(args.policies)) != len(args.policies):
        raise UsageError(f"--policies: got {args.policies}; expected each policy once")
    if args.task is not None:
        given = [f"--{dest.replace('_', '-')}" for dest in _SCENARIO_DESTS if getattr(args, dest) is not None]
        if given:
            raise UsageError(f"{given[0]}: got it with --task; the task gives the scenario (leave it out)")
        try:
            task = tasks.get(args.task)
            scenario = task.scenario()
        except ValidationError as exc:
            raise UsageError(f"--task: {exc}") from None
        target = task
    else:
        scenario = scenario_from_args(args, agents=DEFAULT_AGENTS, steps=DEFAULT_STEPS)
        target = scenario
    out = Path(args.out)
    paths = [out.with_name(out.name + suffix) for suffix in (".csv", *(() if args.no_plot else (".png",)))]
    for path in paths:
        check_writable(path, "--out")
    if not args.no_plot:
        check_extras(False)
    policies = {spec: policy_for_evaluate(spec, scenario, seed=args.seed or 0) for spec in args.policies}
    try:
        result = compare(policies, target, args.episodes, args.seed, num_worlds=args.worlds,
                         progress=not args.quiet)
    except ValidationError as exc:
        raise UsageError(str(exc)) from None
    first = next(iter(result.results.values()))
    print(f"{result.title}: {first.episodes} episodes per policy (seeds {result.seed}..{result.seed + first.episodes - 1}), "
          f"success = {'the first agent' if first.until == 'first' else 'every searcher'} reaching the source within "
          f"{first.scenario.max_steps} steps\n")
    print(result.table() + "\n")
    print(f"wrote {result.to_csv(paths[0])}")
    if not args.no_plot:
        print(f"wrote {result.plot(paths[1])}")
    return 0
