"""Numba compiles inlined code several times over; five memos make it do the work once, five of
its steps are done sooner or not at all, and Python's collector runs less often while it compiles.

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
   Numba sees it; ``inline_ir`` copies the IR before it changes anything. Its key is the target
   (the context's class and code generator) and the flags, not the target context itself: each
   compile makes its own copy of it (``_make_subtarget``, from the flags), so the functions that
   one compile brings with it (a model's, called from the step) share the translations (the
   puffs-among-walls row: 89 translations instead of 128).
3. **That copy is of each block with its own copy of the function's scope** (every variable of the
   function, once per block): one memo for all the blocks of one copy, so the scope is copied once,
   and the blocks share it as the original blocks do. The copy itself is ``copy.deepcopy``'s, done
   directly for the IR's plain classes (``_ir_copy``: the same objects, 2-3x sooner; the copies were
   12 % of a cold puff row's compile).

4. **An inlined overload's implementation is compiled whole, once per argument types, and never
   used.** Building it, ``_OverloadFunctionTemplate._build_impl`` compiles it ("make sure that the
   implementation can be fully compiled": typing, lowering, LLVM, wrappers), and ``generic`` asks
   its dispatcher for a call template, which compiles it too; then ``generic`` types it again on
   its own, for the inliner, and the caller's lowering takes the inlined copy, never that compiled
   one (Numba records an ``_EmptyImplementationEntry``). For an overload with ``inline="always"``,
   ``_typed_only`` makes that dispatcher answer with the folded argument types, without compiling;
   the implementation is typed as before, so a typing error is raised as before. Should that way
   fail at all (an implementation that asks for ``literally``, say), the overload is typed again
   as released. A cold first step took 6-14 % less CPU (``benchmarks/first_step.py``, side by
   side: default 6.24 -> 5.67 s, the Poisson team 14.00 -> 12.02 s, puffs 24.78 -> 23.19 s).

5. **Liveness is computed with sets of variable names, in Python, to a fixed point**
   (``analysis.compute_live_map``: which variables are live at the entry of each block). A step
   driver has about 300 blocks and 3,000 variables after inlining, and Numba computes its liveness
   several times (after each pass that changes the IR, and in each dead-code elimination): 2.2 s
   of the 18 s that the driver of the nine reference sensors took to compile. ``_live_map``
   computes the same sets, with each block's set held as the bits of one Python integer (a union
   of 3,000 names is then one operation on 47 machine words), and gives Numba the sets of names it
   gave. The equations and their fixed point are Numba's: the least one above the same start, so
   the same sets, whatever the order of the updates (the test compares them, call for call).
   With item 6, a cold first step took 2-11 % less CPU (side by side: the nine-sensor oriented
   row 9.44 -> 8.44 s, the Poisson team 13.42 -> 12.55 s, puffs 23.54 -> 22.41 s).
6. **A message that Numba builds for an error it then catches** (it tries the typing templates in
   turn: thousands per driver) is wrapped in ``colorama.init()`` and ``deinit()`` where colorama is
   installed, which wrap and unwrap ``sys.stdout`` and ``sys.stderr``, and write nothing: the
   text is built from the same strings without them (``_markup``).
7. **A NumPy ufunc's call is typed again at every call site** (``Numpy_rules_ufunc.generic``,
   which searches the ufunc's loops: 5,383 calls for 65 distinct argument types in the driver of
   the nine reference sensors, 12,207 for 81 in the puff row's). Its answer (a signature, which
   nothing changes afterwards) depends on the template's class, the ufunc and the argument types
   only: the memo keeps it under those. A failure is not kept: it is raised again each time.
8. **Compile flags are compared and hashed through ``values()``** (a dict of every option, built
   through a property each): 30,697 times for the nine sensors' driver, each time Numba looks up an
   overload's implementation in its cache. ``Flags.values()`` reads the same dict directly (where
   each option's property is the one ``targetconfig`` made), and ``Flags.__hash__``, which hashes the
   sorted option names (``sorted`` of that dict: its keys), hashes the same names once per class.
9. **A reference count of a record reads every one of its fields** to find the arrays' memory
   records (``NRTContext.get_meminfos``): its numbers and tuples of numbers too, one LLVM
   instruction each, which LLVM then deletes (unused). The puff plume's parameters are a record of
   dozens of numbers beside its arrays, and each function that takes it counts references at entry
   and exit. ``_counted_fields`` reads only the fields that hold a memory record (or contain one):
   the same records, in the same order, reached by the same instructions, so the optimised machine
   code is the same, byte for byte (the drivers of the default, nine-sensor and puff rows compared);
   a first step of the puff row took 12 % less CPU, the nine sensors' 4 % (side by side, both ways).
10. **An overload's implementation is compiled with a C wrapper** (``create_cfunc_wrapper``), for a
   call through a first-class function value, which an implementation never is (it is called from
   the compiled code its template types). The memo compiles them without (``no_cfunc_wrapper``, as
   ``engine.jit.njit`` does for the package's own kernels): Numba's ``min``, ``max``, ``int`` and the
   package's overloads, each once per argument types (0.05-0.1 s of lowering per combination).
11. **Every inlining copies the callee's IR twice**: once to change it, then that copy again, an
   "unmutated copy" ``inline_ir`` returns and both its callers drop. The second copy keeps the
   first's blocks, and ``inline_ir`` returns None in its place, so a caller that read it would fail
   loudly (``_share_scope_copies``). ``inline_ir`` took 2.21 -> 1.70 s of a cold puffs-among-walls
   row's CPU (156 inlinings, side by side).
12. **Python's cyclic collector starts a young collection every 700 allocations**, and a compile
   allocates millions of IR, type and LLVM objects: a cold puffs-among-walls row ran 1,200 young
   collections, 109 middle and 9 full ones, each full one through every object of the process.
   While an outermost compile runs, the first threshold is ``COMPILE_GC_THRESHOLD`` (50,000: 14
   young collections and 1 middle, no full one), and its end sets it back
   (``_fewer_collections``). The same cycles are freed, later. Side by side, two pairs: a cold
   first step took 4-8 % less CPU for the puff row, 9-20 % less among walls and 11-14 % less for
   the default; the walls row's peak memory grew from 254 to 263 MiB.

The step computes the same (a driver's episodes with and without the memos are equal, bit for
bit) at the same speed; what changes is the time to compile it (the driver of the nine reference
sensors: about 27 -> 18 s of CPU; docs/benchmarks.md, *Time to the first step*). The memos replace
private functions of Numba, so they are installed only where those are as this module expects
(Numba 0.68, whose code was read); elsewhere, and with ``PLUME_MULTI_NUMBA_MEMO=0``, Numba runs as
released. ``installed()`` says which.
"""

