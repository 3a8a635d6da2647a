"""Numba's repeated work on inlined code is done once (plume_multi/engine/numba_memo.py), and the
step computes the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types

import numba
import numpy as np
import pytest
from numba import njit
from numba.core import inline_closurecall
from numba.extending import overload

from plume_multi.engine import jit, numba_memo  # importing jit installs the memos


def test_the_memos_are_installed_on_this_numba():
    # Written against Numba 0.68: another release runs without them, slower to compile; this
    # test then fails, to say that its code must be read again.
    assert numba_memo.installed(), f"Numba {numba.__version__}: the compile memos are not installed"


@pytest.fixture
def translations(monkeypatch):
    """How often each Python function was translated for inlining."""
    counts: dict = {}
    original = inline_closurecall.InlineWorker.run_untyped_passes

    def counting(self, func, enable_ssa=False):
        counts[func.__name__] = counts.get(func.__name__, 0) + 1
        return original(self, func, enable_ssa)

    monkeypatch.setattr(inline_closurecall.InlineWorker, "run_untyped_passes", counting)
    return counts


def _stub(x):
    """A reader of the kind the engine's ``sample_at`` is: an overload, inlined."""


@overload(_stub, inline="always")
def _stub_overload(x):
    def stub_impl(x):
        return x * 2.0 + 1.0
    return stub_impl


def test_an_inlined_overload_is_typed_once_however_many_calls(translations):
    @njit
    def many(x):
        total = 0.0
        for _ in range(3):  # a loop: type inference passes over the calls more than once
            total += _stub(x) + _stub(x + 1.0) + _stub(x + 2.0) + _stub(x + 3.0) + _stub(x + 4.0)
            total += _stub(x + 5.0) + _stub(x + 6.0) + _stub(x + 7.0) + _stub(x + 8.0) + _stub(x + 9.0)
        return total

    assert many(1.0) == 3 * sum(2.0 * (1.0 + k) + 1.0 for k in range(10))
    assert translations.get("stub_impl") == 1  # Numba alone: once per call site and pass


def _tripled(x):
    """An overload compiled as a function of its own (not inlined): its implementation is compiled."""


@overload(_tripled)
def _tripled_overload(x):
    def called_impl(x):
        return x * 3.0
    return called_impl


def test_an_overloads_implementation_is_compiled_without_a_c_wrapper(monkeypatch):
    # item 10: nothing calls an implementation through a first-class function value
    from numba.core import cpu

    wrapped = []
    original = cpu.CPUContext.create_cfunc_wrapper

    def recording(self, library, fndesc, *args, **kwargs):
        wrapped.append(fndesc.qualname)
        return original(self, library, fndesc, *args, **kwargs)

    monkeypatch.setattr(cpu.CPUContext, "create_cfunc_wrapper", recording)

    @numba.njit(no_cfunc_wrapper=True)
    def caller(x):
        return _tripled(x) + 1.0

    assert caller(2.0) == 7.0
    assert "_tripled_overload.<locals>.called_impl" not in wrapped
    numba.njit(lambda x: x + 1.0)(1.0)  # a plain function still gets one, as Numba releases it
    assert wrapped and all("called_impl" not in name for name in wrapped)


@pytest.fixture
def compiles():
    """The functions compiled while the test runs (``numba:compile`` events), by name."""
    from numba.core import event

    names: list = []

    class Listener(event.Listener):
        def on_start(self, ev):
            names.append(ev.data["dispatcher"].py_func.__name__)

        def on_end(self, ev):
            pass

    listener = Listener()
    event.register("numba:compile", listener)
    yield names
    event.unregister("numba:compile", listener)


def _doubled(x):
    """An overload inlined by its callers, whose implementation calls a compiled function."""


@njit
def _called(x):
    return x + 0.5


@overload(_doubled, inline="always")
def _doubled_overload(x):
    def doubled_impl(x):
        return 2.0 * _called(x)
    return doubled_impl


def _literal(x, n):
    """An overload whose implementation asks for a literal argument."""


@overload(_literal, inline="always")
def _literal_overload(x, n):
    if not isinstance(n, numba.types.IntegerLiteral):
        return lambda x, n: numba.literally(n)

    def literal_impl(x, n):
        return x * n
    return literal_impl


