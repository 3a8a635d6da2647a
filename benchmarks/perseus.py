#!/usr/bin/env python
"""Perseus: backups per second beside NumPy's, and searches beside infotaxis, space-aware infotaxis
and greedy.

    python benchmarks/perseus.py [backups] [--quick] [--alphas 512] [--beliefs 24] [--threads 2] [--domains ...]
    python benchmarks/perseus.py searches CASE [--beliefs 1000] [--seconds 600] [--rounds 1] [--episodes 2000]
        [--json FILE] [--save FILE.npz]
    python benchmarks/perseus.py table FILE...

**backups.**
One backup (``perseus_kernels.backup``): for a belief at a cell, the value of every vector of the set
on the belief after each move and hit, the best move, and its new vector over the doubled grid.
The NumPy peer (``numpy_backup``) does the same work the way NumPy is written: per move, the window
of the vectors' table as one ``(cells, vectors)`` array, the hit-weighted belief as ``(hits, cells)``,
one matrix product (BLAS) for every vector and hit, then the new vector by array expressions; it
gives the same move and vector (checked here on every belief timed, to 1e-9).

Domains: otto's 1-D default (33 cells), otto-benchmark's isotropic 19x19 and 53x53 and windy
81x41 cases, and 3-D cubes (11^3 and 21^3, ``PoissonHits(1, 2, dims=3)``); ``--alphas`` vectors (drawn
at random between the floor and 0: a backup's cost does not depend on their values), ``--beliefs``
beliefs met along random walks of the search, each backed up once per round.

Times are CPU seconds of the process (``time.process_time``: the compiled kernel's worker threads and
BLAS's count), and wall seconds: the machine may be shared. Quote ratios from one run.

**searches.** ``Perseus.solve`` on a case (``1d``: otto's 1-D default, ``poisson_search(2, 2, dims=1)``;
or an otto-benchmark case, ``scenarios.otto_benchmark(case)``) within ``--seconds`` per round: round
1 on beliefs met by infotaxis (a tenth of its moves random), each later round on beliefs met by the
previous round's policy, starting from its vectors. Then ``plume_multi.evaluate`` of the solved
policy, infotaxis, space-aware infotaxis and greedy on the same ``--episodes`` episodes (seeds
``10**6 ..``, the source drawn from the belief after the first hit: the mean of otto's Bayesian
protocol). Two cases have no closed form (``puffs``, ``gaussian``: ``case_scenario``): every policy
uses the likelihood calibrated from the plume (``calibration.likelihood_for``, cached on disk), and
the record gives, beside the mean over the episodes found, the mean over all of them with a capped
one counted at the cap. A JSON line per case goes to ``--json``; ``table`` makes the Markdown of the
docs from such lines.
"""

from __future__ import annotations

import argparse
import json
import time

import numba
import numpy as np

from plume_multi.models.plumes.poisson_hits import PoissonHits
from plume_multi.policies import perseus_kernels as pk
from plume_multi.scenarios import otto_benchmark_plume

DOMAINS = {
    "1-D L=2 (33)": lambda: PoissonHits(2.0, 2.0, dims=1),
    "19x19": lambda: otto_benchmark_plume("isotropic-19x19"),
    "53x53": lambda: otto_benchmark_plume("isotropic-53x53"),
    "81x41 windy": lambda: otto_benchmark_plume("windy-medium-detections"),
    "3-D 11^3": lambda: PoissonHits(1.0, 2.0, dims=3, grid_size=11),
    "3-D 21^3": lambda: PoissonHits(1.0, 2.0, dims=3, grid_size=21),
}
QUICK = ("1-D L=2 (33)", "19x19", "3-D 11^3")
DISCOUNT = 0.98


def _three(shape):
    return (1,) * (3 - len(shape)) + tuple(shape)


