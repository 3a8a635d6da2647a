"""plume_multi: odor-plume search for many agents at once.

Front-ends over one engine of compiled kernels:

* ``Simulator`` / ``Scenario`` — the array API: B worlds x N agents per call.
* ``parallel_env()`` / ``env()`` — PettingZoo ``ParallelEnv`` / AEC over one world of N agents.
* ``vector_env()`` — a Gymnasium ``VectorEnv`` of B single-agent worlds.
* ``PlumeSearchEnv`` — the single-agent Gymnasium env, exactly as its contract says.
* ``evaluate()`` — a policy on many seeded episodes at once (locally or on Ray): ``EvaluationResult``.
* ``compare()`` — several policies on the same seeded episodes: a table and the search-time distributions.
* ``capabilities()`` — what works with what: every plume, body, sensor, reward and policy against
  dimension, walls, moving and several sources, teams, and what each needs of the others.
* ``train()`` — a learned baseline (PPO with an MLP or a GRU) trained on a scenario: ``TrainingResult``.

Every name is imported on first use, so ``import plume_multi`` stays light; importing it
registers ``PlumeSearch-v0`` (and the alias ``PlumeNav-StaticGaussian-v0``; the Dict observation)
and ``PlumeSearchCompact-v0`` (the Box(3) observation) with Gymnasium. Modules that moved keep their
old import paths for one release, with a ``DeprecationWarning`` (``plume_multi._compat``).
"""

from importlib import import_module
from importlib.util import find_spec
from typing import TYPE_CHECKING

from . import _compat, errors
from ._compat import when_imported
from .engine.threads import choose_layer
from .envs.registration import register_gymnasium, register_pettingzoo
from .errors import ComponentError, PlumeError, RenderingError, StateError, ValidationError
from .tasks.registration import register_gymnasium_tasks

__version__ = "0.1.0"

if TYPE_CHECKING:  # what type checkers and the API reference see; at run time, _LAZY on first use
    from .envs.multi_vector import multi_agent_vector_env
    from .envs.pettingzoo import env, parallel_env, raw_env
    from .envs.single import PlumeSearchEnv
    from .envs.vector import vector_env
    from .capabilities import capabilities
    from .evaluation import EvaluationResult, evaluate
    from .models import actions, bodies, plumes, rewards, sensors, sources
    from .models.units import Units
    from .scenario import Scenario
    from .simulator import Simulator
    from .tasks.compare import compare
    from .training import train
    from .world import WorldState

# Every public name but the errors, by the module that defines it: imported on first use, so that
# ``import plume_multi`` costs little more than ``import numpy, numba`` (the models' modules, SciPy,
# matplotlib, torch and the integrations load when a name that needs them is first reached;
# tests/test_imports.py holds the line).
_LAZY = {
    "plumes": "plume_multi.models",
    "bodies": "plume_multi.models",
    "actions": "plume_multi.models",
    "sensors": "plume_multi.models",
    "rewards": "plume_multi.models",
    "sources": "plume_multi.models",
    "Scenario": "plume_multi.scenario",
    "Simulator": "plume_multi.simulator",
    "Units": "plume_multi.models.units",
    "WorldState": "plume_multi.world",
    "PlumeSearchEnv": "plume_multi.envs.single",
    "parallel_env": "plume_multi.envs.pettingzoo",
    "env": "plume_multi.envs.pettingzoo",
    "raw_env": "plume_multi.envs.pettingzoo",
    "vector_env": "plume_multi.envs.vector",
    "multi_agent_vector_env": "plume_multi.envs.multi_vector",
    "evaluate": "plume_multi.evaluation",
    "EvaluationResult": "plume_multi.evaluation",
    "compare": "plume_multi.tasks.compare",
    "train": "plume_multi.training",
}

__all__ = ["plumes", "bodies", "actions", "sensors", "rewards", "sources", "Scenario", "Simulator", "Units",
           "WorldState", "errors", "PlumeError", "ValidationError", "StateError", "ComponentError", "RenderingError",
           "PlumeSearchEnv", "parallel_env", "env", "raw_env", "vector_env", "multi_agent_vector_env", "evaluate",
           "EvaluationResult", "compare", "train", "capabilities"]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if f"{__name__}.{name}" in _compat.OLD_TO_NEW:  # a module that moved: warns, gives the new one
        return import_module(f"{__name__}.{name}")
    if not name.startswith("__") and find_spec(f"{__name__}.{name}") is not None:
        return import_module(f"{__name__}.{name}")  # a submodule (plume_multi.scenarios), as once imported eagerly
    raise AttributeError(f"module 'plume_multi' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))


choose_layer()  # before any parallel kernel runs: Numba's threads must not slow a trainer's (engine/threads.py)
_compat.install()
# The ids, as soon as Gymnasium and PettingZoo are imported (now, if they are): importing them here
# would cost a sixth of ``import numpy, numba``.
when_imported("gymnasium", register_gymnasium)
when_imported("gymnasium", register_gymnasium_tasks)  # the benchmark's tasks (no task's scenario is built)
when_imported("pettingzoo", register_pettingzoo)
