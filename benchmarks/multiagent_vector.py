"""Env-steps per second of ``multi_agent_vector_env`` beside the SuperSuit route, in one process.

B worlds x N searchers as B*N rows (one env-step = one agent advancing one step), the training
configuration of ``examples/train_multiagent_ppo.py``: 256 worlds x 4 searchers on a 32x32 grid,
sigma 8, 200 steps per episode. Rows, interleaved block by block and repeated (the table shows
medians):

* ``Simulator.step``: the engine alone, the ceiling of the rows below;
* ``multi_agent_vector_env(B, N).step``: the Gymnasium ``VectorEnv`` (NEXT_STEP autoreset,
  finished agents masked, ``info["active"]`` and action masks, fresh copies returned);
* the same under SAME_STEP behind ``SB3VecEnv`` (what Stable-Baselines3 steps);
* ``vector_env(B * N).step``: the single-agent vector path at the same number of rows;
* SuperSuit: ``concat_vec_envs_v1(pettingzoo_env_to_vec_env_v1(black_death_v3(parallel_env(N))), B,
  num_cpus=0)`` as a Gymnasium ``VectorEnv``, and with ``base_class="stable_baselines3"``.

Actions are drawn before timing (16 arrays per row, used in turn), so a row measures the step call.

Usage::

    python benchmarks/multiagent_vector.py            # full run (~15 s)
    python benchmarks/multiagent_vector.py --quick    # tiny run, for the tests
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time

import numpy as np
from gymnasium.vector import AutoresetMode

import plume_multi
from plume_multi import Scenario, Simulator

WORLDS, AGENTS = 256, 4
CONFIG = dict(grid_size=(32, 32), sigma=8.0, max_steps=200)
NATIVE = "multi_agent_vector_env"
SUPERSUIT = "SuperSuit VectorEnv"


def _block(step, actions, steps: int) -> float:
    """Seconds for ``steps`` calls of ``step``, cycling through the prepared ``actions``."""
    start = time.perf_counter()
    for k in range(steps):
        step(actions[k & 15])
    return time.perf_counter() - start


def _supersuit(worlds: int, agents: int, base_class: str):
    import supersuit as ss

    par = plume_multi.parallel_env(n_agents=agents, grid_size=CONFIG["grid_size"], sigma=CONFIG["sigma"],
                                   max_cycles=CONFIG["max_steps"])
    vec = ss.pettingzoo_env_to_vec_env_v1(ss.black_death_v3(par))
    return ss.concat_vec_envs_v1(vec, worlds, num_cpus=0, base_class=base_class)


def _sb3_step(venv):
    def step(actions):
        venv.step_async(actions)
        return venv.step_wait()
    return step


def _setups(worlds: int, agents: int, quick: bool):
    """(label, rows, step function, actions, steps per block) of each row, reset and warm."""
    from plume_multi.integrations.sb3 import SB3VecEnv

    rows = worlds * agents
    made = []
    sim = Simulator(Scenario(n_agents=agents, **CONFIG), worlds)
    sim.reset(seed=0)
    made.append(("Simulator.step (engine alone)", sim.step))

    env = plume_multi.multi_agent_vector_env(worlds, agents, **CONFIG)
    env.reset(seed=0)
    made.append((f"{NATIVE}.step", env.step))

    sb3 = SB3VecEnv(plume_multi.multi_agent_vector_env(worlds, agents, autoreset_mode=AutoresetMode.SAME_STEP,
                                                       **CONFIG))
    sb3.seed(0)
    sb3.reset()
    made.append((f"SB3VecEnv({NATIVE})", _sb3_step(sb3)))

    single = plume_multi.vector_env(rows, **CONFIG)
    single.reset(seed=0)
    made.append((f"vector_env({rows}) (single-agent rows)", single.step))

    ss_gym = _supersuit(worlds, agents, "gymnasium")
    ss_gym.reset(seed=0)
    made.append((f"{SUPERSUIT}", ss_gym.step))

    ss_sb3 = _supersuit(worlds, agents, "stable_baselines3")
    ss_sb3.reset()
    made.append(("SuperSuit SB3 VecEnv", _sb3_step(ss_sb3)))

    rng = np.random.default_rng(0)
    budget = 20_000 if quick else 4_000_000  # env-steps per block; SuperSuit rows get 1/200 of it
    setups = []
    for label, step in made:
        actions = [rng.integers(0, 4, rows, dtype=np.int64) for _ in range(16)]
        _block(step, actions, 4)  # warm-up: kernels loaded, caches touched
        share = 200 if label.startswith("SuperSuit") else 1
        setups.append((label, rows, step, actions, max(4, budget // (rows * share))))
    return setups


def measure(quick: bool = False, worlds: int = WORLDS, agents: int = AGENTS) -> list[dict]:
    """Benchmark rows: dicts with ``api``, ``rows`` (B * N), ``env_steps_per_s`` and
    ``us_per_call``. ``quick``: a tiny run (one repeat) that only shows the benchmark works."""
    setups = _setups(worlds, agents, quick)
    repeats = 1 if quick else 7
    rates = {label: [] for label, *_ in setups}
    gc.collect()
    for _ in range(repeats):
        for label, n, step, actions, steps in setups:
            rates[label].append(n * steps / _block(step, actions, steps))
    return [dict(api=label, rows=n, env_steps_per_s=statistics.median(rates[label]),
                 us_per_call=1e6 * n / statistics.median(rates[label])) for label, n, *_ in setups]


def format_table(rows: list[dict], worlds: int, agents: int, quick: bool = False) -> str:
    """The rows as a fixed-width table, with each rate's ratio to the SuperSuit VectorEnv's."""
    lines = ["quick run: it shows the benchmark works; its figures mean nothing"] if quick else []
    base = next(r["env_steps_per_s"] for r in rows if r["api"] == SUPERSUIT)
    lines.append(f"{worlds} worlds x {agents} searchers = {worlds * agents} rows; "
                 f"grid {CONFIG['grid_size'][0]}x{CONFIG['grid_size'][1]}, random actions")
    lines.append(f"{'api':<44} {'env-steps/s':>13} {'us/call':>10} {'vs SuperSuit':>13}")
    for r in rows:
        lines.append(f"{r['api']:<44} {r['env_steps_per_s'] / 1e6:>11.3f} M {r['us_per_call']:>10.1f} "
                     f"{r['env_steps_per_s'] / base:>12.1f}x")
    return "\n".join(lines)


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny run (checks the benchmark works)")
    parser.add_argument("--worlds", type=int, default=WORLDS, help=f"worlds B (default {WORLDS})")
    parser.add_argument("--agents", type=int, default=AGENTS, help=f"searchers per world N (default {AGENTS})")
    args = parser.parse_args(argv)
    worlds, agents = (8, 2) if args.quick else (args.worlds, args.agents)
    rows = measure(quick=args.quick, worlds=worlds, agents=agents)
    print(format_table(rows, worlds, agents, quick=args.quick))
    return rows


if __name__ == "__main__":
    main()
