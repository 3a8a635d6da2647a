"""A model that cannot compile is named at Simulator(...), with its file and line; a compile that
takes a while says so on one line."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import types
from collections import namedtuple
from dataclasses import dataclass
from typing import ClassVar

import numba
import numpy as np
import pytest
from cache_helpers import written_before
from numba import njit

from plume_multi import Scenario, Simulator
from plume_multi.engine import compile as C
from plume_multi.engine.api import sample_at
from plume_multi.errors import ModelError, ValidationError
from plume_multi.models import Sensor, SensorKernels

MODULE = "plume_multi_test_user_sensors"


_USER_FOLDER = None  # one temporary folder for this process's user modules, removed at its end


def _user_module(source: str) -> types.ModuleType:
    """A module of the user's, from source text (a real file, as a user's would be)."""
    import importlib.util
    import tempfile
    from pathlib import Path

    global _USER_FOLDER
    if _USER_FOLDER is None:
        _USER_FOLDER = tempfile.TemporaryDirectory(prefix="user_sensor_")
    folder = Path(tempfile.mkdtemp(dir=_USER_FOLDER.name))
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


def test_a_record_its_module_holds_under_another_name_is_replaced_by_a_findable_one():
    import pickle
    import subprocess

    from plume_multi.engine import records

    sim = Simulator(Scenario(sensors=(_Offset(record=Misnamed),)), 2)
    params = sim._params["sensor0"]
    assert type(params).__name__ == "SomethingElse" and params.offset == 1.0
    assert records.findable(type(params)) and not records.findable(Misnamed)
    assert pickle.loads(pickle.dumps(type(params))) is type(params)
    code = (f"import pickle, sys; cls = pickle.loads({pickle.dumps(type(params))!r}); "
            "print(cls.__name__, cls._fields, cls.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["SomethingElse", "('offset',)", "plume_multi.engine.records"], out.stderr
    assert records.findable(GoodParams)
    assert type(Simulator(Scenario(sensors=(_Offset(),)), 2)._params["sensor0"]) is GoodParams


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


class _Slow:
    """Stands for a dispatcher: ``compile`` takes 0.3 s, and compiles (raising Numba's
    ``numba:compile`` event, as a cache miss does) or only loads (a cache hit raises none)."""

    def __init__(self, compiles: bool, index=None):
        self.overloads, self.compiles, self.calls = {}, compiles, 0
        self._cache = types.SimpleNamespace(_cache_file=types.SimpleNamespace(_index_path=index))

    def compile(self, sig):
        import contextlib
        import time

        from numba.core import event

        self.calls += 1
        with event.trigger_event("numba:compile", data={}) if self.compiles else contextlib.nullcontext():
            time.sleep(0.3)


def test_a_long_compile_says_compiling_on_one_line_and_quiet_silences_it(monkeypatch, capsys):
    monkeypatch.setattr(C, "NOTICE_AFTER_S", 0.05)
    monkeypatch.delenv("PLUME_MULTI_QUIET", raising=False)
    fn = _Slow(compiles=True)
    C.compile_entry(fn, (np.zeros(2),), what="step", label="A + B", models=[])
    err = capsys.readouterr().err
    assert err == "plume_multi: compiling the step for A + B (first use; cached afterwards)\n"
    monkeypatch.setenv("PLUME_MULTI_QUIET", "1")
    C.compile_entry(fn, (np.zeros(2),), what="step", label="A + B", models=[])
    assert capsys.readouterr().err == "" and fn.calls == 2


def test_a_long_load_from_the_cache_says_loading_never_compiling(monkeypatch, capsys, tmp_path):
    index = tmp_path / "f.nbi"
    index.write_bytes(b"")
    monkeypatch.setattr(C, "NOTICE_AFTER_S", 0.05)
    monkeypatch.delenv("PLUME_MULTI_QUIET", raising=False)
    C.compile_entry(_Slow(compiles=False, index=str(index)), (np.zeros(2),), what="step", label="A + B", models=[])
    assert capsys.readouterr().err == "plume_multi: loading the step for A + B from the cache\n"
    monkeypatch.setattr(C, "NOTICE_AFTER_S", 5.0)  # a quick load: nothing
    C.compile_entry(_Slow(compiles=False, index=str(index)), (np.zeros(2),), what="step", label="A + B", models=[])
    assert capsys.readouterr().err == ""


def test_a_slow_start_with_nothing_in_the_cache_says_compiling(monkeypatch, capsys, tmp_path):
    """Numba's own start-up can take a second before its compile event: with no cache index for
    the function, it is compiling, never loading."""
    monkeypatch.setattr(C, "NOTICE_AFTER_S", 0.05)
    monkeypatch.delenv("PLUME_MULTI_QUIET", raising=False)
    C.compile_entry(_Slow(compiles=False, index=str(tmp_path / "none.nbi")), (np.zeros(2),), what="step",
                    label="A + B", models=[])
    assert capsys.readouterr().err == "plume_multi: compiling the step for A + B (first use; cached afterwards)\n"


def test_within_reporting_the_news_goes_to_the_callback_as_the_compile_starts(monkeypatch, capsys):
    monkeypatch.setattr(C, "NOTICE_AFTER_S", 5.0)
    said = []
    index = __import__("tempfile").NamedTemporaryFile(suffix=".nbi")
    with C.reporting(said.append), index:
        C.compile_entry(_Slow(compiles=True), (np.zeros(2),), what="step", label="A + B", models=[])
        C.compile_entry(_Slow(compiles=False, index=index.name), (np.zeros(2),), what="step", label="A + B",
                        models=[])
    assert said == ["compiling the step for A + B (first use; cached afterwards)"]
    assert capsys.readouterr().err == ""


_CACHED = """
from numba import njit