from __future__ import annotations

import copy
import copyreg
import os
import types as pytypes

import numba

__all__ = ["install", "installed"]

_SUPPORTED = (0, 68)  # the Numba release whose code these memos were written against (read)
_state = {"installed": False}
RELEASED: dict = {}  # what items 5-9 replaced, as Numba released it (the tests compare)


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
    from numba.core import analysis, compiler, dispatcher, event, inline_closurecall, ir, targetconfig, types
    from numba.core.runtime import context as nrt_context
    from numba.core.typing import npydecl, templates

    template = templates._OverloadFunctionTemplate
    worker = inline_closurecall.InlineWorker
    expected = (getattr(template, "generic", None), getattr(template, "_get_impl", None),
                getattr(template, "_build_impl", None), getattr(template, "_get_jit_decorator", None),
                getattr(dispatcher.Dispatcher, "get_call_template", None),
                getattr(types.Dispatcher, "get_call_type", None),
                getattr(worker, "inline_function", None), getattr(worker, "run_untyped_passes", None),
                getattr(worker, "inline_ir", None), getattr(ir.FunctionIR, "copy", None),
                getattr(targetconfig.ConfigStack, "top_or_none", None), getattr(analysis, "compute_live_map", None),
                getattr(getattr(npydecl, "Numpy_rules_ufunc", None), "generic", None),
                getattr(getattr(compiler, "Flags", None), "options", None),
                getattr(nrt_context.NRTContext, "get_meminfos", None))
    if any(f is None for f in expected) or getattr(inline_closurecall, "copy", None) is not copy:
        return False
    _memo_overloads(template, targetconfig, _typed_only(template, dispatcher, types))
    _memo_translations(worker, event)
    _fewer_collections(event)
    global _PLAIN
    _PLAIN = _plain_ir_classes()
    _share_scope_copies(inline_closurecall, worker, ir)
    _sooner_live_maps(analysis)
    _plain_markup()
    _memo_ufunc_typing(npydecl.Numpy_rules_ufunc)
    _quicker_flags(compiler.Flags)
    _counted_fields(nrt_context.NRTContext)
    _state["installed"] = True
    return True


