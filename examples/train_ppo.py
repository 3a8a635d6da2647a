"""Train PPO on the vectorized plume search, then compare it with a random walk and a gradient climber.

The agent sees three numbers per step (the concentration at its cell and its normalized x, y) and
earns 1.0 on reaching the source. Training runs Stable-Baselines3's PPO (or sb3-contrib's
MaskablePPO with ``--masked``) on ``plume_multi.vector_env`` through ``SB3VecEnv``. Evaluation runs
every policy on the same seeded start cells, one episode per world, with the same step budget
(``max_steps``), and reports the share of episodes that reach the source and the mean number of
steps those episodes took.

    python examples/train_ppo.py                       # the full run (about half a minute on 2 cores)
    python examples/train_ppo.py --total-timesteps 200000 --masked
    python examples/train_ppo.py --task following      # random source, no position: follow the plume
    python examples/train_ppo.py --tiny                # a smoke run, seconds (the tests use it)

Writes ``results.json`` and ``results.md`` (and ``model.zip``) into ``--out-dir``.
Needs the ``sb3`` extra: ``pip install "plume-multi[sb3]"``.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from gymnasium.vector import AutoresetMode

import plume_multi
from plume_multi.policies import GradientClimber, RandomPolicy
from plume_multi.integrations.sb3 import SB3VecEnv


@dataclass
class Args:
    task: str = "map"
    """"map": the source sits at the grid's centre and the agent sees its position (it can learn a map
    of the grid); "following": a new random source every episode and no position: the agent senses
    the concentration at its cell and at the four neighbouring cells, so it must follow the plume"""
    total_timesteps: int = 1_500_000
    """environment steps to train for, summed over all worlds"""
    num_envs: int = 256
    """worlds stepped together during training"""
    width: int = 32
    """grid width in cells"""
    height: int = 32
    """grid height in cells"""
    sigma: float = 8.0
    """spread of the Gaussian plume in cells (the source is at the grid's centre)"""
    max_steps: int = 200
    """step budget of an episode, in training and in evaluation, for every policy"""
    n_steps: int = 64
    """steps per world in each rollout (a rollout is n_steps * num_envs transitions)"""
    batch_size: int = 4096
    """minibatch size of the PPO update"""
    n_epochs: int = 4
    """passes over each rollout in the PPO update"""
    learning_rate: float = 1e-3
    """Adam step size"""
    gamma: float = 0.99
    """discount factor"""
    ent_coef: float = 0.01
    """entropy bonus, keeps the policy exploring"""
    masked: bool = False
    """train sb3-contrib's MaskablePPO with the env's action masks (moves into walls are masked)"""
    eval_episodes: int = 2000
    """episodes per policy in the evaluation (one per world, same start cells for every policy)"""
    deterministic: bool = True
    """evaluate the trained policy by its most likely action (else sample its distribution)"""
    seed: int = 0
    """seed of training (worlds, network, sampling); evaluation uses eval_seed"""
    eval_seed: int = 1_000_000
    """seed of the evaluation worlds (world i gets eval_seed + i), apart from the training seeds"""
    torch_threads: int = 1
    """CPU threads for torch (a small network gains nothing from more)"""
    out_dir: str = "out/train_ppo"
    """folder for results.json, results.md and model.zip"""
    tiny: bool = False
    """a smoke run: a few thousand steps, small batches, few evaluation episodes"""

    def shrink_for_tiny_run(self) -> None:
        self.total_timesteps, self.num_envs, self.n_steps, self.batch_size = 1024, 16, 32, 256
        self.n_epochs, self.eval_episodes, self.max_steps = 1, 64, 100


def field_docs(cls) -> dict[str, str]:
    """The docstring under each field of a dataclass (they become the ``--help`` texts)."""
    body = ast.parse(inspect.getsource(cls)).body[0].body
    return {a.target.id: b.value.value for a, b in zip(body, body[1:])
            if isinstance(a, ast.AnnAssign) and isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant)}


