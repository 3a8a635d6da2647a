"""The one error hierarchy of plume_multi.

``PlumeError`` is the root. ``ValidationError`` is also a ``ValueError`` and ``StateError`` also a
``RuntimeError``, so code written against the built-in exceptions keeps working.
"""

from __future__ import annotations

__all__ = ["PlumeError", "ValidationError", "CapabilityError", "StateError", "ComponentError", "RenderingError", "ModelError"]


class PlumeError(Exception):
    """Base class of every error this package raises on purpose."""


class ValidationError(PlumeError, ValueError):
    """A value given by the caller is invalid (argument, action, seed, configuration, snapshot).

    Besides its message, the error says what it is about, for code that handles it (a front-end
    that names a field as its user spelled it, a script that retries), each ``None`` where unknown:

    * ``owner``: the class or call that took the value (``"Scenario"``, ``"Gaussian"``);
    * ``field``: the argument or field (``"sigma"``);
    * ``got``: the value as the message shows it (its ``repr``, shortened) or a description of it;
    * ``expected``: what would have been accepted, in words.

    The validators of ``plume_multi.checks`` fill them; their message is then
    ``"owner.field: got GOT; expected EXPECTED"``. Every attribute is a string (or None), so the
    error pickles whatever the value was (Ray sends errors between processes).
    """

    def __init__(self, message: str = "", *, owner: str | None = None, field: str | None = None,
                 got: str | None = None, expected: str | None = None):
        super().__init__(message)
        self.owner = owner
        self.field = field
        self.got = got
        self.expected = expected


class CapabilityError(ValidationError):
    """Parts that do not work together (``plume_multi.capabilities``): a model outside its declared
    dimensions, walls, moving or several sources or teams, or a need another part does not meet,
    refused before anything compiles. ``owner`` is the part that refuses, ``field`` what it is
    refused for (``"plume"``, ``"dimensions"``, ``"walls"``, ...), ``expected`` what would work."""


class StateError(PlumeError, RuntimeError):
    """A call is not allowed in the object's current state (e.g. ``step`` before ``reset``)."""


class ComponentError(PlumeError):
    """An injected component does not satisfy its protocol."""


class RenderingError(PlumeError):
    """Rendering failed or its optional dependency is missing."""


class ModelError(ComponentError):
    """A model's compiled functions do not compile (an undefined name, a wrong type, ...): the
    message names the model, its file and line, with Numba's own message below."""
