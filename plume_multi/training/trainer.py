"""``train(scenario, policy, budget, seed)``: a learned baseline trained on a scenario, in one call.

The scenario's worlds run in one ``Simulator`` on the calling thread; torch runs with
``config.threads`` threads for the duration of the call (restored afterwards). Training worlds are
seeded ``TRAIN_SEED_BASE + seed * 2**32 + i`` and the validation episodes during training
``VALIDATION_SEED + e``, so neither meets the episodes an evaluation seeded below ``2**39`` (such
as ``plume_multi.evaluate(..., seed=0)``) runs, nor each other.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import time
from pathlib import Path

import numpy as np
import torch

from .. import files
from ..checks import check_int
from ..errors import ValidationError
from ..scenario import Scenario
from ..simulator import Simulator
from .config import POLICIES, PPOConfig
from .networks import NETWORKS
from .policy import LearnedPolicy, torch_threads
from .ppo import update
from .rollout import Rollout

__all__ = ["train", "TrainingResult", "TRAIN_SEED_BASE", "VALIDATION_SEED", "MAX_TRAINING_SEED"]

TRAIN_SEED_BASE = 2**40
VALIDATION_SEED = 2**39
MAX_TRAINING_SEED = 2**22 - 1  # TRAIN_SEED_BASE + seed * 2**32 + i stays below 2**63
STAGGER_MAX = 1000  # at most this many steps spread the episodes' phases before training


@dataclasses.dataclass(frozen=True)
class TrainingResult:
    """What ``train`` returns.

    Attributes:
        policy: the trained ``LearnedPolicy`` (greedy).
        name: ``"ppo-mlp"`` or ``"ppo-gru"``.
        seed: the training seed.
        config: the ``PPOConfig`` used.
        env_steps: agent-steps trained (whole rollouts: at least the budget).
        seconds: wall-clock seconds of training, validation excluded.
        cpu_seconds: CPU seconds of this process over the same spans (all its threads).
        log: one dict per rollout: ``env_steps``, ``seconds``, ``episodes`` and ``successes``
            (row episodes that ended in it, and how many reached the source), ``approx_kl``.
        validation: one dict per validation: ``env_steps``, ``seconds`` (training clock when it
            ran), ``success_rate`` and ``mean_steps`` (greedy policy, held-out episodes).
    """

    policy: LearnedPolicy
    name: str
    seed: int
    config: PPOConfig
    env_steps: int
    seconds: float
    cpu_seconds: float
    log: list
    validation: list

    @property
    def steps_per_second(self) -> float:
        """Agent-steps trained per wall-clock second (rollouts and updates, validation excluded)."""
        return self.env_steps / self.seconds if self.seconds > 0 else math.nan

    def time_to(self, success_rate: float):
        """``(seconds, env_steps)`` at the first validation whose success rate reached
        ``success_rate``, or ``None`` if none did."""
        for row in self.validation:
            if row["success_rate"] >= success_rate:
                return row["seconds"], row["env_steps"]
        return None

    def summary(self) -> dict:
        """JSON-able figures of the run (no weights)."""
        last = self.validation[-1] if self.validation else {}
        return {"policy": self.name, "seed": self.seed, "env_steps": self.env_steps, "seconds": self.seconds,
                "cpu_seconds": self.cpu_seconds, "steps_per_second": self.steps_per_second,
                "final_success_rate": last.get("success_rate"), "config": dataclasses.asdict(self.config),
                "validation": self.validation}

    def to_json(self, path) -> Path:
        """Write ``summary()`` and the per-rollout log as JSON."""
        return files.write_text(path, json.dumps({**self.summary(), "log": self.log}, indent=1),
                                "TrainingResult.to_json", "the path of the JSON file to write")


def _scenario_of(scenario) -> Scenario:
    made = scenario() if callable(scenario) and not isinstance(scenario, Scenario) else scenario
    if not isinstance(made, Scenario):
        raise ValidationError(f"scenario: got {type(made).__name__}; expected a plume_multi.Scenario or a "
                              "function of no arguments returning one")
    return made


def _make_network(name: str, scenario: Scenario, config: PPOConfig, seed: int):
    low, high = scenario.observation_bounds()
    if scenario.continuous:
        n_actions, action_dim = 0, int(np.asarray(scenario.action_model.low).shape[0])
    else:
        n_actions, action_dim = scenario.n_actions, 0
    with torch.random.fork_rng(devices=[]):  # seeded initial weights, the global generator untouched
        torch.manual_seed(seed)
        return NETWORKS[POLICIES[name]](low, high, n_actions, action_dim, config.hidden, config.layers)


def stagger_episodes(sim: Simulator, seed: int, max_offset: int = STAGGER_MAX) -> int:
    """Spread the worlds' episodes over the step budget before training: world ``b`` is reset
    after a random ``offset[b] < min(max_steps, max_offset)`` steps of random actions, so that the
    rollouts see every phase of an episode at once instead of every world at the same step.

    Worlds reset together stay in step (every one is cut at ``max_steps``): a short rollout (a
    few steps of thousands of worlds) then shows the update one phase of the episodes at a time,
    and PPO drifts (measured: the 4-step rollouts of 4,096 worlds lost the plume for millions of
    steps on some seeds, stuck in a policy that walks into a wall). Returns the steps taken.
    """
    span = min(sim.scenario.max_steps, max_offset)
    rng = np.random.default_rng(seed)
    offsets = rng.integers(0, span, sim.num_worlds)
    rows = sim.total_agents
    if sim.scenario.continuous:
        body = sim.scenario.action_model
        low, high = np.asarray(body.low, np.float64), np.asarray(body.high, np.float64)
    for t in range(1, span):
        if sim.scenario.continuous:
            actions = rng.uniform(low, high, (rows, len(low)))
        else:
            actions = rng.integers(0, sim.scenario.n_actions, rows)
        sim.step(actions)
        due = offsets == t
        if due.any():
            sim.reset(mask=due)
    return max(span - 1, 0)


def _validate(net, name, scenario, config, episodes: int) -> dict:
    from ..evaluation import evaluate

    policy = LearnedPolicy(copy.deepcopy(net), name, scenario, config)
    result = evaluate(policy, scenario, episodes, seed=VALIDATION_SEED, progress=False)
    return {"success_rate": result.success_rate, "mean_steps": result.mean}


def train(scenario, policy: str = "ppo-mlp", budget: int = 2_000_000, seed: int = 0, *,
          config: PPOConfig | None = None, validate_every: int | None = None, validation_episodes: int = 1000,
          stop_at: float | None = None, progress: bool = True) -> TrainingResult:
    """Train the learned baseline ``policy`` on ``scenario`` for ``budget`` agent-steps.

    Args:
        scenario: a ``Scenario``, or a function of no arguments returning one (a task's factory).
            Every agent of every world is one row, acting through the one network (with several
            agents per world the policy is shared).
        policy: ``"ppo-mlp"`` (PPO, feed-forward actor and critic) or ``"ppo-gru"`` (PPO with a
            GRU memory).
        budget: agent-steps to train for (rounded up to whole rollouts of ``num_worlds * n_agents
            * rollout_steps``).
        seed: the training seed, ``0 .. 2**22 - 1``: the worlds, the initial weights and every
            draw. The same seed, settings and torch thread count give the same policy, bit for bit.
        config: a ``PPOConfig``; default ``PPOConfig.for_policy(policy)``.
        validate_every: agent-steps between validations of the greedy policy (rounded to whole
            rollouts); default a tenth of the budget; 0: only one at the end.
        validation_episodes: episodes per validation (seeded from ``VALIDATION_SEED``, held out);
            0: none.
        stop_at: stop once a validation's success rate reaches this share (e.g. 0.8).
        progress: a tqdm bar over the agent-steps (on stderr; a widget in a notebook) with the
            latest success rates.

    Returns:
        A ``TrainingResult``: the policy, the timing (validation excluded), the per-rollout log
        and the validations.

    Raises:
        ValidationError: a bad argument, before anything is compiled or trained.
    """
    scenario = _scenario_of(scenario)
    if not isinstance(policy, str) or policy not in POLICIES:
        raise ValidationError(f"policy: got {policy!r}; expected one of {list(POLICIES)}")
    budget = check_int("train", "budget", budget, 1, 2**62)
    seed = check_int("train", "seed", seed, 0, MAX_TRAINING_SEED)
    config = PPOConfig.for_policy(policy) if config is None else config
    if not isinstance(config, PPOConfig):
        raise ValidationError(f"config: got {type(config).__name__}; expected a PPOConfig")
    if validate_every is not None:
        validate_every = check_int("train", "validate_every", validate_every, 0, 2**62)
    validation_episodes = check_int("train", "validation_episodes", validation_episodes, 0, 2**31 - 1)
    if stop_at is not None and (isinstance(stop_at, bool) or not isinstance(stop_at, (int, float))
                                or not 0.0 < stop_at <= 1.0):
        raise ValidationError(f"stop_at: got {stop_at!r}; expected None or a share in (0, 1]")
    if not isinstance(progress, bool):
        raise ValidationError(f"progress: got {progress!r}; expected True or False")

    rows = config.num_worlds * scenario.n_agents
    per_rollout = rows * config.rollout_steps
    iterations = -(-budget // per_rollout)
    if validate_every == 0:
        every = iterations  # only at the end
    else:
        every = max(1, round((budget / 10 if validate_every is None else validate_every) / per_rollout))

    with torch_threads(config.threads):
        return _run(scenario, policy, config, seed, iterations, every, validation_episodes, stop_at, progress)


def _run(scenario, name, config, seed, iterations, every, validation_episodes, stop_at, progress):
    from tqdm.auto import tqdm

    net = _make_network(name, scenario, config, seed)
    net.train()
    generator = torch.Generator()
    generator.manual_seed(seed)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.learning_rate, eps=1e-5, fused=True)  # 4x less per step
    sim = Simulator(scenario, config.num_worlds, autoreset="same_step", parallel=False)
    sim.reset(seed=TRAIN_SEED_BASE + seed * 2**32)  # compiles on a scenario's first use: off the clock
    wall0, cpu0 = time.perf_counter(), time.process_time()
    stagger_episodes(sim, seed)
    rollout = Rollout(sim, net, config.rollout_steps, config.gamma, generator)
    per_rollout = rollout.rows * config.rollout_steps

    log, validation = [], []
    # the staggering counts as training time (not as training steps: its random steps teach nothing)
    env_steps, seconds, cpu = 0, time.perf_counter() - wall0, time.process_time() - cpu0
    bar = tqdm(total=iterations * per_rollout, desc=f"train {name}", unit="step", unit_scale=True,
               disable=not progress, dynamic_ncols=True)
    try:
        for iteration in range(iterations):
            wall0, cpu0 = time.perf_counter(), time.process_time()
            if config.anneal_lr:
                optimizer.param_groups[0]["lr"] = config.learning_rate * (1.0 - iteration / iterations)
            net.eval()
            rollout.collect()
            net.train()
            stats = update(net, optimizer, rollout, config, generator)
            seconds += time.perf_counter() - wall0
            cpu += time.process_time() - cpu0
            env_steps += per_rollout
            episodes, successes = rollout.stats.take()
            log.append({"env_steps": env_steps, "seconds": seconds, "episodes": episodes, "successes": successes,
                        **stats})
            bar.update(per_rollout)
            last = iteration == iterations - 1
            if validation_episodes and ((iteration + 1) % every == 0 or last):
                row = {"env_steps": env_steps, "seconds": seconds, **_validate(net, name, scenario, config,
                                                                               validation_episodes)}
                validation.append(row)
                bar.set_postfix_str(f"validation success {row['success_rate']:.0%}", refresh=False)
                if stop_at is not None and row["success_rate"] >= stop_at:
                    break
            elif episodes:
                bar.set_postfix_str(f"{successes / episodes:.0%} of the episodes that ended found the source",
                                    refresh=False)
    finally:
        bar.close()
    training = {"scenario_steps": env_steps, "seconds": seconds, "seed": seed}
    policy = LearnedPolicy(net.eval(), name, scenario, config, training=training)
    return TrainingResult(policy, name, seed, config, env_steps, seconds, cpu, log, validation)
