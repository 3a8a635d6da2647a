"""Numba copies every compiled function a function calls into the caller's machine code; a call of
a large one here refers to the code the process already holds instead.

When compiled code calls another compiled function, Numba 0.68 links the callee's whole LLVM module
(its own callees' copies included) into the caller's, optimises the result and emits all of it again
(``CPUCodeLibrary.finalize``). A driver's step calls ``reset_world``, which calls the plume's reset,
which calls the puff physics, ...: the code at the bottom of such a tree is optimised and emitted once
for each function above it. The copy lets LLVM inline the callee, which pays for a small function
and seldom for a large one (LLVM inlines one mostly where it has a single call site).

Here a callee of at least ``MIN_INSTRUCTIONS`` LLVM instructions, compiled by a cached dispatcher
(``njit(cache=True)``) of the package or of a generated step driver, is not linked: the caller's
call stays a reference to the callee's symbol, which Numba's execution engine (one per process)
already holds (the callee was compiled, or loaded, before its caller). A smaller one is linked as
Numba does, so LLVM may inline it.

The cache: machine code that refers to a callee's symbol stores what it refers to (the callee's
module, name and signature, and the symbol). Loading it first loads each callee (from the cache, or
compiling it), then checks that this process holds each symbol the code refers to; where one is
missing (a callee compiled again elsewhere has another symbol: Numba numbers its functions per
process), the stored code is not loaded, and the function compiles again, silently
(``StaleReference``; ``jit.py``'s guard). Nothing is ever run with a reference left unresolved.

The step computes the same, bit for bit (the test compares a driver's episodes with and without
this), at the same speed (``benchmarks/models.py``); what changes is the time to compile it
(docs/benchmarks.md, *Time to the first step*). It replaces private functions of Numba, so it is
installed only where those are as this module expects (Numba 0.68, whose code was read); elsewhere,
and with ``PLUME_MULTI_NUMBA_LINK=0``, Numba links as released. ``installed()`` says which.
"""

from __future__ import annotations

import importlib
import os
import sys
import warnings
import weakref

from numba.core.errors import NumbaIRAssumptionWarning

from .numba_memo import numba_release

__all__ = ["install", "installed", "StaleReference", "MIN_INSTRUCTIONS", "references"]

_SUPPORTED = (0, 68)  # the Numba release whose code this was written against (read)
# over LLVM's inlining threshold (a cost of about 250 at -O3) for a function called from several sites;
# 0 and 100 compiled no faster on the first-step rows (within the machine's noise)
MIN_INSTRUCTIONS = 300
_KIND = "object+references"  # the serialization kind of machine code that refers to other code
_MODULES = ("plume_multi.", "plume_multi_driver_")  # whose compiled functions may be referred to
_state = {"installed": False, "reading": False}
_OWNERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # library -> (module, qualname, args, symbol)
_LARGE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # library -> its function is large


class StaleReference(Exception):
    """Cached machine code refers to a callee's symbol that this process does not hold: the code is
    not loaded (its function compiles again)."""


def installed() -> bool:
    """Whether calls of large compiled functions are references in this process."""
    return _state["installed"]


def references(library) -> dict:
    """``{symbol: (module, qualname, argument types)}``: the callees' code that ``library``'s machine
    code refers to (empty where it holds copies of all)."""
    return dict(getattr(library, "_plume_references", {}))


def install() -> bool:
    """Install it (once per process); False where this Numba is not the one it was written for, or
    ``PLUME_MULTI_NUMBA_LINK=0``. With ``PLUME_MULTI_NUMBA_LINK=0`` on Numba 0.68, cached code that
    refers to other code (another process's) is still understood: loaded as above, never an error."""
    if _state["installed"]:
        return True
    if numba_release() != _SUPPORTED:
        return False
    from numba.core import codegen, dispatcher

    library = codegen.CPUCodeLibrary
    needed = (getattr(dispatcher._DispatcherBase, "add_overload", None), getattr(library, "finalize", None),
              getattr(library, "serialize_using_object_code", None), getattr(library, "_unserialize", None),
              getattr(library, "_get_module_for_linking", None), getattr(codegen.JitEngine, "is_symbol_defined", None))
    if any(f is None for f in needed):
        return False
    if not _state["reading"]:
        _read_references(library)
        _state["reading"] = True
    if os.environ.get("PLUME_MULTI_NUMBA_LINK", "1") == "0":
        return False
    _own_libraries(dispatcher._DispatcherBase)
    _refer_to_large_callees(library)
    _store_references(library)
    _state["installed"] = True
    return True