def parse_args(argv=None) -> Args:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    docs = field_docs(Args)
    for f in dataclasses.fields(Args):
        flag = "--" + f.name.replace("_", "-")
        if f.type in (bool, "bool"):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default, help=docs[f.name])
        else:
            kind = {"int": int, "float": float, "str": str}[f.type if isinstance(f.type, str) else f.type.__name__]
            choices = ("map", "following") if f.name == "task" else None
            parser.add_argument(flag, type=kind, default=f.default, choices=choices,
                                help=f"{docs[f.name]} (default {f.default})")
    args = Args(**vars(parser.parse_args(argv)))
    if args.tiny:
        args.shrink_for_tiny_run()
    return args


def env_options(args: Args) -> dict:
    if args.task == "following":
        return dict(grid_size=(args.width, args.height), max_steps=args.max_steps,
                    plume=plume_multi.plumes.Gaussian(source="random", sigma=args.sigma),
                    # heading 0 for a grid body: antennae at +y, +x, -y, -x, in the order of the actions
                    sensors=(plume_multi.sensors.Concentration(),
                             plume_multi.sensors.Antennae(angles=(90.0, 0.0, 270.0, 180.0), distance=1.0)))
    if args.task != "map":
        raise SystemExit(f"--task: got {args.task!r}; expected 'map' or 'following'")
    return dict(grid_size=(args.width, args.height), sigma=args.sigma, max_steps=args.max_steps)


# ---------------------------------------------------------------------------------- training
def make_progress_callback(total: int):
    """An SB3 callback driving one tqdm bar (on stderr; silent when stderr is not a terminal):
    steps done, steps/s, and after each rollout the success rate and mean length of the episodes
    that ended recently (the reward is 1 exactly on success)."""
    from stable_baselines3.common.callbacks import BaseCallback
    from tqdm import tqdm

    class Progress(BaseCallback):
        def _on_training_start(self) -> None:
            self.bar = tqdm(total=total, desc="training", unit="step", unit_scale=True, disable=None)

        def _on_step(self) -> bool:
            return True

        def _on_rollout_end(self) -> None:
            episodes = list(self.model.ep_info_buffer)
            if episodes:
                success = np.mean([e["r"] for e in episodes])
                length = np.mean([e["l"] for e in episodes])
                self.bar.set_postfix_str(f"success {success:.0%}, mean length {length:.0f}", refresh=False)
            self.bar.update(min(self.model.num_timesteps, total) - self.bar.n)

        def _on_training_end(self) -> None:
            self.bar.close()

    return Progress()


def train(args: Args):
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecMonitor

    torch.set_num_threads(args.torch_threads)
    envs = plume_multi.vector_env(args.num_envs, autoreset_mode=AutoresetMode.SAME_STEP, **env_options(args))
    venv = VecMonitor(SB3VecEnv(envs))
    if args.masked:
        from sb3_contrib import MaskablePPO as Algorithm
    else:
        Algorithm = PPO
    model = Algorithm("MlpPolicy", venv, seed=args.seed, n_steps=args.n_steps, batch_size=args.batch_size,
                      n_epochs=args.n_epochs, learning_rate=args.learning_rate, gamma=args.gamma,
                      ent_coef=args.ent_coef, device="cpu", verbose=0)
    start = time.perf_counter()
    model.learn(args.total_timesteps, callback=make_progress_callback(args.total_timesteps))
    seconds = time.perf_counter() - start
    venv.close()
    return model, seconds  # model.num_timesteps: whole rollouts, so a little over total_timesteps


# ---------------------------------------------------------------------------------- evaluation
def evaluate(policy, args: Args, *, masked: bool = False) -> dict:
    """One episode in each of ``eval_episodes`` worlds (seeded ``eval_seed + i``), no autoreset.

    ``policy(obs)`` maps ``(B, 3)`` observations to ``(B,)`` actions (with ``masked``,
    ``policy(obs, action_masks)``). Worlds that ended stay put until every world has ended.
    """
    env = plume_multi.vector_env(args.eval_episodes, autoreset_mode=AutoresetMode.DISABLED, **env_options(args))
    obs, info = env.reset(seed=args.eval_seed)
    ended = np.zeros(args.eval_episodes, dtype=bool)
    success = np.zeros(args.eval_episodes, dtype=bool)
    length = np.zeros(args.eval_episodes, dtype=np.int64)
    for t in range(1, args.max_steps + 1):
        actions = policy(obs, info["action_mask"]) if masked else policy(obs)
        obs, _, terminated, truncated, info = env.step(np.asarray(actions, dtype=np.int64))
        new = (terminated | truncated) & ~ended
        success[new] = terminated[new]
        length[new] = t
        ended |= new
        if ended.all():
            break
    return dict(success_rate=float(success.mean()),
                mean_steps_to_source=float(length[success].mean()) if success.any() else None,
                episodes=int(args.eval_episodes))


