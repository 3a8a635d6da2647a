"""The package's validators: every check of a user's value goes through these.

Each raises ``ValidationError`` naming what was given and what was expected, before any state
changes, with the error's ``owner``, ``field``, ``got`` and ``expected`` filled in (so a caller can
name the field as its user spelled it without reading the message). "An integer" never includes
``bool`` (``True`` is not a count, a seed or an action).
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import numbers
import os
from collections.abc import Sequence

import numpy as np

from .errors import ValidationError

__all__ = ["shown", "is_int", "is_integer", "is_real", "fail", "refuse", "check_real", "check_int", "check_bool",
           "check_choice", "check_heading", "check_seed", "check_point", "check_arguments", "CheckedArguments",
           "available_memory", "check_memory"]


def shown(value, limit: int = 80, typed: bool = False) -> str:
    """``repr(value)`` shortened to about ``limit`` characters for a message; with ``typed``,
    followed by its type name in brackets."""
    try:
        text = repr(value)
    except Exception:  # a user object whose repr fails still gets a message
        text = f"<{type(value).__name__} object>"
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"{text} ({type(value).__name__})" if typed else text


def is_int(value) -> bool:
    """Python int or NumPy integer; not bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


is_integer = is_int


def is_real(value) -> bool:
    """A real number (int, float, NumPy scalar); not bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def fail(owner: str, name: str, value, expected: str):
    """Raise ``ValidationError("owner.name: got VALUE; expected EXPECTED")``."""
    got = shown(value, 200)
    raise ValidationError(f"{owner}.{name}: got {got}; expected {expected}", owner=owner, field=name, got=got,
                          expected=expected)


def refuse(owner: str, name: str, found: str, expected: str):
    """Raise ``ValidationError("owner.name: got FOUND; expected EXPECTED")`` where ``found`` is a
    description written for the message (a file and what is wrong in it), shown whole."""
    raise ValidationError(f"{owner}.{name}: got {found}; expected {expected}", owner=owner, field=name, got=found,
                          expected=expected)


def check_real(owner: str, name: str, value, low=-math.inf, high=math.inf, *, low_open=False,
               high_open=False, expected: str | None = None) -> float:
    """A finite real number in the interval; returned as a Python float. ``expected``: the
    message's own words (a bound that comes from another field names it)."""
    lo = "(" if low_open else "["
    hi = ")" if high_open else "]"
    expected = expected or f"a finite number in {lo}{low:g}, {high:g}{hi}"
    if not is_real(value):
        fail(owner, name, value, expected)
    try:
        v = float(value)
    except (OverflowError, ValueError):
        fail(owner, name, value, expected)
    if not math.isfinite(v) or v < low or v > high or (low_open and v == low) or (high_open and v == high):
        fail(owner, name, value, expected)
    return v


def check_heading(owner: str, name: str, value) -> float:
    """A heading in degrees, finite and within +-1e6, wrapped into [0, 360)."""
    h = check_real(owner, name, value, -1e6, 1e6) % 360.0
    return h if h < 360.0 else 0.0  # a tiny negative angle wraps to 360.0 in floating point


def check_int(owner: str, name: str, value, low: int, high: int) -> int:
    """An integer (not bool) in ``low..high``; returned as a Python int."""
    if not is_int(value) or not low <= value <= high:
        fail(owner, name, value, f"an integer in {low}..{high}")
    return int(value)