def _broken(x):
    """An overload whose implementation does not type."""


@overload(_broken, inline="always")
def _broken_overload(x):
    def broken_impl(x):
        return x + "a string"
    return broken_impl


def test_an_inlined_overloads_implementation_is_typed_not_compiled(compiles):
    # Numba as released compiles doubled_impl whole (twice asked: _build_impl's check, generic's
    # call template) though every caller inlines it; what it calls compiles as ever
    @njit
    def caller(x):
        return _doubled(x) + _doubled(x + 1.0)

    assert caller(1.0) == 2.0 * 1.5 + 2.0 * 2.5
    assert "caller" in compiles and "_called" in compiles
    assert "doubled_impl" not in compiles


def test_an_implementation_asking_for_a_literal_or_not_typing_behaves_as_released():
    @njit
    def with_literal(x, n):  # n arrives as an int64: the implementation asks for its value
        return _literal(x, n)

    assert with_literal(2.0, 3) == 6.0
    assert any(isinstance(sig[1], numba.types.IntegerLiteral) for sig in with_literal.signatures)

    @njit
    def with_error(x):
        return _broken(x)

    with pytest.raises(numba.core.errors.TypingError, match="broken_impl|add"):
        with_error(1.0)


@njit(inline="always")
def _leaf(x):
    return x + 1.0


@njit(inline="always")
def _middle(x):
    return _leaf(x) * _leaf(x + 1.0) - _leaf(x + 2.0)


def test_a_function_inlined_at_many_sites_and_depths_is_translated_once_per_compile(translations):
    @njit
    def top(x):
        return _middle(x) + _middle(x * 2.0) + _middle(x * 3.0) + _leaf(x)

    def ref(x):
        def middle(y):
            return (y + 1.0) * (y + 2.0) - (y + 3.0)
        return middle(x) + middle(2.0 * x) + middle(3.0 * x) + x + 1.0

    assert top(1.5) == ref(1.5)
    # without the memo: _middle at each of its 3 sites, _leaf at 3 sites in each translation of
    # _middle and once more in top
    assert translations == {"_middle": 1, "_leaf": 1}


def test_a_function_inlined_in_functions_compiled_within_one_compile_is_translated_once(translations):
    # every compile makes its own copy of the target context: the memo's key is the target and
    # the flags, so the functions that one compile brings (a model's, called from the step) share
    # the translations
    @njit
    def inner(x):
        return _middle(x) - _leaf(x)

    @njit
    def outer(x):
        return inner(x) + _middle(x * 2.0)

    def middle(y):
        return (y + 1.0) * (y + 2.0) - (y + 3.0)

    assert outer(1.5) == middle(1.5) - 2.5 + middle(3.0)
    # keyed on each compile's own context: {"_middle": 2, "_leaf": 2}
    assert translations == {"_middle": 1, "_leaf": 1}


def test_a_global_changed_between_two_compiles_is_seen_by_the_second():
    # Numba reads a global when it translates a function: the memo lasts one compile, so a later
    # compile translates again and sees the new value, as it would without the memo
    module = types.ModuleType("plume_multi_memo_globals")
    exec("from numba import njit\nK = 1.0\n\n@njit(inline='always')\ndef scaled(x):\n    return K * x\n\n"
         "def make():\n    @njit\n    def f(x):\n        return scaled(x) + scaled(x)\n    return f\n",
         module.__dict__)
    first = module.make()
    assert first(2.0) == 4.0
    module.K = 10.0
    second = module.make()
    assert second(2.0) == 40.0
    assert first(2.0) == 4.0  # compiled before: unchanged, as Numba's own


def _structure(value, seen: dict, out: list) -> list:
    """``value`` as a flat list: each object's type, its attributes (the IR's) or items, and a
    back-reference where an object is reached again (so two copies that share differently differ)."""
    if id(value) in seen:
        out.append(("again", seen[id(value)]))
        return out
    seen[id(value)] = len(seen)
    out.append(type(value).__name__)
    if isinstance(value, (list, tuple)):
        for v in value:
            _structure(v, seen, out)
    elif isinstance(value, dict):
        for k, v in value.items():
            _structure(k, seen, out)
            _structure(v, seen, out)
    elif type(value).__module__ == "numba.core.ir":
        for k, v in sorted(vars(value).items()):
            out.append(k)
            _structure(v, seen, out)
    else:
        out.append(repr(value))
    return out


