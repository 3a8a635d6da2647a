#!/usr/bin/env python
"""End-to-end PPO training speed and time to 80 % success on the plume-following task, by path.

    python benchmarks/training.py [--budget 3e6] [--peer-budget 2e6] [--paths mlp,gru,mlp-sb3-settings,sb3,cleanrl]
                                  [--validations 15] [--png training.png] [--json training.json] [--tiny]

The task: ``scenarios.plume_following()`` (32x32 grid, Gaussian plume of sigma 8 with a new random
source every episode, the concentration at the agent's cell and its four neighbours, no position,
200 steps; ``examples/train_ppo.py --task following``). Every path trains from seed 0 with torch on
one thread and is validated the same way, excluded from its clock: the greedy policy on the same
1,000 held-out episodes (``plume_multi.evaluate``, seeds from ``training.VALIDATION_SEED``),
``--validations`` times over its budget. "Time to 80 %" is the training time (rollouts and updates)
at the first validation that reached 80 % success.

Paths (all in this process, one after the other, so their rates share the machine's load):

* ``mlp``: ``plume_multi.train(..., "ppo-mlp")`` with its defaults (4,096 worlds);
* ``gru``: ``plume_multi.train(..., "ppo-gru")`` with its defaults;
* ``mlp-sb3-settings``: ``plume_multi.train`` with Stable-Baselines3's settings of
  ``examples/train_ppo.py`` (256 worlds, 64 steps, 4 epochs, minibatches of 4,096, two layers of 64,
  learning rate 1e-3): the same work as the ``sb3`` row, so the ratio is the implementation's;
* ``sb3``: Stable-Baselines3's PPO on ``SB3VecEnv(vector_env(256))`` with ``examples/train_ppo.py``'s
  settings (today's path);
* ``cleanrl``: the CleanRL-style loop of ``examples/train_multiagent_ppo.py`` on the same task, one
  agent per world, 256 worlds (its speed only: it has no validation hook).

Rates are agent-steps per second of wall-clock time and per CPU-second of the process (the latter
is what a quiet machine gives one core; on a shared machine the wall-clock rate falls with the load,
printed below the table). Needs the ``sb3`` extra for the peers and ``viz`` for ``--png``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

import plume_multi
from plume_multi.scenarios import plume_following

ROOT = Path(__file__).resolve().parents[1]
PATHS = ("mlp", "gru", "mlp-sb3-settings", "sb3", "cleanrl")
LABELS = {
    "mlp": "plume_multi.train ppo-mlp (defaults)",
    "gru": "plume_multi.train ppo-gru (defaults)",
    "mlp-sb3-settings": "plume_multi.train ppo-mlp, SB3's settings",
    "sb3": "Stable-Baselines3 PPO, SB3VecEnv(vector_env(256)) (examples/train_ppo.py)",
    "cleanrl": "CleanRL-style loop (examples/train_multiagent_ppo.py), 256 worlds",
}
# examples/train_ppo.py's settings for Stable-Baselines3
SB3_SETTINGS = dict(n_steps=64, batch_size=4096, n_epochs=4, learning_rate=1e-3, gamma=0.99, ent_coef=0.01)
SB3_WORLDS = 256


def validation_success(policy, scenario, episodes: int) -> float:
    from plume_multi.training import VALIDATION_SEED

    return plume_multi.evaluate(policy, scenario, episodes, seed=VALIDATION_SEED, progress=False).success_rate


def run_ours(scenario, name: str, budget: int, validations: int, episodes: int, config=None) -> dict:
    result = plume_multi.train(scenario, name, budget, seed=0, config=config,
                               validate_every=max(1, budget // validations), validation_episodes=episodes)
    return {"env_steps": result.env_steps, "seconds": result.seconds, "cpu_seconds": result.cpu_seconds,
            "curve": [(row["seconds"], row["env_steps"], row["success_rate"]) for row in result.validation],
            "worlds": result.config.num_worlds}


def run_sb3(scenario, budget: int, validations: int, episodes: int) -> dict:
    import torch
    from gymnasium.vector import AutoresetMode
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import VecMonitor

    from plume_multi.integrations.sb3 import SB3VecEnv

    torch.set_num_threads(1)
    fields = dict(grid_size=scenario.grid_size, max_steps=scenario.max_steps, plume=scenario.plume,
                  sensors=scenario.sensors)
    venv = VecMonitor(SB3VecEnv(plume_multi.vector_env(SB3_WORLDS, autoreset_mode=AutoresetMode.SAME_STEP, **fields)))
    model = PPO("MlpPolicy", venv, seed=0, device="cpu", verbose=0, **SB3_SETTINGS)
    every = max(1, budget // validations)
    clock = {"wall": 0.0, "cpu": 0.0, "curve": [], "next": every}

    def validate() -> None:
        """The greedy policy on the held-out episodes; its time is taken off the clock."""
        now, cpu = time.perf_counter(), time.process_time()
        rate = validation_success(lambda obs: model.predict(obs, deterministic=True)[0], scenario, episodes)
        clock["curve"].append((now - clock["start"] - clock["paused_wall"], model.num_timesteps, rate))
        clock["paused_wall"] += time.perf_counter() - now
        clock["paused_cpu"] += time.process_time() - cpu

    class Validate(BaseCallback):
        """Validates before the first rollout past each multiple of ``every`` steps (after the
        update of the rollouts before it)."""

        def _on_step(self) -> bool:
            return True

        def _on_rollout_start(self) -> None:
            if self.model.num_timesteps >= clock["next"]:
                clock["next"] += every
                validate()

    clock.update(paused_wall=0.0, paused_cpu=0.0, start=time.perf_counter())
    cpu0 = time.process_time()
    model.learn(budget, callback=Validate())
    validate()  # the final policy
    wall = clock["curve"][-1][0]
    cpu = time.process_time() - cpu0 - clock["paused_cpu"]
    venv.close()
    return {"env_steps": model.num_timesteps, "seconds": wall, "cpu_seconds": cpu, "curve": clock["curve"],
            "worlds": SB3_WORLDS}


def run_cleanrl(scenario, budget: int) -> dict:
    """The CleanRL-style loop of examples/train_multiagent_ppo.py, its env made on this task."""
    spec = importlib.util.spec_from_file_location("train_multiagent_ppo", ROOT / "examples" / "train_multiagent_ppo.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    from gymnasium.vector import AutoresetMode

    def make_env(args, num_worlds, autoreset_mode=AutoresetMode.SAME_STEP):
        return plume_multi.multi_agent_vector_env(num_worlds, 1, autoreset_mode=autoreset_mode,
                                                  grid_size=scenario.grid_size, max_steps=scenario.max_steps,
                                                  plume=scenario.plume, sensors=scenario.sensors)

    module.make_env = make_env
    args = module.Args(num_worlds=SB3_WORLDS, n_agents=1, total_timesteps=budget)
    cpu0 = time.process_time()
    _, stats = module.train(args)
    return {"env_steps": stats["train_steps"], "seconds": stats["train_seconds"],
            "cpu_seconds": time.process_time() - cpu0, "curve": [], "worlds": SB3_WORLDS}


def breakdown(scenario, config, rounds: int = 5) -> dict:
    """CPU nanoseconds per agent-step of each part of ``plume_multi.train``'s loop with ``config``:
    the simulator's step alone (random actions), the whole rollout (network, sampling, copies and
    the step), and the update (per epoch), medians over ``rounds`` rollouts."""
    import torch

    from plume_multi import Simulator
    from plume_multi.training.policy import torch_threads
    from plume_multi.training.ppo import update
    from plume_multi.training.rollout import Rollout
    from plume_multi.training.trainer import _make_network

    with torch_threads(config.threads):
        net = _make_network("ppo-mlp", scenario, config, 0)
        generator = torch.Generator().manual_seed(0)
        optimizer = torch.optim.Adam(net.parameters(), lr=config.learning_rate, eps=1e-5, fused=True)
        sim = Simulator(scenario, config.num_worlds, autoreset="same_step", parallel=False)
        sim.reset(seed=0)
        rollout = Rollout(sim, net, config.rollout_steps, config.gamma, generator)
        rows = sim.total_agents
        actions = [np.random.default_rng(k).integers(0, scenario.n_actions, rows) for k in range(8)]
        parts = {"simulator step alone (part of the rollout)": [], "rollout (network + step)": [],
                 "update, per epoch": []}
        for _ in range(rounds + 1):
            cpu = time.process_time()
            for t in range(config.rollout_steps):
                sim.step(actions[t % 8])
            parts["simulator step alone (part of the rollout)"].append(time.process_time() - cpu)
            cpu = time.process_time()
            net.eval()
            rollout.collect()
            parts["rollout (network + step)"].append(time.process_time() - cpu)
            cpu = time.process_time()
            net.train()
            update(net, optimizer, rollout, config, generator)
            parts["update, per epoch"].append((time.process_time() - cpu) / config.epochs)
    steps = rows * config.rollout_steps
    return {name: float(np.median(values[1:])) / steps * 1e9 for name, values in parts.items()}


def time_to(curve, share: float = 0.8):
    for seconds, steps, rate in curve:
        if rate >= share:
            return seconds, steps
    return None


def table(rows: dict, reference: str | None) -> list[str]:
    lines = ["| path | worlds | agent-steps/s | per CPU-second | vs SB3 | time to 80 % | steps to 80 % | last validation |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    ref = rows[reference]["env_steps"] / rows[reference]["seconds"] if reference in rows else None
    for path, r in rows.items():
        rate = r["env_steps"] / r["seconds"]
        reached = time_to(r["curve"])
        ratio = f"{rate / ref:.1f}x" if ref else "-"
        last = f"{r['curve'][-1][2]:.1%}" if r["curve"] else "-"
        when = (f"{reached[0]:.1f} s", f"{reached[1] / 1e6:.2f} M") if reached else \
            (("not reached", "-") if r["curve"] else ("-", "-"))
        lines.append(f"| {LABELS[path]} | {r['worlds']} | {rate:,.0f} | {r['env_steps'] / r['cpu_seconds']:,.0f} | "
                     f"{ratio} | {when[0]} | {when[1]} | {last} |")
    return lines


def plot(rows: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, r in rows.items():
        if r["curve"]:
            seconds, _, rate = zip(*r["curve"])
            ax.plot(seconds, np.asarray(rate) * 100, marker="o", ms=3, label=LABELS[name])
    ax.axhline(80, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("training time, s (validation excluded)")
    ax.set_ylabel("greedy success, % of 1,000 held-out episodes")
    ax.set_title("PPO on plume following (32x32, random source, no position)")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=float, default=3e6, help="agent-steps for plume_multi.train's defaults")
    parser.add_argument("--peer-budget", type=float, default=2e6, help="agent-steps for the SB3-settings rows")
    parser.add_argument("--paths", default=",".join(PATHS), help=f"comma-separated, among {', '.join(PATHS)}")
    parser.add_argument("--validations", type=int, default=15, help="validations over each budget")
    parser.add_argument("--episodes", type=int, default=1000, help="held-out episodes per validation")
    parser.add_argument("--png", default=None, help="write the success-against-time figure here")
    parser.add_argument("--json", default=None, help="write every figure here")
    parser.add_argument("--tiny", action="store_true", help="a smoke run (the tests): tiny budgets and worlds")
    args = parser.parse_args(argv)
    paths = [p.strip() for p in args.paths.split(",") if p.strip()]
    unknown = sorted(set(paths) - set(PATHS))
    if unknown:
        parser.error(f"--paths: unknown {unknown}; expected some of {list(PATHS)}")
    scenario = plume_following()
    budget, peer_budget, episodes = int(args.budget), int(args.peer_budget), args.episodes
    configs = {}
    from plume_multi.training import PPOConfig

    configs["mlp-sb3-settings"] = PPOConfig(num_worlds=SB3_WORLDS, rollout_steps=64, epochs=4, minibatch_size=4096,
                                            learning_rate=1e-3, anneal_lr=False, hidden=64, layers=2)
    if args.tiny:
        budget = peer_budget = 4096
        episodes = 16
        configs = {"mlp": PPOConfig(num_worlds=64, rollout_steps=8, minibatch_size=256),
                   "gru": PPOConfig.for_policy("ppo-gru", num_worlds=32, rollout_steps=8, minibatch_size=128),
                   "mlp-sb3-settings": configs["mlp-sb3-settings"].replace(num_worlds=16, rollout_steps=64)}
    load = [os.getloadavg()[0]]
    rows = {}
    for path in paths:
        print(f"{LABELS[path]} ...", file=sys.stderr, flush=True)
        if path in ("mlp", "gru", "mlp-sb3-settings"):
            name = "ppo-gru" if path == "gru" else "ppo-mlp"
            rows[path] = run_ours(scenario, name, peer_budget if path == "mlp-sb3-settings" else budget,
                                  args.validations, episodes, configs.get(path))
        elif path == "sb3":
            rows[path] = run_sb3(scenario, peer_budget, args.validations, episodes)
        else:
            rows[path] = run_cleanrl(scenario, peer_budget)
        load.append(os.getloadavg()[0])
    lines = table(rows, "sb3")
    print("\n".join(lines))
    if "mlp" in rows:
        config = configs.get("mlp") or PPOConfig()
        parts = breakdown(scenario, config)
        total = parts["rollout (network + step)"] + config.epochs * parts["update, per epoch"]
        print(f"\nWhere the time goes in ppo-mlp's loop ({config.num_worlds} worlds x {config.rollout_steps} steps, "
              f"{config.epochs} epoch(s) of minibatches of {config.minibatch_size}, hidden {config.hidden}), CPU ns per "
              "agent-step:\n\n| part | ns | share |\n|---|---:|---:|")
        for name, ns in parts.items():
            share = ns * (config.epochs if name.startswith("update") else 1) / total
            print(f"| {name} | {ns:,.0f} | {share:.0%} |")
        print(f"| total (rollout + update) | {total:,.0f} | = {1e9 / total:,.0f} agent-steps per CPU-second |")
    print(f"\nplume_following(): 32x32, sigma 8, random source, no position, 200 steps; seed 0, torch on 1 thread; "
          f"budgets {budget:,} (plume_multi.train defaults) and {peer_budget:,} agent-steps (the rest). "
          f"Load average (1 min) on this machine's {os.cpu_count()} cores during the run: "
          f"{min(load):.1f} to {max(load):.1f}.")
    if args.png:
        plot(rows, args.png)
        print(f"wrote {args.png}")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "load": load, "budget": budget,
                                               "peer_budget": peer_budget}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