def check_bool(owner: str, name: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        fail(owner, name, value, "True or False")
    return bool(value)


def check_choice(owner: str, name: str, value, choices) -> str:
    if not isinstance(value, str) or value not in choices:
        fail(owner, name, value, f"one of {list(choices)}")
    return value


def check_seed(seed, *, max_seed: int, num_worlds: int = 1, name: str = "seed"):
    """``None``, or ``seed`` as a Python int with ``0 <= seed`` and ``seed + num_worlds - 1 <= max_seed``.

    Every integer type is accepted (Python ``int``, NumPy integers); ``bool`` is not.
    """
    if seed is None:
        return None
    expected = f"None or an integer with 0 <= {name} <= {max_seed - num_worlds + 1}"
    if not is_int(seed):
        got = shown(seed, typed=True)
        raise ValidationError(f"{name}: got {got}; expected {expected}", field=name, got=got, expected=expected)
    value = int(seed)
    if value < 0 or value + num_worlds - 1 > max_seed:
        if num_worlds > 1:
            expected += f" (world i is seeded {name} + i, for {num_worlds} worlds)"
        raise ValidationError(f"{name}: got {value}; expected {expected}", field=name, got=str(value),
                              expected=expected)
    return value


def check_point(owner: str, name: str, value, *, length: int | tuple = 2, integer: bool = False, limit: float = math.inf,
                expected: str | None = None) -> tuple:
    """A point: a tuple, list or 1-D NumPy array of ``length`` finite real numbers (integers, not
    bools, with ``integer``), each within ``[-limit, limit]``; ``length`` may be a tuple of the
    lengths accepted (``(2, 3)``: a 2-D or a 3-D point). Returned as a tuple of Python floats
    (ints with ``integer``).

    Nothing else is a point: a string (``"12"`` would read as ``(1, 2)``), bytes, a set or a dict
    (their order is not the user's), bools, a 0-d array, a generator.
    """
    if expected is None:
        kind = "integers" if integer else "finite numbers"
        bound = f" within +-{limit:g}" if math.isfinite(limit) else ""
        count = " or ".join(str(n) for n in length) if isinstance(length, tuple) else str(length)
        expected = f"a sequence (tuple, list or 1-D array) of {count} {kind}{bound}"
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            fail(owner, name, value, expected)
        items = list(value)
    elif isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray)):
        items = list(value)
    else:
        fail(owner, name, value, expected)
    if len(items) not in (length if isinstance(length, tuple) else (length,)):
        fail(owner, name, value, expected)
    out = []
    for item in items:
        if not (is_int(item) if integer else is_real(item)):
            fail(owner, name, value, expected)
        try:
            number = int(item) if integer else float(item)
        except (OverflowError, ValueError):
            fail(owner, name, value, expected)
        if not math.isfinite(number) or abs(number) > limit:
            fail(owner, name, value, expected)
        out.append(number)
    return tuple(out)


def check_arguments(cls, args: tuple, kwargs: dict) -> None:
    """The arguments of a call ``cls(*args, **kwargs)`` of a dataclass: ``ValidationError`` naming
    ``Class.keyword`` for an unknown keyword, too many positional arguments, an argument given twice
    or a required one left out (where Python would raise a bare ``TypeError``)."""
    owner = cls.__name__
    params = [f for f in dataclasses.fields(cls) if f.init]
    names = [f.name for f in params]
    if len(args) > len(names):
        got = f"{len(args)} positional arguments {shown(args, 200)}"
        expected = f"at most {len(names)} ({', '.join(names)}), or keywords"
        raise ValidationError(f"{owner}: got {got}; expected {expected}", owner=owner, got=got, expected=expected)
    for key in kwargs:
        if key not in names:
            got = f"an unknown keyword argument ({key}={shown(kwargs[key])})"
            expected = f"one of the parameters {names}"
            raise ValidationError(f"{owner}.{key}: got {got}; expected {expected}", owner=owner, field=key, got=got,
                                  expected=expected)
    by_position = names[:len(args)]
    for key in by_position:
        if key in kwargs:
            got, expected = "it both by position and by keyword", "it once"
            raise ValidationError(f"{owner}.{key}: got {got}; expected {expected}", owner=owner, field=key, got=got,
                                  expected=expected)
    for f in params[len(args):]:
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if required and f.name not in kwargs:
            expected = "a value (it has no default)"
            raise ValidationError(f"{owner}.{f.name}: missing; expected {expected}", owner=owner, field=f.name,
                                  expected=expected)


class CheckedArguments(type):
    """Metaclass of configuration dataclasses (every model): a call with a misplaced keyword, too
    many or too few arguments raises ``ValidationError`` naming the class and the keyword
    (``check_arguments``) instead of Python's ``TypeError``. Only calls are checked: copies and
    pickles, which do not call the class, are not."""

    def __call__(cls, *args, **kwargs):
        if dataclasses.is_dataclass(cls):
            check_arguments(cls, args, kwargs)
        return super().__call__(*args, **kwargs)

    @property
    def __signature__(cls):
        """The signature of the class's ``__init__`` (the dataclass's fields), not this ``__call__``'s."""
        sig = inspect.signature(cls.__init__)
        return sig.replace(parameters=list(sig.parameters.values())[1:])


def available_memory() -> int | None:
    """Bytes of memory available now (``MemAvailable`` on Linux), or None when unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def check_memory(name: str, needed: int, what: str, advice: str) -> None:
    """Refuse, before any work, what needs more memory than is available now:
    ``ValidationError("name: WHAT needs X GiB; Y GiB of memory is available. ADVICE")``."""
    available = available_memory()
    if available is not None and needed > available:
        raise ValidationError(f"{name}: {what} needs {needed / 2**30:.1f} GiB; {available / 2**30:.1f} GiB of memory "
                              f"is available. {advice}")
