"""Env-steps per second of ``vector_env(num_envs=4096).step`` beside Gymnasium's ``SyncVectorEnv``.

Rows, all measured in the same process, interleaved block by block and repeated (the table shows
medians):

* ``Simulator.step`` at 4096 worlds: the engine alone, the ceiling of the rows below;
* ``vector_env(4096).step``: compact observation, NEXT_STEP autoreset, action masks in the
  infos, fresh copies returned (the issue's target: >= 60 M env-steps/s on this machine);
* ``vector_env(16).step``: the same at the batch size of the next row;
* ``SyncVectorEnv`` of 16 ``PlumeSearchEnv(observation_model=CompactObservation())`` copies:
  Gymnasium's generic way to batch the single-agent env.

Actions are drawn before timing (16 arrays per row, used in turn), so a row measures the step call.

Usage::

    python benchmarks/vector.py            # full run (~15 s)
    python benchmarks/vector.py --quick    # tiny run, for the tests

``measure(quick)`` returns the rows as dicts for the project's main benchmark.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time

import numpy as np
from gymnasium.vector import SyncVectorEnv

import plume_multi
from plume_multi import Scenario, Simulator
from plume_multi.envs.components import CompactObservation

BIG, SMALL = 4096, 16
TARGET_ENV_STEPS_PER_S = 60e6
REFERENCE = "PufferLib Ocean (a C environment), the fastest peer measured on this machine: 70 M env-steps/s"


def _block(step, actions, steps: int) -> float:
    """Seconds for ``steps`` calls of ``step``, cycling through the prepared ``actions``."""
    start = time.perf_counter()
    for k in range(steps):
        step(actions[k & 15])
    return time.perf_counter() - start


def _setups(quick: bool) -> list[tuple[str, int, object, list, int]]:
    """(label, num_envs, step function, actions, steps per block) of each row, reset and warm."""
    rng = np.random.default_rng(0)
    rows = []

    sim = Simulator(Scenario(), BIG)
    sim.reset(seed=0)
    rows.append(("Simulator.step (engine alone)", BIG, sim.step))

    for n in (BIG, SMALL):
        env = plume_multi.vector_env(n)
        env.reset(seed=0)
        rows.append((f"vector_env({n}).step", n, env.step))

    sync = SyncVectorEnv([lambda: plume_multi.PlumeSearchEnv(observation_model=CompactObservation())
                          for _ in range(SMALL)])
    sync.reset(seed=0)
    rows.append((f"SyncVectorEnv of {SMALL} PlumeSearchEnv", SMALL, sync.step))

    budget = 20_000 if quick else 4_000_000  # env-steps per block; SyncVectorEnv rows get fewer
    setups = []
    for label, n, step in rows:
        actions = [rng.integers(0, 4, n, dtype=np.int64) for _ in range(16)]
        _block(step, actions, 16)  # warm-up: kernels loaded, caches touched
        steps = max(4, budget // n) if not label.startswith("Sync") else max(4, budget // (n * 100))
        setups.append((label, n, step, actions, steps))
    return setups


def measure(quick: bool = False) -> list[dict]:
    """Benchmark rows.

    Args:
        quick: a tiny run (milliseconds per row, one repeat) that only shows the benchmark works;
            its figures are not meaningful.

    Returns:
        One dict per row with keys ``api``, ``num_envs``, ``env_steps_per_s``,
        ``us_per_call`` (microseconds per ``step`` call), ``target_env_steps_per_s`` (or None)
        and ``reference`` (or None).
    """
    setups = _setups(quick)
    repeats = 1 if quick else 7
    rates = {label: [] for label, *_ in setups}
    gc.collect()
    for _ in range(repeats):
        for label, n, step, actions, steps in setups:
            rates[label].append(n * steps / _block(step, actions, steps))
    rows = []
    for label, n, _, _, _ in setups:
        rate = statistics.median(rates[label])
        big_env = label == f"vector_env({BIG}).step"
        rows.append(dict(api=label, num_envs=n, env_steps_per_s=rate, us_per_call=1e6 * n / rate,
                         target_env_steps_per_s=TARGET_ENV_STEPS_PER_S if big_env else None,
                         reference=REFERENCE if big_env else None))
    return rows


def format_table(rows: list[dict], quick: bool = False) -> str:
    """The rows as a fixed-width text table (env-steps per second in millions)."""
    lines = ["quick run: it shows the benchmark works; its figures mean nothing"] if quick else []
    lines.append(f"{'api':<40} {'num_envs':>8} {'env-steps/s':>13} {'us/call':>9} {'target':>8}")
    for r in rows:
        target = "" if r["target_env_steps_per_s"] is None else f"{r['target_env_steps_per_s'] / 1e6:.0f} M"
        lines.append(f"{r['api']:<40} {r['num_envs']:>8} {r['env_steps_per_s'] / 1e6:>11.3f} M "
                     f"{r['us_per_call']:>9.1f} {target:>8}")
    for r in rows:
        if r["target_env_steps_per_s"] is not None and not quick:
            verdict = "met" if r["env_steps_per_s"] >= r["target_env_steps_per_s"] else "NOT met"
            lines.append(f"target >= {r['target_env_steps_per_s'] / 1e6:.0f} M env-steps/s at num_envs = "
                         f"{r['num_envs']}: {verdict}")
    lines.append(f"reference: {REFERENCE}")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny run (checks the benchmark works)")
    args = parser.parse_args(argv)
    print(format_table(measure(quick=args.quick), quick=args.quick))


if __name__ == "__main__":
    main()
