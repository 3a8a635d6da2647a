"""Records held by reference (plume_multi/engine/refs.py): their fields read as the named tuple's,
every reference given back, and a model's large records reach the step that way."""

from __future__ import annotations

import importlib.util
import sys
from collections import namedtuple

import numpy as np
import pytest
from numba.core.errors import TypingError
from numba.core.runtime import _nrt_python, rtsys

from plume_multi import Scenario, Simulator
from plume_multi.engine.assemble import BY_REFERENCE_FIELDS
from plume_multi.engine.jit import njit
from plume_multi.engine.refs import as_ref, pick
from plume_multi.models import sensors

Pair = namedtuple("Pair", "scale values count")
Sub = namedtuple("Sub", "count scale")
Other = namedtuple("Other", "count missing")


@njit
def _read(t):
    r = as_ref(Pair(*t))
    r.values[0] += r.scale
    return r.scale, r[0], r[-1], r[1:][1], r.values.sum(), pick(r, Sub), pick(Pair(*t), Sub)


def test_fields_read_by_name_by_constant_index_and_slice_and_picked_into_another_class():
    values = np.ones(3)
    scale, first, last, count, total, sub, from_tuple = _read((2.0, values, 7))
    assert (scale, first, last, count) == (2.0, 2.0, 7, 7)
    assert values.tolist() == [3.0, 1.0, 1.0]  # the record holds the caller's array, not a copy
    assert total == 5.0
    assert sub == from_tuple == Sub(7, 2.0) and type(sub) is Sub


def test_every_reference_is_given_back():
    values = np.ones(3)
    _read((1.0, values, 1))  # compiled
    held = sys.getrefcount(values)
    was_on = _nrt_python.memsys_stats_enabled()
    _nrt_python.memsys_enable_stats()
    try:
        stats = rtsys.get_allocation_stats()
        for _ in range(100):
            _read((1.0, values, 1))
        after = rtsys.get_allocation_stats()
    finally:
        if not was_on:
            _nrt_python.memsys_disable_stats()
    assert after.mi_alloc - stats.mi_alloc >= 100  # one record per call...
    assert after.mi_alloc - after.mi_free == stats.mi_alloc - stats.mi_free  # ...each freed
    assert sys.getrefcount(values) == held


def test_an_index_out_of_range_or_a_field_a_record_lacks_is_refused_when_compiling():
    @njit
    def past_the_end(t):
        return as_ref(Pair(*t))[3]

    @njit
    def lacking(t):
        return pick(as_ref(Pair(*t)), Other)

    for fn in (past_the_end, lacking):
        with pytest.raises(TypingError):
            fn((1.0, np.ones(2), 1))


_SENSOR = '''
from collections import namedtuple
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numba.extending import overload

from plume_multi.engine.assemble import BY_REFERENCE_FIELDS
from plume_multi.engine.jit import njit
from plume_multi.engine.refs import RecordRef
from plume_multi.models import Sensor, SensorKernels

# a record of more fields than the driver holds by value, and a small one
LargeParams = namedtuple("LargeParams", ["offset", "weights"] + [f"unused{k}" for k in range({extra})])
SmallParams = namedtuple("SmallParams", "offset weights")


def held_by_reference(P):
    pass


@overload(held_by_reference, inline="always")
def _held(P):
    answer = np.float32(isinstance(P, RecordRef))
    return lambda P: answer


@njit(inline="always")
def observe_agent(P, S, obs, col, plume, agent, inner):
    obs[agent.i, col] = P[0] + P.weights[agent.n]  # by index and by name, as on the named tuple
    obs[agent.i, col + 1] = held_by_reference(P)


@dataclass(frozen=True)
class Probe(Sensor):
    large: bool = True
    kernels: ClassVar = SensorKernels(observe_agent=observe_agent)

    def columns(self, ctx):
        return ["probe", "by_reference"]

    def params(self, ctx):
        weights = np.arange(ctx.n_agents, dtype=np.float32)
        if self.large:
            return LargeParams(np.float32(0.5), weights, *range(len(LargeParams._fields) - 2))
        return SmallParams(np.float32(0.5), weights)
'''


def test_a_models_large_records_reach_the_step_by_reference_small_ones_by_value_both_read_as_before(
        tmp_path, monkeypatch):
    path = tmp_path / "plume_multi_test_probe_sensor.py"
    path.write_text(_SENSOR.replace("{extra}", str(BY_REFERENCE_FIELDS - 1)))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, path.stem, module)
    spec.loader.exec_module(module)
    scenario = Scenario(n_agents=3, sensors=(sensors.Concentration(), module.Probe(), module.Probe(large=False)))
    # threaded: its reset runs the serial entry point's text, its step the parallel loop's
    sim = Simulator(scenario, 2, parallel=True)
    for obs in (sim.reset(seed=0), sim.step(np.zeros(6, np.int64))[0]):
        assert obs[:, 1].tolist() == obs[:, 3].tolist() == [0.5, 1.5, 2.5] * 2
        assert obs[:, 2].tolist() == [1.0] * 6  # BY_REFERENCE_FIELDS + 1 fields
        assert obs[:, 4].tolist() == [0.0] * 6  # 2 fields
