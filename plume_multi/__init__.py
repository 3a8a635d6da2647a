"""plume_multi: odor-plume search for many agents at once.

Front-ends over one engine of compiled kernels:

* ``Simulator`` / ``Scenario`` — the array API: B worlds x N agents per call.
* ``parallel_env()`` / ``env()`` — PettingZoo ``ParallelEnv`` / AEC over one world of N agents.
* ``vector_env()`` — a Gymnasium ``VectorEnv`` of B single-agent worlds.
* ``PlumeSearchEnv`` — the single-agent Gymnasium env, exactly as its contract says.
* ``evaluate()`` — a policy on many seeded episodes at once (locally or on Ray): ``EvaluationResult``.
* ``train()`` — a learned baseline (PPO with an MLP or a GRU) trained on a scenario: ``TrainingResult``.

The front-ends are imported on first use, so ``import plume_multi`` stays light; importing it
registers ``PlumeSearch-v0`` (and the alias ``PlumeNav-StaticGaussian-v0``; the Dict observation)
and ``PlumeSearchCompact-v0`` (the Box(3) observation) with Gymnasium. Modules that moved keep their
old import paths for one release, with a ``DeprecationWarning`` (``plume_multi._compat``).
"""

from importlib import import_module

from . import _compat, errors
from .engine.threads import choose_layer
from .envs.registration import register_envs
from .tasks.envs import register_gymnasium_tasks
from .errors import ComponentError, PlumeError, RenderingError, StateError, ValidationError
from .models import actions, bodies, plumes, rewards, sensors, sources
from .scenario import Scenario
from .simulator import Simulator
from .models.units import Units
from .world import WorldState

__version__ = "0.1.0"

_LAZY = {
    "PlumeSearchEnv": "plume_multi.envs.single",
    "parallel_env": "plume_multi.envs.pettingzoo",
    "env": "plume_multi.envs.pettingzoo",
    "raw_env": "plume_multi.envs.pettingzoo",
    "vector_env": "plume_multi.envs.vector",
    "multi_agent_vector_env": "plume_multi.envs.multi_vector",
    "evaluate": "plume_multi.evaluation",
    "EvaluationResult": "plume_multi.evaluation",
    "train": "plume_multi.training",
}

__all__ = [
    "plumes",
    "bodies",
    "actions",
    "sensors",
    "rewards",
    "sources",
    "Scenario",
    "Simulator",
    "Units",
    "WorldState",
    "errors",
    "PlumeError",
    "ValidationError",
    "StateError",
    "ComponentError",
    "RenderingError",
    *_LAZY,
]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if f"{__name__}.{name}" in _compat.OLD_TO_NEW:  # a module that moved: warns, gives the new one
        return import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'plume_multi' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))


choose_layer()  # before any parallel kernel runs: Numba's threads must not slow a trainer's (engine/threads.py)
_compat.install()
register_envs()
register_gymnasium_tasks()  # the benchmark's tasks, by their ids
