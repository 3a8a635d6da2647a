"""Old import paths (plume_multi._compat): each still imports, warns once naming its new home,
and is the new module itself; ``import plume_multi`` warns nothing; the package keeps a short top."""

from __future__ import annotations

import importlib
import importlib.util
import os
import pickle
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import plume_multi
from plume_multi._compat import OLD_TO_NEW, deprecation_message

PACKAGE = Path(plume_multi.__file__).parent
# New modules that need an optional extra.
EXTRAS = {"plume_multi.integrations.rllib": "ray", "plume_multi.integrations.sb3": "stable_baselines3"}


def _forget_old_names():
    """Undo earlier imports of old names, so each test sees a first import (and its warning)."""
    for old in OLD_TO_NEW:
        sys.modules.pop(old, None)
        parent_name, _, child = old.rpartition(".")
        parent = sys.modules.get(parent_name)
        # Only the attributes the old names bound on their real parent (plume_multi.render, ...):
        # plume_multi.wrappers.single bound ``single`` on plume_multi.envs, which is its own.
        if parent is not None and parent.__name__ == parent_name and isinstance(parent.__dict__.get(child),
                                                                                type(sys)):
            delattr(parent, child)


@pytest.fixture
def fresh():
    _forget_old_names()
    yield
    _forget_old_names()


def _names(names):
    """The old names as parameters; those whose module needs Ray carry the ``ray`` mark (`make test`
    runs them in .venv-ray; elsewhere they are deselected, not skipped)."""
    return [pytest.param(name, marks=pytest.mark.ray) if EXTRAS.get(OLD_TO_NEW[name]) == "ray" else name
            for name in names]


def _deprecations(record, old):
    return [w for w in record if issubclass(w.category, DeprecationWarning) and str(w.message).startswith(f"{old} ")]


@pytest.mark.parametrize("old", _names(sorted(OLD_TO_NEW)))
def test_old_path_imports_warns_once_and_is_the_new_module(old, fresh):
    new_name = OLD_TO_NEW[old]
    new = importlib.import_module(new_name)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    assert module is new and module.__name__ == new_name and module.__spec__.name == new_name
    assert sys.modules[old] is new
    [warning] = _deprecations(record, old)
    assert str(warning.message) == deprecation_message(old)
    assert str(warning.message) == f"{old} is deprecated; import {new_name} (removed in the next release)"
    assert warning.filename == __file__  # attributed to the importing line, not to importlib
    for name, value in vars(new).items():
        assert getattr(module, name) is value
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        assert importlib.import_module(old) is new
    assert not _deprecations(again, old)  # once


@pytest.mark.parametrize("old", _names(sorted(name for name in OLD_TO_NEW if name.count(".") == 1)))
def test_old_attribute_of_the_package_warns_and_is_the_new_module(old, fresh):
    child = old.rpartition(".")[2]
    new = importlib.import_module(OLD_TO_NEW[old])
    if child == "evaluate":  # the public function plume_multi.evaluate, not the old module
        assert plume_multi.evaluate is new.evaluate
        return
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert getattr(plume_multi, child) is new
    assert [str(w.message) for w in _deprecations(record, old)] == [deprecation_message(old)]
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        exec(f"from plume_multi import {child} as alias", namespace := {})
    assert namespace["alias"] is new and not _deprecations(record, old)  # once


def test_from_import_of_old_names(fresh):
    with pytest.warns(DeprecationWarning, match=r"plume_multi\.wrappers is deprecated; import plume_multi\.envs "):
        from plume_multi.wrappers import PlumeSearchEnv
    from plume_multi.envs.single import PlumeSearchEnv as New

    assert PlumeSearchEnv is New
    with pytest.warns(DeprecationWarning, match=r"plume_multi\.render is deprecated; import plume_multi\.viz\.render "):
        from plume_multi.render import render_frame
    from plume_multi.viz.render import render_frame as new_render_frame

    assert render_frame is new_render_frame


