"""``plume-multi train``: train a learned baseline (``ppo-mlp`` or ``ppo-gru``) on a scenario or a
benchmark task with a fixed budget and seed (``plume_multi.train``); write the policy (``PREFIX.pt``:
the best validated weights, or the last), the checkpoints as they come (``PREFIX-best.pt``,
``PREFIX-last.pt``) and the run's figures (``PREFIX.json``)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from . import UsageError, output_paths
from .scenario_flags import add_scenario_arguments, scenario_from_args

DEFAULT_AGENTS, DEFAULT_STEPS = 1, 200
POLICY_NAMES = ("ppo-mlp", "ppo-gru")  # plume_multi.training.POLICIES, without importing torch for --help
KEEP = ("best", "last")  # plume_multi.training.trainer.KEEP, likewise

EPILOG = """\
POLICY: ppo-mlp (PPO, a feed-forward actor and critic: two tanh layers of --hidden units each) or
ppo-gru (PPO with a GRU memory of --hidden units). Every agent of every world acts through the one
network. The budget counts agent-steps; training stops after the rollout that reaches it (or at
--stop-at). The greedy policy is validated on held-out episodes --validations times; PREFIX.pt is
the best validated weights (--keep best, the default when validations run) or the last (--keep
last). While it trains, PREFIX-best.pt (each new best) and PREFIX-last.pt (each validation) are
written whole or not at all, so a killed run keeps every checkpoint it finished. The figures
(steps/s, validation success over time, which weights were kept) go to PREFIX.json. `plume-multi
eval --policy PREFIX.pt` and plume_multi.training.load_policy read the policy files.

--task ID trains on a benchmark task (plume-multi benchmark list): its scenario at its protocol's
step cap, validated as its protocol scores, training worlds seeded from its train_seed_low; the
scenario flags are then refused.

Examples: the plume-following task (a new random source every episode, no position sensed):
  plume-multi train --task following/gaussian-random-source-v0 --policy ppo-mlp --budget 3e6 --seed 0 --out runs/mlp-0
  plume-multi benchmark run following/gaussian-random-source-v0 --policy runs/mlp-0.pt
