"""The cache is never stale and never wasteful: a user's model edited in its own file gives the new
numbers on the next run; a new model file recompiles nothing; folders no source can use go."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from plume_multi.engine import jit

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "custom_sensor.py"


def _run_example(path: Path, cache: Path) -> list:
    env = {**os.environ, "PLUME_MULTI_CACHE_DIR": str(cache), "PLUME_MULTI_QUIET": "1"}
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=600,
                         cwd=path.parent)
    assert out.returncode == 0, out.stderr[-3000:]
    return eval(out.stdout.strip().splitlines()[-1])


def test_the_example_prints_its_sensor_column_and_an_edit_of_scale_is_picked_up(tmp_path):
    text = EXAMPLE.read_text()
    assert len(text.splitlines()) <= 60
    assert text.count("\nSCALE = 1.0\n") == 1
    copy = tmp_path / "custom_sensor.py"
    copy.write_text(text)
    cache = tmp_path / "cache"
    before = _run_example(copy, cache)
    assert len(before) == 4 and any(v != 0.0 for v in before)
    copy.write_text(text.replace("\nSCALE = 1.0\n", "\nSCALE = 1000.0\n"))
    after = _run_example(copy, cache)  # same cache: a stale driver would print `before` again
    np.testing.assert_allclose(after, [1000.0 * v for v in before], rtol=1e-6)
    assert after != before


_PROBE = """
import numpy as np, plume_multi
sim = plume_multi.Simulator(plume_multi.Scenario(grid_size=(9, 7), n_agents=2), 3)
sim.reset(seed=4)
obs, *_ = sim.step(np.zeros(6, np.int64))
print(repr(obs[:, 0].tolist()))
print(sum(sim._driver.run.stats.cache_misses.values()))
print(plume_multi.__file__)
"""


def _copy_package(dest: Path) -> Path:
    import shutil

    import plume_multi

    shutil.copytree(Path(plume_multi.__file__).parent, dest / "plume_multi",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return dest / "plume_multi"


def _probe(site: Path, cache: Path) -> tuple:
    """Run the probe on the package copy in ``site`` (``-S``: no .pth file of this checkout's
    editable install can shadow it): its first column, and how many entry points compiled."""
    env = {k: v for k, v in os.environ.items() if k not in ("PLUME_MULTI_CACHE_DIR", "NUMBA_CACHE_DIR")}
    site_dirs = [p for p in sys.path if p.endswith("site-packages")]
    env.update(PLUME_MULTI_CACHE_DIR=str(cache), PLUME_MULTI_QUIET="1",
               PYTHONPATH=os.pathsep.join([str(site), *site_dirs]))
    out = subprocess.run([sys.executable, "-S", "-c", _PROBE], capture_output=True, text=True, env=env,
                         timeout=600, cwd=site)
    assert out.returncode == 0, out.stderr[-3000:]
    column, misses, where = out.stdout.strip().splitlines()[-3:]
    assert Path(where).is_relative_to(site)
    return eval(column), int(misses)


def test_a_new_model_file_recompiles_nothing_and_an_edit_recompiles_what_uses_it(tmp_path):
    pkg = _copy_package(tmp_path / "site")
    cache = tmp_path / "cache"
    first, misses = _probe(tmp_path / "site", cache)
    assert misses == 1  # the entry point (reset and step) compiled
    # a model file the combination does not use: the next process loads the driver from the cache
    # (no compile, the same numbers), the new file notwithstanding
    (pkg / "models" / "sensors" / "unused_sensor.py").write_text('"""A sensor nobody uses."""\nX = 1\n')
    assert _probe(tmp_path / "site", cache) == (first, 0)
    # an edit of a file the driver only reaches through others recompiles it, to the same numbers
    rng_file = pkg / "engine" / "rng.py"
    rng_file.write_text(rng_file.read_text() + "\n# an edit\n")
    assert _probe(tmp_path / "site", cache) == (first, 1)
    # an edit of the plume the combination uses changes its numbers
    gaussian = pkg / "models" / "plumes" / "gaussian.py"
    text = gaussian.read_text()
    edited = text.replace("    return P.field[cell[::-1]]\n", "    return P.field[cell[::-1]] * np.float32(0.5)\n")
    assert edited != text
    gaussian.write_text(edited)
    halved, misses = _probe(tmp_path / "site", cache)
    assert misses == 1 and halved == [v / 2 for v in first]
    versions = [p.name for p in cache.iterdir() if p.is_dir()]
    assert versions == [jit.VERSION]  # one folder, however many edits


def test_prune_removes_what_no_source_can_use(tmp_path, monkeypatch):
    root = tmp_path / "root"
    current = root / jit.VERSION
    legacy = root / "numba0.60.0-py311-0123456789abcdef"
    other = root / "my-notes"  # not ours: never touched
    for folder in (current / "drivers", current / "numba" / "drivers", legacy, other):
        folder.mkdir(parents=True)
    live_source = tmp_path / "model.py"
    live_source.write_text("X = 1\n")
    alive = current / "drivers" / "plume_multi_driver_aaaa.py"
    alive.write_text(f"# header\n# source: {live_source}\n")
    orphan = current / "drivers" / "plume_multi_driver_bbbb.py"
    orphan.write_text(f"# source: {tmp_path / 'gone.py'}\n")
    kept_code = current / "numba" / "drivers" / "plume_multi_driver_aaaa.step-1.py311.nbi"
    old_code = current / "numba" / "drivers" / "plume_multi_driver_bbbb.step-1.py311.nbi"
    fresh_code = current / "numba" / "drivers" / "plume_multi_driver_cccc.step-1.py311.nbi"
    for f in (kept_code, old_code, fresh_code):
        f.write_bytes(b"x")
    hour_ago = time.time() - 7200
    for f in (kept_code, old_code):
        os.utime(f, (hour_ago, hour_ago))
    monkeypatch.setattr(jit, "CACHE_ROOT", root)
    monkeypatch.setattr(jit, "CACHE_DIR", current)
    removed = jit.prune()
    assert not legacy.exists() and not orphan.exists() and not old_code.exists()
    assert alive.exists() and kept_code.exists() and other.exists()
    assert fresh_code.exists()  # may be another process's driver being written: too young to go
    assert set(map(Path, removed)) == {legacy, orphan, old_code}


def test_module_files_follow_imports_into_own_code_only():
    from plume_multi.models.sensors import antennae

    files = jit.module_files([antennae])
    assert "plume_multi.models.sensors.antennae" in files
    assert "plume_multi.engine.api" in files  # sample_at, reached through an import
    assert not any(re.match(r"(numpy|numba)\b", name) for name in files)


def test_every_cached_function_is_keyed_on_the_layout_of_records_held_by_reference():
    # compiled code holds a RecordRef's layout: a kernel whose module never names engine/refs.py
    # (the puff physics receive a state held by reference) reaches it through njit's module
    from plume_multi.models.plumes.puffs import physics

    assert "plume_multi.engine.refs" in jit.module_files([physics])


def test_a_library_under_a_site_folder_the_interpreter_does_not_name_is_not_own_code(tmp_path):
    # a virtual environment's libraries under `python -S`, `pip install --target`: walked as the
    # user's code, numpy's and Numba's modules made every warm import of the package take seconds
    import types

    library = types.ModuleType("some_library.core")
    library.__file__ = str(tmp_path / "env" / "lib" / "site-packages" / "some_library" / "core.py")
    mine = types.ModuleType("my_models")
    mine.__file__ = str(tmp_path / "project" / "my_models.py")
    assert jit._find_own_file(library) is None
    assert jit._find_own_file(mine) == str((tmp_path / "project" / "my_models.py").resolve())
    assert jit._find_own_file(jit) is not None  # the package's own files, wherever it is installed


_CELL = """
import numpy as np
from numba import njit
import {helpers}

