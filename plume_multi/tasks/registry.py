"""The registry of tasks: one module per family under ``plume_multi.tasks.families``, each with a
``TASKS`` tuple of ``Task`` records; ``add(task)`` adds a task of the user's own (``tasks.register`` with its Gymnasium id)."""

from __future__ import annotations

import builtins
import importlib

from ..checks import shown
from ..errors import ValidationError
from .task import Task, check_task_id

__all__ = ["FAMILIES", "add", "list", "make", "get"]

# The families, in the order of the table (modules of plume_multi.tasks.families).
FAMILIES = ("otto", "following", "teams", "pursuit", "puffs", "walls", "recorded")

_TASKS: dict = {}
_loaded = False


def _load() -> dict:
    global _loaded
    if not _loaded:
        for family in FAMILIES:
            module = importlib.import_module(f"{__package__}.families.{family}")
            for task in module.TASKS:
                _add(task)
        _loaded = True
    return _TASKS


def _add(task: Task) -> None:
    if not isinstance(task, Task):
        raise ValidationError(f"task: got {shown(task, typed=True)}; expected a plume_multi.tasks.Task")
    if task.id in _TASKS and _TASKS[task.id] is not task:
        raise ValidationError(f"task: the id {task.id!r} is taken; a changed task gets a new version (-vN+1)")
    _TASKS[task.id] = task


def add(task: Task) -> Task:
    """Add ``task`` to the registry; returns it. An id already taken by another task is refused:
    change the version instead. (``tasks.register`` also registers its Gymnasium id.)"""
    _load()
    _add(task)
    return task


def list(family: str | None = None) -> builtins.list:  # noqa: A001  (the issue's name: tasks.list())
    """The ids of the registered tasks (of one ``family`` when given), in the table's order."""
    ids = builtins.list(_load())
    if family is None:
        return ids
    known = sorted({check_task_id(i)["family"] for i in ids})
    if family not in known:
        raise ValidationError(f"family: got {shown(family)}; expected one of {known}")
    return [i for i in ids if check_task_id(i)["family"] == family]


def get(task_id) -> Task:
    """The registered ``Task`` of ``task_id`` (a ``Task`` is returned as it is)."""
    if isinstance(task_id, Task):
        return task_id
    check_task_id(task_id)
    tasks = _load()
    if task_id not in tasks:
        match = check_task_id(task_id)
        stem = f"{match['family']}/{match['name']}-v"
        versions = [i for i in tasks if i.startswith(stem)]
        hint = f" (versions of it: {versions})" if versions else ""
        raise ValidationError(f"task_id: got {task_id!r}; expected a registered task{hint}: plume_multi.tasks.list()")
    return tasks[task_id]


def make(task_id, **options) -> Task:
    """The ``Task`` of ``task_id``, with ``options`` bound (a task on the user's file needs
    ``path=``; see its ``options``)."""
    task = get(task_id)
    return task.with_options(**options) if options else task