def test_evaluate_stays_callable_after_the_old_module_import(fresh):
    from plume_multi.evaluation import EvaluationResult

    with pytest.warns(DeprecationWarning, match="plume_multi.evaluate is deprecated"):
        import plume_multi.evaluate as module
    assert module is importlib.import_module("plume_multi.evaluation")
    assert callable(plume_multi.evaluate) and plume_multi.evaluate.sweep is module.sweep
    result = plume_multi.evaluate(lambda obs: obs[:, 0].astype(int) * 0, plume_multi.Scenario(grid_size=(8, 8),
                                  max_steps=3), 2, progress=False)
    assert isinstance(result, EvaluationResult)


def test_pickles_naming_old_paths_load(fresh):
    from plume_multi.envs.components import CompactObservation

    data = pickle.dumps(CompactObservation(), protocol=0)  # names as text lines: replaceable
    old = data.replace(b"plume_multi.envs.components", b"plume_multi.wrappers.components")
    assert old != data
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert isinstance(pickle.loads(old), CompactObservation)
    # the parent package is imported first, and warns too
    assert [str(w.message) for w in record if issubclass(w.category, DeprecationWarning)] == [
        deprecation_message("plume_multi.wrappers"), deprecation_message("plume_multi.wrappers.components")]


def test_the_registrations_name_the_new_paths():
    import gymnasium

    from plume_multi.envs.registration import _ENTRY_POINTS

    for env_id, entry_points in _ENTRY_POINTS.items():
        spec = gymnasium.spec(env_id)
        for entry_point in (spec.entry_point, spec.vector_entry_point, *entry_points):
            module = entry_point.partition(":")[0]
            assert module not in OLD_TO_NEW and importlib.util.find_spec(module) is not None, entry_point


def test_the_new_modules_exist_and_no_old_file_remains():
    for old, new in OLD_TO_NEW.items():
        assert importlib.util.find_spec(new) is not None, new
        relative = Path(*old.split(".")[1:])
        assert not (PACKAGE / relative).with_suffix(".py").exists() and not (PACKAGE / relative).is_dir(), old


def test_import_plume_multi_warns_nothing():
    code = ("import warnings\n"
            "with warnings.catch_warnings(record=True) as record:\n"
            "    warnings.simplefilter('always')\n"
            "    import plume_multi\n"
            "    plume_multi.Scenario, plume_multi.PlumeSearchEnv, plume_multi.vector_env, plume_multi.evaluate\n"
            "ours = [str(w.message) for w in record if 'plume_multi' in str(w.message) or '/plume_multi/' in w.filename]\n"
            "print(plume_multi.__file__)\n"
            "assert not ours, ours\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PACKAGE.parent), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == str(PACKAGE / "__init__.py")


# The package's top level holds the core objects and the one home of each cross-cutting concern
# (errors, validators, the checked opener, the capability table); everything else lives in a
# subpackage. A new top-level module is a decision: add it here with its role.
TOP_LEVEL = {
    "__init__.py": "public names",
    "_compat.py": "shims for the versions of Gymnasium and PettingZoo we support",
    "calibration.py": "a plume's likelihood measured on the simulator (above it, below the policies that use it)",
    "capabilities.py": "what composes with what",
    "checks.py": "the only validators",
    "errors.py": "the one error hierarchy",
    "evaluation.py": "evaluate, sweep",
    "files.py": "the one checked opener, and writing whole or not at all",
    "scenario.py": "Scenario",
    "scenarios.py": "ready-made scenarios",
    "simulator.py": "Simulator",
    "walls.py": "Walls",
    "world.py": "WorldState",
}


def test_the_top_of_the_package_holds_only_the_core_modules():
    top = {p.name for p in PACKAGE.glob("*.py")}
    assert top <= set(TOP_LEVEL), sorted(top - set(TOP_LEVEL))
