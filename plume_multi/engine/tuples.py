"""Coordinates in compiled code: fixed-length tuples, one function for every dimension.

A position is a tuple of floats ``(x, y)`` or ``(x, y, z)``, a cell a tuple of integers, a grid's
shape ``(W, H)`` or ``(W, H, D)``: Numba types a tuple with its length (``UniTuple(int64 x 3)``),
so a function written once over ``len(point)`` compiles to straight-line code for each dimension,
as numbagg writes one core kernel for every dimension. Arrays keep the engine's layout: per-agent
rows ``pos[i, c]`` in ``(x, y[, z])`` order, grids indexed ``[z,] y, x`` (``grid[cell[::-1]]``).

Loops ``for c in range(len(point))`` read ``point[c]`` with a run-time ``c``; Numba lowers that
to a switch over the entries, which LLVM folds once it unrolls the loop (the default step ran at
1.00x of its hand-written 2-D text, benchmarks/throughput.py). The helpers below build tuples,
which a loop cannot: each is compiled for the length it is given (``like``: a tuple whose length is
the dimension), from one rule.

The helpers are overloads that Numba compiles as functions of their own (LLVM inlines them: they
are a few instructions), not ``inline="always"``: Numba 0.68 inlines such an overload after typing,
then removes dead code with an alias analysis that reads the blocks in label order, and where the
inlined overload split a block that also held the argument copies of a function inlined before
typing, it dropped that function's array stores (``S[0][b] = v`` in both arms of an ``if``: a
movie's start frame was never written). A compiled call keeps the blocks as they are.
"""

from __future__ import annotations

import inspect

import numpy as np
from numba import types
from numba.extending import overload

from .jit import njit

__all__ = ["per_coordinate", "row", "put_row", "take", "cell_of", "as_int", "as_float", "replaced", "squared_distance",
           "clamp_cell", "clamp_point"]

_made: dict = {}


def _defined(text: str, scope: dict | None = None):
    """The function ``f`` that ``text`` defines (``scope``: the names it uses besides ``np``),
    made once per text and scope."""
    key = (text, tuple(sorted((scope or {}).items(), key=lambda item: item[0])))
    fn = _made.get(key)
    if fn is None:
        names = {"np": np, "__name__": __name__, **(scope or {})}
        exec(compile(text, "<plume_multi.engine.tuples>", "exec"), names)  # noqa: S102
        fn = _made[key] = names["f"]
    return fn


def _function(args: str, entries: str, n: int, scope: dict | None = None):
    """``def f(<args>): return (entries(0), ..., entries(n - 1))`` (``entries`` a format string
    of ``{k}``)."""
    body = "".join(entries.format(k=k) + ", " for k in range(n))
    return _defined(f"def f({args}):\n    return ({body})\n", scope)


def _length(like) -> int:
    if isinstance(like, types.BaseTuple):
        return len(like)
    raise TypeError(f"expected a tuple whose length is the dimension; got {like}")


def per_coordinate(entry: str, like: str | None = None, scope: dict | None = None):
    """Make a stub ``def f(a, b, ...)`` a compiled function that returns the tuple of
    ``entry.format(k=k)`` for ``k`` in ``range(len(like))``: ``like`` is the name of the argument
    whose tuple has the dimension's length (default the first), ``scope`` the names ``entry``
    uses besides ``np``. ``@per_coordinate("a[{k}] - b[{k}]")`` on ``def difference(a, b)`` is
    ``(a[0] - b[0], a[1] - b[1])`` in 2-D and has a third entry in 3-D. The stub's docstring says
    what it returns."""
    def register(stub):
        params = list(inspect.signature(stub).parameters)
        args = ", ".join(params)
        # the typing function (its arguments are the stub's: Numba compares them) makes the
        # implementation for the length of ``like``'s tuple type
        typing = _defined(f"def f({args}):\n    return _implementation(_length({like or params[0]}))\n",
                          {"_implementation": lambda n: _function(args, entry, n, scope), "_length": _length})
        overload(stub)(typing)
        return stub
    return register


def row(arr, index, like):
    """``(arr[index, 0], ..., arr[index, n - 1])`` with ``n = len(like)``; ``index`` an integer
    (a row of a ``(rows, D)`` array) or a tuple of leading indices."""


@overload(row)
def _row(arr, index, like):
    n = _length(like)
    if isinstance(index, types.BaseTuple):
        return _function("arr, index, like", "arr[index + ({k},)]", n)
    return _function("arr, index, like", "arr[index, {k}]", n)


def put_row(arr, index, values):
    """``arr[index, c] = values[c]`` for every entry of ``values``."""


@overload(put_row)
def _put_row(arr, index, values):
    def impl(arr, index, values):
        for c in range(len(values)):
            arr[index, c] = values[c]
    return impl


@per_coordinate("values[{k}]", like="like")
def take(values, like):
    """The first ``len(like)`` entries of the tuple ``values``."""


@per_coordinate("np.int64(np.floor(point[{k}] + 0.5))")
def cell_of(point):
    """The cell of a float point, ``floor(c + 0.5)`` of each coordinate, int64 (cell ``k`` spans
    ``[k - 1/2, k + 1/2)``)."""


@per_coordinate("np.int64(values[{k}])")
def as_int(values):
    """The entries of ``values`` as int64 (floats truncated: give whole numbers)."""


@per_coordinate("np.float64(cell[{k}])")
def as_float(cell):
    """The entries of ``cell`` as float64."""


@per_coordinate("value if k == {k} else values[{k}]")
def replaced(values, k, value):
    """``values`` with entry ``k`` (a run-time index) replaced by ``value``."""


@per_coordinate("min(max(cell[{k}], 0), shape[{k}] - 1)")
def clamp_cell(cell, shape):
    """Each entry of ``cell`` clamped into ``0 .. shape[c] - 1``."""


@per_coordinate("min(max(point[{k}], 0.0), shape[{k}] - 1.0)")
def clamp_point(point, shape):
    """Each coordinate of ``point`` clamped into ``[0, shape[c] - 1]``, float64."""


@njit(inline="always")
def squared_distance(a, b):
    """``sum_c (a[c] - b[c])^2``, summed in axis order (x first)."""
    d2 = 0.0
    for c in range(len(a)):
        d = a[c] - b[c]
        d2 += d * d
    return d2
