"""Wrappers: ``PlumeSearchEnv`` (the exact single-agent contract) and library adapters.

``SB3VecEnv`` needs stable-baselines3 (the ``sb3`` extra); it is imported on first use.
"""

from importlib import import_module

_LAZY = {
    "PlumeSearchEnv": "plume_multi.wrappers.single",
    "EnvironmentState": "plume_multi.wrappers.single",
    "SB3VecEnv": "plume_multi.wrappers.sb3",
}
__all__ = list(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'plume_multi.wrappers' has no attribute {name!r}")