def problem(plume, n_alphas: int, seed: int = 0):
    """The arrays of a backup: ``(shape3, box, tables, alphas, moves3)``."""
    rng = np.random.default_rng(seed)
    shape3 = _three(plume.shape)
    box = tuple(2 * s - 1 for s in shape3)
    moves = np.asarray(plume.moves, dtype=np.int64)
    moves3 = np.zeros((len(moves), 3), dtype=np.int64)
    moves3[:, :moves.shape[1]] = moves
    floor = -1.0 / (1.0 - DISCOUNT)
    lik = np.ascontiguousarray(np.asarray(plume.centred_likelihood, dtype=np.float64).reshape(plume.n_hits, -1))
    table = floor * rng.random((int(np.prod(box)), n_alphas))
    table[np.ravel_multi_index(tuple(s - 1 for s in shape3), box)] = 0.0
    actions = rng.integers(0, len(moves3), n_alphas).astype(np.int64)
    return shape3, box, pk.Tables(lik, moves3, DISCOUNT, floor), pk.Alphas(table, actions)


def beliefs_along_walks(plume, n: int, seed: int = 0):
    """``n`` beliefs ``(n, D, H, W)`` and cells ``(n, 3)`` met along random walks from the start:
    random moves that stay in the grid, hits drawn from the predictive law, Bayes updates."""
    rng = np.random.default_rng(seed)
    shape3 = _three(plume.shape)
    lik = np.asarray(plume.centred_likelihood).reshape((plume.n_hits,) + tuple(2 * s - 1 for s in shape3))
    moves = np.zeros((plume.n_actions, 3), dtype=np.int64)
    moves[:, :plume.moves.shape[1]] = plume.moves
    start = np.array(tuple(plume.start) + (0,) * (3 - len(plume.start)))
    out_b, out_c = [], []

    def win(table, c):
        d, h, w = shape3
        return table[..., d - 1 - c[2]:2 * d - 1 - c[2], h - 1 - c[1]:2 * h - 1 - c[1], w - 1 - c[0]:2 * w - 1 - c[0]]

    while len(out_b) < n:
        c = start.copy()
        p = win(lik[int(rng.choice(np.arange(1, plume.n_hits)))], c).copy()
        p /= p.sum()
        for _ in range(int(rng.integers(1, 30))):
            new = c[None, :] + moves
            ok = np.all((new >= 0) & (new < np.array(shape3[::-1])), axis=1)
            c = new[rng.choice(np.flatnonzero(ok))]
            q = p.copy()
            q[c[2], c[1], c[0]] = 0.0
            if q.sum() < 1e-9:
                break
            pred = (win(lik, c) * q).reshape(plume.n_hits, -1).sum(axis=1)
            h = int(rng.choice(plume.n_hits, p=pred / pred.sum()))
            p = q * win(lik[h], c)
            p /= p.sum()
        out_b.append(p)
        out_c.append(c)
    return np.array(out_b), np.array(out_c, dtype=np.int64)


def numpy_backup(p, cell, tables, alphas, count, shape3):
    """The backup of ``perseus_kernels.backup`` in vectorized NumPy: ``(move, new vector (S,))``."""
    lik, moves, discount, floor = tables.lik, tables.moves, tables.discount, tables.floor
    table, actions = alphas.table[:, :count], alphas.actions[:count]
    d, h, w = shape3
    box = (2 * d - 1, 2 * h - 1, 2 * w - 1)
    sides = np.array([w, h, d])
    offsets = np.arange(int(np.prod(box))).reshape(box)
    inside = lambda c: bool(np.all((c >= 0) & (c < sides)))  # noqa: E731
    best_a, best_v, best_k = -1, -np.inf, None
    for a, m in enumerate(moves):
        c2 = cell + m
        if not inside(c2):
            continue
        rows = offsets[d - 1 - c2[2]:2 * d - 1 - c2[2], h - 1 - c2[1]:2 * h - 1 - c2[1],
                       w - 1 - c2[0]:2 * w - 1 - c2[0]].ravel()
        weights = p.ravel()[None, :] * lik[:, rows]  # (hits, cells)
        dots = weights @ table[rows]  # (hits, vectors)
        usable = np.all(((c2[None, :] + moves[actions]) >= 0) & ((c2[None, :] + moves[actions]) < sides), axis=1)
        dots[:, ~usable] = -np.inf
        k = np.argmax(dots, axis=1)
        v = -1.0 + discount * dots[np.arange(len(k)), k].sum()
        if v > best_v:
            best_a, best_v, best_k = a, v, k
    out = np.full(box, floor)
    mx, my, mz = moves[best_a]
    src = (slice(max(0, -mz), box[0] - max(0, mz)), slice(max(0, -my), box[1] - max(0, my)),
           slice(max(0, -mx), box[2] - max(0, mx)))
    dst = (slice(max(0, mz), box[0] - max(0, -mz)), slice(max(0, my), box[1] - max(0, -my)),
           slice(max(0, mx), box[2] - max(0, -mx)))
    after = -1.0 + discount * (lik * table[:, best_k].T).sum(axis=0).reshape(box)  # at delta'
    out[dst] = after[src]
    centre = (d - 1, h - 1, w - 1)
    out[tuple(c + s for c, s in zip(centre, (mz, my, mx)))] = -1.0  # delta' = 0: found
    out[centre] = 0.0
    return best_a, out.ravel()