The same scenario without the task's protocol:
  plume-multi train --scenario plume_following --policy ppo-mlp --budget 3000000 --seed 0 --out runs/mlp-0
  plume-multi eval --scenario plume_following --steps 200 --policy runs/mlp-0.pt --episodes 10000"""


def add_parser(sub) -> None:
    """Add the ``train`` command to the subparsers ``sub``."""
    tr = sub.add_parser(
        "train",
        help="train a learned baseline (PPO with an MLP or a GRU) on a scenario: a policy file",
        description="Train PPO (ppo-mlp or ppo-gru) on a scenario for a fixed budget of agent-steps and a seed;\n"
                    "write the policy (PREFIX.pt) and the run's figures (PREFIX.json).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    g = tr.add_argument_group("training")
    g.add_argument("--policy", default="ppo-mlp", choices=POLICY_NAMES, help="the learned baseline (default ppo-mlp)")
    g.add_argument("--budget", type=float, default=2_000_000, metavar="STEPS",
                   help="agent-steps to train for, e.g. 2e6 (default 2,000,000)")
    g.add_argument("--seed", type=int, default=0, metavar="S", help="training seed (default 0)")
    g.add_argument("--worlds", type=int, default=None, metavar="B",
                   help="worlds stepped together (default: the policy's, 4096 for ppo-mlp)")
    g.add_argument("--hidden", type=int, default=None, metavar="H", help="units per hidden layer (default 32)")
    g.add_argument("--threads", type=int, default=None, metavar="K", help="torch threads (default 1)")
    g.add_argument("--validations", type=int, default=10, metavar="K",
                   help="validations of the greedy policy over the run (default 10; 0: none)")
    g.add_argument("--validation-episodes", type=int, default=1000, metavar="E",
                   help="held-out episodes per validation (default 1000)")
    g.add_argument("--stop-at", type=float, default=None, metavar="P",
                   help="stop once a validation's success rate reaches P, e.g. 0.8")
    g.add_argument("--keep", choices=KEEP, default=None,
                   help="PREFIX.pt holds the best validated weights or the last (default best, or last "
                        "without validations); the other stays in PREFIX-best.pt / PREFIX-last.pt")
    g = tr.add_argument_group("task")
    g.add_argument("--task", default=None, metavar="ID",
                   help="a benchmark task (plume-multi benchmark list): its scenario and protocol, instead of "
                        "the scenario flags")
    g.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="an option of the task (recorded/file-v0: --option path=plume.h5)")
    add_scenario_arguments(tr, agents=DEFAULT_AGENTS, steps=DEFAULT_STEPS)
    g = tr.add_argument_group("output")
    g.add_argument("--out", default="train_output/policy", metavar="PREFIX",
                   help="writes PREFIX.pt, PREFIX-best.pt, PREFIX-last.pt and PREFIX.json (default "
                        "train_output/policy)")
    g.add_argument("--quiet", action="store_true", help="no progress bar")


def _target(args):
    """``(what train() takes, its Scenario, the task id or None)`` of the scenario flags or ``--task``."""
    if args.task is None:
        if args.option:
            raise UsageError("--option: goes with --task")
        scenario = scenario_from_args(args, agents=DEFAULT_AGENTS, steps=DEFAULT_STEPS)
        return scenario, scenario, None
    from .. import tasks
    from ..errors import ValidationError
    from . import parse_options

    given = [flag for flag in SCENARIO_FLAGS if getattr(args, flag[2:].replace("-", "_")) not in (None, False)]
    if given:
        raise UsageError(f"{given[0]}: got it with --task; the task gives the scenario (leave {given[0]} out, or "
                         "leave --task out)")
    try:
        task = tasks.make(args.task, **parse_options(args.option))
        return task, task.scenario(), task.id
    except ValidationError as exc:
        raise UsageError(f"--task {args.task}: {exc}") from None


# the flags of add_scenario_arguments (refused with --task)
SCENARIO_FLAGS = ("--scenario", "--agents", "--grid", "--source", "--sigma", "--steps", "--goal-radius",
                  "--action-model", "--plume", "--body", "--sensors", "--reward", "--neighbours", "--team")


def run(args) -> int:
    """``plume-multi train``: ``plume_multi.train`` with a progress bar; the policy, its checkpoints and
    its figures."""
    budget = args.budget
    if not (math.isfinite(budget) and 1 <= budget <= 2**62 and budget == int(budget)):
        raise UsageError(f"--budget: got {args.budget:g}; expected a whole number of agent-steps >= 1")
    if args.validations < 0:
        raise UsageError(f"--validations: got {args.validations}; expected an integer >= 0")
    if args.validation_episodes < 1:  # 0 validated nothing while --validations promised some
        raise UsageError(f"--validation-episodes: got {args.validation_episodes}; expected an integer >= 1 "
                         "(--validations 0 turns validation off)")
    if args.stop_at is not None and not 0.0 < args.stop_at <= 1.0:
        raise UsageError(f"--stop-at: got {args.stop_at}; expected a share in (0, 1]")
    validated = bool(args.validations and args.validation_episodes)
    if args.keep == "best" and not validated:
        raise UsageError("--keep best: chooses among validations; expected --validations >= 1 and "
                         "--validation-episodes >= 1, or --keep last")
    target, scenario, task_id = _target(args)
    paths = output_paths(args.out, (".pt", ".json", "-best.pt", "-last.pt"), "--out")
    out = Path(args.out)
    try:
        import torch  # noqa: F401
    except ImportError as exc:
        raise UsageError("training needs torch: pip install 'plume-multi[train]'") from exc
    from ..training import PPOConfig, train

    changes = {key: value for key, value in (("num_worlds", args.worlds), ("hidden", args.hidden),
                                             ("threads", args.threads)) if value is not None}
    config = PPOConfig.for_policy(args.policy, **changes)
    budget = int(budget)
    validate_every = 0 if args.validations <= 1 else max(1, budget // args.validations)
    grid = "x".join(str(size) for size in scenario.grid_size)
    where = f"task {task_id}: " if task_id else ""
    print(f"{args.policy}: {budget:,} agent-steps on {config.num_worlds} worlds x {scenario.n_agents} agent(s) of "
          f"{where}a {grid} grid ({scenario.plume.name}, {scenario.action_model.name}; observation "
          f"{scenario.observation_layout}), seed {args.seed}", flush=True)
    result = train(target, args.policy, budget, args.seed, config=config, validate_every=validate_every,
                   validation_episodes=args.validation_episodes if args.validations else 0,
                   stop_at=args.stop_at, keep=args.keep, checkpoints=out, progress=not args.quiet)
    print(f"trained {result.env_steps:,} agent-steps in {result.seconds:.1f} s ({result.steps_per_second:,.0f} "
          f"agent-steps/s; validation excluded)")
    best = result.best_validation
    for row in result.validation:
        mark = "  <- best" if row is best else ""
        print(f"  {row['env_steps']:>12,} steps  {row['seconds']:7.1f} s  validation success "
              f"{row['success_rate']:.1%}{mark}")
    kept = (f"the best validated weights ({best['env_steps']:,} steps)" if result.kept == "best"
            else "the last weights")
    print(f"wrote {result.policy.save(paths[0])}: {kept}")
    print(f"wrote {result.to_json(paths[1])}")
    return 0
