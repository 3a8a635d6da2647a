"""The one error hierarchy of plume_multi.

``PlumeError`` is the root. ``ValidationError`` is also a ``ValueError`` and ``StateError`` also a
``RuntimeError``, so code written against the built-in exceptions keeps working.
"""

from __future__ import annotations

__all__ = ["PlumeError", "ValidationError", "StateError", "ComponentError", "RenderingError", "ModelError"]


class PlumeError(Exception):
    """Base class of every error this package raises on purpose."""


class ValidationError(PlumeError, ValueError):
    """A value given by the caller is invalid (argument, action, seed, configuration, snapshot)."""


class StateError(PlumeError, RuntimeError):
    """A call is not allowed in the object's current state (e.g. ``step`` before ``reset``)."""


class ComponentError(PlumeError):
    """An injected component does not satisfy its protocol."""


class RenderingError(PlumeError):
    """Rendering failed or its optional dependency is missing."""


class ModelError(ComponentError):
    """A model's compiled functions do not compile (an undefined name, a wrong type, ...): the
    message names the model, its file and line, with Numba's own message below."""