def _own_libraries(base) -> None:
    """Remember, for each library a cached dispatcher compiled or loaded, where to find it again."""
    add_overload = base.add_overload

    def add_overload_owned(self, cres):
        add_overload(self, cres)
        py_func = getattr(self, "py_func", None)
        module = getattr(py_func, "__module__", None) or ""
        qualname = getattr(py_func, "__qualname__", "")
        cache = getattr(self, "_cache", None)
        # the package's functions and generated drivers only: their callers are the package's, the
        # drivers and the user's models, all cached where this module is installed to read them
        if (not module.startswith(_MODULES) or cres.objectmode or "<locals>" in qualname or cache is None
                or type(cache).__name__ == "NullCache"):
            return
        _OWNERS[cres.library] = (module, qualname, tuple(cres.signature.args), cres.fndesc.mangled_name)

    base.add_overload = add_overload_owned


def _large(library, symbol: str) -> bool:
    """Whether ``symbol`` of ``library`` has at least ``MIN_INSTRUCTIONS`` instructions."""
    found = _LARGE.get(library)
    if found is None:
        count = 0
        try:
            module = library._shared_module if library._shared_module is not None else library._final_module
            fn = module.get_function(symbol)
            for block in fn.blocks:
                for _ in block.instructions:
                    count += 1
                if count >= MIN_INSTRUCTIONS:
                    break
        except NameError:  # not in the module (never so for a dispatcher's own function)
            count = 0
        found = _LARGE[library] = count >= MIN_INSTRUCTIONS
    return found


def _refer_to_large_callees(library) -> None:
    """``finalize`` links only the callees that are not large and cached: a call of one that is
    stays a reference to its symbol, which the engine holds (checked here)."""
    finalize = library.finalize

    def finalize_referring(self):
        if not self._finalized:
            engine = self._codegen._engine
            linked, refs = [], dict(getattr(self, "_plume_references", {}))
            for callee in dict.fromkeys(self._linking_libraries):  # once each, in order
                owner = _OWNERS.get(callee)
                if owner is not None and engine.is_symbol_defined(owner[3]) and _large(callee, owner[3]):
                    refs[owner[3]] = owner[:3]
                    self._reload_init.update(callee._reload_init)
                    continue
                refs.update(getattr(callee, "_plume_references", {}))  # its copy refers to them
                linked.append(callee)
            self._linking_libraries = linked
            self._plume_references = refs
        return finalize(self)

    library.finalize = finalize_referring


def _store_references(library) -> None:
    """Machine code that refers to callees is cached with what it refers to."""
    serialize = library.serialize_using_object_code

    def serialize_with_references(self):
        name, kind, data = serialize(self)
        refs = getattr(self, "_plume_references", None)
        if refs:
            return name, _KIND, (data, tuple(sorted(refs.items())))
        return name, kind, data

    library.serialize_using_object_code = serialize_with_references


def _read_references(library) -> None:
    """Loading machine code that refers to callees loads them first and checks every symbol
    (``StaleReference`` where one is missing)."""
    unserialize = library._unserialize.__func__

    def unserialize_with_references(cls, codegen, state):
        name, kind, data = state
        if kind != _KIND:
            return unserialize(cls, codegen, state)
        inner, refs = data
        for symbol, (module, qualname, args) in refs:
            _load(module, qualname, args)
            if not codegen._engine.is_symbol_defined(symbol):
                raise StaleReference(f"{module}.{qualname}{args}: this process holds it under another symbol")
        library = unserialize(cls, codegen, (name, "object", inner))
        library._plume_references = dict(refs)
        return library

    library._unserialize = classmethod(unserialize_with_references)


def _load(module: str, qualname: str, args: tuple) -> None:
    """Load (or compile) ``module.qualname`` for ``args``: the package's modules are imported, any
    other must be imported already (no file is read that the user did not name)."""
    found = sys.modules.get(module)
    try:
        if found is None and module.startswith("plume_multi."):
            found = importlib.import_module(module)
        if found is None:
            raise StaleReference(f"{module} is not imported")
        fn = found
        for part in qualname.split("."):
            fn = getattr(fn, part)
        with warnings.catch_warnings():  # as compile_entry: Numba's pedantic check of an overload inlined twice
            warnings.simplefilter("ignore", NumbaIRAssumptionWarning)
            fn.compile(args)
    except StaleReference:
        raise
    except Exception as exc:  # gone, renamed, or no longer compiling: the caller compiles again
        raise StaleReference(f"{module}.{qualname}{args}: {type(exc).__name__}: {exc}") from None