def _memo_overloads(template, targetconfig, typed_only) -> None:
    generic = template.generic
    typed: dict = {}  # (template class, and _impl_cache's key) -> signature

    def memo_generic(self, args, kws):
        if self._inline.is_never_inline:  # a compiled call: Numba caches it itself
            return generic(self, args, kws)
        key = (type(self), self.context, tuple(args), tuple(kws.items()), targetconfig.ConfigStack.top_or_none())
        sig = typed.get(key)
        if sig is None:
            if self._inline.is_always_inline:
                sig = typed_only(self, args, kws, key[1:])
            else:  # a cost model decides: Numba may call the compiled implementation
                sig = generic(self, args, kws)
            if sig is not None:
                typed[key] = sig
        return sig

    template.generic = memo_generic


def _typed_only(template, dispatcher, types):
    """``typed_only(self, args, kws, impl_key)``: ``template.generic`` for an overload with
    ``inline="always"``, its implementation typed, not compiled (item 4 of the module's text).
    ``impl_key``: the key of the template's ``_impl_cache``."""
    generic = template.generic
    get_jit_decorator = template._get_jit_decorator
    get_call_template = dispatcher.Dispatcher.get_call_template
    get_call_type = types.Dispatcher.get_call_type
    building = [False]  # inside typed_only (a compile holds Numba's lock: one thread at a time)

    def marking_jit_decorator(self):
        jitter = get_jit_decorator(self)
        typed_only = building[0] and self._inline.is_always_inline

        def marking(**options):
            # item 10: an implementation is called from compiled code only, never through a
            # first-class function value: no C wrapper
            options.setdefault("no_cfunc_wrapper", True)
            decorate = jitter(**options)
            if not typed_only:
                return decorate

            def mark(py_func):
                disp = decorate(py_func)
                disp._plume_multi_typed_only = True  # inlined wherever it is called: never compiled
                return disp
            return mark
        return marking

    def template_of(self, args, kws):
        if getattr(self, "_plume_multi_typed_only", False):
            pysig, args = self._compiler.fold_argument_types(args, kws)
            return None, pysig, args, {}
        return get_call_template(self, args, kws)

    def call_type(self, context, args, kws):
        if getattr(self.dispatcher, "_plume_multi_typed_only", False):  # _build_impl's check
            self.dispatcher.get_call_template(args, kws)
            return None
        return get_call_type(self, context, args, kws)

    def typed_only(self, args, kws, impl_key):
        outer = building[0]
        building[0] = True
        try:
            return generic(self, args, kws)
        except Exception:
            pass  # typed again as released, below: the same answer or the same error
        finally:
            building[0] = outer
        self._impl_cache.pop(impl_key, None)
        return generic(self, args, kws)

    template._get_jit_decorator = marking_jit_decorator
    dispatcher.Dispatcher.get_call_template = template_of
    types.Dispatcher.get_call_type = call_type
    return typed_only


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
        # every compile makes its own target context, a copy of its target's with the options
        # that the flags set: the key is the target (class and code generator) and the flags
        key = (function, type(self.targetctx), self.targetctx.codegen(), self.flags.copy())
        callee_ir = translated.get(key) if depth[0] > 0 else None
        if callee_ir is None:
            callee_ir = self.run_untyped_passes(function)
            if depth[0] > 0:
                translated[key] = callee_ir
        return self.inline_ir(caller_ir, block, i, callee_ir, function.__code__.co_freevars, arg_typs=arg_typs)

    worker.inline_function = inline_function


