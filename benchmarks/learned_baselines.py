#!/usr/bin/env python
"""The learned baselines as columns of the benchmark table: ppo-mlp and ppo-gru trained from seeds
0..S-1 on every task they can act in, each kept policy scored by the task's protocol.

    python benchmarks/learned_baselines.py [--tasks trainable|ID,...] [--policies ppo-mlp,ppo-gru] [--seeds 5]
                                           [--budget 3e6] [--gru-budget 3e6] [--validations 10]
                                           [--validation-episodes 1000] [--out benchmark-results] [--force] [--tiny]

For each task, baseline NAME and seed s, one training run,
``plume_multi.train(TASK, NAME, BUDGET, seed=s, keep="best", checkpoints=...)`` (what ``plume-multi
train --task TASK --policy NAME --budget BUDGET --seed s`` does): the greedy policy validated
``--validations`` times on held-out episodes, the best validated weights kept. Seed s's kept policy
then plays its share of the protocol's E episodes, episodes ``s*E/S .. (s+1)*E/S - 1`` (seeded
``eval_seed + e``, as every policy's), so that the S runs together play each of the protocol's
episodes once: the column is the protocol's E episodes, pooled over S training seeds. Its rows go to
``OUT/<family>__<name>-vN__<NAME>.csv``, the file ``plume-multi benchmark run --out OUT`` writes for a
policy, so ``plume-multi benchmark table --results OUT`` puts them beside the built-in baselines run
into the same folder (``plume-multi benchmark run TASK --policy baselines --out OUT``).

"trainable" tasks: those without fixed partners or required options whose observation is a few
sensor readings (at most 64 columns); the belief tasks (otto, teams, pursuit: 1,370 to 50,654
columns) are left to the Bayesian searchers.

A killed run loses nothing it finished: each (task, baseline, seed) leaves its checkpoints, its kept
policy and its rows in ``OUT/learned/``, each file written whole or not at all, and a rerun reuses
what is there (``--force``: train again). Prints, per task and baseline, the spread over the seeds
(success rate of each seed's share, the agent-steps of its best validation, training time and speed),
then the benchmark table of every result in ``OUT``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path

import numpy as np

import plume_multi
from plume_multi import tasks
from plume_multi import files
from plume_multi.tasks.table import markdown_table, read_rows, summarise, write_rows

POLICIES = ("ppo-mlp", "ppo-gru")
MAX_SENSOR_COLUMNS = 64


def _figure(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` significant digits, with thousands separators from 1,000 on."""
    return f"{float(f'{x:.{digits}g}'):,.0f}" if abs(x) >= 1000 else f"{x:.{digits}g}"


def spread(values) -> str:
    """``mean ± std (min–max)`` of a list (standard deviation 0 for one value)."""
    v = np.asarray(values, dtype=float)
    std = v.std(ddof=1) if len(v) > 1 else 0.0
    return f"{_figure(v.mean())} ± {_figure(std, 2)} ({_figure(v.min())}–{_figure(v.max())})"


def trainable(task) -> bool:
    """Whether the learned baselines run on ``task`` (see the module docstring)."""
    return not task.partners and not task.options and task.scenario().obs_dim <= MAX_SENSOR_COLUMNS


def task_ids(spec: str) -> list:
    if spec == "trainable":
        return [i for i in tasks.list() if trainable(tasks.get(i))]
    ids = [s.strip() for s in spec.split(",") if s.strip()]
    for task_id in ids:
        if not trainable(tasks.get(task_id)):
            raise SystemExit(f"--tasks: {task_id} is not one the learned baselines train on (fixed partners, required "
                             f"options or a belief observation of more than {MAX_SENSOR_COLUMNS} columns)")
    return ids


def shares(episodes: int, seeds: int) -> list:
    """``[(first episode, count)]`` of each seed: ``episodes`` split into ``seeds`` consecutive parts."""
    edges = np.linspace(0, episodes, seeds + 1).round().astype(int)
    return [(int(a), int(b - a)) for a, b in zip(edges[:-1], edges[1:])]


def stem(task_id: str, name: str) -> str:
    """The file stem ``plume-multi benchmark run`` gives a task and a policy."""
    return f"{task_id.replace('/', '__')}__{name}"


