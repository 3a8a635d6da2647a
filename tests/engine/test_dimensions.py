"""One engine for every dimension, kernels that take records (issue 30, items 1 and 2): the tuple
helpers in 2-D and 3-D against plain Python, the rules the source keeps (no compiled function of
more than 12 arguments, no driver function of more than 8, no ``kernels_3d``, a ``dimensions``
declaration on every built-in model) and the refusals before anything compiles (a model of the
signatures before tuples; a 2-D model in 3-D). Nothing here compiles a step."""

from __future__ import annotations

import ast
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from hypothesis import given, strategies as st
from numba import njit

from plume_multi import Scenario, Simulator, plumes, sensors, sources
from plume_multi.engine import assemble, tuples
from plume_multi.engine.api import grid_point, sample_at
from plume_multi.errors import ValidationError
from plume_multi.models import Model, Sensor, SensorKernels, registry

PACKAGE = Path(__file__).resolve().parents[2] / "plume_multi"


def _compiled_functions(folder: Path):
    """``(path, line, name, parameters)`` of every function decorated with Numba (``njit``, an
    ``overload``) under ``folder``, and of the implementations an overload returns."""
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and any(
                    "njit" in ast.unparse(d) or "overload" in ast.unparse(d) for d in node.decorator_list):
                yield path, node.lineno, node.name, len(node.args.args)


def test_no_compiled_function_of_the_engine_or_the_models_takes_more_than_12_arguments():
    found = [f"{path.relative_to(PACKAGE)}:{line} {name} ({n})"
             for folder in ("engine", "models") for path, line, name, n in _compiled_functions(PACKAGE / folder)
             if n > 12]
    assert found == []