COMPILE_GC_THRESHOLD = 50_000  # allocations between two young collections while Numba compiles (item 12)


def _fewer_collections(event) -> None:
    """While an outermost compile runs, Python's cyclic collector starts a young collection every
    ``COMPILE_GC_THRESHOLD`` allocations instead of every 700 (``gc.set_threshold``'s first value;
    the others, and whether it runs at all, stay as they were); the outermost compile's end sets
    the threshold back."""
    import gc

    saved = {"depth": 0, "threshold": None}

    class _Compiling(event.Listener):
        def on_start(self, ev):
            saved["depth"] += 1
            if saved["depth"] == 1:
                threshold = gc.get_threshold()
                saved["threshold"] = threshold
                gc.set_threshold(max(threshold[0], COMPILE_GC_THRESHOLD), *threshold[1:])

        def on_end(self, ev):
            saved["depth"] -= 1
            if saved["depth"] <= 0:
                saved["depth"] = 0
                if saved["threshold"] is not None:
                    gc.set_threshold(*saved["threshold"])
                    saved["threshold"] = None

    event.register("numba:compile", _Compiling())


def _share_scope_copies(module, worker, ir) -> None:
    """``inline_ir``'s ``copy_ir`` calls ``the_ir.copy()``, then ``copy.deepcopy(block)`` for each of
    its blocks: within ``inline_ir``, each ``FunctionIR.copy`` starts one memo, which the copies of
    that IR's own blocks share (any other copy goes as before). ``inline_ir`` copies twice: the
    callee's IR, which it changes, then that copy, an "unmutated copy" it returns first and its
    callers (``InlineInlinables``, ``InlineOverloads``) drop: that second copy keeps the first's
    blocks, and ``inline_ir`` returns None in its place (item 11)."""
    shared = {"memo": None, "blocks": (), "inside": False, "copy": None, "unread": ()}
    fir_copy = ir.FunctionIR.copy
    inline_ir = worker.inline_ir

    class _Copy:
        def __getattr__(self, name):
            return getattr(copy, name)

        @staticmethod
        def deepcopy(x, memo=None):
            if memo is None and any(x is b for b in shared["unread"]):
                return x
            if memo is None and shared["memo"] is not None and any(x is b for b in shared["blocks"]):
                memo = shared["memo"]
            return _ir_copy(x, {} if memo is None else memo)

    def function_ir_copy(self):
        if not shared["inside"]:
            return fir_copy(self)
        if self is shared["copy"]:  # the copy of inline_ir's own copy: returned, never read
            shared["copy"] = None
            shared["memo"] = None
            shared["blocks"] = ()
            shared["unread"] = tuple(self.blocks.values())
            return fir_copy(self)
        shared["memo"] = {}
        shared["blocks"] = tuple(self.blocks.values())
        shared["copy"] = fir_copy(self)
        return shared["copy"]

    def shared_inline_ir(self, *args, **kwargs):
        outer = shared["inside"]
        shared["inside"] = True
        try:
            result = inline_ir(self, *args, **kwargs)
        finally:
            shared["inside"] = outer
            shared["memo"] = None
            shared["blocks"] = ()
            shared["copy"] = None
            shared["unread"] = ()
        return (None, *result[1:])

    module.copy = _Copy()
    ir.FunctionIR.copy = function_ir_copy
    worker.inline_ir = shared_inline_ir


# What ``copy.deepcopy`` returns unchanged, and the IR's classes it copies by their ``__dict__``
# alone (no ``__deepcopy__``, ``__reduce__``, state hooks or slots of their own): ``_ir_copy`` does
# that itself; everything else (``Var``, ``Const``, ``Global``, a scope's defaultdicts, numbers'
# types, ...) goes to ``copy.deepcopy`` with the same memo.
_ATOMIC = frozenset({type(None), int, float, bool, complex, str, bytes, type, range, pytypes.FunctionType,
                     pytypes.BuiltinFunctionType, pytypes.CodeType, type(Ellipsis), type(NotImplemented)})
