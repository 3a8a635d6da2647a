"""``train(scenario or task, policy, budget, seed)``: a learned baseline trained in one call.

The scenario's worlds run in one ``Simulator`` on the calling thread; torch runs with
``config.threads`` threads for the duration of the call (restored afterwards). Training worlds are
seeded ``TRAIN_SEED_BASE + seed * 2**32 + i`` (from a task: its ``Protocol.train_seed_low``
instead of ``TRAIN_SEED_BASE``; the same ``2**40`` for every built-in task) and the validation
episodes during training ``VALIDATION_SEED + e``, so neither meets the episodes an evaluation
seeded below ``2**39`` (such as ``plume_multi.evaluate(..., seed=0)`` or a task's protocol) runs,
nor each other.

The greedy policy is validated on those held-out episodes during training; the best validated
weights are kept beside the last (``keep``), and ``checkpoints=PREFIX`` writes both as they come
(``PREFIX-best.pt``, ``PREFIX-last.pt``, each file whole or not at all), so a run that is killed
keeps every checkpoint it finished.
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
from ..checks import check_choice, check_int, shown
from ..errors import ValidationError
from ..scenario import Scenario
from ..simulator import MAX_SEED, Simulator
from .config import POLICIES, PPOConfig
from .networks import NETWORKS
from .policy import LearnedPolicy, torch_threads
from .ppo import update
from .rollout import Rollout

__all__ = ["train", "TrainingResult", "TRAIN_SEED_BASE", "VALIDATION_SEED", "MAX_TRAINING_SEED", "KEEP"]

TRAIN_SEED_BASE = 2**40
VALIDATION_SEED = 2**39
MAX_TRAINING_SEED = 2**22 - 1  # TRAIN_SEED_BASE + seed * 2**32 + i stays below 2**63
STAGGER_MAX = 1000  # at most this many steps spread the episodes' phases before training
KEEP = ("best", "last")  # which weights train() returns as its policy


@dataclasses.dataclass(frozen=True)
class TrainingResult:
    """What ``train`` returns.

    Attributes:
        policy: the trained ``LearnedPolicy`` (greedy) that ``keep`` chose: ``best`` or ``last``.
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
        last: the weights at the end of training, as a ``LearnedPolicy``.
        best: the weights of the best validation (the highest success rate; on a tie, the fewer
            mean steps, then the earlier), or ``None`` when nothing was validated.
        kept: ``"best"`` or ``"last"``: which of the two ``policy`` is.
        task: the task id trained on (``None`` for a scenario).
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
    last: LearnedPolicy | None = None
    best: LearnedPolicy | None = None
    kept: str = "last"
    task: str | None = None

    @property
    def steps_per_second(self) -> float:
        """Agent-steps trained per wall-clock second (rollouts and updates, validation excluded)."""
        return self.env_steps / self.seconds if self.seconds > 0 else math.nan

    @property
    def best_validation(self) -> dict | None:
        """The validation row of the best weights (``None`` without validation)."""
        return _best_row(self.validation)

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
        return {"policy": self.name, "seed": self.seed, "task": self.task, "env_steps": self.env_steps,
                "seconds": self.seconds, "cpu_seconds": self.cpu_seconds, "steps_per_second": self.steps_per_second,
                "final_success_rate": last.get("success_rate"), "kept": self.kept, "best": self.best_validation,
                "config": dataclasses.asdict(self.config), "validation": self.validation}

    def to_json(self, path) -> Path:
        """Write ``summary()`` and the per-rollout log as JSON (whole or not at all)."""
        return files.write_text(path, json.dumps({**self.summary(), "log": self.log}, indent=1),
                                "TrainingResult.to_json", "the path of the JSON file to write")


def _best_row(validation: list) -> dict | None:
    """The best of the validation rows: the highest success rate, then the fewest mean steps
    (NaN: none succeeded, counted as the most), then the earliest."""
    best = None
    for row in validation:
        steps = row["mean_steps"] if not math.isnan(row["mean_steps"]) else math.inf
        key = (row["success_rate"], -steps)
        if best is None or key > best[0]:
            best = (key, row)
    return None if best is None else best[1]


def _scenario_of(scenario) -> Scenario:
    made = scenario() if callable(scenario) and not isinstance(scenario, Scenario) else scenario
    if not isinstance(made, Scenario):
        raise ValidationError(f"scenario: got {type(made).__name__}; expected a plume_multi.Scenario, a function of no "
                              "arguments returning one, or a task id (plume_multi.tasks.list())")
    return made


