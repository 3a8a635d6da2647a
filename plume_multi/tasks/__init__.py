"""The benchmark: versioned olfactory-search tasks, one protocol, one table.

* ``list()`` -> the task ids (``family/name-vN``); ``make(task_id, **options)`` -> the ``Task``
  (a frozen record: scenario factory, ``Protocol``, card, references, baselines);
* ``evaluate(task_id, policy, episodes=None, seed=None, executor=None)`` -> a ``TaskResult``:
  success rate, mean and median steps to the source, and the interquartile mean of the steps
  with its stratified-bootstrap 95 % interval (rliable's method);
* every task is a Gymnasium id (``gymnasium.make("plume_multi:<task id>")``) and
  ``parallel_env(task_id)`` / ``aec_env(task_id)`` its PettingZoo envs;
* ``register(task)`` adds a task of your own; ``table`` writes results, the Markdown table and the
  performance-profile figure (``plume-multi benchmark run`` / ``table``).

Example:
    >>> from plume_multi import tasks
    >>> "teams/mixed-4-v0" in tasks.list()
    True
    >>> tasks.make("teams/mixed-4-v0").protocol.max_steps
    1000
"""

from importlib import import_module

from .registry import FAMILIES, get, list, make
from .task import TRAIN_SEED_BASE, Protocol, Task

__all__ = ["list", "make", "get", "evaluate", "register", "parallel_env", "aec_env", "TaskEnv", "Task", "Protocol",
           "TaskResult", "iqm", "iqm_interval", "FAMILIES", "TRAIN_SEED_BASE"]

# The rest on first use: ``import plume_multi`` reads the registry (every task's Gymnasium id) and
# nothing that builds a scenario or scores one.
_LAZY = {"TaskEnv": ".envs", "aec_env": ".envs", "parallel_env": ".envs", "register": ".envs", "evaluate": ".running",
         "TaskResult": ".scores", "iqm": ".scores", "iqm_interval": ".scores"}


def __getattr__(name):
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
