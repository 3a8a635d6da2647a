"""``plume-multi benchmark``: run policies on the benchmark's tasks and make its table.

    plume-multi benchmark list [--markdown [--statistics DIR]]
    plume-multi benchmark run TASK --policy NAME [--episodes E] [--seed S] [--max-steps T]
                              [--out results.csv|.parquet|FOLDER] [--ray [ADDRESS]] [--option KEY=VALUE]
    plume-multi benchmark table [--results DIR] [--markdown FILE] [--figure FILE] [--csv FILE]

``TASK`` is a task id, a family (every task of it) or ``all``; ``NAME`` a built-in policy, a
policy's ``MODULE:NAME`` (as ``plume-multi eval`` takes it) or ``baselines`` (each task's own
baselines). The same seeds give the same rows, locally or on Ray.
"""

from __future__ import annotations

import argparse
import ast
import time
from pathlib import Path

from . import ArgumentParser, UsageError, check_writable

DEFAULT_RESULTS = "benchmark-results"


def add_parser(sub) -> None:
    """Add the ``benchmark`` command (with its ``list``, ``run`` and ``table`` subcommands)."""
    bench = sub.add_parser("benchmark", help="the benchmark: run policies on its tasks, make its table",
                           description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    steps = bench.add_subparsers(dest="benchmark_command", metavar="SUBCOMMAND", parser_class=ArgumentParser)
    listing = steps.add_parser("list", help="the tasks: id, protocol and baselines")
    listing.add_argument("--markdown", action="store_true", help="every task's card as Markdown (the docs page's list)")
    listing.add_argument("--statistics", default=None, metavar="DIR",
                         help="with --markdown: end each card with its task's block DIR/<family>__<name>-vN.txt, "
                              "where there is one (its plume statistics: docs/task_statistics.py writes them)")
    run = steps.add_parser("run", help="evaluate a policy on tasks by their protocol; write per-episode rows")
    run.add_argument("task", metavar="TASK", help="a task id (plume-multi benchmark list), a family, or all")
    run.add_argument("--policy", required=True, metavar="NAME",
                     help="a built-in (random, gradient, surge-cast, infotaxis, space-aware-infotaxis, greedy), "
                          "MODULE:NAME, a solved Perseus FILE.npz, or baselines (each task's baselines)")
    run.add_argument("--episodes", type=int, default=None, metavar="E",
                     help="episodes per task (default: the protocol's; fewer is a reduced run, marked so)")
    run.add_argument("--seed", type=int, default=None, metavar="S", help="seed of episode 0 (default: the protocol's)")
    run.add_argument("--max-steps", type=int, default=None, metavar="T",
                     help="a lower step cap than the protocol's (a reduced run, marked so)")
    run.add_argument("--out", default=DEFAULT_RESULTS, metavar="PATH",
                     help="a .csv or .parquet file for all the rows, or a folder: one CSV per task and policy "
                          f"(default {DEFAULT_RESULTS}/)")
    run.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                     help="an option of the task (recorded/file-v0: --option path=plume.h5)")
    run.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                     help="run chunks of episodes as Ray tasks (ADDRESS of a cluster; default RAY_ADDRESS or a "
                          "local Ray); the same numbers")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    table = steps.add_parser("table", help="the Markdown table and the performance profile of results")
    table.add_argument("--results", default=DEFAULT_RESULTS, metavar="DIR",
                       help=f"a results file or a folder of them (default {DEFAULT_RESULTS}/)")
    table.add_argument("--markdown", default=None, metavar="FILE", help="write the Markdown table here (else printed)")
    table.add_argument("--figure", default=None, metavar="FILE.png", help="write the performance profile here")
    table.add_argument("--csv", default=None, metavar="FILE.csv", help="write the summary (one row per task and policy)")


