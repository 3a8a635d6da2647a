"""The cache is never stale under concurrent processes and edits (issue 32, item 1).

A user's kernel reads a module constant ``VALUE = 1.0`` of another file of theirs; Numba compiles
it into the machine code. The file is edited to ``VALUE = 2.0`` at every phase of a process's
compile and save, and while two processes save the same function, one compiled from each source:
the process computes what it imported (1.0), and every later process computes 2.0. Before the fix,
a process that imported 1.0 and read the edited file to make its key stored the code of 1.0 under
the key of 2.0, and two processes saving at once could leave the index of 2.0 pointing at the code
of 1.0 (Numba numbers the data files of an index from 1, whatever the source).

Everything runs in a few small processes: one that goes through every phase (a kernel per phase),
the two that save at once, and one that checks all of them afterwards.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from cache_helpers import written_before

# every moment a source can change: after the module it reads is imported (before the kernel's key
# is computed), after the key, when the compile starts, when it ends (before the save), between
# the data file and the index (in either order), after the save
PHASES = ("imported", "stamped", "compiling", "compiled", "data", "index", "saved")

KERNEL = """
import {values}
from plume_multi.engine.jit import njit


@njit
def value():
    return {values}.VALUE
"""

# runs the kernels of ``sys.argv[1:]``; each edits its own values file at its phase. Hooks on
# Numba's cache (the same in every version of plume_multi) mark the phases; with RACE_WAIT set,
# the process waits before writing a data file until the file RACE_WAIT + ".go" exists.
CHILD = r"""
import os, sys, time
from pathlib import Path
from numba.core import caching
import plume_multi.engine.jit

def edit(phase):
    path = Path(f"values_{phase}.py")
    path.write_text(path.read_text().replace("VALUE = 1.0", "VALUE = 2.0"))

def kernel_of(obj):
    cache_file = getattr(obj, "_index_name", None)
    name = cache_file.split(".")[0] if cache_file else obj._py_func.__module__
    return name[len("kernel_"):]

def hook(cls, method, phase, when, only_if_none=False):
    original = getattr(cls, method)
    def hooked(self, *args, **kwargs):
        if when == "before" and kernel_of(self) == phase:
            edit(phase)
        if method == "_save_data" and os.environ.get("RACE_WAIT"):
            Path(os.environ["RACE_WAIT"] + ".waiting").touch()
            deadline = time.time() + 300
            while not Path(os.environ["RACE_WAIT"] + ".go").exists() and time.time() < deadline:
                time.sleep(0.05)
        result = original(self, *args, **kwargs)
        if when == "after" and kernel_of(self) == phase and (result is None or not only_if_none):
            edit(phase)
        return result
    setattr(cls, method, hooked)

hook(caching.Cache, "load_overload", "compiling", "after", only_if_none=True)
hook(caching.Cache, "save_overload", "compiled", "before")
hook(caching.IndexDataCacheFile, "_save_data", "data", "after")
hook(caching.IndexDataCacheFile, "_save_index", "index", "after")
hook(caching.Cache, "save_overload", "saved", "after")

import importlib
for phase in sys.argv[1:]:
    values = importlib.import_module(f"values_{phase}")
    if phase == "imported":
        edit(phase)
    kernel = importlib.import_module(f"kernel_{phase}")
    if phase == "stamped":
        edit(phase)
    print(phase, values.VALUE, kernel.value(), sum(kernel.value.stats.cache_misses.values()))
"""


def _env(folder: Path, **extra) -> dict:
    # no bytecode files: Python's own .pyc check (whole seconds and size) could serve a module
    # edited within the second as the old one, which is Python's staleness, not the cache's
    return {**os.environ, "PLUME_MULTI_CACHE_DIR": str(folder / "cache"), "PLUME_MULTI_QUIET": "1",
            "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")]),
            **extra}


def _start(folder: Path, kernels, **extra) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", CHILD, *kernels], cwd=folder, env=_env(folder, **extra),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _results(process: subprocess.Popen) -> dict:
    """``{kernel: (the VALUE it imported, the value its kernel computed, compiles)}``."""
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, err[-3000:]
    rows = [line.split() for line in out.splitlines() if line.strip()]
    return {name: (float(imported), float(computed), int(misses)) for name, imported, computed, misses in rows}


def test_edits_at_every_phase_and_concurrent_saves_never_leave_stale_code(tmp_path):
    for name in (*PHASES, "race"):
        for path, text in ((tmp_path / f"values_{name}.py", "VALUE = 1.0\n"),
                           (tmp_path / f"kernel_{name}.py", KERNEL.format(values=f"values_{name}"))):
            path.write_text(text)
            written_before(path)
    race = str(tmp_path / "race")
    first = _start(tmp_path, ["race"], RACE_WAIT=race)  # compiles 1.0, then waits before its data file
    phases = _start(tmp_path, PHASES)
    deadline = time.time() + 300
    while not Path(race + ".waiting").exists():
        assert first.poll() is None and time.time() < deadline, first.communicate()[1][-3000:]
        time.sleep(0.05)
    values = tmp_path / "values_race.py"
    values.write_text("VALUE = 2.0\n")
    time.sleep(0.3)  # a file written an instant before a process starts is not trusted (cache_helpers)
    second = _start(tmp_path, ["race"])  # imports 2.0, compiles and saves it while the first waits
    assert _results(second) == {"race": (2.0, 2.0, 1)}
    Path(race + ".go").touch()
    assert _results(first) == {"race": (1.0, 1.0, 1)}  # what it imported, whatever the file says now
    # each process computes what it imported, the file edited under it notwithstanding
    assert _results(phases) == {phase: (1.0, 1.0, 1) for phase in PHASES}
    # a later process computes 2.0 everywhere; the second process's code is loaded, not compiled
    later = _results(_start(tmp_path, [*PHASES, "race"]))
    assert {name: computed for name, (_, computed, _) in later.items()} == dict.fromkeys((*PHASES, "race"), 2.0)
    assert later["race"][2] == 0
