"""Every environment API over the engine.

* ``pettingzoo``: the PettingZoo ``ParallelEnv`` / AEC of one world of N searchers.
* ``vector``: a Gymnasium ``VectorEnv`` of B single-agent worlds; ``multi_vector``: B worlds of N
  searchers as the B*N rows of one ``VectorEnv``.
* ``single``: ``PlumeSearchEnv``, the single-agent Gymnasium env; ``components``: its injectable
  plume, action and observation models.
* ``registration``: the Gymnasium and PettingZoo ids (``import plume_multi`` registers them).

Each is a thin mapping over the front-end core, ``_core`` (package-internal): the ``Simulator``
of its worlds, the Scenario of its options, spaces, checked actions, masks, seeds, frames, copies.

``PlumeSearchEnv``, ``EnvironmentState`` and ``SB3VecEnv`` (the Stable-Baselines3 adapter of
``plume_multi.integrations.sb3``; it needs the ``sb3`` extra) are imported on first use.
"""

from importlib import import_module

_LAZY = {
    "PlumeSearchEnv": "plume_multi.envs.single",
    "EnvironmentState": "plume_multi.envs.single",
    "SB3VecEnv": "plume_multi.integrations.sb3",
}
__all__ = list(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'plume_multi.envs' has no attribute {name!r}")