def _target(scenario):
    """``(Scenario, Task or None)`` of ``train``'s first argument: a scenario, a factory of one, a
    task id or a ``Task`` (its scenario at the protocol's step cap)."""
    from ..tasks.task import TASK_ID, Task

    if isinstance(scenario, str):
        if not TASK_ID.match(scenario):
            raise ValidationError(f"scenario: got {shown(scenario)}; expected a plume_multi.Scenario, a function of no "
                                  "arguments returning one, or a task id such as "
                                  "'following/gaussian-random-source-v0' (plume_multi.tasks.list())")
        from ..tasks.registry import get

        scenario = get(scenario)
    if not isinstance(scenario, Task):
        return _scenario_of(scenario), None
    task = scenario
    if task.partners:
        raise ValidationError(f"task: {task.id} fixes the policies of some agents (partners "
                              f"{dict(task.partners)}); train() drives every agent with the one network it trains: "
                              "train on a task without partners, or on its scenario (task.scenario())")
    return task.scenario(), task


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


def _validate(policy: LearnedPolicy, scenario, episodes: int, until: str) -> dict:
    from ..evaluation import evaluate

    result = evaluate(policy, scenario, episodes, seed=VALIDATION_SEED, progress=False, until=until)
    return {"success_rate": result.success_rate, "mean_steps": result.mean}


def _seed_base(task, seed: int, num_worlds: int, validation_episodes: int) -> int:
    """The seed of training world 0; a task's protocol must leave room for the training worlds
    above its ``train_seed_low`` and keep the validation episodes off its evaluation episodes."""
    if task is None:
        return TRAIN_SEED_BASE + seed * 2**32
    protocol = task.protocol
    base = protocol.train_seed_low + seed * 2**32
    if base + num_worlds - 1 > MAX_SEED:
        raise ValidationError(f"seed: got {seed}; {task.id} trains from seed {protocol.train_seed_low} up "
                              f"(Protocol.train_seed_low), and world i is seeded that + seed * 2**32 + i, which "
                              f"must stay <= {MAX_SEED}: expected a smaller seed")
    if validation_episodes:
        low, high = VALIDATION_SEED, VALIDATION_SEED + validation_episodes
        evaluated = protocol.eval_seed, protocol.eval_seed + protocol.episodes
        if low < evaluated[1] and evaluated[0] < high or high > protocol.train_seed_low:
            raise ValidationError(f"task: {task.id} evaluates seeds {evaluated[0]}..{evaluated[1] - 1} and trains from "
                                  f"{protocol.train_seed_low}; the validation episodes (seeds {low}..{high - 1}) must "
                                  "lie between them: pass validation_episodes=0 (and keep='last')")
    return base