def test_the_ir_copy_is_deepcopys_object_for_object():
    # inline_ir copies the blocks of one IR with one memo (the scope shared): _ir_copy must give
    # what copy.deepcopy gives, object for object, with the same sharing, and nothing of the
    # original's but what deepcopy keeps (constants, globals' values)
    import copy

    from numba.core import compiler

    from plume_multi.models.plumes.puffs import physics

    blocks = list(compiler.run_frontend(physics.wind_velocity.py_func).blocks.values())
    reference_memo, memo = {}, {}
    reference = [copy.deepcopy(b, reference_memo) for b in blocks]
    copied = [numba_memo._ir_copy(b, memo) for b in blocks]
    assert len(numba_memo._PLAIN) > 20 and inline_closurecall.copy.deepcopy is not copy.deepcopy
    assert _structure(copied, {}, []) == _structure(reference, {}, [])
    assert len(_structure(copied, {}, [])) > 1000
    originals = {id(b) for b in blocks} | {id(i) for b in blocks for i in b.body}
    assert not originals & ({id(b) for b in copied} | {id(i) for b in copied for i in b.body})
    assert copied[0].scope is copied[-1].scope is not blocks[0].scope


@njit(inline="always")
def _branchy(x):
    if x > 0.0:
        return x * 2.0
    return -x


def test_an_inlining_copies_the_callees_blocks_once(monkeypatch):
    # inline_ir copies the callee's IR to change it, then copies that copy for a return value its
    # callers drop: the second copy is not made, and None stands in its place
    from numba.core import ir

    copied_blocks = []
    ir_copy = numba_memo._ir_copy

    def counting(x, memo):
        if isinstance(x, ir.Block):
            copied_blocks.append(x)
        return ir_copy(x, memo)

    monkeypatch.setattr(numba_memo, "_ir_copy", counting)
    calls = []
    inline_ir = inline_closurecall.InlineWorker.inline_ir

    def recording(self, caller_ir, block, i, callee_ir, *args, **kwargs):
        before = len(copied_blocks)
        result = inline_ir(self, caller_ir, block, i, callee_ir, *args, **kwargs)
        calls.append((len(callee_ir.blocks), len(copied_blocks) - before, result[0]))
        return result

    monkeypatch.setattr(inline_closurecall.InlineWorker, "inline_ir", recording)

    @njit
    def twice(x):
        return _branchy(x) + _branchy(-x) + _stub(x)

    assert twice(1.5) == 3.0 + 1.5 + 4.0
    assert len(calls) == 3 and all(n >= 1 for n, _, _ in calls) and max(n for n, _, _ in calls) > 1
    assert all(copies == n and unmutated is None for n, copies, unmutated in calls), calls  # were 2 n


def test_the_collector_runs_less_often_while_numba_compiles_and_as_before_afterwards():
    # item 12: a young collection every COMPILE_GC_THRESHOLD allocations during the outermost
    # compile (nested ones included), the threshold as it was once it ends, even by an error
    import gc

    from numba.core import event

    before = gc.get_threshold()
    during = (max(before[0], numba_memo.COMPILE_GC_THRESHOLD), *before[1:])
    starts = []

    class Starts(event.Listener):
        def on_start(self, ev):
            starts.append((ev.data["dispatcher"].py_func.__name__, gc.get_threshold()))

        def on_end(self, ev):
            pass

    listener = Starts()
    event.register("numba:compile", listener)
    try:
        @njit
        def inner(x):
            return x + 1

        @njit
        def outer(x):
            return inner(x) * 2

        assert outer(1) == 4
        assert gc.get_threshold() == before
        assert starts == [("outer", during), ("inner", during)]

        @njit
        def broken(x):
            return x.no_such_attribute

        with pytest.raises(numba.core.errors.TypingError):
            broken(1)
        assert gc.get_threshold() == before and starts[-1] == ("broken", during)
    finally:
        event.unregister("numba:compile", listener)
    assert numba_memo.COMPILE_GC_THRESHOLD > before[0]


