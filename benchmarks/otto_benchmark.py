#!/usr/bin/env python
"""otto-benchmark's four cases and otto's 3-D search, infotaxis and space-aware infotaxis: ours beside
their code.

    python benchmarks/otto_benchmark.py [--episodes 10000] [--otto-benchmark DIR] [--otto DIR]
        [--their-episodes 10000] [--their-seconds 1800] [--cases ...] [--policies ...] [--json FILE]

Cases: the four of otto-benchmark (Loisy & Heinonen 2023; ``scenarios.otto_benchmark``), beside
auroreloisy/otto-benchmark's code, and ``otto-3d``, otto's isotropic setup in three dimensions
with its default parameters (Loisy & Eloy 2022: ``lambda_over_dx = 2``, ``R_dt = 2``, a 39^3
domain, 3 hit values; ``PoissonHits(2, 2, dims=3)``), beside C0PEP0D/otto's code.

Both sides score a policy with otto-benchmark's Bayesian protocol (Loisy & Heinonen 2023; its
``evaluate.py`` with ``DRAW_SOURCE = False``): no source, each episode's expected search time
``sum_t Pr(not found before t)``, stopped when that probability falls below ``1e-6`` or at its
``STOP_t``. The table gives each side's episodes, mean and 95 % interval
(``1.96 * std / sqrt(episodes)``, otto-benchmark's), whether our mean lies in its interval, and
the time per decision.

* ours: ``run_search(otto_benchmark_plume(case), protocol="bayesian", **otto_benchmark_protocol(case))``
  (its ``STOP_t``, ``STOP_p`` and, in the isotropic cases, its stop when the agent goes back and
  forth for more than 8 steps) on every thread for the statistics; per decision, the CPU time of ``Infotaxis.decide`` on one thread over
  ``--timing-decisions`` beliefs met along episodes of the protocol (``sample_beliefs``);
* theirs (when ``--otto-benchmark DIR``, or ``$OTTO_BENCHMARK_DIR``, names a checkout of
  auroreloisy/otto-benchmark, and ``--otto DIR`` or ``$OTTO_DIR`` one of C0PEP0D/otto): their
  ``SourceTracking`` and ``HeuristicPolicy`` classes (NumPy and SciPy only; their scripts are not
  run, they import TensorFlow), played with the loop of their ``Worker`` (a fresh environment per episode, its agent-stuck rule in the isotropic cases), until
  ``--their-episodes`` episodes or ``--their-seconds`` per case and policy; per decision, the CPU
  time of its ``choose_action`` along those episodes.

Without the checkout only our side runs. Long runs show progress bars.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

# plume_multi (and numba) are imported inside our side's functions only: their side
# (``theirs``, and benchmarks/otto_side_by_side.py's workers) runs where the package is not installed.


def _our_plume(case: str):
    from plume_multi.scenarios import otto_benchmark_plume

    return otto_benchmark_plume(case)


def _otto_3d():
    from plume_multi.models.plumes import PoissonHits

    return PoissonHits(2.0, 2.0, dims=3)


# case -> (our plume, whose code: "otto-benchmark" or "otto", its setup folder, its SourceTracking's arguments)
CASES = {
    "isotropic-19x19": (lambda: _our_plume("isotropic-19x19"), "otto-benchmark", "isotropic",
                        dict(Ndim=2, lambda_over_dx=1.0, R_dt=1.0)),
    "isotropic-53x53": (lambda: _our_plume("isotropic-53x53"), "otto-benchmark", "isotropic",
                        dict(Ndim=2, lambda_over_dx=3.0, R_dt=2.0)),
    "windy-medium-detections": (lambda: _our_plume("windy-medium-detections"), "otto-benchmark", "windy",
                                dict(R_bar=2.5)),
    "windy-low-detections": (lambda: _our_plume("windy-low-detections"), "otto-benchmark", "windy",
                             dict(R_bar=0.25)),
    "otto-3d": (_otto_3d, "otto", "otto", dict(Ndim=3, lambda_over_dx=2.0, R_dt=2.0)),
}
MARKERS = {"otto-benchmark": "windy/classes/sourcetracking.py", "otto": "otto/classes/sourcetracking.py"}

POLICIES = {"infotaxis": False, "space-aware": True}
STOP_P = 1e-6
EPSILON = 1e-10  # otto-benchmark's


def sample_beliefs(plume, n: int, space_aware: bool, seed: int = 0):
    """``n`` (belief, cell) pairs met along Bayesian-protocol episodes of infotaxis (played here
    step by step with the package's kernels): what a decision sees. Returns ``(beliefs (n, H, W),
    cells (n, 2) int32)``."""
    from plume_multi.models.plumes.poisson_hits import kernels as kp
    from plume_multi.models.plumes.poisson_hits.plume import window
    from plume_multi.policies.infotaxis import Infotaxis

    pol = Infotaxis(space_aware, plume=plume)
    r = np.random.default_rng(seed)
    beliefs, cells = [], []
    lik = plume.centred_likelihood
    axes = tuple(range(1, len(plume.shape) + 1))
    while len(beliefs) < n:
        p = plume.initial_belief(int(r.choice(plume.n_hits, p=plume.first_hit_probabilities)))
        cell = tuple(plume.start)
        not_found = 1.0
        while len(beliefs) < n and not_found > STOP_P:
            beliefs.append(p.copy())
            cells.append(cell)
            move = plume.moves[pol.decide(p[None], [cell])[0]]
            cell = tuple(int(c + m) for c, m in zip(cell, move))
            p_end = p[cell[::-1]]
            not_found *= 1 - p_end
            if p_end > 1 - EPSILON:
                break
            predictive = (window(lik, plume.shape, cell) * p).sum(axis=axes)
            kp.update_belief(p, lik, cell, int(r.choice(plume.n_hits, p=predictive / predictive.sum())))
    return np.array(beliefs), np.array(cells, dtype=np.int32)


def time_decisions(plume, space_aware: bool, n: int, repeat: int = 10) -> tuple:
    """CPU seconds per infotaxis decision on one thread over ``n`` decisions on beliefs met in
    episodes, ``(in cache, cold)``: in cache, each belief is decided ``repeat`` times in a row (the
    agents of a team standing on one cell, ``team_rule="independent"``), as in an episode, where
    the belief was just updated; cold, ``n`` different beliefs once each (``Infotaxis.decide`` on
    all of them in one call: the kernel's own cost and its reads from memory)."""
    import numba

    from plume_multi.policies.infotaxis import Infotaxis

    beliefs, cells = sample_beliefs(plume, n, space_aware)
    k = max(1, n // repeat)
    team = Infotaxis(space_aware, plume=plume, team_rule="independent")
    single = Infotaxis(space_aware, plume=plume)
    threads = numba.get_num_threads()
    numba.set_num_threads(1)

    def best(fn):
        fn()  # compiled, buffers made
        out = math.inf
        for _ in range(3):  # the least disturbed of three (the machine may be shared)
            t0 = time.process_time()
            fn()
            out = min(out, time.process_time() - t0)
        return out

    try:
        hot = best(lambda: team.decide(beliefs[:k], np.repeat(cells[:k], repeat, axis=0), groups=repeat))
        cold = best(lambda: single.decide(beliefs, cells))
    finally:
        numba.set_num_threads(threads)
    return hot / (k * repeat), cold / len(beliefs)


def ours(case: str, space_aware: bool, episodes: int, timing_decisions: int, seed: int = 0,
         times: bool = False) -> dict:
    """Our statistics (every thread) and CPU time per decision (one thread); with ``times``, also
    each episode's expected search time (``"times"``)."""
    from plume_multi.policies.infotaxis import run_search
    from plume_multi.scenarios import otto_protocol

    plume = CASES[case][0]()
    res = run_search(plume, episodes, space_aware=space_aware, protocol="bayesian", seed=seed, progress=True,
                     **otto_protocol(plume))
    hot, cold = time_decisions(plume, space_aware, timing_decisions)
    out = {"episodes": episodes, "mean": res.mean, "ci95": res.ci95, "failed": int((~res.found).sum()),
           "decisions": timing_decisions, "s_per_decision": hot, "s_per_decision_cold": cold}
    if times:
        out["times"] = res.search_time.tolist()
    return out


# ------------------------------------------------------------------------------ otto-benchmark
def _their_classes(root: Path, setup: str):
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    import importlib

    env = importlib.import_module(f"{setup}.classes.sourcetracking").SourceTracking
    policy = importlib.import_module(f"{setup}.classes.heuristicpolicy").HeuristicPolicy
    return env, policy


def their_stop_t(root: Path, case: str) -> int:
    """``STOP_t`` as their ``evaluate.py`` sets it (``autoset_numerical_parameters``), from their
    own environment: 10000 in the windy setup; in the isotropic one (otto's too) ``4 N`` in 1-D,
    else ``10 N^d``, ``round(5 10^d L / sqrt(mu0))`` or ``round(5 10^d L)`` as ``mu0`` is below
    ``1e-3``, below 1 or not."""
    _, _, setup, params = CASES[case]
    if setup == "windy":
        return 10000
    Env, _ = _their_classes(root, setup)
    env = Env(**params, dummy=True)
    d, L, mu0 = params["Ndim"], params["lambda_over_dx"], env.mu0_Poisson
    if d == 1:
        return int(round(4 * env.N))
    if mu0 < 1e-3:
        return 10 * env.N ** d
    return int(round(5 * 10 ** d * L / np.sqrt(mu0))) if mu0 < 1 else int(round(5 * 10 ** d * L))


def theirs(root: Path, case: str, space_aware: bool, max_episodes: int, max_seconds: float,
           progress: bool = True) -> dict:
    """Their own classes in the loop of their ``Worker`` (Bayesian protocol): episodes until
    ``max_episodes`` or ``max_seconds``. Returns the statistics, each episode's expected search
    time (``"times"``) and the CPU time of their ``choose_action`` (``"decision_cpu"`` seconds over
    ``"decisions"``). Needs NumPy, SciPy and tqdm only (no plume_multi)."""
    from tqdm.auto import tqdm

    _, _, setup, params = CASES[case]
    Env, Policy = _their_classes(root, setup)
    stop_t = their_stop_t(root, case)
    times, failed, decisions, decision_cpu = [], 0, 0, 0.0
    start = time.monotonic()
    with tqdm(total=max_episodes, desc=f"otto-benchmark {case} {'space-aware' if space_aware else 'infotaxis'}",
              unit="episode", leave=False, dynamic_ncols=True, disable=not progress) as bar:
        while len(times) < max_episodes and time.monotonic() - start < max_seconds:
            env = Env(**params, draw_source=False)
            pol = Policy(env=env, policy=1 if space_aware else 0)
            t, expected, not_found = 0, 0.0, 1.0
            while True:
                c0 = time.process_time()
                action = pol.choose_action()
                decision_cpu += time.process_time() - c0
                decisions += 1
                hit, p_end, done = env.step(action, quiet=True)
                t += 1
                expected += not_found
                not_found *= 1 - p_end
                if not_found < STOP_P or p_end > 1 - EPSILON or done:
                    break
                if t > stop_t - 1 or env.agent_stuck:
                    failed += 1
                    break
            times.append(expected)
            bar.update(1)
    t = np.array(times)
    return {"episodes": len(t), "mean": float(t.mean()) if len(t) else math.nan,
            "ci95": float(1.96 * t.std() / math.sqrt(len(t))) if len(t) else math.inf,
            "failed": failed, "decisions": decisions, "decision_cpu": decision_cpu,
            "s_per_decision": decision_cpu / max(decisions, 1), "times": times}


def _row(case, policy, mine, peer) -> str:
    ours_cell = f"{mine['episodes']} | {mine['mean']:.2f} ± {mine['ci95']:.2f}"
    if peer is None:
        return f"| {case} | {policy} | {ours_cell} | — | — | {mine['s_per_decision'] * 1e6:.1f} µs | — | — |"
    inside = abs(mine["mean"] - peer["mean"]) <= peer["ci95"]
    speed = peer["s_per_decision"] / mine["s_per_decision"]
    return (f"| {case} | {policy} | {ours_cell} | {peer['episodes']} | {peer['mean']:.2f} ± {peer['ci95']:.2f} | "
            f"{'yes' if inside else 'no'} | {mine['s_per_decision'] * 1e6:.1f} µs | "
            f"{peer['s_per_decision'] * 1e3:.2f} ms | {speed:.0f}× |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=10000, help="our episodes per case and policy")
    parser.add_argument("--timing-decisions", type=int, default=2000, help="our single-threaded timed decisions")
    parser.add_argument("--otto-benchmark", default=os.environ.get("OTTO_BENCHMARK_DIR"),
                        help="a checkout of auroreloisy/otto-benchmark (default $OTTO_BENCHMARK_DIR)")
    parser.add_argument("--otto", default=os.environ.get("OTTO_DIR"),
                        help="a checkout of C0PEP0D/otto (default $OTTO_DIR), for the otto-3d case")
    parser.add_argument("--their-episodes", type=int, default=10000)
    parser.add_argument("--their-seconds", type=float, default=1800.0, help="wall-time budget per case and policy")
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--policies", nargs="+", default=list(POLICIES), choices=list(POLICIES))
    parser.add_argument("--json", help="write every figure to this file")
    parser.add_argument("--quick", action="store_true", help="a tiny run (the tests)")
    args = parser.parse_args(argv)
    if args.quick:
        args.episodes, args.timing_decisions, args.their_episodes, args.their_seconds = 20, 20, 2, 60.0
        args.cases = ["isotropic-19x19"]
    roots = {"otto-benchmark": Path(args.otto_benchmark) if args.otto_benchmark else None,
             "otto": Path(args.otto) if args.otto else None}
    for name, marker in MARKERS.items():
        if roots[name] is not None and not (roots[name] / marker).is_file():
            parser.error(f"--{name} {roots[name]}: not a checkout of {name} (no {marker})")
    import numba

    missing = sorted({CASES[c][1] for c in args.cases if roots[CASES[c][1]] is None})
    print(f"# Bayesian protocol; ours on {numba.get_num_threads()} threads"
          + (f"; code not given ({', '.join(missing)}): ours only there" if missing else ""))
    print("| case | policy | ours: episodes | mean ± 95 % | theirs: episodes | mean ± 95 % | ours inside? "
          "| ours per decision | theirs per decision | speed-up |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    results = []
    for case in args.cases:
        for policy in args.policies:
            mine = ours(case, POLICIES[policy], args.episodes, args.timing_decisions)
            root = roots[CASES[case][1]]
            peer = theirs(root, case, POLICIES[policy], args.their_episodes, args.their_seconds) if root else None
            if peer is not None:
                del peer["times"]
            results.append({"case": case, "policy": policy, "ours": mine, "otto_benchmark": peer})
            print(_row(case, policy, mine, peer), flush=True)
            if args.json:
                Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