def time_compiled(b3, c3, tables, alphas, count, rounds: int):
    """CPU and wall seconds per backup of the compiled kernel; its moves and vectors."""
    n_hits = tables.lik.shape[0]
    dots = np.empty((len(tables.moves), n_hits, count))
    choice = np.empty(n_hits, dtype=np.int64)
    out = np.empty(alphas.table.shape[0])
    block = pk.block_for(int(np.prod(b3.shape[1:])))
    pk.backup(b3[0], c3[0], alphas, count, tables, block, dots, choice, out)  # compiled before timing
    results = []
    c0, w0 = time.process_time(), time.perf_counter()
    for _ in range(rounds):
        results = []
        for j in range(len(b3)):
            a, _ = pk.backup(b3[j], c3[j], alphas, count, tables, block, dots, choice, out)
            results.append((a, out.copy()))
    n = rounds * len(b3)
    return (time.process_time() - c0) / n, (time.perf_counter() - w0) / n, results


def time_numpy(b3, c3, tables, alphas, count, shape3, rounds: int):
    results = []
    c0, w0 = time.process_time(), time.perf_counter()
    for _ in range(rounds):
        results = [numpy_backup(b3[j], c3[j], tables, alphas, count, shape3) for j in range(len(b3))]
    n = rounds * len(b3)
    return (time.process_time() - c0) / n, (time.perf_counter() - w0) / n, results


def run(domains, n_alphas: int, n_beliefs: int, threads: int, rounds: int) -> list:
    rows = []
    for label in domains:
        plume = DOMAINS[label]()
        shape3, box, tables, alphas = problem(plume, n_alphas)
        b3, c3 = beliefs_along_walks(plume, n_beliefs)
        row = {"domain": label, "cells": int(np.prod(shape3)), "offsets": int(np.prod(box)), "alphas": n_alphas}
        old = numba.get_num_threads()
        try:
            for t in sorted({1, threads}):
                numba.set_num_threads(t)
                cpu, wall, mine = time_compiled(b3, c3, tables, alphas, n_alphas, rounds)
                row[f"compiled {t} thread(s)"] = (cpu, wall)
        finally:
            numba.set_num_threads(old)
        cpu, wall, theirs = time_numpy(b3, c3, tables, alphas, n_alphas, shape3, rounds)
        row["numpy"] = (cpu, wall)
        for (a, v), (ra, rv) in zip(mine, theirs):
            if a != ra or not np.allclose(v, rv, rtol=1e-9, atol=1e-9):
                raise SystemExit(f"{label}: the NumPy backup differs from the kernel's (move {a} vs {ra})")
        rows.append(row)
    return rows


def table(rows, threads: int) -> str:
    cols = sorted({1, threads})
    head = ["domain", "cells", "vectors"] + [f"compiled, {t} thread{'s' if t > 1 else ''}: backups/s (wall)"
                                              for t in cols] + ["NumPy: backups/s (wall)", "compiled 1 thread / NumPy"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["domain"], str(r["cells"]), str(r["alphas"])]
        for t in cols:
            cpu, wall = r[f"compiled {t} thread(s)"]
            cells.append(f"{1 / wall:,.0f}")
        cells.append(f"{1 / r['numpy'][1]:,.1f}")
        cells.append(f"{r['numpy'][0] / r['compiled 1 thread(s)'][0]:.1f}x (CPU)")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------- searches
