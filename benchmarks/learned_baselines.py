#!/usr/bin/env python
"""The learned baselines over training seeds: ppo-mlp and ppo-gru, each trained with a fixed budget
from seeds 0..S-1 on plume following, then evaluated greedily on the same held-out episodes.

    python benchmarks/learned_baselines.py [--seeds 5] [--budget 3e6] [--gru-budget 3e6] [--episodes 10000]
                                           [--policies ppo-mlp,ppo-gru] [--out baselines_output] [--tiny]

Every run is ``plume_multi.train(scenarios.plume_following(), NAME, BUDGET, seed=s)`` with the
baseline's defaults (the command ``plume-multi train --scenario plume_following --policy NAME --budget
BUDGET --seed s`` does the same); its policy is saved as ``OUT/NAME-seed{s}.pt`` and evaluated with
``plume_multi.evaluate`` on episodes seeded 0..E-1 (disjoint from the training and validation
worlds). The table gives, per baseline, the mean over seeds and the spread (standard deviation and
range) of the success rate and of the mean steps to the source, the training time and speed, with
the gradient climber and a random walk on the same episodes for scale.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

import plume_multi
from plume_multi.policies import GradientClimber, RandomPolicy
from plume_multi.scenarios import plume_following

POLICIES = ("ppo-mlp", "ppo-gru")


def _figure(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` significant digits, with thousands separators from 1,000 on."""
    return f"{float(f'{x:.{digits}g}'):,.0f}" if abs(x) >= 1000 else f"{x:.{digits}g}"


def spread(values) -> str:
    """``mean ± std (min–max)`` of a list (standard deviation 0 for one value)."""
    v = np.asarray(values, dtype=float)
    std = v.std(ddof=1) if len(v) > 1 else 0.0
    return f"{_figure(v.mean())} ± {_figure(std, 2)} ({_figure(v.min())}–{_figure(v.max())})"


def train_and_evaluate(name: str, seed: int, budget: int, episodes: int, out: Path, config=None) -> dict:
    scenario = plume_following()
    result = plume_multi.train(scenario, name, budget, seed=seed, config=config, validate_every=0,
                               validation_episodes=0)
    path = result.policy.save(out / f"{name}-seed{seed}.pt")
    evaluation = plume_multi.evaluate(result.policy, scenario, episodes, seed=0, progress=False)
    return {"policy": name, "seed": seed, "file": str(path), "success_rate": evaluation.success_rate,
            "mean_steps": evaluation.mean, "env_steps": result.env_steps, "seconds": result.seconds,
            "steps_per_second": result.steps_per_second, "cpu_seconds": result.cpu_seconds}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5, help="training seeds 0..S-1 (default 5)")
    parser.add_argument("--budget", type=float, default=3e6, help="agent-steps per ppo-mlp run (default 3e6)")
    parser.add_argument("--gru-budget", type=float, default=3e6, help="agent-steps per ppo-gru run (default 3e6)")
    parser.add_argument("--episodes", type=int, default=10_000, help="evaluation episodes per policy (default 10000)")
    parser.add_argument("--policies", default=",".join(POLICIES), help="comma-separated (default ppo-mlp,ppo-gru)")
    parser.add_argument("--out", default="baselines_output", help="folder for the policies and results.json")
    parser.add_argument("--tiny", action="store_true", help="a smoke run (the tests): 2 seeds, tiny budgets")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.policies.split(",") if n.strip()]
    if set(names) - set(POLICIES):
        parser.error(f"--policies: expected some of {list(POLICIES)}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    budgets = {"ppo-mlp": int(args.budget), "ppo-gru": int(args.gru_budget)}
    seeds, episodes, configs = range(args.seeds), args.episodes, {}
    if args.tiny:
        from plume_multi.training import PPOConfig

        seeds, episodes, budgets = range(2), 32, {"ppo-mlp": 2048, "ppo-gru": 1024}
        configs = {"ppo-mlp": PPOConfig(num_worlds=64, rollout_steps=8, minibatch_size=256),
                   "ppo-gru": PPOConfig.for_policy("ppo-gru", num_worlds=32, rollout_steps=8, minibatch_size=128)}
    load = [os.getloadavg()[0]]
    runs = []
    for name in names:
        for seed in seeds:
            print(f"{name}, seed {seed} ...", file=sys.stderr, flush=True)
            runs.append(train_and_evaluate(name, seed, budgets[name], episodes, out, configs.get(name)))
            load.append(os.getloadavg()[0])
    scenario = plume_following()
    fixed = {"gradient climber": GradientClimber(scenario=scenario, seed=0), "random walk": RandomPolicy(4, seed=0)}
    others = {label: plume_multi.evaluate(policy, scenario, episodes, seed=0, progress=False)
              for label, policy in fixed.items()}

    lines = ["| policy | seeds | success rate | mean steps to the source | training s | agent-steps/s | "
             "per CPU-second |", "|---|---:|---:|---:|---:|---:|---:|"]
    for name in names:
        rows = [r for r in runs if r["policy"] == name]
        lines.append(f"| {name} ({budgets[name]:,} steps) | {len(rows)} | {spread([r['success_rate'] * 100 for r in rows])} % | "
                     f"{spread([r['mean_steps'] for r in rows])} | {spread([r['seconds'] for r in rows])} | "
                     f"{spread([r['steps_per_second'] for r in rows])} | "
                     f"{spread([r['env_steps'] / r['cpu_seconds'] for r in rows])} |")
    for label, res in others.items():
        lines.append(f"| {label} | - | {res.success_rate:.1%} | {res.mean:.3g} | - | - | - |")
    print("\n".join(lines))
    print(f"\nEach cell: mean ± standard deviation over the seeds (lowest–highest). Evaluation: the greedy policy on "
          f"{episodes:,} episodes seeded 0..{episodes - 1} of scenarios.plume_following() (32x32, sigma 8, random source, "
          f"no position, 200 steps); mean steps over the episodes that found the source. Load average during the "
          f"runs: {min(load):.1f} to {max(load):.1f} on {os.cpu_count()} cores.")
    (out / "results.json").write_text(json.dumps({"runs": runs, "load": load, "budgets": budgets,
                                                  "others": {k: {"success_rate": v.success_rate, "mean_steps": v.mean}
                                                             for k, v in others.items()}}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
