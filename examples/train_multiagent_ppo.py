"""Train one shared PPO policy for N searchers per world, then compare it with independent baselines.

CleanRL-style PPO (one file, PyTorch) on ``plume_multi.multi_agent_vector_env``: B worlds of N
searchers are the B*N rows of one Gymnasium ``VectorEnv``, every row acts through the same network
(parameter sharing). Each searcher senses the concentration at its cell and its normalized x, y
(plus neighbours with ``--n-neighbours``) and earns 1.0 on reaching the source. An agent that has
finished waits on the source, its row masked (``info["active"]`` False), until its world resets;
the masked transitions are left out of the PPO loss (``--no-mask-finished`` keeps them).

Evaluation runs every policy on the same seeded worlds, one episode each with the same step
budget, and reports the share of searchers that reach the source, their mean steps, and the
share of worlds where all N did. The baselines act independently per searcher: a random walk and
the gradient climber of ``plume_multi.policies``.

    python examples/train_multiagent_ppo.py                    # the full run (about a minute on 2 cores)
    python examples/train_multiagent_ppo.py --n-agents 8 --n-neighbours 2
    python examples/train_multiagent_ppo.py --tiny             # a smoke run, seconds (the tests use it)

Writes ``results.json``, ``results.md`` and ``agent.pt`` into ``--out-dir``. Needs torch
(``pip install "plume-multi[sb3]"`` installs it).
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
import torch
from gymnasium.vector import AutoresetMode
from torch import nn
from torch.distributions import Categorical

import plume_multi
from plume_multi.policies import GradientClimber, RandomPolicy


@dataclass
class Args:
    seed: int = 0
    """seed of training (worlds, network, sampling); evaluation uses eval_seed"""
    num_worlds: int = 256
    """worlds stepped together during training"""
    n_agents: int = 4
    """searchers per world, all acting through the one shared policy"""
    team: bool = False
    """team search: the first arrival ends the world's episode and every searcher shares the reward"""
    n_neighbours: int = 0
    """each searcher also senses the relative positions of its k nearest team-mates"""
    width: int = 32
    """grid width in cells"""
    height: int = 32
    """grid height in cells"""
    sigma: float = 8.0
    """spread of the Gaussian plume in cells (the source is at the grid's centre)"""
    max_steps: int = 200
    """step budget of a world's episode, in training and in evaluation, for every policy"""
    total_timesteps: int = 3_000_000
    """agent-steps to train for (every row of every step counts, masked or not)"""
    num_steps: int = 32
    """steps per row in each rollout (a rollout is num_steps * num_worlds * n_agents transitions)"""
    learning_rate: float = 2.5e-3
    """Adam step size (annealed linearly to 0 with anneal_lr)"""
    anneal_lr: bool = True
    """anneal the learning rate linearly to 0 over training"""
    gamma: float = 0.99
    """discount factor"""
    gae_lambda: float = 0.95
    """lambda of generalized advantage estimation"""
    num_minibatches: int = 8
    """minibatches per epoch of the PPO update"""
    update_epochs: int = 4
    """passes over each rollout in the PPO update"""
    clip_coef: float = 0.2
    """PPO's surrogate clipping coefficient (also clips the value loss)"""
    ent_coef: float = 0.01
    """entropy bonus, keeps the policy exploring"""
    vf_coef: float = 0.5
    """weight of the value loss"""
    max_grad_norm: float = 0.5
    """gradient clipping norm"""
    hidden: int = 64
    """units in each of the two hidden layers of the actor and of the critic"""
    mask_finished: bool = True
    """leave the transitions of finished searchers (masked rows) out of the loss"""
    eval_worlds: int = 500
    """worlds per policy in the evaluation (one episode each, the same start cells for every policy)"""
    eval_seed: int = 1_000_000
    """seed of the evaluation worlds (world b gets eval_seed + b), apart from the training seeds"""
    torch_threads: int = 1
    """CPU threads for torch (a small network gains nothing from more)"""
    out_dir: str = "out/train_multiagent_ppo"
    """folder for results.json, results.md and agent.pt"""
    tiny: bool = False
    """a smoke run: a few thousand steps, few worlds, few evaluation episodes"""

    def shrink_for_tiny_run(self) -> None:
        self.total_timesteps, self.num_worlds, self.num_steps, self.num_minibatches = 2048, 16, 16, 2
        self.update_epochs, self.eval_worlds, self.max_steps = 1, 16, 60


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
            parser.add_argument(flag, type=kind, default=f.default, help=f"{docs[f.name]} (default {f.default})")
    args = Args(**vars(parser.parse_args(argv)))
    if args.tiny:
        args.shrink_for_tiny_run()
    return args