@njit(cache=True)
def twice(x):
    return 2 * x
"""


def test_numba_raises_no_compile_event_for_a_cache_load(tmp_path, monkeypatch):
    """What the notice rests on: a dispatcher that finds its code in the cache compiles nothing."""
    import importlib

    from numba.core import event

    monkeypatch.syspath_prepend(str(tmp_path))
    source = tmp_path / "plume_multi_test_cached.py"
    source.write_text(_CACHED)
    written_before(source, 3600)  # older than this process, as a model's module is
    module = importlib.import_module("plume_multi_test_cached")
    events = []

    class Count(event.Listener):
        def on_start(self, ev):
            events.append(ev)

        def on_end(self, ev):
            pass

    with event.install_listener("numba:compile", Count()):
        module.twice.compile((numba.int64,))
        compiled = len(events)
        module = importlib.reload(module)   # a new dispatcher on the same file: as a new process
        module.twice.compile((numba.int64,))
    sys.modules.pop("plume_multi_test_cached", None)
    assert compiled >= 1 and len(events) == compiled
    assert sum(module.twice.stats.cache_hits.values()) == 1
    assert C._in_cache(module.twice)  # what the notice reads before Numba's first event


def test_a_wrong_type_passed_into_the_plume_blames_the_sensor_not_the_plume():
    module = _user_module(_SENSOR.format(body="sample_at(plume, agent, agent.y)"))
    with pytest.raises(ModelError) as err:
        Simulator(Scenario(sensors=(module.Probe(),)), 2)
    first_line = str(err.value).splitlines()[0]
    assert first_line.startswith(f"{module.__name__}.Probe (sensor model, ") and ":10)" in first_line


_MAIN_SENSOR = """
import subprocess
import sys
import textwrap
from collections import namedtuple
from dataclasses import dataclass
from typing import ClassVar
import numba
import numpy as np
from numba import njit
from plume_multi import Scenario, Simulator
from plume_multi.models import Sensor, SensorKernels

OffsetParams = namedtuple("OffsetParams", "offset")
VALUE = {value}

@njit(inline="always")
def observe_agent(P, S, obs, col, plume, agent, inner):
    obs[agent.i, col] = VALUE + P.offset

@dataclass(frozen=True)
class Offset(Sensor):
    kernels: ClassVar = SensorKernels(observe_agent=observe_agent)
    def columns(self, ctx):
        return ["v"]
    def params(self, ctx):
        return OffsetParams(0.5)

