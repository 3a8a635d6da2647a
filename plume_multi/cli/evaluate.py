"""``plume-multi eval``: evaluate a policy on many seeded episodes (``plume_multi.evaluate``), with a
progress bar; write per-episode results (CSV, JSON) and a plot of the search times (PNG)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import ValidationError
from . import _SCENARIO_FLAGS, POLICY_HELP, UsageError, _check_extras, _import_target, load_policy


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
    g.add_argument("--policy", default="gradient", metavar="POLICY", help="random, gradient or MODULE:NAME (default gradient)")
    g.add_argument("--episodes", type=int, default=1000, metavar="E", help="episodes (default 1000)")
    g.add_argument("--seed", type=int, default=0, metavar="S", help="episode e is seeded S + e (default 0)")
    g.add_argument("--worlds", type=int, default=None, metavar="B", help="worlds run at once (default min(E, 1024))")
    g.add_argument("--until", choices=("first", "all"), default="first",
                   help="search time: until the first agent arrives, or all (default first)")
    g.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help="shard the episodes across Ray tasks; ADDRESS of a running cluster (default: "
                        "RAY_ADDRESS, else a local Ray)")
    g.add_argument("--tasks", type=int, default=None, metavar="T", help="Ray tasks (default: 2 per cluster CPU)")
    g = ev.add_argument_group("scenario")
    g.add_argument("--agents", type=int, default=1, metavar="N", help="searchers per world (default 1)")
    g.add_argument("--grid", type=int, nargs=2, default=(128, 128), metavar=("WIDTH", "HEIGHT"),
                   help="grid size in cells (default 128 128)")
    g.add_argument("--source", type=int, nargs=2, default=None, metavar=("X", "Y"), help="source cell (default the centre)")
    g.add_argument("--sigma", type=float, default=12.0, metavar="S", help="plume spread in cells (default 12)")
    g.add_argument("--steps", type=int, default=1000, metavar="N", help="step limit of an episode (default 1000)")
    g.add_argument("--goal-radius", type=float, default=None, metavar="R", help="distance that counts as found")
    g.add_argument("--action-model", choices=("cardinal", "moore"), default="cardinal")
    g.add_argument("--neighbours", type=int, default=0, metavar="K", help="each agent senses its K nearest agents")
    g.add_argument("--team", action="store_true", help="the first arrival ends the search for all")
    g = ev.add_argument_group("output")
    g.add_argument("--out", default="eval_output/eval", metavar="PREFIX",
                   help="writes PREFIX.csv, PREFIX.json, PREFIX.png (default eval_output/eval)")
    g.add_argument("--no-plot", action="store_true", help="no PNG (matplotlib not needed)")
    g.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args) -> int:
    """``plume-multi eval``: ``plume_multi.evaluate`` with a progress bar, then CSV, JSON and PNG."""
    from ..evaluation import evaluate
    from ..policies import GradientClimber, RandomPolicy
    from ..scenario import Scenario
    from ..simulator import MAX_SEED

    for name in ("episodes", "agents", "steps"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name}: got {getattr(args, name)}; expected an integer >= 1")
    for name in ("worlds", "tasks"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            raise UsageError(f"--{name}: got {getattr(args, name)}; expected an integer >= 1")
    if not 0 <= args.seed <= MAX_SEED - args.episodes + 1:
        raise UsageError(f"--seed: got {args.seed}; expected an integer in 0..{MAX_SEED - args.episodes + 1}")
    kwargs = dict(grid_size=tuple(args.grid), source_location=None if args.source is None else tuple(args.source),
                  sigma=args.sigma, n_agents=args.agents, max_steps=args.steps, action_model=args.action_model,
                  n_neighbours=args.neighbours, team=args.team)
    if args.goal_radius is not None:
        kwargs["goal_radius"] = args.goal_radius
    try:
        scenario = Scenario(**kwargs)
    except ValidationError as exc:
        field = str(exc).split(":")[0].removeprefix("Scenario.")
        flag = _SCENARIO_FLAGS.get(field)
        raise UsageError(f"{flag} ({exc})" if flag else str(exc)) from exc
    if not args.no_plot:
        _check_extras(False)
    # Built-ins as factories, so every chunk of worlds gets its own seeded policy; MODULE:NAME as
    # given (a factory is called per chunk, a plain policy copied per chunk).
    builtin = {"random": RandomPolicy, "gradient": GradientClimber}
    if args.policy in builtin:
        policy = builtin[args.policy]
    else:
        load_policy(args.policy, scenario, seed=args.seed)  # check it now, with the CLI's messages
        module_name, _, attr = args.policy.rpartition(":")
        policy = _import_target(module_name)
        for part in attr.split("."):
            policy = getattr(policy, part)
    executor = "local"
    if args.ray is not None:
        try:
            import ray
        except ImportError as exc:
            raise UsageError("--ray needs Ray: pip install 'plume-multi[rllib]'") from exc
        ray.init(address=args.ray or None, logging_level="ERROR", log_to_driver=False, ignore_reinit_error=True)
        executor = "ray"
    w, h = scenario.grid_size
    print(f"{args.policy}: {args.episodes} episodes of {scenario.n_agents} agent(s) on a {w}x{h} grid, at most "
          f"{scenario.max_steps} steps (seeds {args.seed}..{args.seed + args.episodes - 1}, {executor})")
    result = evaluate(policy, scenario, args.episodes, args.seed, num_worlds=args.worlds, executor=executor,
                      progress=not args.quiet, until=args.until, tasks=args.tasks)
    lo, hi = result.success_interval()
    print(f"success: {result.success_rate:.1%} (95% interval {lo:.1%}..{hi:.1%})")
    if result.success.any():
        mlo, mhi = result.mean_interval()
        pct = ", ".join(f"p{k} {v:g}" for k, v in result.percentiles().items())
        print(f"steps until {'the first' if args.until == 'first' else 'every'} arrival: mean {result.mean:.1f} "
              f"(95% interval {mlo:.1f}..{mhi:.1f}); {pct}")
    out = Path(args.out)
    for path in (result.to_csv(out.with_name(out.name + ".csv")), result.to_json(out.with_name(out.name + ".json")),
                 *(() if args.no_plot else (result.plot(out.with_name(out.name + ".png")),))):
        print(f"wrote {path}")
    return 0