def test_the_generated_driver_functions_take_records(monkeypatch):
    """``run``, ``advance``, ``reset_world``, ``observe_world``, ``step_parallel``: at most 8
    arguments, with walls and four sensors (the argument list does not grow with the sensors)."""
    sc = Scenario(grid_size=(9, 7, 5), n_agents=3, walls=np.zeros((5, 7, 9), bool),
                  sensors=(sensors.Concentration(), sensors.Position(), sensors.Neighbours(1),
                           sensors.History(sensors.Concentration(), 2)))
    monkeypatch.setattr(Simulator, "_compile", lambda *args: None)  # the driver's text only
    tree = ast.parse(assemble.source(Simulator(sc, 2)._layout))
    counts = {node.name: len(node.args.args) for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert {"observe_world", "reset_world", "advance", "run", "step_parallel"} <= set(counts)
    assert max(counts.values()) <= 8, counts


def test_no_model_keeps_a_second_record_for_3d_and_every_built_in_model_declares_its_dimensions():
    for family in registry.FAMILIES:
        for name in registry.model_names(family):
            cls = registry.model_class(family, name)
            assert "kernels_3d" not in vars(cls), cls
            assert set(cls.dimensions) <= {2, 3} and 2 in cls.dimensions, cls
            # its own, or its family's (rewards, source motions): never the default of Model
            assert next(c for c in cls.__mro__ if "dimensions" in vars(c)) is not Model, cls


def test_3d_models_from_one_record_and_2d_ones_refused_by_name():
    assert plumes.Gaussian.dimensions == (2, 3) and sensors.Wind.dimensions == (2, 3)
    assert sensors.Antennae.dimensions == (2,)
    with pytest.raises(ValidationError, match=r"Antennae is 2-D only; the scenario is 3-D \(grid_size=\(4, 3, 2\)\)"):
        Scenario(grid_size=(4, 3, 2), sensors=(sensors.Antennae(),))


def test_static_sources_serve_3d_and_moving_ones_are_refused_there_by_name():
    """``Static`` declares (2, 3): a 3-D plume given it is the plume of its default; a motion
    (2-D only) is refused in 3-D before anything compiles."""
    assert sources.Static.dimensions == (2, 3) and sources.Drift.dimensions == (2,)
    given = Scenario(grid_size=(5, 4, 3), plume=plumes.Gaussian(source_motion=sources.Static()))
    assert given.plume == Scenario(grid_size=(5, 4, 3)).plume
    with pytest.raises(ValidationError, match=r"Gaussian does not work with sources that move in 3-D \(only in 2-D\)"):
        Scenario(grid_size=(5, 4, 3), plume=plumes.Gaussian(source_motion=sources.Drift((0.5, 0.0))))


# --------------------------------------------------------------------------- tuple helpers
points = st.lists(st.floats(-3.0, 9.0), min_size=2, max_size=3).map(tuple)


@given(point=points)
def test_the_tuple_helpers_are_one_function_for_2d_and_3d(point):
    @njit
    def helpers(point, cell, shape):
        return (tuples.cell_of(point), tuples.as_float(cell), tuples.clamp_cell(cell, shape),
                tuples.clamp_point(point, shape), tuples.squared_distance(point, tuples.as_float(cell)),
                tuples.take((7.0, 8.0, 9.0), point), tuples.replaced(point, 1, 5.0))

    shape = tuple(4 + c for c in range(len(point)))
    cell = tuple(math.floor(c + 0.5) for c in point)
    cells, floats, clamped, clamped_point, d2, taken, replaced = helpers(point, cell, shape)
    assert cells == cell and floats == tuple(float(c) for c in cell)
    assert clamped == tuple(min(max(c, 0), n - 1) for c, n in zip(cell, shape))
    assert clamped_point == tuple(min(max(c, 0.0), n - 1.0) for c, n in zip(point, shape))
    assert d2 == sum((a - b) * (a - b) for a, b in zip(point, cell))
    assert taken == (7.0, 8.0, 9.0)[:len(point)] and replaced == point[:1] + (5.0,) + point[2:]


def test_row_and_put_row_read_and_write_rows_of_any_width():
    @njit
    def swap(arr, i, j, like):
        a = tuples.row(arr, i, like)
        tuples.put_row(arr, i, tuples.row(arr, j, like))
        tuples.put_row(arr, j, a)

    for d in (2, 3):
        arr = np.arange(4 * d).reshape(4, d)
        swap(arr, 0, 3, (0,) * d)
        assert arr[0].tolist() == list(range(3 * d, 4 * d)) and arr[3].tolist() == list(range(d))


def test_grid_point_keeps_each_dimension_s_rule():
    """2-D: a point within half a cell of the grid reads its nearest point; 3-D: off the grid reads
    0 (the rules the plumes had when they were written twice; one function now)."""
    assert grid_point((-0.4, 2.0), (5, 4)) == (True, (0.0, 2.0))
    assert grid_point((-0.6, 2.0), (5, 4))[0] is False
    assert grid_point((-0.4, 2.0, 1.0), (5, 4, 3))[0] is False
    assert grid_point((4.0, 3.0, 2.0), (5, 4, 3)) == (True, (4.0, 3.0, 2.0))
    assert grid_point((float("nan"), 1.0), (5, 4))[0] is False


# --------------------------------------------------------------------------- refusals
_OLD_PLUME = '''
from collections import namedtuple
from dataclasses import dataclass
from typing import ClassVar
import numpy as np
from numba import njit
from plume_multi.models import Plume, PlumeKernels

OldParams = namedtuple("OldParams", "value")

@njit(inline="always")
def source(P, S, b):
    return 1.0, 1.0

@njit(inline="always")
def sample_cell(P, S, pw, ix, iy):
    return np.float32(P.value)

@njit(inline="always")
def sample_at(P, S, pw, x, y):
    return np.float32(P.value)

@dataclass(frozen=True)
class Old(Plume):
    kernels: ClassVar = PlumeKernels(source=source, sample_cell=sample_cell, sample_at=sample_at)

    def params(self, ctx):
        return OldParams(0.5)

    def sources(self, params, state, num_worlds):
        return np.ones((num_worlds, 2))
'''


def test_a_model_of_the_signatures_before_tuples_is_refused_by_name_before_compiling(tmp_path):
    path = tmp_path / "old_plume_model.py"
    path.write_text(_OLD_PLUME)
    import importlib.util

    spec = importlib.util.spec_from_file_location("old_plume_model", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_plume_model"] = module
    try:
        spec.loader.exec_module(module)
        with pytest.raises(ValidationError, match=r"Old \(plume model\): kernels.source takes \(P, S, b\); expected "
                                                  r"source\(P, S, b, shape\)"):
            Simulator(Scenario(grid_size=(5, 4), plume=module.Old()))
    finally:
        del sys.modules["old_plume_model"]


@njit(inline="always")
def _observe_gradient(P, S, obs, col, plume, agent, inner):
    obs[agent.i, col] = sample_at(plume, agent.x + 1.0, agent.y) - sample_at(plume, agent.x - 1.0, agent.y)


@dataclass(frozen=True)
class GradientX(Sensor):
    """The README's sensor: it reads ``agent.x`` and ``agent.y`` (the 2-D names)."""

    kernels: ClassVar = SensorKernels(observe_agent=_observe_gradient)

    def columns(self, ctx):
        return ["gradient_x"]


def test_a_sensor_of_the_2d_names_is_2d_only_by_default():
    """A model that does not declare ``dimensions`` runs in 2-D only: a sensor reading ``agent.x``
    is refused in 3-D by name, not run on the first two coordinates."""
    assert Scenario(grid_size=(6, 5), sensors=(GradientX(),)).observation_layout == ["gradient_x"]
    with pytest.raises(ValidationError, match=r"GradientX is 2-D only; the scenario is 3-D"):
        Scenario(grid_size=(6, 5, 4), sensors=(GradientX(),))
