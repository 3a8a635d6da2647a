"""Named tuple classes that Numba's cache finds again in any process.

Numba's cache stores a record's class by reference (module and name). A class defined in a script
run as ``__main__``, in a notebook, or held under another name than its own cannot be found that
way: Numba then pickles it by value, the copy never equals the original, and every process
compiles anew. ``stable(cls)`` gives an equivalent class that lives in this module under a name
that encodes its type name and fields, so any process can rebuild it from the name alone.
"""

from __future__ import annotations

import base64
import json
import sys
from collections import namedtuple

__all__ = ["stable", "findable"]

_PREFIX = "Record_"


def findable(cls) -> bool:
    """True when ``cls`` is held by its module under its own name (pickled by reference)."""
    module = sys.modules.get(getattr(cls, "__module__", ""), None)
    return module is not None and cls.__module__ != "__main__" and getattr(module, cls.__qualname__, None) is cls


def _name(typename: str, fields: tuple) -> str:
    code = base64.b32encode(json.dumps([typename, list(fields)]).encode()).decode().rstrip("=")
    return _PREFIX + code


def stable(cls):
    """An equivalent named tuple class (same type name and fields) that this module holds."""
    return __getattr__(_name(cls.__name__, tuple(cls._fields)))


def __getattr__(name: str):
    if not name.startswith(_PREFIX):
        raise AttributeError(name)
    code = name[len(_PREFIX):]
    typename, fields = json.loads(base64.b32decode(code + "=" * (-len(code) % 8)))
    cls = namedtuple(typename, fields)
    cls.__module__ = __name__
    cls.__qualname__ = name
    globals()[name] = cls
    return cls