_HOOKS = ("__deepcopy__", "__reduce__", "__reduce_ex__", "__getstate__", "__setstate__", "__copy__",
          "__getnewargs__", "__getnewargs_ex__", "__new__")


def _copied_by_dict(cls) -> bool:
    if cls in copy._deepcopy_dispatch or cls in copyreg.dispatch_table:
        return False
    return not any(any(h in c.__dict__ for h in _HOOKS) or c.__dict__.get("__slots__") for c in cls.__mro__[:-1])


def _plain_ir_classes() -> frozenset:
    from numba.core import ir

    return frozenset(c for c in vars(ir).values()
                     if isinstance(c, type) and c.__module__ == ir.__name__ and _copied_by_dict(c)
                     and c not in (ir.FunctionIR, ir.Scope, ir.VarMap))


_PLAIN: frozenset = frozenset()


def _ir_copy(x, memo: dict):
    """``copy.deepcopy(x, memo)``, the same objects: the IR's plain instructions, lists, tuples and
    dicts are copied here (``copy.deepcopy``'s own route for them: a new object in the memo, its
    ``__dict__``'s values copied), anything else by ``copy.deepcopy``."""
    cls = type(x)
    if cls in _ATOMIC:
        return x
    i = id(x)
    y = memo.get(i, memo)
    if y is not memo:
        return y
    if cls in _PLAIN:
        y = cls.__new__(cls)
        memo[i] = y
        y.__dict__.update({k: _ir_copy(v, memo) for k, v in x.__dict__.items()})
        return y
    if cls is list:
        y = []
        memo[i] = y
        y.extend([_ir_copy(v, memo) for v in x])
        return y
    if cls is tuple:
        y = tuple([_ir_copy(v, memo) for v in x])
        if i in memo:  # a tuple reached again through its own items
            return memo[i]
        if not any(a is not b for a, b in zip(y, x)):
            return x
        memo[i] = y
        return y
    if cls is dict:
        y = {}
        memo[i] = y
        for k, v in x.items():
            y[_ir_copy(k, memo)] = _ir_copy(v, memo)
        return y
    return copy.deepcopy(x, memo)


def _sooner_live_maps(analysis) -> None:
    """Numba's ``compute_live_map`` as ``_live_map``, wherever Numba's modules named it."""
    import sys

    original = RELEASED["compute_live_map"] = analysis.compute_live_map
    for name in ("numba.core.analysis", "numba.core.ir_utils", "numba.parfors.parfor"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "compute_live_map", None) is original:
            module.compute_live_map = _live_map


def _live_map(cfg, blocks, var_use_map, var_def_map):
    """``numba.core.analysis.compute_live_map`` (0.68), each set of names held as the bits of an
    integer while the fixed points are computed: the variables live at the entry of each block
    (those used in it before any definition, or live at a successor and not defined in it, and
    defined or used on some path to it). Numba iterates the same two monotone updates, in the same
    order, until no set grows; the answer is the least fixed point above the same start, so it is
    the same whatever the order (the updates here read the newest values: a loop may take fewer
    rounds)."""
    from collections import defaultdict

    topo_order = cfg.topo_order()
    bit: dict = {}

    def bits(names) -> int:
        value = 0
        for name in names:
            b = bit.get(name)
            if b is None:
                b = bit[name] = 1 << len(bit)
            value |= b
        return value

    use = {offset: bits(names) for offset, names in var_use_map.items()}
    defs = {offset: bits(names) for offset, names in var_def_map.items()}
    successors = {offset: [out for out, _ in cfg.successors(offset)] for offset in topo_order}
    reach: dict = defaultdict(int)  # used or defined on some path to the block's entry
    changed = True
    while changed:
        changed = False
        for offset in topo_order:
            here = reach[offset] | defs[offset] | use[offset]
            if here != reach[offset]:
                reach[offset] = here
                changed = True
            for out in successors[offset]:
                grown = reach[out] | here
                if grown != reach[out]:
                    reach[out] = grown
                    changed = True
    live = {offset: use[offset] for offset in blocks.keys()}
    predecessors = [(offset, [inc for inc, _ in cfg.predecessors(offset)]) for offset in reversed(topo_order)]
    changed = True
    while changed:
        changed = False
        for offset, incoming in predecessors:
            for inc in incoming:
                grown = live[inc] | (live[offset] & reach[inc] & ~defs[inc])
                if grown != live[inc]:
                    live[inc] = grown
                    changed = True
    names = sorted(bit, key=bit.__getitem__)
    return {offset: _names(value, names) for offset, value in live.items()}