def train(scenario, policy: str = "ppo-mlp", budget: int = 2_000_000, seed: int = 0, *,
          config: PPOConfig | None = None, validate_every: int | None = None, validation_episodes: int = 1000,
          stop_at: float | None = None, keep: str | None = None, checkpoints=None,
          progress: bool = True) -> TrainingResult:
    """Train the learned baseline ``policy`` on a scenario or a task for ``budget`` agent-steps.

    Args:
        scenario: a ``Scenario``, a function of no arguments returning one, or a benchmark task
            (its id, e.g. ``"following/gaussian-random-source-v0"``, or a ``tasks.Task``): the
            task's scenario at its protocol's step cap, validated as the protocol scores
            (``until``), training worlds seeded from its ``train_seed_low``. Every agent of every
            world is one row, acting through the one network (with several agents per world the
            policy is shared); a task that fixes partners is refused.
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
        keep: which weights become ``TrainingResult.policy``: ``"best"`` (those of the best
            validation) or ``"last"`` (those at the end). Default: ``"best"`` when validations
            run, else ``"last"``; ``"best"`` with ``validation_episodes=0`` is refused. Both are
            kept either way (``TrainingResult.best``, ``.last``).
        checkpoints: a path prefix ``PREFIX``, or ``None`` (default: nothing written): the best
            weights so far go to ``PREFIX-best.pt`` at each new best validation, the latest to
            ``PREFIX-last.pt`` at each validation point (every ``validate_every``) and at the end;
            each is written whole or not at all, so a killed run keeps what it finished.
        progress: a tqdm bar over the agent-steps (on stderr; a widget in a notebook) with the
            latest success rates.

    Returns:
        A ``TrainingResult``: the kept policy and both candidates, the timing (validation
        excluded), the per-rollout log and the validations.

    Raises:
        ValidationError: a bad argument, before anything is compiled or trained.
    """
    scenario, task = _target(scenario)
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
    if keep is None:
        keep = "best" if validation_episodes else "last"
    check_choice("train", "keep", keep, KEEP)
    if keep == "best" and not validation_episodes:
        raise ValidationError("train.keep: got 'best' with validation_episodes=0; expected validations to choose the "
                              "best weights from (validation_episodes > 0), or keep='last'")
    paths = None
    if checkpoints is not None:
        paths = dict(zip(KEEP, files.outputs(checkpoints, [f"-{kind}.pt" for kind in KEEP], "train.checkpoints",
                                             "None or a path prefix such as 'runs/mlp-0' (writes runs/mlp-0-best.pt "
                                             "and runs/mlp-0-last.pt)")))
    if not isinstance(progress, bool):
        raise ValidationError(f"progress: got {progress!r}; expected True or False")
    base = _seed_base(task, seed, config.num_worlds, validation_episodes)

    rows = config.num_worlds * scenario.n_agents
    per_rollout = rows * config.rollout_steps
    iterations = -(-budget // per_rollout)
    if validate_every == 0:
        every = iterations  # only at the end
    else:
        every = max(1, round((budget / 10 if validate_every is None else validate_every) / per_rollout))

    run = _Run(scenario, task, policy, config, seed, base, validation_episodes, paths)
    with torch_threads(config.threads):
        return run.train(iterations, every, stop_at, keep, progress)


class _Run:
    """One training run: the network, its optimizer and simulator, and what it keeps."""

    def __init__(self, scenario, task, name, config, seed, base, validation_episodes, paths):
        self.scenario, self.task, self.name, self.config, self.seed = scenario, task, name, config, seed
        self.base, self.validation_episodes = base, validation_episodes
        self.until = task.protocol.until if task is not None else "first"
        self.paths = paths  # {"best": path, "last": path} of the checkpoints, or None
        self.best_state, self.best_row = None, None

    def policy(self, state: dict | None, env_steps: int, seconds: float, kind: str) -> LearnedPolicy:
        """A ``LearnedPolicy`` of ``state`` (default: the network's current weights)."""
        net = copy.deepcopy(self.net)
        if state is not None:
            net.load_state_dict(state)
        training = {"scenario_steps": env_steps, "seconds": seconds, "seed": self.seed, "checkpoint": kind,
                    "task": None if self.task is None else self.task.id}
        return LearnedPolicy(net.eval(), self.name, self.scenario, self.config, training=training)

    def checkpoint(self, env_steps: int, seconds: float, validation: list) -> dict | None:
        """Validate the current weights (when validations run), keep them if they are the best so
        far, and write the checkpoints; returns the validation row."""
        row = None
        if not self.validation_episodes and self.paths is None:
            return row
        current = self.policy(None, env_steps, seconds, "last")
        if self.validation_episodes:
            row = {"env_steps": env_steps, "seconds": seconds,
                   **_validate(current, self.scenario, self.validation_episodes, self.until)}
            validation.append(row)
            if _best_row(validation) is row:
                self.best_state = {k: v.detach().clone() for k, v in self.net.state_dict().items()}
                self.best_row = row
                if self.paths is not None:
                    best = self.policy(self.best_state, env_steps, seconds, "best")
                    best.training["validation"] = row
                    best.save(self.paths["best"])
        if self.paths is not None:
            current.save(self.paths["last"])
        return row

    def train(self, iterations, every, stop_at, keep, progress) -> TrainingResult:
        from tqdm.auto import tqdm

        name, config, scenario = self.name, self.config, self.scenario
        self.net = net = _make_network(name, scenario, config, self.seed)
        net.train()
        generator = torch.Generator()
        generator.manual_seed(self.seed)
        optimizer = torch.optim.Adam(net.parameters(), lr=config.learning_rate, eps=1e-5, fused=True)  # 4x less per step
        sim = Simulator(scenario, config.num_worlds, autoreset="same_step", parallel=False)
        sim.reset(seed=self.base)  # compiles on a scenario's first use: off the clock
        wall0, cpu0 = time.perf_counter(), time.process_time()
        stagger_episodes(sim, self.seed)
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
                if (iteration + 1) % every == 0 or iteration == iterations - 1:
                    row = self.checkpoint(env_steps, seconds, validation)
                    if row is not None:
                        bar.set_postfix_str(f"validation success {row['success_rate']:.0%}", refresh=False)
                        if stop_at is not None and row["success_rate"] >= stop_at:
                            break
                elif episodes:
                    bar.set_postfix_str(f"{successes / episodes:.0%} of the episodes that ended found the source",
                                        refresh=False)
        finally:
            bar.close()
        last = self.policy(None, env_steps, seconds, "last")
        best = None
        if self.best_state is not None:
            best = self.policy(self.best_state, self.best_row["env_steps"], self.best_row["seconds"], "best")
            best.training["validation"] = self.best_row
        kept = best if keep == "best" else last
        return TrainingResult(kept, name, self.seed, config, env_steps, seconds, cpu, log, validation, last=last,
                              best=best, kept=keep, task=None if self.task is None else self.task.id)
