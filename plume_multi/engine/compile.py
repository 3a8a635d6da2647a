"""Compiling a driver's entry point: say so when it takes a while, and name the model at fault.

``compile_entry(fn, args, ...)`` compiles (or loads from the cache) ``fn`` for the types of
``args`` without running it. A line on stderr says what is happening when it takes more than a
second, and says it truthfully: "compiling" once Numba has started compiling (its
``numba:compile`` event; a load from the cache raises none) or when the cache holds nothing for the
function, "loading ... from the cache" when a load alone takes that long (a busy machine), nothing
for a quick load. ``PLUME_MULTI_QUIET=1``
silences it; within ``reporting(callback)`` the same news goes to ``callback(text)`` instead, at
once ("compiling ..." as the compile starts): ``evaluate``'s progress bar shows it. When a model's
compiled code cannot compile, ``ModelError`` names the model, its file and line, with Numba's
message below it, instead of a long traceback at the first ``reset()``.
"""

from __future__ import annotations

import builtins
import contextlib
import contextvars
import dis
import os
import re
import sys
import threading
import warnings
from pathlib import Path

import numba
from numba.core import event
from numba.core.errors import NumbaError, NumbaIRAssumptionWarning

from ..errors import ModelError

__all__ = ["compile_entry", "check_names", "reporting", "NOTICE_AFTER_S"]

NOTICE_AFTER_S = 1.0
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_LOCATION = re.compile(r'File "([^"]+)", line (\d+)')


_REPORT = contextvars.ContextVar("plume_multi_compile_report", default=None)


@contextlib.contextmanager
def reporting(callback):
    """Within the block, ``compile_entry`` tells ``callback(text)`` what it does instead of
    writing the notice on stderr: ``"compiling the step for ..."`` as soon as Numba starts
    compiling, ``"loading the step for ... from the cache"`` when a load takes over a second."""
    token = _REPORT.set(callback)
    try:
        yield
    finally:
        _REPORT.reset(token)


def _in_cache(fn) -> bool:
    """Whether Numba's cache holds an index for ``fn`` (a load may follow; without one it compiles)."""
    cache_file = getattr(getattr(fn, "_cache", None), "_cache_file", None)
    index = getattr(cache_file, "_index_path", None)
    return bool(index) and os.path.exists(index)


class _Notice(event.Listener):
    """What ``compile_entry`` says while ``fn.compile`` runs. Numba's ``numba:compile`` events of
    this thread tell a compile from a load (a cache hit compiles nothing, so raises none); before
    the first one (Numba's own start-up can take a second on a busy machine) a function with no
    cache index is compiling, one with an index loading."""

    def __init__(self, fn, what: str, label: str, report):
        self.what, self.label, self.report = what, label, report
        self.cached = _in_cache(fn)
        self.thread = threading.get_ident()
        self.compiling = self.said_compiling = self.said_loading = False
        self.lock = threading.Lock()
        self.timers = []

    def _say(self, text: str) -> None:
        if self.report is not None:
            self.report(text)
        else:
            print(f"plume_multi: {text}", file=sys.stderr, flush=True)

    def _later(self, say) -> None:
        timer = threading.Timer(NOTICE_AFTER_S, say)
        timer.daemon = True
        timer.start()
        self.timers.append(timer)

    def _compiling(self) -> None:
        with self.lock:
            if self.said_compiling:
                return
            self.said_compiling = True
        self._say(f"compiling the {self.what} for {self.label} (first use; cached afterwards)")

    def _tick(self) -> None:  # NOTICE_AFTER_S after the start
        if self.compiling or not self.cached:
            self._compiling()
            return
        with self.lock:
            self.said_loading = True
        self._say(f"loading the {self.what} for {self.label} from the cache")

    def on_start(self, ev) -> None:
        if self.compiling or threading.get_ident() != self.thread:
            return
        self.compiling = True
        if self.report is not None:
            self._compiling()  # the bar's label says it at once
        elif self.said_loading:
            self._later(self._compiling)  # the index held something else: a compile after all

    def on_end(self, ev) -> None:
        pass

    def __enter__(self):
        event.register("numba:compile", self)
        self._later(self._tick)
        return self

    def __exit__(self, *exc):
        event.unregister("numba:compile", self)
        for timer in self.timers:
            timer.cancel()


def compile_entry(fn, args, *, what: str, label: str, models) -> None:
    """Compile ``fn`` for ``args``' types (or load it from the cache). ``models``: the
    combination's models (to name the one at fault); ``what`` and ``label`` make the notice
    ("compiling the step for Gaussian + ...")."""
    sig = tuple(numba.typeof(a) for a in args)
    if sig in fn.overloads:
        return
    report = _REPORT.get()
    quiet = report is None and os.environ.get("PLUME_MULTI_QUIET")
    try:
        with warnings.catch_warnings(), (contextlib.nullcontext() if quiet else _Notice(fn, what, label, report)):
            # a pedantic internal check of Numba's, set off by inlining one overload twice in a
            # function (two sample_at calls in a sensor); the compiled code is right
            warnings.simplefilter("ignore", NumbaIRAssumptionWarning)
            fn.compile(sig)
    except NumbaError as exc:
        raise _model_error(exc, models, label) from None


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