def run_seed(task, name: str, seed: int, share: tuple, budget: int, out: Path, *, config=None, validations: int,
             validation_episodes: int, force: bool) -> dict:
    """Train ``name`` on ``task`` from ``seed`` and play its share of the episodes; the record of
    the run (reused from ``out/learned`` when one made with the same settings is there and
    ``force`` is not set)."""
    folder = out / "learned"
    prefix = folder / f"{stem(task.id, name)}-seed{seed}"
    record_path = prefix.with_suffix(".json")
    settings = {"budget": budget, "share": list(share), "validations": validations,
                "validation_episodes": validation_episodes,
                "config": None if config is None else dataclasses.asdict(config)}
    if record_path.is_file() and not force:
        try:
            record = json.loads(record_path.read_text())
        except (OSError, ValueError):
            record = {}
        if record.get("settings") == settings:
            print(f"{task.id} {name} seed {seed}: reused {record_path}", file=sys.stderr, flush=True)
            return record
    print(f"{task.id} {name} seed {seed}: training {budget:,} agent-steps ...", file=sys.stderr, flush=True)
    result = plume_multi.train(task, name, budget, seed=seed, config=config, validate_every=max(1, budget // validations),
                               validation_episodes=validation_episodes, keep="best", checkpoints=prefix,
                               progress=False)
    policy_path = result.policy.save(prefix.with_suffix(".pt"))
    first, count = share
    protocol = task.protocol
    scored = tasks.evaluate(task, result.policy, count, protocol.eval_seed + first, progress=False, name=name)
    rows = [{**row, "episode": first + row["episode"]} for row in scored.rows()]
    summary = result.summary()
    record = {"task": task.id, "policy": name, "seed": seed, "settings": settings,
              "file": str(policy_path), "env_steps": result.env_steps, "seconds": result.seconds,
              "cpu_seconds": result.cpu_seconds, "steps_per_second": result.steps_per_second,
              "best": summary["best"], "validation": result.validation, "success_rate": scored.success_rate,
              "iqm_steps": scored.iqm_steps, "rows": rows}
    files.write_text(record_path, json.dumps(record, indent=1), "learned_baselines", "the path of a run's record")
    return record


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default="trainable", help="'trainable' (default) or comma-separated task ids")
    parser.add_argument("--policies", default=",".join(POLICIES), help="comma-separated (default ppo-mlp,ppo-gru)")
    parser.add_argument("--seeds", type=int, default=5, help="training seeds 0..S-1 (default 5)")
    parser.add_argument("--budget", type=float, default=3e6, help="agent-steps per ppo-mlp run (default 3e6)")
    parser.add_argument("--gru-budget", type=float, default=3e6, help="agent-steps per ppo-gru run (default 3e6)")
    parser.add_argument("--validations", type=int, default=10, help="validations per run (default 10)")
    parser.add_argument("--validation-episodes", type=int, default=1000,
                        help="held-out episodes per validation (default 1000)")
    parser.add_argument("--out", default="benchmark-results", help="the results folder (default benchmark-results)")
    parser.add_argument("--force", action="store_true", help="train again what OUT/learned already holds")
    parser.add_argument("--tiny", action="store_true", help="a smoke run (the tests): tiny budgets and networks, "
                                                            "64 episodes per task (a reduced run)")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.policies.split(",") if n.strip()]
    if not names or set(names) - set(POLICIES):
        parser.error(f"--policies: expected some of {list(POLICIES)}")
    if args.seeds < 1 or args.validations < 1 or args.validation_episodes < 1:
        parser.error("--seeds, --validations and --validation-episodes: expected integers >= 1")
    out = Path(args.out)
    budgets = {"ppo-mlp": int(args.budget), "ppo-gru": int(args.gru_budget)}
    configs, episodes, validation_episodes = {}, None, args.validation_episodes
    if args.tiny:
        from plume_multi.training import PPOConfig

        budgets, episodes, validation_episodes = {"ppo-mlp": 2048, "ppo-gru": 1024}, 64, 32
        configs = {"ppo-mlp": PPOConfig(num_worlds=64, rollout_steps=8, minibatch_size=256),
                   "ppo-gru": PPOConfig.for_policy("ppo-gru", num_worlds=32, rollout_steps=8, minibatch_size=128)}
    load = [os.getloadavg()[0]]
    lines = ["| task | policy | seeds | success rate (each seed's share) | best validation at (agent-steps) | "
             "training s | agent-steps/s |", "|---|---|---:|---:|---:|---:|---:|"]
    for task_id in task_ids(args.tasks):
        task = tasks.get(task_id)
        total = task.protocol.episodes if episodes is None else episodes
        for name in names:
            records = [run_seed(task, name, seed, share, budgets[name], out, config=configs.get(name),
                                validations=args.validations, validation_episodes=validation_episodes,
                                force=args.force)
                       for seed, share in enumerate(shares(total, args.seeds))]
            load.append(os.getloadavg()[0])
            rows = [row for record in records for row in record["rows"]]
            reduced = total < task.protocol.episodes
            print(f"wrote {write_rows([{**row, 'reduced': reduced} for row in rows], out / (stem(task.id, name) + '.csv'))}",
                  file=sys.stderr)
            lines.append(f"| {task.id} | {name} ({budgets[name]:,} steps) | {len(records)} | "
                         f"{spread([r['success_rate'] * 100 for r in records])} % | "
                         f"{spread([r['best']['env_steps'] for r in records])} | "
                         f"{spread([r['seconds'] for r in records])} | "
                         f"{spread([r['steps_per_second'] for r in records])} |")
    print("\n".join(lines))
    print(f"\nEach cell: mean ± standard deviation over the training seeds (lowest–highest); a seed's success rate is "
          f"that of its share of the protocol's episodes (its best validated policy, greedy). Load average during the "
          f"runs: {min(load):.1f} to {max(load):.1f} on {os.cpu_count()} cores.\n")
    print(markdown_table(summarise(read_rows(out))), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
