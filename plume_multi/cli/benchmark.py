"""``plume-multi benchmark``: run policies on the benchmark's tasks and make its table.

    plume-multi benchmark list [--markdown [--statistics DIR]]
    plume-multi benchmark run TASK --policy NAME [--episodes E] [--seed S] [--max-steps T]
                              [--out results.csv|.parquet|FOLDER] [--ray [ADDRESS]] [--option KEY=VALUE]
                              [--resume | --force]
    plume-multi benchmark table [--results DIR] [--markdown FILE] [--figure FILE] [--csv FILE] [--merge FILE]

``TASK`` is a task id, a family (every task of it) or ``all``; ``NAME`` a built-in policy, a
policy's ``MODULE:NAME`` (as ``plume-multi eval`` takes it) or ``baselines`` (each task's own
baselines). A built-in's name over a family or ``all`` runs the tasks that list it among their
baselines (the others, where it cannot act, are named and left out). The same seeds give the same
rows, locally or on Ray.

``run`` writes each task's rows as soon as it finishes, whole or not at all (into its own file of
the folder, or by rewriting the one ``--out`` file), so a run killed after some tasks keeps them;
run again, it reuses the rows of every task and policy whose run is complete and the same
(episodes, seeds, step cap) and says so (``--resume``, the default); ``--force`` runs everything
again. Rows of tasks made with ``--option`` are never reused. ``table`` reads the files strictly
(``plume_multi.tasks.table``) and refuses to write over what it reads.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from . import ArgumentParser, UsageError, check_writable, parse_options

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
    again = run.add_mutually_exclusive_group()
    again.add_argument("--resume", action="store_true",
                       help="(the default) reuse the rows already in --out of every task and policy whose run is "
                            "complete and the same (episodes, seeds, step cap); run the others")
    again.add_argument("--force", action="store_true",
                       help="run every task and policy again, replacing their rows in --out (after changing a "
                            "policy's code, say)")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    table = steps.add_parser("table", help="the Markdown table and the performance profile of results")
    table.add_argument("--results", default=DEFAULT_RESULTS, metavar="DIR",
                       help=f"a results file or a folder of them (default {DEFAULT_RESULTS}/)")
    table.add_argument("--markdown", default=None, metavar="FILE", help="write the Markdown table here (else printed)")
    table.add_argument("--figure", default=None, metavar="FILE.png", help="write the performance profile here")
    table.add_argument("--csv", default=None, metavar="FILE.csv", help="write the summary (one row per task and policy)")
    table.add_argument("--merge", default=None, metavar="FILE.md",
                       help="keep the cells of the table in this Markdown file (between its benchmark-table markers, "
                            "as in docs/benchmark.md, else its first table) where --results has none: a column run "
                            "alone, added to the others")


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


def _file_name(task, name: str) -> str:
    """The CSV of one (task, policy) in a folder ``--out``."""
    return f"{task.id.replace('/', '__')}__{name.replace(':', '_').replace('/', '_')}.csv"


def _matches(rows: list, key: tuple, plan) -> str | None:
    """Why ``rows`` are not the complete run ``plan`` asks for of ``key`` (task id, policy), or None
    when they are: that task and policy only, episodes ``0..E-1`` once each seeded ``seed + e``, the
    same step cap and the same reduced mark."""
    protocol, reduced = plan
    if not rows:
        return "no rows of it"
    others = {(r["task"], r["policy"]) for r in rows} - {key}
    if others:
        return f"rows of {sorted(others)[0][0]} under {sorted(others)[0][1]}"
    episodes = sorted(r["episode"] for r in rows)
    if episodes != list(range(protocol.episodes)):
        return f"{len(rows)} episodes where {protocol.episodes} are asked for"
    for r in rows:
        if r["seed"] != protocol.eval_seed + r["episode"]:
            return f"episode {r['episode']} seeded {r['seed']} where {protocol.eval_seed + r['episode']} is asked for"
        if r["max_steps"] != protocol.max_steps:
            return f"a step cap of {r['max_steps']} where {protocol.max_steps} is asked for"
        if r["reduced"] != reduced:
            return f"reduced={r['reduced']} where this run is{'' if reduced else ' not'} reduced"
    return None


def _existing(path: Path, single: bool) -> list | None:
    """The rows already in ``path`` (None when there is no such file). A single ``--out`` file that
    cannot be read is refused (it would be overwritten with what is reused); a folder's file that
    cannot be read is run again and replaced."""
    from ..errors import ValidationError
    from ..tasks.table import read_rows

    if not os.path.lexists(path):
        return None
    try:
        return read_rows(path)
    except ValidationError as exc:
        if single:
            raise UsageError(f"--out: {exc}; it cannot be resumed: pass --force to write it anew, or choose another "
                             "--out") from None
        print(f"{path}: not reused ({exc}); running it again", flush=True)
        return []


def _run(args) -> int:
    from .. import tasks
    from .evaluate import executor_for
    from ..errors import ValidationError
    from ..tasks.running import planned_run
    from ..tasks.table import write_rows

    for name in ("episodes", "max_steps"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise UsageError(f"--{name.replace('_', '-')}: got {value}; expected an integer >= 1")
    ids = _task_ids(args.task)
    options = parse_options(args.option)
    from ..policies.named import NAMED

    jobs, left_out = [], []
    for task_id in ids:
        task = tasks.make(task_id, **options) if options else tasks.get(task_id)
        names = task.baselines if args.policy == "baselines" else (args.policy,)
        if len(ids) > 1 and args.policy in NAMED and args.policy not in task.baselines:
            left_out.append(task.id)  # a built-in over several tasks: where it can act (its baselines)
            continue
        jobs.extend((task, name) for name in names)
    if left_out:
        print(f"--policy {args.policy}: not among the baselines of {', '.join(left_out)} (it cannot act there); "
              "left out", flush=True)
    out = Path(args.out)
    single = out.suffix.lower() in (".csv", ".parquet")
    if single:
        check_writable(out, "--out")
    elif os.path.lexists(out) and not out.is_dir():
        raise UsageError(f"--out: {str(out)!r} is not a folder; expected a folder, or a file name ending in .csv or "
                         ".parquet")
    plans = {}
    for task, name in jobs:
        try:
            run, reduced, _ = planned_run(task, args.episodes, args.seed, args.max_steps)
        except ValidationError as exc:
            raise UsageError(f"{task.id} --policy {name}: {exc}") from None
        plans[task.id, name] = (run, reduced)
    # Resume: a (task, policy) whose complete rows are already there is not run again. Rows of a
    # task made with --option are never reused (its file name does not say which file it read).
    resume = not args.force
    if resume and options:
        print("--option given: nothing is reused (the rows do not say which options made them)", flush=True)
        resume = False
    kept = []  # a single file's rows of other runs, kept as they were
    done = {}  # (task id, policy) -> rows, in the order of the jobs
    if resume and single:
        existing = _existing(out, single=True) or []
        groups = {}
        for row in existing:
            groups.setdefault((row["task"], row["policy"]), []).append(row)
        for key, rows in groups.items():
            why = _matches(rows, key, plans[key]) if key in plans else None
            if key not in plans:
                kept.extend(rows)
            elif why is None:
                done[key] = rows
            else:
                print(f"{out}: the rows of {key[0]} under {key[1]} are not reused ({why}); running it again", flush=True)
        if kept:
            print(f"{out}: keeps {len(kept)} rows of other tasks or policies", flush=True)
    executor = executor_for(args.ray)
    ran = reused = 0
    for task, name in jobs:
        key = (task.id, name)
        path = out if single else out / _file_name(task, name)
        if resume and not single:
            rows = _existing(path, single=False)
            if rows:
                why = _matches(rows, key, plans[key])
                if why is None:
                    done[key] = rows
                else:
                    print(f"{path}: not reused ({why}); running it again", flush=True)
        if key in done:
            reused += 1
            print(f"{task.id} {name}: reused {len(done[key])} episodes from {path}", flush=True)
            continue
        started = time.perf_counter()
        try:
            policy = _policy(name, task, task.protocol.eval_seed if args.seed is None else args.seed)
            result = tasks.evaluate(task, policy, args.episodes, args.seed, executor, max_steps=args.max_steps,
                                    progress=not args.quiet, name=name)
        except ValidationError as exc:
            raise UsageError(f"{task.id} --policy {name}: {exc}") from None
        seconds = time.perf_counter() - started
        done[key] = result.rows()
        ran += 1
        # the episodes first, on disk, whole (every run so far, in the one file), then the interval:
        # a run killed later keeps every finished task
        if single:
            write_rows(kept + [row for t, n in jobs for row in done.get((t.id, n), [])], out)
        else:
            write_rows(done[key], path)
        s = result.summary()
        print(f"{task.id} {name}: success {s['success_rate']:.1%}, IQM steps {s['iqm_steps']:.1f} "
              f"[{s['iqm_low']:.1f}, {s['iqm_high']:.1f}], {s['episodes']} episodes"
              f"{' (reduced)' if s['reduced'] else ''} in {seconds:.1f} s", flush=True)
        print(f"wrote {path}", flush=True)
    print(f"{ran} run, {reused} reused{'' if args.force else ' (--force runs them all again)'}", flush=True)
    return 0


def _resolved(path) -> Path | None:
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError, ValueError):  # a loop of links, a NUL: the reader refuses those itself
        return None


def _check_not_an_input(value, option: str, results) -> None:
    """Refuse an output that is the results file read, or a results file of the folder read
    (``--csv results/a.csv`` overwrote its own input; the next ``table`` would read the summary)."""
    target, source = _resolved(value), _resolved(results)
    if target is None or source is None:
        return
    inside = source.is_dir() and target.parent == source and target.suffix.lower() in (".csv", ".parquet")
    if target == source or inside:
        raise UsageError(f"{option}: got {str(value)!r}, {'the results file read' if target == source else 'a results file of the folder read'} "
                         f"(--results {str(results)!r}); expected a file outside the results")


def _table(args) -> int:
    from ..files import read_text, write_text
    from ..tasks.table import markdown_table, merged_markdown, performance_profile, read_rows, summarise, write_summary

    for value, option in ((args.markdown, "--markdown"), (args.figure, "--figure"), (args.csv, "--csv")):
        if value is not None:
            check_writable(value, option)
            _check_not_an_input(value, option, args.results)
    if args.merge is not None and args.markdown is not None and _resolved(args.merge) == _resolved(args.markdown):
        raise UsageError(f"--markdown: {args.markdown!r} is the --merge file; expected another file (the table is "
                         "written whole, the rest of that page would be lost)")
    rows = read_rows(args.results)
    summary = summarise(rows)
    if args.merge is None:
        text = markdown_table(summary)
    else:
        text = merged_markdown(summary, read_text(args.merge, "--merge", "a Markdown file holding a benchmark table",
                                                  limit=1 << 24), args.merge)
    if args.markdown:
        write_text(args.markdown, text, "--markdown", "a Markdown file to write")
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