if sys.argv[1:] == ["edit"]:  # the file edited after this run imported it, before it compiles
    with open(__file__) as f:
        text = f.read()
    with open(__file__, "w") as f:
        f.write(text.replace("VALUE = 1.0", "VALUE = 2.0"))
sim = Simulator(Scenario(sensors=(Offset(),)), 2)
obs = sim.reset(seed=0)
print(obs[0, 0], sum(sim._driver.run.stats.cache_misses.values()))
"""


def _run_script(path, cache, *args):
    import os
    import subprocess

    env = {**os.environ, "PLUME_MULTI_CACHE_DIR": str(cache), "PLUME_MULTI_QUIET": "1"}
    out = subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    value, misses = out.stdout.split()
    return float(value), int(misses)


def test_a_script_model_edited_while_it_runs_is_never_run_stale_and_the_next_run_finds_it_in_the_cache(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(_MAIN_SENSOR.format(value=1.0))
    written_before(script)
    # the run computes the 1.0 it imported, and caches nothing: its file now holds 2.0 (issue 32,
    # item 1: it stored the code of 1.0 under the key of 2.0, and the next run printed 1.5)
    assert _run_script(script, tmp_path / "cache", "edit") == (1.5, 1)
    assert _run_script(script, tmp_path / "cache") == (2.5, 1)
    assert _run_script(script, tmp_path / "cache") == (2.5, 0)  # loaded: no compile


def test_a_model_redefined_in_a_session_runs_its_new_code():
    namespace = {"__name__": "plume_multi_test_session"}  # a notebook's cells: no source file
    session = types.ModuleType("plume_multi_test_session")
    sys.modules["plume_multi_test_session"] = session
    values = []
    for value in (1.0, 2.0):
        code = _MAIN_SENSOR.format(value=value).replace("sim = Simulator", "SIM = Simulator").split("SIM = ")[0]
        exec(compile(code, "<cell>", "exec"), session.__dict__)
        sim = Simulator(Scenario(sensors=(session.Offset(),)), 2)
        values.append(float(sim.reset(seed=0)[0, 0]))
    del namespace
    assert values == [1.5, 2.5]


def test_the_packages_kernels_are_compiled_without_a_c_wrapper():
    # engine.jit.njit: no first-class function type calls a kernel, so none gets Numba's C wrapper
    from plume_multi.engine import jit

    @jit.njit(cache=False)
    def twice(x):
        return 2 * x

    @jit.njit(cache=False, no_cfunc_wrapper=False)
    def thrice(x):
        return 3 * x

    assert twice(3) == 6 and thrice(3) == 9
    for fn, wrapped in ((twice, False), (thrice, True)):
        result = fn.overloads[fn.signatures[0]]
        defined = {f.name for f in result.library._final_module.functions if not f.is_declaration}
        assert result.fndesc.llvm_func_name in defined
        assert (result.fndesc.llvm_cfunc_wrapper_name in defined) is wrapped


def test_a_kernel_without_a_python_entry_point_raises_when_called_from_python():
    # Numba called the entry point it had not built: the interpreter crashed (SIGSEGV)
    code = textwrap.dedent("""
        from plume_multi.engine import jit
        from plume_multi.errors import ValidationError

        @jit.njit(cache=False, no_cpython_wrapper=True)
        def inner(x):
            return x + 1

        @jit.njit(cache=False)
        def outer(x):
            return inner(x) * 2

        assert outer(3) == 8  # compiled code calls it as before
        try:
            inner(3)
        except ValidationError as error:
            print("raised:", error)
        from plume_multi.models.plumes import PuffPlume, Puffs
        from plume_multi.models.plumes.puffs import physics
        plume = PuffPlume(Puffs(source=(10, 12)), (50, 25))
        try:
            physics._rebin(0, plume.params, plume.state)
        except ValidationError as error:
            print("raised:", error)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert len(lines) == 2 and all(line.startswith("raised: ") for line in lines)
    assert "inner: called from Python" in lines[0] and "physics._rebin: called from Python" in lines[1]
    assert "inner.py_func(...)" in lines[0]
