"""Compiling a driver's entry point: say so when it takes a while, and name the model at fault.

``compile_entry(fn, args, ...)`` compiles (or loads from the cache) ``fn`` for the types of
``args`` without running it. When that takes more than a second, one line on stderr says what
is compiling (``PLUME_MULTI_QUIET=1`` silences it). When a model's compiled code cannot compile,
``ModelError`` names the model, its file and line, with Numba's message below it, instead of a
long traceback at the first ``reset()``.
"""

from __future__ import annotations

import builtins
import dis
import os
import re
import sys
import threading
import warnings
from pathlib import Path

import numba
from numba.core.errors import NumbaError, NumbaIRAssumptionWarning

from ..errors import ModelError

__all__ = ["compile_entry", "check_names", "NOTICE_AFTER_S"]

NOTICE_AFTER_S = 1.0
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_LOCATION = re.compile(r'File "([^"]+)", line (\d+)')


def compile_entry(fn, args, *, what: str, label: str, models) -> None:
    """Compile ``fn`` for ``args``' types. ``models``: the combination's models (to name the one at
    fault); ``what`` and ``label`` make the notice ("compiling the step for Gaussian + ...")."""
    sig = tuple(numba.typeof(a) for a in args)
    if sig in fn.overloads:
        return
    timer = None
    if not os.environ.get("PLUME_MULTI_QUIET"):
        def notice():
            print(f"plume_multi: compiling the {what} for {label} (first use; cached afterwards)",
                  file=sys.stderr, flush=True)

        timer = threading.Timer(NOTICE_AFTER_S, notice)
        timer.daemon = True
        timer.start()
    try:
        with warnings.catch_warnings():
            # a pedantic internal check of Numba's, set off by inlining one overload twice in a
            # function (two sample_at calls in a sensor); the compiled code is right
            warnings.simplefilter("ignore", NumbaIRAssumptionWarning)
            fn.compile(sig)
    except NumbaError as exc:
        raise _model_error(exc, models, label) from None
    finally:
        if timer is not None:
            timer.cancel()


def check_names(fn, model) -> None:
    """``ModelError`` when compiled function ``fn`` of ``model`` reads a global name its module
    does not define (a typo such as ``sample_cel``): found before compiling, with its line."""
    py_func = getattr(fn, "py_func", fn)
    code = py_func.__code__
    namespace = py_func.__globals__
    line = code.co_firstlineno
    for ins in dis.get_instructions(code):
        if ins.starts_line:
            line = ins.starts_line
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            name = ins.argval
            if name not in namespace and not hasattr(builtins, name):
                raise ModelError(f"{type(model).__module__}.{type(model).__name__} ({model.family} model, "
                                 f"{code.co_filename}:{line}): {py_func.__name__} reads the name {name!r}, which its "
                                 f"module does not define")


def _model_files(models) -> dict:
    """``{source file: model}`` for every compiled function of ``models``."""
    out = {}
    for model in models:
        kernels = getattr(model, "kernels", None)
        for name in getattr(kernels, "__dataclass_fields__", {}):
            py_func = getattr(getattr(kernels, name), "py_func", None)
            if py_func is not None and py_func.__code__.co_filename:
                out.setdefault(str(Path(py_func.__code__.co_filename).resolve()), model)
    return out


def _model_error(exc: Exception, models, label: str) -> ModelError:
    message = _ANSI.sub("", str(exc)).strip()
    engine_dir = str(Path(__file__).resolve().parent)
    files = _model_files(models)
    culprit = where = None
    package_dir = str(Path(engine_dir).parent)
    found = []
    for path, line in _LOCATION.findall(message):
        resolved = str(Path(path).resolve()) if os.path.exists(path) else path
        if resolved in files and not resolved.startswith(engine_dir):
            found.append((files[resolved], f"{path}:{line}", resolved.startswith(package_dir)))
    if found:
        # the package's models are tested: a model of the user's in the chain is the likelier author
        # (a sensor passing a wrong type into the plume fails inside the plume's code)
        culprit, where, _ = min(found, key=lambda f: f[2])
    if culprit is None:
        for path, line in _LOCATION.findall(message):
            if "plume_multi_driver_" not in path and not path.startswith(engine_dir):
                where = f"{path}:{line}"
                break
        head = f"The step for {label} does not compile" + (f" (at {where})" if where else "")
    else:
        head = (f"{type(culprit).__module__}.{type(culprit).__name__} ({culprit.family} model, {where}) "
                f"does not compile in the step for {label}")
    return ModelError(f"{head}. Numba says:\n{message}")
