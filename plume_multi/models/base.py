"""What every model of the four families (plumes, actions, sensors, rewards) is made of.

A model is a frozen dataclass: its fields are its configuration, checked in ``__post_init__``
(``ValidationError`` naming the field). The engine asks it for

* ``params(scenario)``: a tuple of read-only arrays and numbers its compiled functions read;
* ``state_spec(scenario)``: the arrays it keeps per agent or per world (``StateArray``), added to
  the ``WorldState`` and so to snapshots, restores and validation;
* its compiled functions, in the module named by ``kernel_module`` (a fixed set of names per
  family, see docs/developing-models.md); sensors also give a few lines of code (``emit``) that
  the step driver pastes into its agent loop.

Nothing here runs per step: the driver generated for a scenario's combination of models does
(``plume_multi/kernels/assemble.py``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..checks import check_bool, check_choice, check_heading, check_int, check_real, fail, is_int, is_real

__all__ = ["Model", "StateArray", "check_real", "check_int", "check_choice", "check_bool",
           "check_heading", "is_int", "is_real", "fail"]


@dataclass(frozen=True)
class StateArray:
    """An array a model keeps: ``per`` is ``"agent"`` (leading size B*N) or ``"world"`` (B)."""

    dtype: type
    per: str
    tail: tuple = ()
    low: float | None = None  # validate(): values must lie in [low, high] and be finite
    high: float | None = None

    def shape(self, num_worlds: int, n_agents: int) -> tuple:
        lead = num_worlds * n_agents if self.per == "agent" else num_worlds
        return (lead, *self.tail)


@dataclass(frozen=True)
class Model:
    """Base of every model. Subclasses are frozen dataclasses of their parameters."""

    family: ClassVar[str] = ""
    kernel_module: ClassVar[str] = ""  # dotted module holding the compiled functions

    def _set(self, name: str, value) -> None:
        object.__setattr__(self, name, value)

    @property
    def name(self) -> str:
        return type(self).__name__

    def metadata(self) -> dict:
        """JSON-able description, enough to rebuild the model: ``{"model": name, **fields}``."""
        out = {"family": self.family, "model": self.name}
        for f in dataclasses.fields(self):
            out[f.name] = _jsonable(getattr(self, f.name))
        return out

    def params(self, scenario) -> tuple:
        return ()

    def state_spec(self, scenario) -> dict:
        return {}

    def state_tuple(self, arrays: dict) -> tuple:
        """The state arrays as the compiled functions receive them (``arrays``: this model's
        arrays by the names of ``state_spec``, in its order)."""
        return tuple(arrays.values())


def _jsonable(value):
    if isinstance(value, Model):
        return value.metadata()
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return {"array": list(value.shape), "dtype": str(value.dtype)}
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    return value