CALIBRATED = ("puffs", "gaussian")  # plumes without a closed form: every policy on the calibrated likelihood
CASES = ("1d", "isotropic-19x19", "isotropic-53x53", "windy-medium-detections", "windy-low-detections") + CALIBRATED
OTTO_1D_CAP = 132  # otto's STOP_t in 1-D: 4 N
EVAL_SEED = 10**6
BASELINES = ("infotaxis", "space-aware-infotaxis", "greedy")


def case_scenario(case: str):
    """The scenario of ``case``: otto's 1-D default, an otto-benchmark case, or a small plume without
    a closed form (``puffs``: the puff plume of tests/models/test_likelihoods.py, 24x12 cells;
    ``gaussian``: a Gaussian plume in a wind, 21x11 cells), a grid body and the plume's own
    concentration sensor, which each Bayesian searcher replaces by its Belief (``scenario_for``)."""
    from plume_multi import Scenario
    from plume_multi.models import bodies, plumes, sensors
    from plume_multi.scenarios import otto_benchmark, poisson_search

    if case == "1d":
        return poisson_search(2.0, 2.0, dims=1, max_steps=OTTO_1D_CAP)
    if case == "puffs":
        return Scenario(grid_size=(24, 12), plume=plumes.Puffs(source=(2.0, 6.0), cell_size=0.25, spin_up_steps=300),
                        action_model=bodies.Cardinal(), sensors=(sensors.Concentration(),), max_steps=200)
    if case == "gaussian":
        return Scenario(grid_size=(21, 11), plume=plumes.Gaussian(source=(3, 5), sigma=2.5, wind=(1.0, 0.0)),
                        action_model=bodies.Cardinal(), sensors=(sensors.Concentration(),), max_steps=200)
    return otto_benchmark(case)


def searches(case: str, beliefs: int, seconds: float, rounds: int, episodes: int, seed: int = 0,
             save: str | None = None, progress: bool = True) -> dict:
    """Solve ``case`` and score the four policies; returns the case's record."""
    from plume_multi import evaluate
    from plume_multi.policies import Perseus
    from plume_multi.policies.named import NAMED

    sc = case_scenario(case)
    wall = time.perf_counter()
    calibrating = 0.0
    if case in CALIBRATED:  # the likelihood every searcher uses (calibration.likelihood_for: cached on disk)
        from plume_multi.calibration import likelihood_for

        likelihood_for(sc, progress=progress)
        calibrating = time.perf_counter() - wall
    policy, solves = None, []
    for r in range(rounds):
        policy = Perseus.solve(sc, beliefs=beliefs, seconds=seconds, iterations=10**6, seed=seed + r,
                               explore="infotaxis" if policy is None else policy, start=policy, progress=progress)
        rep = policy.report
        solves.append({"round": r + 1, "iterations": rep.iterations, "seconds": rep.seconds,
                       "sample_seconds": rep.sample_seconds, "alphas": policy.n_alphas, "lower": rep.lower[-1],
                       "upper": rep.upper, "stopped": rep.stopped})
        print(f"{case} round {r + 1}: {rep.summary()}", flush=True)
    if save:
        policy.save(save)
    solve_wall = time.perf_counter() - wall
    scores = {}
    for name, pol in (("perseus", policy), *((n, NAMED[n]) for n in BASELINES)):
        t0 = time.perf_counter()
        result = evaluate(pol, sc, episodes, EVAL_SEED, progress=progress)
        s = result.summary()
        # every episode, a capped one counted at the cap: the mean a policy that cycles cannot hide
        length = np.asarray(result.episode_length, dtype=np.float64)
        scores[name] = {"mean": s["mean_search_time"], "low": s["mean_search_time_ci95_low"],
                        "high": s["mean_search_time_ci95_high"], "success": s["success_rate"],
                        "steps": float(length.mean()), "steps_half": float(1.96 * length.std(ddof=1) /
                                                                            np.sqrt(len(length))),
                        "seconds": time.perf_counter() - t0}
        print(f"{case} {name}: {scores[name]}", flush=True)
    return {"case": case, "beliefs": beliefs, "seconds_per_round": seconds, "rounds": rounds, "episodes": episodes,
            "max_steps": sc.max_steps, "solve_wall": solve_wall, "calibration_seconds": calibrating, "solves": solves,
            "scores": scores}


