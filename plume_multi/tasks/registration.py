"""The tasks' Gymnasium ids: ``import plume_multi`` registers one per task (its family is
Gymnasium's namespace), from the registry's records alone: no task's scenario is built and no
model is imported until an env is made (``tasks.envs``)."""

from __future__ import annotations

from .registry import get
from .registry import list as task_ids
from .task import Task

__all__ = ["register_gymnasium_task", "register_gymnasium_tasks"]


def register_gymnasium_task(task: Task) -> None:
    """Register ``task.id`` with Gymnasium (its family is the namespace)."""
    import gymnasium

    if task.id in gymnasium.registry:
        return
    gymnasium.register(id=task.id, entry_point="plume_multi.tasks.envs:gym_env",
                       vector_entry_point="plume_multi.tasks.envs:gym_vector_env",
                       kwargs={"task_id": task.id}, max_episode_steps=None, order_enforce=False,
                       disable_env_checker=True)


def register_gymnasium_tasks() -> None:
    """Register every task of the registry (``import plume_multi`` does it)."""
    for task_id in task_ids():
        register_gymnasium_task(get(task_id))