def mean_shortest_path(args: Args) -> float:
    """Mean fewest steps from the evaluation's start cells to the source (no policy does better)."""
    env = plume_multi.vector_env(args.eval_episodes, **env_options(args))
    env.reset(seed=args.eval_seed)
    d = np.abs(env.agent_positions - env.simulator.sources).sum(axis=1)
    return float(np.where(d == 0, 2, d).mean())  # starting on the source: step off and back


def compare(model, args: Args) -> list[dict]:
    rows = []
    if args.masked:
        def trained(obs, masks):
            return model.predict(obs, deterministic=args.deterministic, action_masks=masks)[0]
    else:
        def trained(obs):
            return model.predict(obs, deterministic=args.deterministic)[0]
    name = ("MaskablePPO" if args.masked else "PPO") + (" (greedy)" if args.deterministic else " (sampled)")
    policies = [(name, trained), ("gradient climber", GradientClimber(seed=args.seed)),
                ("random", RandomPolicy(seed=args.seed))]
    for label, policy in policies:
        result = evaluate(policy, args, masked=args.masked and policy is trained)
        rows.append(dict(policy=label, **result))
    return rows


def markdown_table(rows: list[dict], args: Args) -> str:
    lines = ["| policy | success rate | mean steps to the source | episodes |",
             "|---|---:|---:|---:|"]
    for r in rows:
        steps = "n/a" if r["mean_steps_to_source"] is None else f"{r['mean_steps_to_source']:.1f}"
        lines.append(f"| {r['policy']} | {r['success_rate']:.1%} | {steps} | {r['episodes']} |")
    lines.append("")
    where = "a random source every episode" if args.task == "following" else "source at the centre"
    lines.append(f"{args.width}x{args.height} grid, {where}, sigma {args.sigma}, budget "
                 f"{args.max_steps} steps per episode; mean steps over the episodes that reached the source.")
    return "\n".join(lines)


def main(argv=None) -> dict:
    args = parse_args(argv)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    print(f"training {'MaskablePPO' if args.masked else 'PPO'} for {args.total_timesteps:,} steps on "
          f"{args.num_envs} worlds of {args.width}x{args.height}", flush=True)
    wall = time.perf_counter()
    model, train_seconds = train(args)
    model.save(out / "model.zip")
    steps = model.num_timesteps
    print(f"trained {steps:,} steps in {train_seconds:.1f} s ({steps / train_seconds:,.0f} steps/s); evaluating", flush=True)
    rows = compare(model, args)
    lower_bound = mean_shortest_path(args)
    wall = time.perf_counter() - wall
    table = markdown_table(rows, args) + f" Fewest possible steps from the same starts: {lower_bound:.1f} on average."
    print(table)
    print(f"total wall time {wall:.1f} s", flush=True)
    results = dict(args=dataclasses.asdict(args), rows=rows, train_steps=steps, train_seconds=train_seconds,
                   train_steps_per_s=steps / train_seconds, wall_seconds=wall,
                   mean_shortest_path=lower_bound, command=" ".join(["python", "examples/train_ppo.py", *(sys.argv[1:] if argv is None else argv)]))
    (out / "results.json").write_text(json.dumps(results, indent=2))
    (out / "results.md").write_text(table + f"\n\nTraining: {steps:,} steps in {train_seconds:.0f} s "
                                    f"({results['train_steps_per_s']:,.0f} steps/s); wall time {wall:.0f} s.\n")
    return results


if __name__ == "__main__":
    main()
