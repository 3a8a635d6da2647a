#!/usr/bin/env python
"""otto-benchmark's (and otto's) own code beside ours, for long runs on a many-core machine.

Three modes (the logic of each side is ``theirs``/``ours`` of benchmarks/otto_benchmark.py):

    # their side: P worker processes for a wall-time budget (NumPy, SciPy, tqdm; no plume_multi)
    python benchmarks/otto_side_by_side.py theirs --case isotropic-19x19 --policy infotaxis \\
        --otto-benchmark DIR [--otto DIR] --workers 16 --seconds 1800 --out theirs-19-info.json
    # our side (plume_multi on every thread)
    python benchmarks/otto_side_by_side.py ours --case isotropic-19x19 --policy infotaxis \\
        --episodes 100000 --out ours-19-info.json
    # the table of docs/turbulent-search.md from any number of such files (their episodes of one case and policy pooled)
    python benchmarks/otto_side_by_side.py merge *.json

Their code draws from ``np.random.RandomState()`` seeded by the OS at every draw, so the workers'
episodes are independent. Before the pool starts, their side runs alone in the main process for
``--timing-seconds`` (episodes that count too): its ``choose_action`` CPU time per decision there
is the one the table compares with ours (single process, as ours is timed on one thread).

The table: each side's episodes and mean expected search time (Bayesian protocol) ± its 95 %
interval ``1.96 std / sqrt(n)`` (otto-benchmark's), whether our mean lies in their interval, the
two-sample ``z = (ours - theirs) / sqrt(s_o^2/n_o + s_t^2/n_t)``, the CPU time per decision of
each side and the speed-up.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import otto_benchmark as ob  # noqa: E402  (the home of both sides' logic)

CHUNK = 25  # their episodes per task handed to a worker


def _chunk(root: str, case: str, space_aware: bool, episodes: int) -> dict:
    return ob.theirs(Path(root), case, space_aware, episodes, math.inf, progress=False)


def run_theirs(root: Path, case: str, policy: str, workers: int, seconds: float, max_episodes: int,
               timing_seconds: float, chunk: int = CHUNK) -> dict:
    """Their episodes: first alone for ``timing_seconds`` (the per-decision time), then in
    ``workers`` processes until ``seconds`` of wall time in all or ``max_episodes``."""
    from tqdm.auto import tqdm

    space_aware = ob.POLICIES[policy]
    start = time.monotonic()
    alone = ob.theirs(root, case, space_aware, max_episodes, timing_seconds, progress=False)
    times, failed, decisions = list(alone["times"]), alone["failed"], alone["decisions"]
    deadline = start + seconds
    with tqdm(total=max_episodes, initial=len(times), desc=f"otto-benchmark {case} {policy} ({workers} workers)",
              unit="episode", dynamic_ncols=True) as bar, ProcessPoolExecutor(workers) as pool:
        pending = set()

        def more():
            left = max_episodes - len(times) - chunk * len(pending)
            if left > 0 and time.monotonic() < deadline:
                pending.add(pool.submit(_chunk, str(root), case, space_aware, min(chunk, left)))
                return True
            return False

        while len(pending) < 2 * workers and more():
            pass
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for f in done:
                pending.discard(f)
                r = f.result()
                times += r["times"]
                failed += r["failed"]
                decisions += r["decisions"]
                bar.update(r["episodes"])
                more()
    return {"case": case, "policy": policy, "side": "theirs", "workers": workers, "wall_s": time.monotonic() - start,
            "episodes": len(times), "failed": failed, "decisions": decisions,
            "timing": {"decisions": alone["decisions"], "s_per_decision": alone["s_per_decision"],
                       "episodes": alone["episodes"], "seconds": timing_seconds},
            "times": times}


def run_ours(case: str, policy: str, episodes: int, timing_decisions: int, seed: int) -> dict:
    start = time.monotonic()
    r = ob.ours(case, ob.POLICIES[policy], episodes, timing_decisions, seed=seed, times=True)
    return {"case": case, "policy": policy, "side": "ours", "seed": seed, "wall_s": time.monotonic() - start,
            "episodes": r["episodes"], "failed": r["failed"], "decisions": r["decisions"],
            "timing": {"decisions": r["decisions"], "s_per_decision": r["s_per_decision"],
                       "s_per_decision_cold": r["s_per_decision_cold"]},
            "times": r["times"]}


def pool_runs(runs: list) -> dict:
    """``{(case, policy): {side: pooled}}``: the episodes of each side pooled over files, its
    per-decision time the decision-weighted mean of the files' single-process measures. A run is
    either a file of this script (its per-episode ``times``) or a summary (``episodes``, ``mean``,
    ``std``: a run whose per-episode file was not kept; it adds no per-decision time)."""
    out = {}
    for r in runs:
        side = out.setdefault((r["case"], r["policy"]), {}).setdefault(
            r["side"], {"n": 0, "sum": 0.0, "sumsq": 0.0, "failed": 0, "timed": 0, "cpu": 0.0})
        if "times" in r:
            t = np.asarray(r["times"], dtype=float)
            n, total, squares = len(t), float(t.sum()), float((t * t).sum())
        else:
            n = r["episodes"]
            total, squares = n * r["mean"], n * (r["std"] ** 2 + r["mean"] ** 2)
        side["n"] += n
        side["sum"] += total
        side["sumsq"] += squares
        side["failed"] += r["failed"]
        timing = r.get("timing", {"decisions": 0, "s_per_decision": 0.0})
        side["timed"] += timing["decisions"]
        side["cpu"] += timing["s_per_decision"] * timing["decisions"]
    for sides in out.values():
        for s in sides.values():
            n = s["n"]
            mean = s["sum"] / n
            std = math.sqrt(max(s["sumsq"] / n - mean * mean, 0.0))
            s.update(episodes=n, mean=mean, std=std, ci95=1.96 * std / math.sqrt(n),
                     s_per_decision=s["cpu"] / s["timed"] if s["timed"] else None)
    return out


def z_score(a: dict, b: dict) -> float:
    """Two-sample z of the difference of the means ``a - b``."""
    return (a["mean"] - b["mean"]) / math.sqrt(a["std"] ** 2 / a["episodes"] + b["std"] ** 2 / b["episodes"])


def table(runs: list) -> str:
    lines = ["| case | policy | ours: episodes | mean ± 95 % | theirs: episodes | mean ± 95 % | ours inside? | z "
             "| ours per decision | theirs per decision | speed-up |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (case, policy), sides in sorted(pool_runs(runs).items()):
        mine, peer = sides.get("ours"), sides.get("theirs")
        cells = [case, policy]
        cells += [str(mine["episodes"]), f"{mine['mean']:.2f} ± {mine['ci95']:.2f}"] if mine else ["—", "—"]
        cells += [str(peer["episodes"]), f"{peer['mean']:.2f} ± {peer['ci95']:.2f}"] if peer else ["—", "—"]
        both = mine is not None and peer is not None
        cells.append(("yes" if abs(mine["mean"] - peer["mean"]) <= peer["ci95"] else "no") if both else "—")
        cells.append(f"{z_score(mine, peer):+.2f}" if both else "—")
        mine_t, peer_t = mine and mine["s_per_decision"], peer and peer["s_per_decision"]
        cells.append(f"{mine_t * 1e6:.1f} µs" if mine_t else "—")
        cells.append(f"{peer_t * 1e3:.2f} ms" if peer_t else "—")
        cells.append(f"{peer_t / mine_t:.0f}×" if mine_t and peer_t else "—")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    for mode in ("theirs", "ours"):
        p = sub.add_parser(mode)
        p.add_argument("--case", required=True, choices=list(ob.CASES))
        p.add_argument("--policy", required=True, choices=list(ob.POLICIES))
        p.add_argument("--out", required=True, help="the JSON file to write")
        p.add_argument("--quick", action="store_true", help="a tiny run (the tests)")
    th = sub.choices["theirs"]
    th.add_argument("--otto-benchmark", default=os.environ.get("OTTO_BENCHMARK_DIR"),
                    help="a checkout of auroreloisy/otto-benchmark (default $OTTO_BENCHMARK_DIR)")
    th.add_argument("--otto", default=os.environ.get("OTTO_DIR"),
                    help="a checkout of C0PEP0D/otto (default $OTTO_DIR), for the otto-3d case")
    th.add_argument("--workers", type=int, default=os.cpu_count())
    th.add_argument("--seconds", type=float, default=1800.0, help="wall-time budget, the timing run included")
    th.add_argument("--max-episodes", type=int, default=10 ** 7)
    th.add_argument("--timing-seconds", type=float, default=30.0, help="their run alone, for the per-decision time")
    ou = sub.choices["ours"]
    ou.add_argument("--episodes", type=int, default=100000)
    ou.add_argument("--timing-decisions", type=int, default=2000)
    ou.add_argument("--seed", type=int, default=0)
    mg = sub.add_parser("merge")
    mg.add_argument("files", nargs="+")
    args = parser.parse_args(argv)

    if args.mode == "merge":
        runs = []
        for f in args.files:  # a run per file, or a list of runs (summaries: benchmarks/results/)
            data = json.loads(Path(f).read_text())
            runs += data if isinstance(data, list) else [data]
        print(f"# Bayesian protocol (otto-benchmark's evaluate.py); {len(runs)} runs from {len(args.files)} files")
        print(table(runs))
        return 0
    if args.mode == "ours":
        if args.quick:
            args.episodes, args.timing_decisions = 20, 20
        result = run_ours(args.case, args.policy, args.episodes, args.timing_decisions, args.seed)
    else:
        if args.timing_seconds <= 0 or args.workers < 1:
            parser.error("--timing-seconds must be > 0 and --workers >= 1")
        who = ob.CASES[args.case][1]
        root = getattr(args, who.replace("-", "_"))
        if root is None or not (Path(root) / ob.MARKERS[who]).is_file():
            parser.error(f"--{who} {root}: not a checkout of {who} (no {ob.MARKERS[who]}); case {args.case} runs "
                         f"{who}'s code")
        if args.quick:
            args.workers, args.seconds, args.max_episodes, args.timing_seconds = 2, 60.0, 6, 0.1
        result = run_theirs(Path(root).resolve(), args.case, args.policy, args.workers, args.seconds,
                            args.max_episodes, args.timing_seconds, chunk=2 if args.quick else CHUNK)
    Path(args.out).write_text(json.dumps(result))
    pooled = pool_runs([result])[(args.case, args.policy)][result["side"]]
    print(f"{result['side']} {args.case} {args.policy}: {pooled['episodes']} episodes, "
          f"{pooled['mean']:.3f} ± {pooled['ci95']:.3f}, {pooled['failed']} failed, "
          f"{pooled['s_per_decision'] * 1e6:.1f} µs per decision, {result['wall_s']:.0f} s -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
