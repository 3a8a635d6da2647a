"""A cache that fails is never an error (issue 23, item 16): a full disk (``OSError: [Errno 27]
File too large``) and a truncated cache file (``UnpicklingError``) fall back to compiling in
memory, with one warning. A one-line kernel of a user's module stands for the package's: the same
cache, nothing costly to compile."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from cache_helpers import written_before

from plume_multi.engine import assemble, jit

KERNEL = """
from plume_multi.engine.jit import njit


@njit
def plus_one(x):
    return x + 1
"""

PROBE = """
import resource, signal, sys, warnings
limit = int(sys.argv[1])
if limit:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    import kernel
    print(kernel.plus_one(41))
print([str(w.message) for w in caught if "plume_multi" in str(w.message)])
"""


def _probe(folder: Path, cache: Path, limit: int = 0) -> tuple:
    env = {**os.environ, "PLUME_MULTI_CACHE_DIR": str(cache), "PLUME_MULTI_QUIET": "1",
           "PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", PROBE, str(limit)], capture_output=True, text=True, env=env,
                         cwd=folder, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    value, messages = out.stdout.strip().splitlines()[-2:]
    return int(value), eval(messages)


def test_a_full_disk_and_a_truncated_cache_file_fall_back_to_compiling_in_memory(tmp_path):
    (tmp_path / "kernel.py").write_text(KERNEL)
    written_before(tmp_path / "kernel.py")
    cache = tmp_path / "cache"
    value, messages = _probe(tmp_path, cache, limit=2000)  # the compiled code is larger: it cannot be saved
    assert value == 42 and len(messages) == 1 and "File too large" in messages[0], messages
    assert _probe(tmp_path, cache) == (42, [])  # room again: saved
    (index,) = cache.glob("*/numba/user/*/kernel.plus_one-*.nbi")
    whole = index.read_bytes()
    index.write_bytes(whole[: len(whole) // 2])
    value, messages = _probe(tmp_path, cache)  # truncated: compiled again, and the index written anew
    assert value == 42 and len(messages) == 1 and "UnpicklingError" in messages[0], messages
    assert index.read_bytes() == whole
    assert _probe(tmp_path, cache) == (42, [])


def test_a_driver_that_cannot_be_written_is_compiled_from_memory(tmp_path, monkeypatch):
    def full(self, *args, **kwargs):
        raise OSError(errno.EFBIG, "File too large")

    monkeypatch.setattr(Path, "write_text", full)
    monkeypatch.setattr(jit, "_warned", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert assemble._write_driver(tmp_path / "drivers", "plume_multi_driver_x", "text") is None
        assert assemble._write_driver(tmp_path / "drivers", "plume_multi_driver_y", "text") is None
    assert len(caught) == 1, [str(w.message) for w in caught]
    assert "plume_multi_driver_x.py: OSError: [Errno 27] File too large" in str(caught[0].message)
    assert not list((tmp_path / "drivers").glob("*"))  # nothing half-written
    with jit.compiled_in_memory():
        assert not jit.njit(lambda x: x)._cache.__class__.__name__.startswith("Function")


@pytest.mark.parametrize("exc", [OSError(errno.ENOSPC, "No space left on device"), EOFError("Ran out of input")])
def test_the_guard_of_numbas_cache_swallows_what_fails_and_warns_once(exc, monkeypatch):
    monkeypatch.setattr(jit, "_warned", False)

    @jit.njit
    def twice(x):
        return 2 * x

    cache = twice._cache
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            with cache._guard_against_spurious_io_errors():
                raise exc
    assert len(caught) == 1 and type(exc).__name__ in str(caught[0].message)
