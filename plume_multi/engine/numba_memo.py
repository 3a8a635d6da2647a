"""Numba compiles inlined code several times over; three memos make it do the work once.

Every step driver inlines the models' functions (``inline="always"``) and the engine's readers
(overloads with ``inline="always"``: ``sample_at``, ``sample_cell``, ``is_on``, ...), so that the
step runs as fast as a hand-written loop. Numba 0.68 repeats work for each of them:

1. **An inlined overload is typed at every call site, at every pass of type inference.**
   ``_OverloadFunctionTemplate.generic`` runs the implementation's front end and its type inference
   each time the caller's type inference asks for the call's type (2,111 times, for 10 distinct
   argument types, in the driver of the nine reference sensors). Its answer depends only on the
   argument types, the keywords and the flags: the key of Numba's own cache of implementations
   (``_impl_cache``), which keeps the implementation for the life of the process. The memo keeps
   the answer under the same key; the inlining pass reads what the first answer stored
   (``_inline_overloads``), and copies the implementation's IR before it changes anything.
2. **An inlined function is translated again at every call site**, and again inside each inlined
   caller's own translation (a function inlined three levels deep is translated once per path to
   it). The memo keeps a function's translated IR (``InlineWorker.run_untyped_passes``) for the
   length of one outermost compile, so a module global changed between two compiles is seen, as
   Numba sees it; ``inline_ir`` copies the IR before it changes anything.
3. **That copy is of each block with its own copy of the function's scope** (every variable of the
   function, once per block): one memo for all the blocks of one copy, so the scope is copied once,
   and the blocks share it as the original blocks do.

The step computes the same (a driver's episodes with and without the memos are equal, bit for
bit) at the same speed; what changes is the time to compile it (the driver of the nine reference
sensors: about 27 -> 18 s of CPU; docs/benchmarks.md, *Time to the first step*). The memos replace
private functions of Numba, so they are installed only where those are as this module expects
(Numba 0.68, whose code was read); elsewhere, and with ``PLUME_MULTI_NUMBA_MEMO=0``, Numba runs as
released. ``installed()`` says which.
"""

from __future__ import annotations

import copy
import os

import numba

__all__ = ["install", "installed"]

_SUPPORTED = (0, 68)  # the Numba release whose code these memos were written against (read)
_state = {"installed": False}


def installed() -> bool:
    """Whether the memos are in place in this process."""
    return _state["installed"]


def numba_release() -> tuple:
    """``(major, minor)`` of the Numba imported (``()`` for a development build's version string);
    ``numba_link`` checks it too."""
    try:
        return tuple(int(p) for p in numba.__version__.split(".")[:2])
    except ValueError:  # a development build's version string
        return ()


def install() -> bool:
    """Install the memos (once per process); False where this Numba is not one they were written
    for, or ``PLUME_MULTI_NUMBA_MEMO=0``."""
    if _state["installed"]:
        return True
    if os.environ.get("PLUME_MULTI_NUMBA_MEMO", "1") == "0" or numba_release() != _SUPPORTED:
        return False
    from numba.core import event, inline_closurecall, ir
    from numba.core import targetconfig
    from numba.core.typing import templates

    template = templates._OverloadFunctionTemplate
    worker = inline_closurecall.InlineWorker
    expected = (getattr(template, "generic", None), getattr(template, "_get_impl", None),
                getattr(worker, "inline_function", None), getattr(worker, "run_untyped_passes", None),
                getattr(worker, "inline_ir", None), getattr(ir.FunctionIR, "copy", None),
                getattr(targetconfig.ConfigStack, "top_or_none", None))
    if any(f is None for f in expected) or getattr(inline_closurecall, "copy", None) is not copy:
        return False
    _memo_overloads(template, targetconfig)
    _memo_translations(worker, event)
    _share_scope_copies(inline_closurecall, worker, ir)
    _state["installed"] = True
    return True


def _memo_overloads(template, targetconfig) -> None:
    generic = template.generic
    typed: dict = {}  # (template class, and _impl_cache's key) -> signature

    def memo_generic(self, args, kws):
        if self._inline.is_never_inline:  # a compiled call: Numba caches it itself
            return generic(self, args, kws)
        key = (type(self), self.context, tuple(args), tuple(kws.items()), targetconfig.ConfigStack.top_or_none())
        sig = typed.get(key)
        if sig is None:
            sig = generic(self, args, kws)
            if sig is not None:
                typed[key] = sig
        return sig

    template.generic = memo_generic


def _memo_translations(worker, event) -> None:
    translated: dict = {}
    depth = [0]

    class _Outermost(event.Listener):
        """Clears the memo when the outermost compile ends (compiles hold Numba's global lock,
        so no other thread's compile interleaves)."""

        def on_start(self, ev):
            depth[0] += 1

        def on_end(self, ev):
            depth[0] -= 1
            if depth[0] <= 0:
                depth[0] = 0
                translated.clear()

    event.register("numba:compile", _Outermost())

    def inline_function(self, caller_ir, block, i, function, arg_typs=None):
        self.flags.enable_ssa = False  # what run_untyped_passes sets on the caller's flags
        key = (function, self.targetctx, self.flags.copy())
        callee_ir = translated.get(key) if depth[0] > 0 else None
        if callee_ir is None:
            callee_ir = self.run_untyped_passes(function)
            if depth[0] > 0:
                translated[key] = callee_ir
        return self.inline_ir(caller_ir, block, i, callee_ir, function.__code__.co_freevars, arg_typs=arg_typs)

    worker.inline_function = inline_function


def _share_scope_copies(module, worker, ir) -> None:
    """``inline_ir``'s ``copy_ir`` calls ``the_ir.copy()``, then ``copy.deepcopy(block)`` for each of
    its blocks: within ``inline_ir``, each ``FunctionIR.copy`` starts one memo, which the copies of
    that IR's own blocks share (any other copy goes as before)."""
    shared = {"memo": None, "blocks": (), "inside": False}
    fir_copy = ir.FunctionIR.copy
    inline_ir = worker.inline_ir

    class _Copy:
        def __getattr__(self, name):
            return getattr(copy, name)

        @staticmethod
        def deepcopy(x, memo=None):
            if memo is None and shared["memo"] is not None and any(x is b for b in shared["blocks"]):
                memo = shared["memo"]
            return copy.deepcopy(x, memo)

    def function_ir_copy(self):
        if shared["inside"]:
            shared["memo"] = {}
            shared["blocks"] = tuple(self.blocks.values())
        return fir_copy(self)

    def shared_inline_ir(self, *args, **kwargs):
        outer = shared["inside"]
        shared["inside"] = True
        try:
            return inline_ir(self, *args, **kwargs)
        finally:
            shared["inside"] = outer
            shared["memo"] = None
            shared["blocks"] = ()

    module.copy = _Copy()
    ir.FunctionIR.copy = function_ir_copy
    worker.inline_ir = shared_inline_ir
