"""Deep RL on the olfactory-search POMDP: PPO on the Bayesian belief, beside infotaxis.

The task is infotaxis' Poisson-hit search (``scenarios.poisson_search``): the agent starts at the
centre of an N x N domain, receives random odor hits whose rate falls with the distance to a
hidden source, and must step onto the source. The engine keeps each world's Bayesian posterior
(``sensors.Belief()``, a (2N-1) x (2N-1) image centred on the agent, as in Loisy & Heinonen 2023),
so an RL library trains on the POMDP without a Bayes filter of its own. Stable-Baselines3's PPO
(an MLP on the belief image) trains on ``vector_env`` worlds; ``plume_multi.evaluate`` then runs
it, infotaxis and a random walk on the same held-out episodes.

    python examples/train_belief_ppo.py              # about 1.5 minutes on 2 cores
    python examples/train_belief_ppo.py --tiny       # a smoke run, seconds (the tests use it)

Needs the ``sb3`` extra: ``pip install "plume-multi[sb3]"``.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from gymnasium.vector import AutoresetMode

import plume_multi
from plume_multi.policies import Infotaxis, RandomPolicy
from plume_multi.scenarios import poisson_search
from plume_multi.integrations.sb3 import SB3VecEnv


@dataclass
class Args:
    lambda_over_dx: float = 1.0
    """dispersion length in cells (1: the 19 x 19 domain)"""
    R_dt: float = 2.0
    """emission rate times the time step"""
    max_steps: int = 100
    """step cap of an episode"""
    num_envs: int = 64
    """worlds stepped together during training"""
    total_timesteps: int = 300_000
    """environment steps to train for"""
    eval_episodes: int = 500
    """held-out episodes per policy (seeded eval_seed + e)"""
    seed: int = 0
    eval_seed: int = 1_000_000
    out_dir: str = "out/train_belief_ppo"
    tiny: bool = False
    """a smoke run: a few thousand steps, few evaluation episodes"""


def parse_args(argv=None) -> Args:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name, value in asdict(Args()).items():
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=value)
        else:
            parser.add_argument(flag, type=type(value), default=value)
    args = Args(**vars(parser.parse_args(argv)))
    if args.tiny:
        args.total_timesteps, args.num_envs, args.eval_episodes, args.max_steps = 2048, 16, 16, 30
    return args


def main(argv=None) -> dict:
    args = parse_args(argv)
    import torch
    from stable_baselines3 import PPO

    torch.set_num_threads(1)
    scenario = poisson_search(args.lambda_over_dx, args.R_dt, max_steps=args.max_steps)
    options = dict(plume=scenario.plume, sensors=scenario.sensors, start_positions=scenario.start_positions,
                   max_steps=scenario.max_steps)
    venv = SB3VecEnv(plume_multi.vector_env(args.num_envs, autoreset_mode=AutoresetMode.SAME_STEP, **options))
    print(f"PPO on the belief ({scenario.obs_dim} inputs: hits + the centred posterior), "
          f"{scenario.grid_size[0]}x{scenario.grid_size[1]} domain, {args.total_timesteps:,} steps", flush=True)
    model = PPO("MlpPolicy", venv, seed=args.seed, n_steps=128, batch_size=1024, n_epochs=4, learning_rate=3e-4,
                ent_coef=0.01, device="cpu", verbose=0)
    start = time.perf_counter()
    model.learn(args.total_timesteps)
    seconds = time.perf_counter() - start
    venv.close()

    policies = {
        "PPO on the belief (greedy)": lambda obs: model.predict(obs, deterministic=True)[0],
        "infotaxis": Infotaxis(),
        "random walk": lambda scenario, seed: RandomPolicy(4, seed=seed),
    }
    rows = []
    for name, policy in policies.items():
        result = plume_multi.evaluate(policy, scenario, args.eval_episodes, seed=args.eval_seed, progress=False)
        low, high = result.mean_interval()
        rows.append(dict(policy=name, success_rate=result.success_rate, mean_steps=result.mean,
                         ci95=[low, high], episodes=args.eval_episodes))
    lines = ["| policy | found the source | mean steps (found) | 95 % interval |", "|---|---:|---:|---:|"]
    for r in rows:
        mean = "n/a" if not np.isfinite(r["mean_steps"]) else f"{r['mean_steps']:.1f}"
        ci = "n/a" if not np.isfinite(r["ci95"][0]) else f"{r['ci95'][0]:.1f}–{r['ci95'][1]:.1f}"
        lines.append(f"| {r['policy']} | {r['success_rate']:.1%} | {mean} | {ci} |")
    table = "\n".join(lines)
    print(f"trained in {seconds:.1f} s\n{table}")
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results = dict(args=asdict(args), train_seconds=seconds, rows=rows)
    (out / "results.json").write_text(json.dumps(results, indent=2, default=float))
    (out / "results.md").write_text(table + "\n")
    return results


if __name__ == "__main__":
    main()