def _options(pairs) -> dict:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--option: got {pair!r}; expected KEY=VALUE")
        try:
            out[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            out[key] = value
    return out


def _task_ids(spec: str) -> list:
    from .. import tasks

    ids = tasks.list()
    if spec == "all":
        return [i for i in ids if not tasks.get(i).options]  # a task on the user's file runs when named
    if spec in ids:
        return [spec]
    families = {i.split("/")[0] for i in ids}
    if spec in families:
        return tasks.list(spec)
    raise UsageError(f"TASK: got {spec!r}; expected a task id, a family ({', '.join(sorted(families))}) or all "
                     "(plume-multi benchmark list)")


def _list(args) -> int:
    from .. import tasks

    if args.statistics is not None and not args.markdown:
        raise UsageError("--statistics: goes with --markdown")
    if args.markdown:
        from ..tasks.cards import cards_markdown, statistics_blocks

        blocks = None if args.statistics is None else statistics_blocks(args.statistics)
        print(cards_markdown(blocks), end="")
        return 0
    for task_id in tasks.list():
        task = tasks.get(task_id)
        p = task.protocol
        extra = f"; options: {', '.join(task.options)}" if task.options else ""
        print(f"{task_id}: {p.episodes} episodes, {p.max_steps} steps, seeds from {p.eval_seed}; "
              f"baselines {', '.join(task.baselines)}{extra}")
    return 0


def _policy(spec: str, task, executor_seed: int):
    """What ``tasks.evaluate`` takes for ``spec`` on ``task``: a built-in's name as it is, else the
    object ``MODULE:NAME`` names (checked against the task's scenario)."""
    from ..policies.named import NAMED
    from .policies import policy_for_evaluate

    if spec in NAMED:
        return spec
    return policy_for_evaluate(spec, task.scenario(), seed=executor_seed)


def _run(args) -> int:
    from .. import tasks
    from .evaluate import executor_for
    from ..errors import ValidationError
    from ..tasks.table import write_rows

    for name in ("episodes", "max_steps"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise UsageError(f"--{name.replace('_', '-')}: got {value}; expected an integer >= 1")
    ids = _task_ids(args.task)
    options = _options(args.option)
    jobs = []
    for task_id in ids:
        task = tasks.make(task_id, **options) if options else tasks.get(task_id)
        names = task.baselines if args.policy == "baselines" else (args.policy,)
        jobs.extend((task, name) for name in names)
    out = Path(args.out)
    single = out.suffix.lower() in (".csv", ".parquet")
    if single:
        check_writable(out, "--out")
    executor = executor_for(args.ray)
    rows = []
    for task, name in jobs:
        started = time.perf_counter()
        try:
            policy = _policy(name, task, task.protocol.eval_seed if args.seed is None else args.seed)
            result = tasks.evaluate(task, policy, args.episodes, args.seed, executor, max_steps=args.max_steps,
                                    progress=not args.quiet, name=name)
        except ValidationError as exc:
            raise UsageError(f"{task.id} --policy {name}: {exc}") from None
        s = result.summary()
        print(f"{task.id} {name}: success {s['success_rate']:.1%}, IQM steps {s['iqm_steps']:.1f} "
              f"[{s['iqm_low']:.1f}, {s['iqm_high']:.1f}], {s['episodes']} episodes"
              f"{' (reduced)' if s['reduced'] else ''} in {time.perf_counter() - started:.1f} s", flush=True)
        if single:
            rows.extend(result.rows())
        else:
            path = out / f"{task.id.replace('/', '__')}__{name.replace(':', '_').replace('/', '_')}.csv"
            print(f"wrote {write_rows(result.rows(), path)}")
    if single:
        print(f"wrote {write_rows(rows, out)}")
    return 0


def _table(args) -> int:
    from ..tasks.table import markdown_table, performance_profile, read_rows, summarise, write_summary

    for value, option in ((args.markdown, "--markdown"), (args.figure, "--figure"), (args.csv, "--csv")):
        if value is not None:
            check_writable(value, option)
    rows = read_rows(args.results)
    summary = summarise(rows)
    text = markdown_table(summary)
    if args.markdown:
        Path(args.markdown).write_text(text)
        print(f"wrote {args.markdown}")
    else:
        print(text, end="")
    if args.csv:
        print(f"wrote {write_summary(summary, args.csv)}")
    if args.figure:
        print(f"wrote {performance_profile(rows, args.figure)}")
    return 0


def run(args) -> int:
    """``plume-multi benchmark SUBCOMMAND``."""
    command = getattr(args, "benchmark_command", None)
    if command == "list":
        return _list(args)
    if command == "run":
        return _run(args)
    if command == "table":
        return _table(args)
    raise UsageError("no subcommand given; expected list, run or table")
