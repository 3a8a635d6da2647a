"""A model that cannot compile is named at Simulator(...), with its file and line; a compile that
takes a while says so on one line."""

from __future__ import annotations

import sys
import types
from collections import namedtuple
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest
from numba import njit

from plume_multi import Scenario, Simulator
from plume_multi.engine import compile as C
from plume_multi.engine.api import sample_at
from plume_multi.errors import ModelError, ValidationError
from plume_multi.models import Sensor, SensorKernels

MODULE = "plume_multi_test_user_sensors"


def _user_module(source: str) -> types.ModuleType:
    """A module of the user's, from source text (a real file, as a user's would be)."""
    import importlib.util
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp(prefix="user_sensor_"))
    name = f"{MODULE}_{abs(hash(source)) % 10**8}"
    path = folder / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_SENSOR = '''
from dataclasses import dataclass
from typing import ClassVar
from numba import njit
from plume_multi.engine.api import sample_at
from plume_multi.models import Sensor, SensorKernels

@njit(inline="always")
def observe_agent(P, S, obs, col, plume, agent, inner):
    value = {body}
    obs[agent.i, col] = value

@dataclass(frozen=True)
class Probe(Sensor):
    kernels: ClassVar = SensorKernels(observe_agent=observe_agent)

    def columns(self, ctx):
        return ["probe"]
'''


def test_an_undefined_name_is_named_with_the_model_file_and_line_before_compiling():
    module = _user_module(_SENSOR.format(body="sample_cel(plume, agent.x, agent.y)"))
    with pytest.raises(ModelError) as err:
        Simulator(Scenario(sensors=(module.Probe(),)), 2)
    message = str(err.value)
    assert "Probe (sensor model" in message and "'sample_cel'" in message
    assert f"{module.__file__}:10" in message  # the line of the typo
    assert len(message.splitlines()) <= 3


def test_a_type_error_names_the_model_its_line_and_keeps_numbas_message():
    module = _user_module(_SENSOR.format(body="sample_at(plume, agent.x, agent.y).no_such_attribute"))
    with pytest.raises(ModelError) as err:
        Simulator(Scenario(sensors=(module.Probe(),)), 2)
    message = str(err.value)
    assert message.startswith(f"{module.__name__}.Probe (sensor model, ")
    assert ":10)" in message.splitlines()[0]
    assert "no_such_attribute" in message  # Numba's own message below


GoodParams = namedtuple("GoodParams", "offset")
Misnamed = namedtuple("SomethingElse", "offset")


@njit(inline="always")
def _observe(P, S, obs, col, plume, agent, inner):
    obs[agent.i, col] = sample_at(plume, agent.x + P.offset, agent.y)


@dataclass(frozen=True)
class _Offset(Sensor):
    record: object = GoodParams

    kernels: ClassVar = SensorKernels(observe_agent=_observe)

    def columns(self, ctx):
        return ["offset"]

    def params(self, ctx):
        return self.record(1.0)


def test_records_must_be_found_again_by_their_name():
    with pytest.raises(ValidationError, match=r"SomethingElse = namedtuple\('SomethingElse'"):
        Simulator(Scenario(sensors=(_Offset(record=Misnamed),)), 2)


def test_compiled_functions_must_be_module_level_numba_functions():
    def plain(P, S, obs, col, plume, agent, inner):
        pass

    @dataclass(frozen=True)
    class Plain(_Offset):
        kernels: ClassVar = SensorKernels(observe_agent=plain)

    with pytest.raises(ValidationError, match="expected a function compiled with"):
        Simulator(Scenario(sensors=(Plain(),)), 2)

    @njit(inline="always")
    def nested(P, S, obs, col, plume, agent, inner):
        pass

    @dataclass(frozen=True)
    class Nested(_Offset):
        kernels: ClassVar = SensorKernels(observe_agent=nested)

    with pytest.raises(ValidationError, match="top level of its module"):
        Simulator(Scenario(sensors=(Nested(),)), 2)


def test_a_user_sensor_in_a_test_module_runs_and_reads_the_plume():
    sim = Simulator(Scenario(n_agents=2, sensors=(_Offset(),)), 2)
    obs = sim.reset(seed=3)
    field = sim.field
    for row, (x, y) in enumerate(sim.positions):
        expected = 0.0 if x + 1 > field.shape[1] - 1 else field[y, x + 1]
        assert obs[row, 0] == np.float32(expected)


def test_a_long_compile_says_so_on_one_line_and_quiet_silences_it(monkeypatch, capsys):
    calls = []

    class Slow:
        overloads = {}

        def compile(self, sig):
            import time

            calls.append(sig)
            time.sleep(0.3)

    monkeypatch.setattr(C, "NOTICE_AFTER_S", 0.05)
    monkeypatch.delenv("PLUME_MULTI_QUIET", raising=False)
    C.compile_entry(Slow(), (np.zeros(2),), what="step", label="A + B", models=[])
    err = capsys.readouterr().err
    assert err == "plume_multi: compiling the step for A + B (first use; cached afterwards)\n"
    monkeypatch.setenv("PLUME_MULTI_QUIET", "1")
    C.compile_entry(Slow(), (np.zeros(2),), what="step", label="A + B", models=[])
    assert capsys.readouterr().err == "" and len(calls) == 2
