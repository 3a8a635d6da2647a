"""Agent-steps per second through the PettingZoo dict API, beside ``Simulator.step`` at the same N.

For each N in ``SIZES``, blocks of ``parallel_env().step(actions)`` and of ``Simulator.step(actions)``
(the same scenario, one world) are timed in the same process, interleaved and repeated; the table
shows medians. Action dicts (Python ints keyed by ``env.agents``, as a policy's
``dict(zip(env.agents, a.tolist()))`` makes them) and action arrays are built before timing, so a
row measures the step call alone. The last row is PettingZoo's own ``performance_benchmark`` on the
AEC form (``env()``): agent turns per second, one ``last()`` + ``step()`` per turn.

Usage::

    python benchmarks/pettingzoo_api.py            # full run (~10 s)
    python benchmarks/pettingzoo_api.py --quick    # tiny run, for the tests

``measure(quick)`` returns the rows as dicts for the project's main benchmark.

(The file is not called ``pettingzoo.py``: a script's folder comes first on ``sys.path``, so that
name would shadow the PettingZoo package for every script in ``benchmarks/``.)
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import re
import statistics
import time

import numpy as np

from plume_multi import Scenario, Simulator
from plume_multi.envs import pettingzoo as pz

SIZES = (8, 64, 1024)
TARGET_AGENT_STEPS_PER_S = {1024: 1.5e6}
REFERENCE = "MAgent2 (C++ core behind the same dict API): 0.30-0.47 M agent-steps/s on this machine"
PERF_BENCHMARK_N = 64
# Steps are long enough that an episode never truncates inside a block.
MAX_CYCLES = 10**9


def _env_block(env, action_dicts, steps: int, seed: int) -> tuple[int, float]:
    """Time ``steps`` dict-API steps from a fresh episode; returns (agent-steps, seconds).

    When agents find the source, the clock stops while the prepared dicts are cut down to the
    agents still searching, then runs on; each step counts the agents it moved.
    """
    env.reset(seed=seed)
    step = env.step
    live = len(env.agents)
    agent_steps = 0
    elapsed = 0.0
    start = time.perf_counter()
    for k in range(steps):
        step(action_dicts[k & 15])
        agent_steps += live
        if len(env.agents) != live:
            elapsed += time.perf_counter() - start
            live = len(env.agents)
            if live == 0:
                return agent_steps, elapsed
            action_dicts = [{agent: d[agent] for agent in env.agents} for d in action_dicts]
            start = time.perf_counter()
    return agent_steps, elapsed + time.perf_counter() - start


def _sim_block(sim, action_arrays, steps: int, seed: int) -> tuple[int, float]:
    """Time ``steps`` ``Simulator.step`` calls; returns (agent-steps, seconds)."""
    sim.reset(seed=seed)
    step = sim.step
    start = time.perf_counter()
    for k in range(steps):
        step(action_arrays[k & 15])
    return steps * sim.total_agents, time.perf_counter() - start


def _aec_turns_per_s(aec_env, seconds: float) -> float:
    """The loop of ``pettingzoo.test.performance_benchmark``, for ``seconds`` instead of 5."""
    turns = 0
    aec_env.reset(seed=0)
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for agent in aec_env.agent_iter(aec_env.num_agents):
            _, _, termination, truncation, _ = aec_env.last()
            action = None if termination or truncation else aec_env.action_space(agent).sample()
            aec_env.step(action)
            turns += 1
            if all(aec_env.terminations.values()) or all(aec_env.truncations.values()):
                aec_env.reset()
    return turns / (time.perf_counter() - start)


def _performance_benchmark_turns_per_s(aec_env) -> float:
    """Run PettingZoo's ``performance_benchmark`` (5 s) and read its "turns per second" line."""
    from pettingzoo.test import performance_benchmark

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        performance_benchmark(aec_env)
    match = re.search(r"([0-9.eE+-]+) turns per second", out.getvalue())
    if match is None:
        raise RuntimeError(f"performance_benchmark printed no 'turns per second' line: {out.getvalue()!r}")
    return float(match.group(1))