TABLE = np.array([{value}, 0.0])

@njit(inline="always")
def helper():
    return TABLE[0] + {helpers}.OFFSET

@njit(inline="always")
def observe_agent(P, S, obs, col, plume, agent, inner):
    obs[agent.i, col] = helper()
"""


def _session(value: float, helpers: str):
    """A notebook's session: cells exec'd into a module without a source file."""
    import sys
    import types

    session = types.ModuleType("plume_multi_test_notebook")
    sys.modules[session.__name__] = session
    exec(compile(_CELL.format(value=value, helpers=helpers), "<cell>", "exec"), session.__dict__)
    return session


def test_a_notebook_models_key_holds_the_functions_it_calls_and_the_files_they_reach(tmp_path, monkeypatch):
    """Issue 32, item 1: a notebook's sensor that calls another notebook function ran that
    function's old code in a new session (its key held the sensor's own code only), and a file it
    reached through the notebook was not in the key."""
    from plume_multi.engine import assemble

    (tmp_path / "nb_helpers.py").write_text("OFFSET = 0.5\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    first = _session(1.0, "nb_helpers")
    key = assemble._fingerprint(first.observe_agent)
    assert assemble._fingerprint(_session(1.0, "nb_helpers").observe_agent) == key  # a new session, same code
    assert assemble._fingerprint(_session(2.0, "nb_helpers").observe_agent) != key  # the helper's array changed
    files = jit.module_files([_session(1.0, "nb_helpers")])
    assert files.get("nb_helpers") == str((tmp_path / "nb_helpers.py").resolve())
    assert "plume_multi_test_notebook" not in files  # nothing to hash: its code is in the fingerprint