def make_env(args: Args, num_worlds: int, autoreset_mode=AutoresetMode.SAME_STEP):
    return plume_multi.multi_agent_vector_env(
        num_worlds, args.n_agents, args.team, autoreset_mode=autoreset_mode, grid_size=(args.width, args.height),
        sigma=args.sigma, max_steps=args.max_steps, n_neighbours=args.n_neighbours)


# ---------------------------------------------------------------------------------- the agent
def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias: float = 0.0) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


class Agent(nn.Module):
    """Actor and critic, two hidden tanh layers each; one network for every searcher."""

    def __init__(self, obs_dim: int, n_actions: int, hidden: int):
        super().__init__()
        self.critic = nn.Sequential(layer_init(nn.Linear(obs_dim, hidden)), nn.Tanh(),
                                    layer_init(nn.Linear(hidden, hidden)), nn.Tanh(),
                                    layer_init(nn.Linear(hidden, 1), std=1.0))
        self.actor = nn.Sequential(layer_init(nn.Linear(obs_dim, hidden)), nn.Tanh(),
                                   layer_init(nn.Linear(hidden, hidden)), nn.Tanh(),
                                   layer_init(nn.Linear(hidden, n_actions), std=0.01))

    def get_value(self, x):
        return self.critic(x).squeeze(-1)

    def get_action_and_value(self, x, action=None):
        dist = Categorical(logits=self.actor(x))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.get_value(x)

    def act_greedy(self, obs: np.ndarray) -> np.ndarray:
        """``(M, D)`` float32 observations -> ``(M,)`` int64 most likely actions."""
        with torch.no_grad():
            return self.actor(torch.as_tensor(obs)).argmax(-1).numpy()


# ---------------------------------------------------------------------------------- PPO
def compute_advantages(rewards, values, dones, next_value, next_done, gamma, gae_lambda):
    """Generalized advantage estimates, CleanRL's loop.

    ``rewards``, ``values``, ``dones``: ``(T, R)`` tensors; ``dones[t]`` is 1 where the step
    before ``obs[t]`` ended the row's episode (so ``obs[t]`` starts a new one). ``next_value``,
    ``next_done``: ``(R,)`` for the observation after the rollout. Returns ``(advantages, returns)``.
    """
    advantages = torch.zeros_like(rewards)
    lastgaelam = torch.zeros_like(next_value)
    num_steps = rewards.shape[0]
    for t in reversed(range(num_steps)):
        if t == num_steps - 1:
            nextnonterminal, nextvalues = 1.0 - next_done, next_value
        else:
            nextnonterminal, nextvalues = 1.0 - dones[t + 1], values[t + 1]
        delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
        advantages[t] = lastgaelam = delta + gamma * gae_lambda * nextnonterminal * lastgaelam
    return advantages, advantages + values