_EPISODE = """
import json
import numpy as np
from plume_multi import Scenario, Simulator, bodies, plumes, rewards, sensors
from plume_multi.engine import numba_link, numba_memo
# the oriented row of benchmarks/models.py: the engine's inlined readers (sample_at, wind_at) at
# several sites
sc = Scenario(plume=plumes.Gaussian(wind=(1.0, 0.0)), action_model=bodies.Oriented(turn_degrees=45),
              sensors=(sensors.Antennae(), sensors.Wind(), sensors.Heading()), reward=rewards.StepPenalty(),
              grid_size=(24, 16), n_agents=3)
sim = Simulator(sc, num_worlds=4)
out = [sim.reset(seed=11).tolist()]
rng = np.random.default_rng(5)
for _ in range(40):
    out.append([a.tolist() for a in sim.step(rng.integers(0, sc.n_actions, 12))])
print(json.dumps([numba_memo.installed() and numba_link.installed(), out]))
"""


def _episode(env: dict):
    out = subprocess.run([sys.executable, "-c", _EPISODE], capture_output=True, text=True,
                         env={**os.environ, "PLUME_MULTI_QUIET": "1", **env}, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_driver_compiled_with_and_without_the_memos_gives_the_same_episodes(tmp_path):
    # with the memos and numba_link's references: from the suite's cache when another test compiled
    # it; without either (Numba as released): compiled in a cache of its own
    with_memo = _episode({})
    without = _episode({"PLUME_MULTI_CACHE_DIR": str(tmp_path / "cache"), "PLUME_MULTI_NUMBA_MEMO": "0",
                        "PLUME_MULTI_NUMBA_LINK": "0"})
    assert with_memo[0] is True and without[0] is False
    assert with_memo[1] == without[1]  # every observation, reward and flag, bit for bit (JSON floats)
    assert np.asarray(with_memo[1][-1][0]).std() > 0


def test_the_live_map_is_numbas_call_for_call(monkeypatch):
    # item 5: the sets of live variables, computed with integers for sets, are Numba's own, for
    # every block of every function a compile analyses (loops, breaks, early returns, a loop of one
    # block)
    from numba.core import analysis, ir_utils

    released = numba_memo.RELEASED["compute_live_map"]
    assert analysis.compute_live_map is numba_memo._live_map is ir_utils.compute_live_map
    compared = []

    def both(cfg, blocks, use, defs):
        theirs = released(cfg, blocks, use, defs)
        ours = numba_memo._live_map(cfg, blocks, use, defs)
        compared.append((len(blocks), ours == theirs and list(ours) == list(theirs)))
        return ours

    monkeypatch.setattr(analysis, "compute_live_map", both)
    monkeypatch.setattr(ir_utils, "compute_live_map", both)

    @njit
    def branchy(a, n):
        total = 0.0
        k = 0
        while True:
            k += 1
            if k > n:
                break
        for i in range(a.shape[0]):
            x = a[i]
            if x < 0:
                continue
            for j in range(i):
                y = a[j] * x
                if y > 100.0:
                    return -y
                total += y if j % 2 else -y
        while k > 0:
            k -= 3
        return total + k

    a = np.linspace(-1.0, 3.0, 9)
    assert branchy(a, 5) == branchy.py_func(a, 5)
    assert max(n for n, _ in compared) > 10 and all(same for _, same in compared), compared


def test_numbas_error_text_is_the_same_without_colorama_around_it():
    # item 6: the highlighted text of Numba's errors (colorama is installed with the docs' tools)
    from numba.core import errors

    if not hasattr(errors, "HighlightColorScheme"):  # no colorama: Numba highlights nothing
        assert "_markup" not in numba_memo.RELEASED
        return
    scheme = errors.termcolor()
    for msg, color in [("Cannot determine Numba type of <class 'x'>", None), ("résumé\n  line", errors.Fore.RED)]:
        assert scheme._markup(msg, color) == numba_memo.RELEASED["_markup"](scheme, msg, color)
        assert scheme._markup(msg, color).startswith((color or "") + errors.Style.BRIGHT + msg)


def test_a_ufuncs_typing_is_searched_once_per_argument_types_and_is_numbas_answer(monkeypatch):
    # item 7: Numpy_rules_ufunc.generic searches the ufunc's loops once per argument types
    from numba.core import types as nbtypes
    from numba.core.registry import cpu_target
    from numba.core.typing import npydecl

    searched = []
    search = npydecl.ufunc_find_matching_loop
    monkeypatch.setattr(npydecl, "ufunc_find_matching_loop", lambda *a: searched.append(a) or search(*a))
    ctx = cpu_target.typing_context
    ctx.refresh()
    fnty = ctx.resolve_value_type(np.arctan2)
    args = (nbtypes.int16, nbtypes.float32)  # argument types no other test types arctan2 with
    sigs = [ctx.resolve_function_type(fnty, args, {}) for _ in range(20)]
    assert len(searched) == 1 and all(s is sigs[0] for s in sigs) and sigs[0].return_type == nbtypes.float32
    template = next(t for t in fnty.templates if issubclass(t, npydecl.Numpy_rules_ufunc))(ctx)
    assert numba_memo.RELEASED["Numpy_rules_ufunc.generic"](template, args, {}) == sigs[0]
    before = len(searched)
    for _ in range(2):  # a failure (arctan2 has no complex loop) is searched and raised each time, not kept
        with pytest.raises(numba.core.errors.TypingError, match="can't resolve ufunc arctan2"):
            template.generic((nbtypes.complex128, nbtypes.float32), {})
    assert len(searched) == before + 2


def test_flags_values_and_hash_are_numbas():
    # item 8: the same dict, in the same order, and the same hash, whatever is set
    from numba.core.compiler import Flags

    values, hash_ = numba_memo.RELEASED["Flags.values"], numba_memo.RELEASED["Flags.__hash__"]
    plain, set_ = Flags(), Flags()
    set_.nrt, set_.boundscheck, set_.error_model = True, True, "numpy"
    for flags in (plain, set_, set_.copy()):
        assert list(flags.values().items()) == list(values(flags).items())
        assert hash(flags) == hash_(flags)
    assert plain != set_ and set_ == set_.copy() and plain.values()["nrt"] is False and set_.values()["nrt"] is True


def test_reference_counts_read_only_the_fields_that_hold_memory_records():
    # item 9: the same memory records, in the same order, reached by the same reads; the fields that
    # hold none (numbers, tuples of numbers) are no longer read
    from llvmlite import ir as llvm
    from numba.core import types as nbtypes
    from numba.core.registry import cpu_target

    # a context of its own: the process's top-level one would keep an NRT context without NRT
    # (a cached property), which every later compile's context copies
    ctx = cpu_target.target_context.subtarget(enable_nrt=True)
    record = nbtypes.Tuple((nbtypes.float64[:], nbtypes.float32, nbtypes.UniTuple(nbtypes.int64[:, :], 2),
                            nbtypes.Optional(nbtypes.float32[:]), nbtypes.UniTuple(nbtypes.intp, 3), nbtypes.int64,
                            nbtypes.Tuple((nbtypes.float64, nbtypes.float32[:, :]))))

    def reads(value, seen):
        if isinstance(value, llvm.Argument):
            return "record"
        if isinstance(value, llvm.Constant):
            return str(value)
        seen.add(id(value))
        return (value.opname, *(reads(op, seen) for op in value.operands), *getattr(value, "indices", ()))

    found = {}
    for name, get in (("ours", ctx.nrt.get_meminfos),
                      ("numba", lambda *a: numba_memo.RELEASED["get_meminfos"](ctx.nrt, *a))):
        module = llvm.Module()
        fn = llvm.Function(module, llvm.FunctionType(llvm.VoidType(), [ctx.get_value_type(record)]), "f")
        builder = llvm.IRBuilder(fn.append_basic_block())
        seen: set = set()
        meminfos = [(t, reads(mi, seen)) for t, mi in get(builder, record, fn.args[0])]
        found[name] = (meminfos, len(seen), len(builder.block.instructions))
    (ours, used, emitted), (numbas, used_before, emitted_before) = found["ours"], found["numba"]
    assert ours == numbas and len(ours) == 5  # the 1-D array, the two 2-D ones, the optional one, the nested one
    assert used == used_before == emitted < emitted_before  # every read leads to a record; Numba read more
