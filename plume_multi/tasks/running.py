"""``evaluate(task_id, policy)``: a policy scored on a task by its protocol, through
``plume_multi.evaluate`` (the one evaluator: seeded chunks of worlds, locally or on Ray)."""

from __future__ import annotations

import dataclasses

from ..checks import check_choice, check_int, shown
from ..errors import ValidationError
from ..evaluation import EXECUTORS
from ..evaluation import evaluate as evaluate_scenario
from ..integrations.trained import as_policy
from ..policies.named import NAMED
from ..policies.perseus_named import progress_shown
from .registry import get
from .scores import TaskResult
from .task import MAX_SEED, Task

__all__ = ["evaluate", "policy_for_task", "planned_run"]


def _named(name: str, task: Task):
    if name not in NAMED:
        raise ValidationError(f"policy: got {name!r}; expected a policy object or one of {list(NAMED)}")
    return NAMED[name]


def policy_for_task(policy, task: Task, scenario):
    """What ``plume_multi.evaluate`` runs for ``policy`` on ``task``: a built-in's factory for a
    name, and, when the task fixes partners (a mixed team), one policy per agent with the
    partners in their places. A built-in that cannot act in the task is refused here, before
    anything compiles."""
    if isinstance(policy, str):
        _named(policy, task)(scenario, 0)  # refuses an unfit scenario now, with the policy's reason
        policy = _named(policy, task)
    if not task.partners:
        return policy
    partners = task.partner_map
    return [_named(partners[n], task) if n in partners else policy for n in range(scenario.n_agents)]


def _name_of(policy) -> str:
    if isinstance(policy, str):
        return policy
    name = getattr(policy, "name", None)
    if isinstance(name, str):
        return name
    return getattr(policy, "__name__", None) or type(policy).__name__


def planned_run(task_id, episodes: int | None = None, seed: int | None = None, max_steps: int | None = None):
    """``(protocol, reduced, scenario)`` of a run of ``evaluate`` with these arguments, checked as
    ``evaluate`` checks them, without running it: the task's protocol with the episodes, the seed of
    episode 0 and the step cap the run uses, whether that is a reduced run, and its scenario. What
    ``plume-multi benchmark run`` compares with the rows a file holds, to reuse them."""
    task = get(task_id)
    protocol = task.protocol
    episodes = protocol.episodes if episodes is None else check_int("evaluate", "episodes", episodes, 1, 2**31 - 1)
    seed = protocol.eval_seed if seed is None else check_int("evaluate", "seed", seed, 0, MAX_SEED)
    protocol.check_seeds(seed, episodes)
    scenario = task.scenario(max_steps=max_steps)
    reduced = episodes < protocol.episodes or scenario.max_steps < protocol.max_steps
    return dataclasses.replace(protocol, episodes=episodes, eval_seed=seed, max_steps=scenario.max_steps), reduced, \
        scenario


def evaluate(task_id, policy, episodes: int | None = None, seed: int | None = None, executor: str | None = None, *,
             max_steps: int | None = None, num_worlds: int | None = None, progress: bool = True,
             name: str | None = None) -> TaskResult:
    """Score ``policy`` on a task by its protocol.

    Args:
        task_id: a registered id (``tasks.list()``) or a ``Task`` (``tasks.make(id, path=...)``).
        policy: a built-in's name (``"infotaxis"``, ``"surge-cast"``, ...; ``NAMED``) or anything
            ``plume_multi.evaluate`` takes (a callable ``obs -> actions``, an object with
            ``act(simulator)``, a factory of one, one per agent). On a task with partners it drives
            the agents the partners leave.
        episodes: default the protocol's; fewer makes a reduced run (``TaskResult.reduced``).
        seed: the seed of episode 0; default the protocol's ``eval_seed``. Seeds reaching the
            training seeds (``Protocol.train_seed_low``) are refused.
        executor: ``"local"`` (default) or ``"ray"`` (chunks of episodes as Ray tasks; the same
            numbers).
        max_steps: a lower step cap than the protocol's (a reduced run).
        num_worlds: worlds per simulator (``plume_multi.evaluate``'s chunk size).
        progress: a tqdm bar over the episodes.
        name: the policy's name in the result (default: the built-in's name, else its class's).

    Returns:
        A ``TaskResult``: success rate, mean and median steps to the source, and the IQM of the
        steps (failures at the cap) with its stratified-bootstrap 95 % interval.
    """
    task = get(task_id)
    protocol = task.protocol
    executor = "local" if executor is None else check_choice("evaluate", "executor", executor, EXECUTORS)
    run, reduced, scenario = planned_run(task, episodes, seed, max_steps)
    with progress_shown(progress):  # a built-in made here (the named Perseus solves): quiet with the rest
        evaluated = policy_for_task(as_policy(policy), task, scenario)
    if not (callable(evaluated) or isinstance(evaluated, list)):
        raise ValidationError(f"policy: got {shown(policy, typed=True)}; expected a built-in's name or a policy")
    result = evaluate_scenario(evaluated, scenario, run.episodes, run.eval_seed, num_worlds=num_worlds, executor=executor,
                               progress=progress, until=protocol.until)
    return TaskResult.of(task.id, name or _name_of(policy), run, reduced, result)