def train(args: Args) -> tuple[Agent, dict]:
    torch.set_num_threads(args.torch_threads)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)

    envs = make_env(args, args.num_worlds)
    rows = envs.num_envs
    obs_dim = envs.single_observation_space.shape[0]
    agent = Agent(obs_dim, envs.single_action_space.n, args.hidden)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    batch_size = args.num_steps * rows
    num_iterations = max(1, args.total_timesteps // batch_size)

    obs = torch.zeros((args.num_steps, rows, obs_dim))
    actions = torch.zeros((args.num_steps, rows), dtype=torch.long)
    logprobs = torch.zeros((args.num_steps, rows))
    rewards = torch.zeros((args.num_steps, rows))
    dones = torch.zeros((args.num_steps, rows))
    values = torch.zeros((args.num_steps, rows))
    live = torch.zeros((args.num_steps, rows), dtype=torch.bool)  # the row's searcher acts in obs[t]

    global_step = 0
    episodes = successes = 0
    start = time.perf_counter()
    next_obs, info = envs.reset(seed=args.seed)
    next_obs = torch.as_tensor(next_obs)
    next_live = torch.as_tensor(info["active"])
    next_done = torch.zeros(rows)
    log = []

    for iteration in range(1, num_iterations + 1):
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = args.learning_rate * (1.0 - (iteration - 1.0) / num_iterations)

        for step in range(args.num_steps):
            global_step += rows
            obs[step], dones[step], live[step] = next_obs, next_done, next_live
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
            actions[step], logprobs[step], values[step] = action, logprob, value

            o, reward, terminated, truncated, info = envs.step(action.numpy())
            reward = torch.as_tensor(reward)
            # A time limit is not a real end: bootstrap the truncated rows from their last observation.
            cut = truncated & ~terminated
            if cut.any():
                with torch.no_grad():
                    reward[cut] += args.gamma * agent.get_value(torch.as_tensor(info["final_obs"][cut]))
            rewards[step] = reward
            ended = terminated | truncated
            episodes += int(ended.sum())
            successes += int(terminated.sum())
            next_obs, next_done = torch.as_tensor(o), torch.as_tensor(ended, dtype=torch.float32)
            next_live = torch.as_tensor(info["active"])

        with torch.no_grad():
            advantages, returns = compute_advantages(rewards, values, dones, agent.get_value(next_obs),
                                                     next_done, args.gamma, args.gae_lambda)

        # Flatten the rollout, keeping only the transitions whose searcher was still searching.
        keep = live.reshape(-1) if args.mask_finished else torch.ones(batch_size, dtype=torch.bool)
        b_obs = obs.reshape(-1, obs_dim)[keep]
        b_actions, b_logprobs = actions.reshape(-1)[keep], logprobs.reshape(-1)[keep]
        b_advantages, b_returns, b_values = advantages.reshape(-1)[keep], returns.reshape(-1)[keep], values.reshape(-1)[keep]
        n_samples = b_obs.shape[0]
        minibatch_size = max(1, n_samples // args.num_minibatches)

        for _ in range(args.update_epochs):
            order = torch.randperm(n_samples)
            for first in range(0, n_samples - minibatch_size + 1, minibatch_size):
                mb = order[first:first + minibatch_size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb], b_actions[mb])
                ratio = (newlogprob - b_logprobs[mb]).exp()
                mb_adv = b_advantages[mb]
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std(unbiased=False) + 1e-8)
                pg_loss = torch.max(-mb_adv * ratio,
                                    -mb_adv * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v_clipped = b_values[mb] + torch.clamp(newvalue - b_values[mb], -args.clip_coef, args.clip_coef)
                v_loss = 0.5 * torch.max((newvalue - b_returns[mb]) ** 2, (v_clipped - b_returns[mb]) ** 2).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

        elapsed = time.perf_counter() - start
        sps = global_step / elapsed
        masked = 1 - n_samples / batch_size
        log.append(dict(global_step=global_step, steps_per_s=sps, masked_share=masked))
        if iteration % max(1, num_iterations // 10) == 0 or iteration == num_iterations:
            found = f"{successes / episodes:4.0%}" if episodes else "   -"
            print(f"[{iteration / num_iterations:4.0%}] {global_step:>10,} agent-steps  {sps:8,.0f} steps/s  "
                  f"{elapsed:6.1f} s  episodes ended since the last line: {found} found the source; "
                  f"masked transitions {masked:4.0%}", flush=True)
            episodes = successes = 0
    seconds = time.perf_counter() - start
    envs.close()
    return agent, dict(train_steps=global_step, train_seconds=seconds, train_steps_per_s=global_step / seconds,
                       log=log)


# ---------------------------------------------------------------------------------- evaluation
def evaluate(policy, args: Args) -> dict:
    """One episode in each of ``eval_worlds`` worlds (seeded ``eval_seed + b``), no autoreset.

    ``policy(obs)`` maps ``(B * N, D)`` observations to ``(B * N,)`` actions; rows of searchers
    that finished are ignored by the env. Returns the share of searchers that reached the source,
    their mean steps to it, and the share of worlds where every searcher did.
    """
    env = make_env(args, args.eval_worlds, AutoresetMode.DISABLED)
    obs, info = env.reset(seed=args.eval_seed)
    rows = env.num_envs
    found_at = np.zeros(rows, dtype=np.int64)  # 0: not found
    for t in range(1, args.max_steps + 1):
        obs, _, terminated, _, info = env.step(np.asarray(policy(obs), dtype=np.int64))
        found_at[terminated] = t
        if not info["active"].any():
            break
    found = found_at > 0
    return dict(success_rate=float(found.mean()),
                mean_steps_to_source=float(found_at[found].mean()) if found.any() else None,
                all_found_rate=float(found.reshape(args.eval_worlds, args.n_agents).all(axis=1).mean()),
                searchers=int(rows))


def mean_shortest_path(args: Args) -> float:
    """Mean fewest steps from the evaluation's start cells to the source (no policy does better)."""
    env = make_env(args, args.eval_worlds)
    env.reset(seed=args.eval_seed)
    d = np.abs(env.agent_positions - np.array(env.scenario.source_location)).sum(axis=1)
    return float(np.where(d == 0, 2, d).mean())  # starting on the source: step off and back


def compare(agent: Agent, args: Args) -> list[dict]:
    n_actions = plume_multi.Scenario().n_actions
    policies = [("PPO, shared policy (greedy)", agent.act_greedy),
                ("gradient climbers, independent", GradientClimber(n_actions, seed=args.seed)),
                ("random walkers, independent", RandomPolicy(n_actions, seed=args.seed))]
    return [dict(policy=label, **evaluate(policy, args)) for label, policy in policies]


def markdown_table(rows: list[dict], args: Args, lower_bound: float) -> str:
    lines = ["| policy | searchers that found the source | mean steps to the source | worlds where all found it | searchers |",
             "|---|---:|---:|---:|---:|"]
    for r in rows:
        steps = "n/a" if r["mean_steps_to_source"] is None else f"{r['mean_steps_to_source']:.1f}"
        lines.append(f"| {r['policy']} | {r['success_rate']:.1%} | {steps} | {r['all_found_rate']:.1%} | {r['searchers']} |")
    lines.append("")
    team = " (team: a searcher counts as finding the source when any of its world does)" if args.team else ""
    lines.append(f"{args.eval_worlds} worlds x {args.n_agents} searchers{team}, "
                 f"{args.width}x{args.height} grid, source at the centre, sigma {args.sigma}, budget {args.max_steps} "
                 f"steps; mean steps over the searchers that found the source. Fewest possible steps from the "
                 f"same starts: {lower_bound:.1f} on average.")
    return "\n".join(lines)


def main(argv=None) -> dict:
    args = parse_args(argv)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    print(f"training one PPO policy for {args.n_agents} searchers x {args.num_worlds} worlds "
          f"({args.num_worlds * args.n_agents} rows) for {args.total_timesteps:,} agent-steps on "
          f"{args.width}x{args.height}", flush=True)
    wall = time.perf_counter()
    agent, stats = train(args)
    torch.save(agent.state_dict(), out / "agent.pt")
    print(f"trained {stats['train_steps']:,} agent-steps in {stats['train_seconds']:.1f} s "
          f"({stats['train_steps_per_s']:,.0f} steps/s); evaluating", flush=True)
    rows = compare(agent, args)
    table = markdown_table(rows, args, mean_shortest_path(args))
    wall = time.perf_counter() - wall
    print(table)
    print(f"total wall time {wall:.1f} s", flush=True)
    command = " ".join(["python", "examples/train_multiagent_ppo.py", *(sys.argv[1:] if argv is None else argv)])
    results = dict(args=dataclasses.asdict(args), rows=rows, wall_seconds=wall, command=command, **stats)
    (out / "results.json").write_text(json.dumps(results, indent=2))
    (out / "results.md").write_text(table + f"\n\nTraining: {stats['train_steps']:,} agent-steps in "
                                    f"{stats['train_seconds']:.0f} s ({stats['train_steps_per_s']:,.0f} steps/s); "
                                    f"wall time {wall:.0f} s.\n")
    return results


if __name__ == "__main__":
    main()