def search_table(records: list) -> str:
    head = ["case", "episodes (cap)", "Perseus", "infotaxis", "space-aware infotaxis", "greedy", "Perseus's solve"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in records:
        cells = [r["case"], f"{r['episodes']} ({r['max_steps']})"]
        for name in ("perseus", *BASELINES):
            s = r["scores"][name]
            half = (s["high"] - s["low"]) / 2
            fail = "" if s["success"] == 1.0 else f", {100 * (1 - s['success']):.2g} % capped"
            if s["success"] < 1.0 and "steps" in s:  # the mean of the episodes found, then of all of them
                fail += f" (all: {s['steps']:.1f} ± {s['steps_half']:.1f})"
            cells.append(f"{s['mean']:.2f} ± {half:.2f}{fail}")
        last = r["solves"][-1]
        its = "+".join(str(x["iterations"]) for x in r["solves"])
        cells.append(f"{r['beliefs']} beliefs x {r['rounds']} round(s), {its} iterations, "
                     f"{r['solve_wall'] / 60:.0f} min; {last['alphas']} vectors; value {last['lower']:.2f} "
                     f"(QMDP bound {last['upper']:.2f})")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = list(argv) if argv is not None else None
    import sys

    args_in = sys.argv[1:] if argv is None else argv
    if args_in and args_in[0] == "searches":
        parser = argparse.ArgumentParser(description="Perseus beside the belief heuristics on a case")
        parser.add_argument("case", choices=CASES)
        parser.add_argument("--beliefs", type=int, default=1000)
        parser.add_argument("--seconds", type=float, default=600.0, help="solve budget per round (s)")
        parser.add_argument("--rounds", type=int, default=1)
        parser.add_argument("--episodes", type=int, default=2000)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--json", default=None, help="append the case's record to this file (one JSON line)")
        parser.add_argument("--save", default=None, help="save the solved policy (.npz)")
        parser.add_argument("--quiet", action="store_true")
        a = parser.parse_args(args_in[1:])
        record = searches(a.case, a.beliefs, a.seconds, a.rounds, a.episodes, a.seed, a.save, not a.quiet)
        if a.json:
            with open(a.json, "a") as f:
                f.write(json.dumps(record) + "\n")
        print(search_table([record]))
        return 0
    if args_in and args_in[0] == "table":
        records = []
        for path in args_in[1:]:
            with open(path) as f:
                records += [json.loads(line) for line in f if line.strip()]
        print(search_table(records))
        return 0
    if args_in and args_in[0] == "backups":
        args_in = args_in[1:]
    return backups_main(args_in)


def backups_main(argv) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="three small domains, few vectors and beliefs")
    parser.add_argument("--alphas", type=int, default=512, help="vectors in the set (default 512)")
    parser.add_argument("--beliefs", type=int, default=24, help="beliefs backed up per round (default 24)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds over the beliefs (default 2)")
    parser.add_argument("--threads", type=int, default=numba.config.NUMBA_NUM_THREADS,
                        help="threads of the parallel rows (default: all)")
    parser.add_argument("--domains", nargs="+", choices=list(DOMAINS), default=None)
    args = parser.parse_args(argv)
    domains = args.domains or (QUICK if args.quick else tuple(DOMAINS))
    n_alphas, n_beliefs, rounds = (64, 4, 1) if args.quick else (args.alphas, args.beliefs, args.rounds)
    rows = run(domains, n_alphas, n_beliefs, min(args.threads, numba.config.NUMBA_NUM_THREADS), rounds)
    print(f"Perseus backups: {n_beliefs} beliefs x {rounds} round(s) per domain, {n_alphas} vectors, "
          f"discount {DISCOUNT}")
    print(table(rows, min(args.threads, numba.config.NUMBA_NUM_THREADS)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
