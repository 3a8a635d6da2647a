"""A call of a large cached compiled function refers to the callee's code instead of copying it
(plume_multi/engine/numba_link.py); the cache stores the references, loads the callees first, and
compiles again (silently) where a callee's symbol is no longer the one referred to."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numba

from plume_multi.engine import jit, numba_link  # importing jit installs it


def test_references_are_installed_on_this_numba():
    # Written against Numba 0.68: another release links as released, slower to compile; this test
    # then fails, to say that its code must be read again.
    assert numba_link.installed(), f"Numba {numba.__version__}: numba_link is not installed"


# A module named as the engine's generated step drivers are (whose functions, with the package's, may
# be referred to), in a folder of its own: `big` is far over MIN_INSTRUCTIONS (a chain of 200 dependent operations
# LLVM cannot fold), `small` far under it; `caller` calls both.
_MODULE = "import math\nfrom plume_multi.engine.jit import njit\n\n\n@njit\ndef big(x):\n" + "".join(
    f"    x = math.sin(x * {1 + k / 1000}) + {k}.5\n" for k in range(200)) + """    return x


@njit
def small(x):
    return x * 2.0


@njit
def caller(x):
    return big(x) + small(x)
"""

_RUN = textwrap.dedent("""
    import json, sys, warnings
    warnings.simplefilter("error")  # a stale reference is not a warning: the function compiles again
    from numba import njit
    from numba.core import event
    from plume_multi.engine import numba_link
    for i in range(int(sys.argv[1])):  # shift Numba's numbering of this process's functions
        exec(f"@njit\\ndef f{i}(x): return x + {i}\\nf{i}(1)")
    compiled = []

    class Compiles(event.Listener):
        def on_start(self, ev):
            compiled.append(ev.data["dispatcher"].py_func.__name__)

        def on_end(self, ev):
            pass

    event.register("numba:compile", Compiles())
    import plume_multi_driver_linktest as linked
    value = linked.caller(0.25)
    names = [c for c in compiled if c in ("big", "small", "caller")]
    linked.small.compile(linked.caller.signatures[0])  # loaded only where copied: its symbol's name
    lib = linked.caller.overloads[linked.caller.signatures[0]].library
    big = linked.big.overloads[linked.big.signatures[0]].fndesc.mangled_name
    small = linked.small.overloads[linked.small.signatures[0]].fndesc.mangled_name
    refs = numba_link.references(lib)
    module = lib._shared_module if lib._shared_module is not None else lib._final_module
    declared = {f.name: bool(f.is_declaration) for f in module.functions}
    print(json.dumps({"value": value, "compiled": names,
                      "refers_to_big": big in refs, "refers_to_small": small in refs,
                      "big_declared_only": declared.get(big), "small_declared_only": declared.get(small)}))
""")


def _run(folder, cache, shift=0) -> dict:
    out = subprocess.run([sys.executable, "-c", _RUN, str(shift)], capture_output=True, text=True, cwd=folder,
                         env={**os.environ, "PYTHONPATH": str(folder), "PLUME_MULTI_CACHE_DIR": str(cache),
                              "PLUME_MULTI_QUIET": "1"}, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _reference(x: float) -> float:
    import math

    y = x
    for k in range(200):
        y = math.sin(y * (1 + k / 1000)) + k + 0.5
    return y + x * 2.0


def _module(folder) -> None:
    path = folder / "plume_multi_driver_linktest.py"
    path.write_text(_MODULE)
    os.utime(path, (path.stat().st_mtime - 60, path.stat().st_mtime - 60))  # written before the processes start


def test_a_large_callee_is_referred_to_and_the_cache_loads_checks_and_mends_the_reference(tmp_path):
    _module(tmp_path)
    cache = tmp_path / "cache"
    want = _reference(0.25)

    first = _run(tmp_path, cache)
    assert first["value"] == want
    assert first["compiled"] == ["caller", "big", "small"]
    # big's code is not copied into caller's (a declaration: the engine resolves it); small's is
    assert first["refers_to_big"] and first["big_declared_only"] is True
    assert not first["refers_to_small"] and first["small_declared_only"] is not True  # defined, or inlined

    # a new process loads caller from the cache, and big (and small) first: nothing compiles
    second = _run(tmp_path, cache)
    assert second["value"] == want and second["compiled"] == [] and second["refers_to_big"]

    # big compiled again in a process that numbers its functions otherwise: caller's stored code
    # refers to a symbol this process does not hold, so caller compiles again, with no warning
    for path in (cache / jit.VERSION / "numba").rglob("plume_multi_driver_linktest.big-*"):
        path.unlink()
    third = _run(tmp_path, cache, shift=7)
    assert third["value"] == want and third["compiled"] == ["big", "caller"]

    # and that new code is what the cache now holds
    fourth = _run(tmp_path, cache, shift=3)
    assert fourth["value"] == want and fourth["compiled"] == []


def test_without_it_numba_copies_the_callee(tmp_path):
    _module(tmp_path)
    out = subprocess.run([sys.executable, "-c", _RUN, "0"], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(tmp_path), "PLUME_MULTI_CACHE_DIR": str(tmp_path / "c"),
                              "PLUME_MULTI_QUIET": "1", "PLUME_MULTI_NUMBA_LINK": "0"}, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["value"] == _reference(0.25)
    # big's code is in caller's module (a definition, or inlined into caller): not a declaration
    assert not got["refers_to_big"] and got["big_declared_only"] is not True
