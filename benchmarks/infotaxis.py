#!/usr/bin/env python
"""Infotaxis on Poisson hits: compiled decisions and episodes beside a NumPy implementation.

    python benchmarks/infotaxis.py [--quick] [--agents 1024] [--episodes 6400] [--threads 2]

* decisions: one infotaxis (and space-aware) decision per agent, from a belief, on the protocol
  domains 19x19 (L=1), 37x37 (L=2), 53x53 (L=3) with R_dt = 2 and on the 81x41 domain of the windy
  Poisson hits (``WindyPoissonHits(R_bar=2.5)``, otto-benchmark's windy-medium-detections):
  ``Infotaxis.decide`` on ``--agents`` agents on one thread and on ``--threads`` threads, beside
  ``numpy_decide`` (the usual vectorized NumPy: one array expression per move over all hits and
  cells) on a few agents.
* Bayes updates: ``kernels.update_belief`` beside NumPy's ``p * L / (p * L).sum()`` on beliefs
  indexed ``[x, y]`` as otto-benchmark keeps them, on the same domains (bit for bit the same beliefs).
* episodes: ``run_search`` on ``--episodes`` protocol episodes of the 19x19 domain and of the windy
  one on ``--threads`` threads; the same episodes through the engine (``Simulator`` with
  ``sensors.Hits`` and ``sensors.Belief``, stepped with ``Infotaxis.act``); beside
  ``numpy_episode`` (the same draws, NumPy decisions and updates).

Times are CPU seconds (``time.process_time`` for compiled code, whose worker threads it counts;
``time.thread_time`` for the single-threaded NumPy rows) unless marked wall: the machine may be
shared, and CPU time moves less with its load than wall time. Quote ratios from one run.
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np

from plume_multi import Simulator
from plume_multi.policies.infotaxis import Infotaxis, run_search
from plume_multi.models.plumes.poisson_hits import kernels as kp
from plume_multi.policies import infotaxis_kernels as ik
from plume_multi.engine import rng
from plume_multi.models.plumes.poisson_hits import PoissonHitPlume, PoissonHits, WindyPoissonHits
from plume_multi.models.sensors import Belief, Hits
from plume_multi.scenario import Scenario

# (label, plume): the isotropic protocol domains (lambda_over_dx, R_dt) = (1, 2), (2, 2), (3, 2) and
# otto-benchmark's windy-medium-detections
DOMAINS = (("19x19 (L=1)", lambda: PoissonHits(1.0, 2.0)), ("37x37 (L=2)", lambda: PoissonHits(2.0, 2.0)),
           ("53x53 (L=3)", lambda: PoissonHits(3.0, 2.0)), ("81x41 windy (R=2.5)", lambda: WindyPoissonHits(2.5)))


from plume_multi.models.likelihoods import Likelihood  # noqa: E402


def calibrated_domain():
    """A calibrated likelihood (``plume_multi.calibration.calibrate``) of a Gaussian plume on a 19x19 grid,
    three detection levels, dressed with what ``sample_agents`` reads of a protocol plume (a start
    cell, the first belief): the decisions and updates then run on a calibrated table."""
    from plume_multi import Scenario
    from plume_multi.models import plumes, sensors
    from plume_multi.calibration import calibrate

    sc = Scenario(grid_size=(19, 19), plume=plumes.Gaussian(source=(4, 9), sigma=4.0, wind=(1.0, 0.0)),
                  sensors=(sensors.Concentration(),))
    lik = calibrate(sc, (0.02, 0.2), worlds=2, steps=2, progress=False)
    lik.start = (14, 9)
    lik.n_actions = len(lik.moves)

    def initial_belief(outcome):
        p = np.full(lik.shape, 1.0 / (np.prod(lik.shape) - 1))
        p[lik.start[::-1]] = 0.0
        kp.update_belief(p, lik.centred_likelihood, lik.start, outcome)
        return p

    lik.initial_belief = initial_belief
    return lik


CALIBRATED = (("19x19 Gaussian, calibrated (3 levels)", calibrated_domain),)


def numpy_decide(plume: PoissonHitPlume, p: np.ndarray, x: int, y: int, space_aware: bool = False) -> int:
    """The infotaxis decision in plain vectorized NumPy (the formulas of ``PoissonHits``)."""
    h, w = plume.shape
    lik = plume.centred_likelihood
    scores = np.full(plume.n_actions, np.inf)
    for m, (dx, dy) in enumerate(plume.moves):
        tx, ty = x + dx, y + dy
        if not (0 <= tx < w and 0 <= ty < h):
            continue
        p_end = p[ty, tx]
        if p_end > 1 - ik.FOUND_TOL:
            return m
        q = p.copy()
        q[ty, tx] = 0.0
        q /= q.sum()
        like = lik[:, h - 1 - ty:2 * h - 1 - ty, w - 1 - tx:2 * w - 1 - tx]
        post = q * like  # (n_hits, H, W)
        p_hit = post.sum(axis=(1, 2))
        post /= np.where(p_hit > 0, p_hit, 1.0)[:, None, None]
        logs = np.zeros_like(post)
        np.log2(post, out=logs, where=post > 0)
        s = -(post * logs).sum(axis=(1, 2))
        if space_aware:
            dist = plume.centred_manhattan[h - 1 - ty:2 * h - 1 - ty, w - 1 - tx:2 * w - 1 - tx]
            v = (post * dist).sum(axis=(1, 2)) + 2.0 ** (s - 1) - 0.5
            v = np.where(v > 0, np.log2(np.where(v > 0, v, 1.0)), v)
            scores[m] = (1 - p_end) * (p_hit * v).sum()
        else:
            scores[m] = (1 - p_end) * (p_hit * s).sum()
    best = scores.min()
    return int(np.flatnonzero(scores < best + ik.TIE_TOL)[0])


def numpy_episode(plume: PoissonHitPlume, seed: int, space_aware: bool = False, max_steps: int = 1000):
    """One protocol episode with NumPy decisions and updates, the same draws as ``run_search``.

    Returns ``(steps, found)``."""
    h, w = plume.shape
    x, y = plume.start
    lik = plume.centred_likelihood
    h0 = kp.draw_first_hit(seed, 0, np.ascontiguousarray(plume.first_hit_cdf))
    p = plume.initial_belief(int(h0))
    sx, sy = kp.draw_source(seed, 0, p)
    key = np.uint64(rng.stream_key(seed, 0, kp.STREAM_HITS))
    for t in range(1, max_steps + 1):
        a = numpy_decide(plume, p, x, y, space_aware)
        x, y = x + int(plume.moves[a, 0]), y + int(plume.moves[a, 1])
        if (x, y) == (sx, sy):
            return t, True
        hit = kp.draw_hit(key, t, 0, lik, (sx - x, sy - y))
        p = p * lik[hit, h - 1 - y:2 * h - 1 - y, w - 1 - x:2 * w - 1 - x]
        p /= p.sum()
    return max_steps, False


def sample_agents(plume: PoissonHitPlume, n: int, seed: int = 0):
    """``n`` beliefs and positions met along protocol episodes (a few steps in)."""
    r = np.random.default_rng(seed)
    beliefs = np.empty((n,) + plume.shape)
    pos = np.empty((n, 2), dtype=np.int32)
    h, w = plume.shape
    lik = plume.centred_likelihood
    for i in range(n):
        p = plume.initial_belief(int(r.integers(1, plume.n_hits)))
        x, y = plume.start
        for _ in range(int(r.integers(0, 8))):
            dx, dy = plume.moves[r.integers(0, plume.n_actions)]
            x, y = int(np.clip(x + dx, 0, w - 1)), int(np.clip(y + dy, 0, h - 1))
            kp.update_belief(p, lik, (x, y), int(r.integers(0, 2)))
        beliefs[i], pos[i] = p, (x, y)
    return beliefs, pos


def _cpu(fn, repeats: int, clock=time.process_time) -> float:
    best = np.inf
    for _ in range(repeats):
        t = clock()
        fn()
        best = min(best, clock() - t)
    return best


def _wall(fn, repeats: int) -> float:
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def decision_rows(n_agents: int, threads: int, numpy_agents: int, repeats: int, domains=DOMAINS):
    rows = []
    for label, make in domains:
        plume = make()
        beliefs, pos = sample_agents(plume, n_agents)
        for space_aware in (False, True):
            pol = Infotaxis(space_aware, **({"likelihood": plume} if isinstance(plume, Likelihood) else {"plume": plume}))
            pol.decide(beliefs, pos)  # compile, allocate
            k = min(numpy_agents, n_agents)
            t_np = _cpu(lambda: [numpy_decide(plume, beliefs[i], pos[i, 0], pos[i, 1], space_aware) for i in range(k)],
                        repeats, time.thread_time) / k
            with_threads = {}
            for nt in (1, threads):
                numba.set_num_threads(nt)
                try:
                    timer = _cpu if nt == 1 else _wall
                    with_threads[nt] = timer(lambda: pol.decide(beliefs, pos), repeats) / n_agents
                finally:
                    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
            rows.append(dict(domain=label, policy="space-aware" if space_aware else "infotaxis", numpy=t_np,
                             one=with_threads[1], many=with_threads[threads]))
    return rows


@numba.njit(cache=False)
def _updates(beliefs, pos, hits, lik):
    for i in range(beliefs.shape[0]):
        kp.update_belief(beliefs[i], lik, (pos[i, 0], pos[i, 1]), hits[i])


def numpy_update(plume: PoissonHitPlume, p_xy, x, y, hit):
    """The Bayes update in NumPy on a belief indexed ``[x, y]`` (otto-benchmark's layout):
    ``p * L / (p * L).sum()``, a new array."""
    h, w = plume.shape
    q = p_xy * plume.centred_likelihood[hit, h - 1 - y:2 * h - 1 - y, w - 1 - x:2 * w - 1 - x].T
    return q / q.sum()


def update_rows(n_agents: int, numpy_agents: int, repeats: int, domains=DOMAINS):
    rows = []
    for label, make in domains:
        plume = make()
        beliefs, pos = sample_agents(plume, n_agents)
        beliefs_xy = np.ascontiguousarray(beliefs.transpose(0, 2, 1))
        hits = np.ones(n_agents, dtype=np.int64)
        lik = plume.centred_likelihood
        work = beliefs.copy()
        _updates(work[:1], pos[:1], hits[:1], lik)  # compile

        one = np.inf
        for _ in range(repeats):  # fresh beliefs each time, copied outside the timing
            work[:] = beliefs
            c0 = time.process_time()
            _updates(work, pos, hits, lik)
            one = min(one, (time.process_time() - c0) / n_agents)
        k = min(numpy_agents, n_agents)
        t_np = _cpu(lambda: [numpy_update(plume, beliefs_xy[i], pos[i, 0], pos[i, 1], 1) for i in range(k)], repeats,
                    time.thread_time) / k
        same = all(np.array_equal(work[i].T, numpy_update(plume, beliefs_xy[i], pos[i, 0], pos[i, 1], 1)) for i in range(k))
        rows.append(dict(domain=label, numpy=t_np, one=one, same=same))
    return rows


def _search_scenario(plume: PoissonHitPlume, max_steps: int) -> Scenario:
    return Scenario(plume=plume, start_positions=(plume.start,), sensors=(Hits(), Belief()), max_steps=max_steps)


def engine_episodes(n_episodes: int, plume: PoissonHitPlume, max_steps: int = 1000):
    """Protocol episodes through the engine: world ``b`` is seed ``b``. Returns the steps to the
    source per world (``max_steps`` if not found)."""
    sim = Simulator(_search_scenario(plume, max_steps), num_worlds=n_episodes, autoreset="disabled")
    sim.reset(seed=0)
    policy = Infotaxis()
    steps = np.full(n_episodes, max_steps)
    for t in range(1, max_steps + 1):
        _, reward, term, trunc = sim.step(policy.act(sim))
        steps[reward > 0] = t
        if not sim.state.active.any():
            break
    return steps


def episode_rows(n_episodes: int, threads: int, numpy_episodes: int, domain=DOMAINS[0], max_steps: int = 1000):
    label, make = domain
    plume = make()
    run_search(plume, 4, max_steps=max_steps)  # compile
    engine_episodes(2, plume, max_steps)
    numba.set_num_threads(threads)
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        res = run_search(plume, n_episodes, max_steps=max_steps)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        t0, c0 = time.perf_counter(), time.process_time()
        eng_steps = engine_episodes(n_episodes, plume, max_steps)
        eng_wall, eng_cpu = time.perf_counter() - t0, time.process_time() - c0
    finally:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    c0 = time.thread_time()
    np_steps = [numpy_episode(plume, s, max_steps=max_steps)[0] for s in range(numpy_episodes)]
    t_np = (time.thread_time() - c0) / numpy_episodes
    same = bool(np.array_equal(np_steps, res.steps[:numpy_episodes]))
    return dict(domain=label, episodes=n_episodes, wall=wall,
                cpu=cpu, mean=res.mean, ci=res.ci95, capped=res.n_capped, numpy_per_episode=t_np,
                numpy_episodes=numpy_episodes, numpy_same=same, engine_wall=eng_wall, engine_cpu=eng_cpu,
                engine_same=bool(np.array_equal(eng_steps, res.steps)))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: checks that every table still runs")
    parser.add_argument("--agents", type=int, default=1024)
    parser.add_argument("--episodes", type=int, default=6400)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    if args.agents < 1 or args.episodes < 1 or not 1 <= args.threads <= numba.config.NUMBA_NUM_THREADS:
        parser.error(f"--agents and --episodes must be >= 1, --threads in 1..{numba.config.NUMBA_NUM_THREADS}")
    if args.quick:
        n_agents, n_episodes, numpy_agents, numpy_episodes, repeats = 8, 16, 4, 2, 1
        domains, episode_domains = (DOMAINS[0], DOMAINS[-1]), DOMAINS[:1]
    else:
        n_agents, n_episodes, numpy_agents, numpy_episodes, repeats = args.agents, args.episodes, 64, 32, 5
        domains, episode_domains = DOMAINS, (DOMAINS[0], DOMAINS[-1])
    print(f"## One decision per agent, {n_agents} agents (NumPy on {min(numpy_agents, n_agents)})\n")
    print(f"| domain | policy | NumPy µs/agent | compiled, 1 thread µs/agent | speed-up | compiled, {args.threads} threads µs/agent (wall) |")
    print("|---|---|---|---|---|---|")
    for r in decision_rows(n_agents, args.threads, numpy_agents, repeats, domains + CALIBRATED):
        print(f"| {r['domain']} | {r['policy']} | {r['numpy'] * 1e6:.1f} | {r['one'] * 1e6:.2f} | "
              f"{r['numpy'] / r['one']:.0f}x | {r['many'] * 1e6:.2f} |")
    print(f"\n## One Bayes update per agent, {n_agents} agents (NumPy on {min(numpy_agents, n_agents)})\n")
    print("| domain | NumPy µs/agent | compiled, 1 thread µs/agent | speed-up | same beliefs, bit for bit |")
    print("|---|---|---|---|---|")
    for r in update_rows(n_agents, numpy_agents, repeats, domains + CALIBRATED):
        print(f"| {r['domain']} | {r['numpy'] * 1e6:.1f} | {r['one'] * 1e6:.2f} | {r['numpy'] / max(r['one'], 1e-9):.0f}x | "
              f"{'yes' if r['same'] else 'NO'} |")
    for domain in episode_domains:
        e = episode_rows(n_episodes, args.threads, numpy_episodes, domain)
        print(f"\n## Protocol episodes, infotaxis, {e['domain']}\n")
        print("| implementation | episodes | wall s | CPU s | mean steps ± 95 % | not found |")
        print("|---|---|---|---|---|---|")
        print(f"| run_search, {args.threads} threads | {e['episodes']} | {e['wall']:.2f} | {e['cpu']:.2f} | "
              f"{e['mean']:.2f} ± {e['ci']:.2f} | {e['capped']} |")
        print(f"| engine: Simulator + Infotaxis.act, {args.threads} threads | {e['episodes']} | {e['engine_wall']:.2f} | "
              f"{e['engine_cpu']:.2f} | same steps: {'yes' if e['engine_same'] else 'NO'} | |")
        print(f"| NumPy (same draws), 1 thread | {e['numpy_episodes']} (x{e['episodes'] / e['numpy_episodes']:.0f} "
              f"= {e['numpy_per_episode'] * e['episodes']:.0f} s) | | {e['numpy_per_episode'] * e['numpy_episodes']:.2f} | "
              f"same steps: {'yes' if e['numpy_same'] else 'NO'} | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