def measure(quick: bool = False) -> list[dict]:
    """Benchmark rows.

    Args:
        quick: a tiny run (a fraction of a second per size, one repeat) that only shows the
            benchmark works; figures from it are not meaningful.

    Returns:
        One dict per row with keys ``api``, ``n``, ``agent_steps_per_s``,
        ``simulator_agent_steps_per_s`` (the reference measured beside it, for dict-API rows),
        ``fraction_of_simulator``, ``target_agent_steps_per_s`` (or None) and ``reference``.
    """
    repeats = 1 if quick else 7
    block_agent_steps = 2_000 if quick else 150_000
    rng = np.random.default_rng(0)
    setups = {}
    for n in SIZES:
        env = pz.parallel_env(n_agents=n, max_cycles=MAX_CYCLES)
        sim = Simulator(Scenario(n_agents=n, max_steps=MAX_CYCLES), autoreset="disabled")
        env.reset(seed=0)
        arrays = [rng.integers(0, 4, n, dtype=np.int64) for _ in range(16)]
        dicts = [dict(zip(env.agents, a.tolist())) for a in arrays]
        steps = max(10, block_agent_steps // n)
        _env_block(env, dicts, 2, 0)  # warm-up: compiled kernels loaded, caches touched
        _sim_block(sim, arrays, 2, 0)
        setups[n] = (env, sim, dicts, arrays, steps)

    # Set-up leaves many objects behind; collect them now rather than in a timed block. The
    # collector stays on while timing: its work on the dicts a step returns is part of the cost.
    gc.collect()
    rates = {(api, n): [] for api in ("sim", "env") for n in SIZES}
    for r in range(repeats):
        for n in SIZES:
            env, sim, dicts, arrays, steps = setups[n]
            seed = 1000 * r + n
            agent_steps, seconds = _sim_block(sim, arrays, steps, seed)
            rates["sim", n].append(agent_steps / seconds)
            agent_steps, seconds = _env_block(env, dicts, steps, seed)
            rates["env", n].append(agent_steps / seconds)

    rows = []
    for n in SIZES:
        sim_rate = statistics.median(rates["sim", n])
        env_rate = statistics.median(rates["env", n])
        rows.append(dict(api="Simulator.step", n=n, agent_steps_per_s=sim_rate,
                         simulator_agent_steps_per_s=sim_rate, fraction_of_simulator=1.0,
                         target_agent_steps_per_s=None, reference=None))
        rows.append(dict(api="parallel_env().step", n=n, agent_steps_per_s=env_rate,
                         simulator_agent_steps_per_s=sim_rate, fraction_of_simulator=env_rate / sim_rate,
                         target_agent_steps_per_s=TARGET_AGENT_STEPS_PER_S.get(n), reference=REFERENCE))

    aec_env = pz.env(n_agents=PERF_BENCHMARK_N)
    if quick:
        turns = _aec_turns_per_s(aec_env, 0.2)
        api = "env() AEC, performance_benchmark loop (0.2 s)"
    else:
        turns = _performance_benchmark_turns_per_s(aec_env)
        api = "env() AEC, pettingzoo performance_benchmark"
    rows.append(dict(api=api, n=PERF_BENCHMARK_N, agent_steps_per_s=turns, simulator_agent_steps_per_s=None,
                     fraction_of_simulator=None, target_agent_steps_per_s=None,
                     reference="one agent turn (last() + step()) per agent-step"))
    return rows


def _m(value) -> str:
    return "" if value is None else f"{value / 1e6:.3f} M"


def format_table(rows: list[dict], quick: bool = False) -> str:
    """The rows as a fixed-width text table (agent-steps per second in millions)."""
    lines = ["quick run: it shows the benchmark works; its figures mean nothing"] if quick else []
    lines += [f"{'api':<48} {'N':>5} {'agent-steps/s':>14} {'of Simulator':>13} {'target':>9}"]
    for row in rows:
        frac = row["fraction_of_simulator"]
        lines.append(
            f"{row['api']:<48} {row['n']:>5} {_m(row['agent_steps_per_s']):>14} "
            f"{'' if frac is None else f'{frac:.1%}':>13} {_m(row['target_agent_steps_per_s']):>9}"
        )
    for row in rows:
        target = row["target_agent_steps_per_s"]
        if target is not None and not quick:
            verdict = "met" if row["agent_steps_per_s"] >= target else "NOT met"
            lines.append(f"target >= {target / 1e6:.1f} M agent-steps/s at N = {row['n']}: {verdict}")
    lines.append(f"reference: {REFERENCE}")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny run (checks the benchmark works)")
    args = parser.parse_args(argv)
    print(format_table(measure(quick=args.quick), quick=args.quick))


if __name__ == "__main__":
    main()