def _names(value: int, names: list) -> set:
    out = set()
    while value:
        low = value & -value
        out.add(names[low.bit_length() - 1])
        value ^= low
    return out


def _plain_markup() -> None:
    """Numba's highlighted error text (``HighlightColorScheme._markup``, where colorama is
    installed), the same string without ``colorama.init()`` and ``deinit()`` around it."""
    from numba.core import errors

    scheme = getattr(errors, "HighlightColorScheme", None)
    Style = getattr(errors, "Style", None)  # colorama's
    if scheme is None or Style is None or not hasattr(scheme, "_markup"):
        return

    RELEASED["_markup"] = scheme._markup

    def _markup(self, msg, color=None, style=Style.BRIGHT):
        features = (color or "") + (style or "")
        return (features.encode("utf-8") + msg.encode("utf-8") + Style.RESET_ALL.encode("utf-8")).decode("utf-8")

    scheme._markup = _markup


def _memo_ufunc_typing(cls) -> None:
    """``Numpy_rules_ufunc.generic`` kept per template class, ufunc and argument types (item 7)."""
    generic = RELEASED["Numpy_rules_ufunc.generic"] = cls.generic
    typed: dict = {}

    def memo_generic(self, args, kws):
        key = (type(self), self.key, tuple(args), tuple(kws.items()))
        sig = typed.get(key)
        if sig is None:
            sig = generic(self, args, kws)
            if sig is not None:
                typed[key] = sig
        return sig

    cls.generic = memo_generic


def _quicker_flags(Flags) -> None:
    """``Flags.values()`` and ``Flags.__hash__``, the same answers sooner (item 8); left as they are
    unless every option's property is the getter ``targetconfig``'s metaclass made for it."""
    import inspect

    for name, option in Flags.options.items():
        prop = inspect.getattr_static(Flags, name, None)
        getter = getattr(prop, "fget", None)
        if not (isinstance(prop, property) and getattr(getter, "__qualname__", "").endswith("make_prop.<locals>.getter")
                and inspect.getclosurevars(getter).nonlocals == {"name": name, "option": option}):
            return
    values = RELEASED["Flags.values"] = Flags.values
    hash_ = RELEASED["Flags.__hash__"] = Flags.__hash__
    defaults = [(name, option.default) for name, option in Flags.options.items()]
    names_hash = hash(tuple(sorted(Flags.options)))

    def flags_values(self):
        if type(self) is not Flags:  # a subclass may define an option's property its own way
            return values(self)
        given = self._values
        return {name: given.get(name, default) for name, default in defaults}

    def flags_hash(self):
        if type(self) is not Flags:
            return hash_(self)
        return names_hash

    Flags.values = flags_values
    Flags.__hash__ = flags_hash


def _counted_fields(NRTContext) -> None:
    """``NRTContext.get_meminfos`` reading only the fields that hold or contain a memory record
    (item 9): Numba's answer, without the reads of the other fields."""
    RELEASED["get_meminfos"] = NRTContext.get_meminfos
    holds: dict = {}  # (data model manager, type) -> whether a value of it holds a memory record

    def get_meminfos(self, builder, ty, val):
        models = self._context.data_model_manager
        model = models[ty]
        meminfos = []
        if model.has_nrt_meminfo():
            meminfos.append((ty, model.get_nrt_meminfo(builder, val)))
        for field_type, getter in model.traverse(builder):
            key = (models, field_type)
            held = holds.get(key)
            if held is None:
                field = models[field_type]
                held = holds[key] = field.has_nrt_meminfo() or field.contains_nrt_meminfo()
            if held:
                meminfos.extend(get_meminfos(self, builder, field_type, getter(val)))
        return meminfos

    NRTContext.get_meminfos = get_meminfos
