"""Assemble the fused step and reset kernels of one combination of models.

The engine's step is one compiled loop over worlds and agents. Which plume, body, sensors and
reward it runs is known only at run time, and a loop that switches between every model at run
time is 2-3x slower than one written for the models at hand. So for each combination of model
*kinds* this module writes a small Python module (the *driver*) that imports the chosen models'
compiled functions by name (their ``kernels`` records, ``plume_multi.models.base``) and calls
them; Numba inlines them, so it runs as fast as a hand-written loop, and caches it. The driver's
text names functions only: no model hands it source code.

Numbers (grid size, agents, parameters, column offsets) are arguments, so they never change the
driver and never recompile it (one agent per world included: a driver specialized to it was
measured no faster). The dimension is a structural property (``Layout.dims``): the driver's text
builds the grid's ``shape`` and each agent's ``cell`` as tuples of that length, and the models'
functions, the same for every dimension, compile for it (``engine/tuples.py``). One template
serves both.

The driver's entry points take two records (``Simulator`` builds them): ``models``, a ``Models``
(each model's parameters and state: ``ModelArgs`` for the plume and the body, the reward's
parameters, a ``SensorArgs`` per sensor), and ``core``, a ``Core`` of the world's arrays
(``CORE_FIELDS``). They arrive as plain tuples (``entry_args``: Numba types a named tuple
argument in Python at every call, a plain one in C) and the entry points build the records again
(``models_of``, ``core_of``, and the named tuple classes of ``Layout.records``); ``step_parallel``
builds them inside its parallel loop, which refuses a record of records. The core and the models'
large records are held by reference (``as_ref``, ``engine/refs.py``; ``BY_REFERENCE_FIELDS``): one
pointer and one reference count, where a named tuple, a value, counted every array inside it at
each copy and passed every field to each call that is not inlined.

The driver reads the records' members by name (``models.plume.state``), never by unpacking them
(``PP, PS = models.plume``): Numba 0.68's alias analysis does not follow an unpacked tuple, and the
dead-code elimination that runs after an overload is inlined (``is_on``) then dropped a model's
stores into its state (a movie's start frames were never written).

Its compiled code is cached keyed on the source of every module it reaches (``jit.py``): editing
a model recompiles exactly the drivers that use it.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import marshal
import os
import sys
import textwrap
import types
import uuid
from collections import namedtuple
from dataclasses import dataclass, field

import numpy as np

from ..errors import ValidationError
from .refs import as_ref
from .jit import CACHE_DIR, cache_failed, compiled_in_memory, module_files, njit, prune, without_source_file

__all__ = ["Layout", "FunctionRef", "assemble", "function_ref", "CORE_ARGS", "CORE_FIELDS", "Core", "Models", "ModelArgs",
           "SensorArgs", "model_args", "sensor_args", "models_of", "core_of", "entry_args", "records_of", "C_N_AGENTS", "C_WIDTH", "C_HEIGHT",
           "C_MAX_STEPS", "C_START_MODE", "C_X0", "C_Y0", "C_X1", "C_Y1", "C_AUTORESET", "C_TEAM", "C_DEPTH", "C_Z0",
           "C_Z1", "CFG_SIZE",
           "F_GOAL_D2", "FCFG_SIZE", "AUTORESET_DISABLED", "AUTORESET_NEXT_STEP", "AUTORESET_SAME_STEP",
           "START_DRAW", "START_FIXED"]

C_N_AGENTS, C_WIDTH, C_HEIGHT, C_MAX_STEPS, C_START_MODE, C_X0, C_Y0, C_X1, C_Y1, C_AUTORESET, C_TEAM = range(11)
C_DEPTH, C_Z0, C_Z1 = 11, 12, 13  # read by 3-D drivers only
CFG_SIZE = 14
F_GOAL_D2 = 0
FCFG_SIZE = 1
START_DRAW, START_FIXED = 0, 1
AUTORESET_DISABLED, AUTORESET_NEXT_STEP, AUTORESET_SAME_STEP = 0, 1, 2

CORE_ARGS = ("cols", "cfg", "fcfg", "starts", "pos", "active", "terminated", "truncated", "obs", "reward",
             "ep_length", "world_t", "world_done", "world_episode", "world_seed", "final_obs", "final_length")
# the core arrays, then the scenario's wall masks (K, [D,] H, W) bool and each world's mask (B,)
# int64 (empty arrays without walls: a driver without walls never reads them)
CORE_FIELDS = CORE_ARGS + ("walls", "wall_index")

Core = namedtuple("Core", CORE_FIELDS)
"""The world's arrays as the driver receives them (``CORE_FIELDS``; ``Simulator._core``)."""
ModelArgs = namedtuple("ModelArgs", "params state")
"""A model's parameters (``params()``) and state (``state_tuple()``), as the driver receives them."""
SensorArgs = namedtuple("SensorArgs", "params state inner")
"""A sensor's parameters and state, and the wrapped sensor's parameters (a wrapper's; else ``()``)."""
Models = namedtuple("Models", "plume body reward sensors")
"""Every model of a driver: ``plume``, ``body`` (``ModelArgs``), ``reward`` (its parameters),
``sensors`` (a tuple of ``SensorArgs``)."""


@njit(inline="always")
def model_args(params, state):
    """``ModelArgs(params, state)`` (inside a parallel loop, which cannot build a record itself)."""
    return ModelArgs(params, state)


@njit(inline="always")
def sensor_args(params, state, inner):
    """``SensorArgs(params, state, inner)`` (as ``model_args``)."""
    return SensorArgs(params, state, inner)


@njit(inline="always")
def models_of(plume, body, reward, sensors):
    """``Models(plume, body, reward, sensors)`` (as ``model_args``)."""
    return Models(plume, body, reward, sensors)


@njit(inline="always")
def core_of(arrays):
    """``Core(*arrays)``, held by reference: the entry points receive the core as a plain tuple
    (``entry_args``)."""
    return as_ref(Core(*arrays))


@dataclass(frozen=True)
class FunctionRef:
    """A compiled function the driver imports: ``from module import name``."""

    module: str
    name: str

    def resolve(self):
        return getattr(sys.modules[self.module], self.name)


# The roles whose signature took separate coordinates before they were tuples: a model written
# for those is refused by name before anything compiles.
SIGNATURES = {
    "source": "source(P, S, b, shape)", "sample_cell": "sample_cell(P, S, pw, cell)",
    "sample_at": "sample_at(P, S, pw, point)", "wind_at": "wind_at(P, S, pw, point)",
    "reach": "reach(P, S, b, point, goal_d2, team)", "move": "move(P, S, i, actions, pos, shape, seed, episode, t)",
    "place": "place(P, S, i, pos, point)",
}


def function_ref(fn, owner: str, role: str) -> FunctionRef:
    """Where ``fn`` (a model's compiled function for ``role``) can be imported from; a
    ``ValidationError`` naming ``owner`` when it is not a module-level Numba function, or takes
    another number of arguments than its role's signature (``SIGNATURES``)."""
    py_func = getattr(fn, "py_func", None)
    if py_func is None:
        raise ValidationError(f"{owner}: kernels.{role} is {fn!r}; expected a function compiled with "
                              "plume_multi.engine.jit.njit (or numba.njit), inline='always'")
    wanted = SIGNATURES.get(role)
    code = py_func.__code__
    if wanted is not None and code.co_argcount != wanted.count(",") + 1:
        got = ", ".join(code.co_varnames[:code.co_argcount])
        raise ValidationError(f"{owner}: kernels.{role} takes ({got}); expected {wanted}, coordinates as tuples "
                              "(docs/developing-models.md)")
    module, name = py_func.__module__, py_func.__qualname__
    if sys.modules.get(module) is None or getattr(sys.modules[module], name, None) is not fn:
        raise ValidationError(f"{owner}: kernels.{role} is {name} of {module}; expected a function defined at the "
                              "top level of its module (the step driver imports it by name)")
    return FunctionRef(module, name)


@dataclass(frozen=True)
class Layout:
    """What a driver is generated for: every model's compiled functions by role.

    ``plume``, ``body``, ``reward``: ``((role, FunctionRef), ...)``. ``sensors``: per sensor
    ``(agent, world, inner)``, each a ``FunctionRef`` or None (nothing to call). ``dims``: 2, or
    3 (the length of the driver's ``shape``, cells and points; the models' functions are the
    same). ``walls``: ``""`` (none: the driver has no trace of them), ``"cells"`` (a grid body's
    move into a solid cell is refused) or ``"faces"`` (a continuous body stops at a solid cell's
    face: its ``place`` role); with walls the driver reads ``core.walls`` and
    ``core.wall_index``. ``records``: per slot of ``_RECORD_SLOTS`` (the plume's parameters and state,
    the body's, the reward's parameters, then each sensor's parameters, state and inner parameters),
    the ``FunctionRef`` of its named tuple class, or None for a plain tuple. ``several_sources``: the plume has
    several sources per world (2-D), so an arrival is its ``reach`` role's answer (else the distance
    to its ``source``, and ``reach`` is not imported: such a driver is the one-source driver, byte
    for byte). ``label``: the models' names, for messages.
    """

    plume: tuple
    body: tuple
    reward: tuple
    sensors: tuple
    label: str = field(default="", compare=False)  # for messages only: models of one kind share a driver
    dims: int = 2
    walls: str = ""
    several_sources: bool = False
    records: tuple = ()

    def __post_init__(self):
        if not self.several_sources:  # reach is never called: not part of the driver
            object.__setattr__(self, "plume", tuple((r, ref) for r, ref in self.plume if r != "reach"))

    def refs(self) -> list:
        refs = [r for _, r in self.plume + self.body + self.reward]
        for agent, world, inner in self.sensors:
            refs += [r for r in (agent, world, inner) if r is not None]
        return refs


_ADVANCE_BODY = '''\
    PP = models.plume.params
    PS = models.plume.state
    AP = models.body.params
    AS = models.body.state
    RP = models.reward
{unpack_sensors}
    cols = core.cols
    cfg = core.cfg
    pos = core.pos
    active = core.active
    terminated = core.terminated
    truncated = core.truncated
    obs = core.obs
    reward = core.reward
    ep_length = core.ep_length
    world_t = core.world_t
    world_done = core.world_done
    world_episode = core.world_episode
    world_seed = core.world_seed
    final_obs = core.final_obs
    final_length = core.final_length
{load_walls}    n_agents = cfg[{C_N_AGENTS}]
    shape = {shape}
{columns}
    max_steps = cfg[{C_MAX_STEPS}]
    goal_d2 = core.fcfg[{F_GOAL_D2}]
    mode = cfg[{C_AUTORESET}]
    team = cfg[{C_TEAM}] != 0
    # run-time booleans: a literal True or False in a call would type it anew (Literal[bool]),
    # compiling reset_world and observe_world once per literal (4 s each for puffs)
    yes = b_start >= 0
    no = not yes
    for b in range(b_start, b_stop):
        if observe_only:
            if not mask[b]:
                continue
            stepping = no
        elif mode == NEXT_STEP and world_done[b]:
            reset_world(b, no, yes, models, core)
            stepping = no
        else:
            stepping = yes
        base = b * n_agents
        while True:  # twice when a step ends the episode and SAME_STEP resets the world at once
            if stepping:
                t = min(np.int64(world_t[b]) + 1, COUNT_MAX)  # saturates: never wraps
                world_t[b] = t
            else:
                t = np.int64(world_t[b])
            trunc = t >= max_steps
            seed = world_seed[b]
            episode = world_episode[b]
            if stepping:
                plume_advance(PP, PS, b, t, seed, episode)
{load_wall}            pv = PlumeView(PP, PS, plume_view(PP, PS, b, t){wall_arg})
            first = t == 0  # after a reset (a step's t is at least 1)
            arrived = False
            n_active = 0
            if stepping:
                src = plume_source(PP, PS, b, shape)
            else:
                src = {source_zeros}
            for i in range(base, base + n_agents):
                if stepping:
                    if active[i]:
{move}
                        ep_length[i] = min(ep_length[i] + 1, COUNT_MAX)
                        point = body_location(AP, AS, i, {cell})
{arrival_test}
                            reward[i] = reward_goal(RP)
                            active[i] = False
                            terminated[i] = True
                            arrived = {arrived}
                        else:
                            reward[i] = reward_step(RP)
                            terminated[i] = False
                    else:
                        reward[i] = 0.0
                        terminated[i] = True
                    truncated[i] = trunc
                    n_active += active[i]
{observe_agent}
            if team and arrived:
                # the first arrival ends the episode of every agent of the world; all share the reward
                for i in range(base, base + n_agents):
                    if active[i]:
                        active[i] = False
                        terminated[i] = True
                        reward[i] = reward_goal(RP)
                n_active = 0
            if HAS_WORLD_CODE:  # a compile-time constant: the call is gone when no sensor needs it
                observe_world(b, t, first, pv, models, core)
            if not stepping:
                break
            done = trunc or n_active == 0
            world_done[b] = done
            if not (mode == SAME_STEP and done):
                break
            for i in range(base, base + n_agents):
                for d in range(obs.shape[1]):
                    final_obs[i, d] = obs[i, d]
                final_length[i] = ep_length[i]
            reset_world(b, no, no, models, core)
            stepping = no  # observe the new episode
'''

_TEMPLATE = '''\
# Generated by plume_multi.engine.assemble. Do not edit.
{source_lines}
import numpy as np
from numba import prange

from plume_multi.engine.jit import njit
from plume_multi.engine.api import AgentView, InnerSensor, {plume_view}, WorldView, no_sensor
from plume_multi.engine.assemble import core_of, model_args, models_of, sensor_args
from plume_multi.engine.tuples import put_row, squared_distance
from plume_multi.engine.refs import as_ref
{engine_imports}
{imports}
{record_imports}

HAS_WORLD_CODE = {has_world_code}
NEXT_STEP = {next_step}
SAME_STEP = {same_step}
PARALLEL_CHUNKS = 64
COUNT_MAX = 2147483647{record_helpers}


@njit(no_cpython_wrapper=True)
def observe_world(b, t, first, pv, models, core):
    """The per-world sensors of world ``b`` (after all its agents moved)."""
{unpack_sensors}
    cols = core.cols
    cfg = core.cfg
    obs = core.obs
    pos = core.pos
    n_agents = cfg[{C_N_AGENTS}]
    shape = {shape}
{columns}
    world = WorldView(b, t, first, core.world_done[b], core.world_seed[b], core.world_episode[b], n_agents,
                      b * n_agents, shape, pos, core.active, shape[0], shape[1])
{world_calls}


@njit(no_cpython_wrapper=True)
def reset_world(b, seeded, clear_outputs, models, core):
    """World ``b``'s new episode: start cells, the plume's and the bodies' draws. Its agents are
    observed afterwards by ``advance`` (the one place the sensors' code is compiled)."""
    PP = models.plume.params
    PS = models.plume.state
    AP = models.body.params
    AS = models.body.state
    cfg = core.cfg
    pos = core.pos
    world_episode = core.world_episode
    n_agents = cfg[{C_N_AGENTS}]
    shape = {shape}
    base = b * n_agents
    if seeded:
        world_episode[b] = 0
    else:
        world_episode[b] += 1
    seed = core.world_seed[b]
    episode = world_episode[b]
{draw_wall}    place_starts(b, cfg, core.starts, pos, shape, seed, episode{start_wall_arg})
    core.world_t[b] = 0
    if clear_outputs:
        core.world_done[b] = False
    plume_reset_world(PP, PS, b, seed, episode, pos, base, n_agents)
    active = core.active
    ep_length = core.ep_length
    terminated = core.terminated
    truncated = core.truncated
    reward = core.reward
    for n in range(n_agents):
        i = base + n
        active[i] = True
        ep_length[i] = 0
        if clear_outputs:
            terminated[i] = False
            truncated[i] = False
            reward[i] = 0.0
        body_reset_agent(AP, AS, i, n, pos, seed, episode)


@njit(no_cpython_wrapper=True)
def advance(b_start, b_stop, actions, observe_only, mask, models, core):
    """Step the worlds ``b_start .. b_stop`` (each one step, or a reset where autoreset says so),
    then observe them; with ``observe_only``, only observe the worlds where ``mask`` (after a
    reset, or for ``validate``). Observations are written only here, so the sensors' code is
    compiled once per driver (pasted, not called: the step's speed)."""
{advance_body}


@njit
def run(mode, mask, seed, actions, slots, core_arrays):
    """The serial entry point (one compiled function for the three, so one CPython wrapper).

    ``mode`` 0: check every action, then advance every world one step; returns -1, or the index
    of the first invalid action (then nothing changed). ``mode`` 1: reset the worlds where
    ``mask``: seeded ``seed + b`` (episode 0) when ``seed >= 0``, else each world's next episode.
    ``mode`` 2: write every agent's observation of the current state into ``obs`` (where ``mask``;
    ``Simulator.validate`` runs it on copies of the state). ``slots`` and ``core_arrays``: plain
    tuples (``entry_args``), the records built here.

    ``advance``'s body is pasted here, not called: every compiled function's machine code is
    optimised and emitted again in each caller it is linked into, so a call of ``advance`` made
    LLVM process the whole step twice (3 s of a puff plume's 27 s cold start; the step runs the
    same code either way). ``run_threaded`` calls ``advance``, which ``step_parallel`` shares.
    """
{unpack_plain}
    models = models_of(model_args({PP}, {PS}), model_args({AP}, {AS}), {RP}, ({sensor_records}))
    core = core_of(core_arrays)
    n_worlds = core.world_t.shape[0]
    yes = seed == seed  # a run-time True (see ``advance``)
    no = not yes
    if mode == 0:
        bad = body_first_invalid(models.body.params, actions)
        if bad >= 0:
            return bad
    elif mode == 1:
        world_seed = core.world_seed
        for b in range(n_worlds):
            if mask[b]:
                if seed >= 0:
                    world_seed[b] = seed + b
                reset_world(b, seed >= 0, yes, models, core)
    observe_only = mode != 0
    b_start = n_worlds - n_worlds  # a run-time 0 (see ``run_threaded``)
    b_stop = n_worlds
{advance_body}
    return -1


@njit
def run_threaded(mode, mask, seed, actions, slots, core_arrays):
    """``run``, calling ``advance``: the entry point of a threaded simulator, whose
    ``step_parallel`` calls ``advance`` too (so its body compiles once)."""
{unpack_plain}
    models = models_of(model_args({PP}, {PS}), model_args({AP}, {AS}), {RP}, ({sensor_records}))
    core = core_of(core_arrays)
    n_worlds = core.world_t.shape[0]
    yes = seed == seed  # a run-time True (see ``advance``)
    no = not yes
    # a run-time 0: a literal 0 types ``advance`` apart from ``step_parallel``'s call, which then
    # compiled all of it a second time
    first = n_worlds - n_worlds
    if mode == 0:
        bad = body_first_invalid(models.body.params, actions)
        if bad >= 0:
            return bad
        advance(first, n_worlds, actions, no, mask, models, core)
        return -1
    if mode == 1:
        world_seed = core.world_seed
        for b in range(n_worlds):
            if mask[b]:
                if seed >= 0:
                    world_seed[b] = seed + b
                reset_world(b, seed >= 0, yes, models, core)
    advance(first, n_worlds, actions, yes, mask, models, core)
    return -1


@njit(parallel=True)
def step_parallel(actions, mask, slots, core_arrays):
    """``step`` with chunks of worlds on threads; each world writes only its own rows, so the
    result is identical to ``step``'s whatever the thread count. (The records are built in the
    parallel loop: it refuses a record of records, and one it did not build.)"""
{unpack_plain}
    bad = body_first_invalid({AP}, actions)
    if bad >= 0:
        return bad
    n_worlds = core_arrays[{world_t}].shape[0]
    chunks = min(PARALLEL_CHUNKS, n_worlds)
    observe_only = n_worlds < 0  # a run-time False (see ``advance``)
    for c in prange(chunks):
        chunk = models_of(model_args({PP}, {PS}), model_args({AP}, {AS}), {RP}, ({sensor_records}))
        advance(c * n_worlds // chunks, (c + 1) * n_worlds // chunks, actions, observe_only, mask, chunk,
                core_of(core_arrays))
    return -1
'''

_TEMPLATE = _TEMPLATE.replace("{advance_body}", _ADVANCE_BODY)

_loaded: dict = {}

# The agent loops' sensor block (pasted where the template says: a call of an inlined function with
# more than 30 arguments is one Numba cannot inline), then one line per sensor.
_AGENT_VIEW = [
    "cell = {cell}",
    "point = body_location(AP, AS, i, cell)",
    "agent = AgentView(i, b, i - base, t, first, active[i], seed, episode, point, cell, shape,",
    "                  body_heading(AP, AS, i), n_agents, body_heading_index(AP, AS, i), point[0], point[1],",
    "                  cell[0], cell[1], shape[0], shape[1])",
]


# A body's move: plain, or among walls (Layout.walls): a grid body's move into a solid cell is
# refused (its cell put back); a continuous body is stopped at the face of the first solid cell
# on its straight path (engine/walls.py) and placed there by its ``place`` role. ``wall`` is the
# index of the world's mask in ``WM``: a view ``WM[wall]`` would be reference-counted wherever it
# goes (3x slower).
_MOVE = "body_move(AP, AS, i, actions, pos, shape, seed, episode, t)"
_MOVE_CELLS = """\
old = {cell}
body_move(AP, AS, i, actions, pos, shape, seed, episode, t)
if solid_cell(WM, wall, {cell}):
    put_row(pos, i, old)"""
_MOVE_FACES = """\
start = body_location(AP, AS, i, {cell})
body_move(AP, AS, i, actions, pos, shape, seed, episode, t)
stop, hit = stop_at_walls(WM, wall, start, body_location(AP, AS, i, {cell}))
if hit:
    body_place(AP, AS, i, pos, stop)"""


def _walls(walls: str, cell: str) -> dict:
    """The parts of the driver's text that walls change (nothing without walls)."""
    if not walls:
        return dict(draw_wall="", load_wall="", load_walls="", wall_arg="", start_wall_arg="", move=" " * 24 + _MOVE,
                    plume_view="PlumeView", engine_imports="from plume_multi.engine.shared import place_starts")
    move = (_MOVE_CELLS if walls == "cells" else _MOVE_FACES).format(cell=cell)
    return dict(
        draw_wall="    WM = core.walls\n    WI = core.wall_index\n"
                  "    WI[b] = wall_mask_index(seed, episode, WM.shape[0])\n    wall = WI[b]\n",
        load_walls="    WM = core.walls\n    WI = core.wall_index\n",
        load_wall="            wall = WI[b]\n", wall_arg=", WM, wall", start_wall_arg=", (WM, wall)",
        move=textwrap.indent(move, " " * 24), plume_view="WalledPlumeView as PlumeView",
        engine_imports="from plume_multi.engine.walls import mask_index as wall_mask_index, "
                       "place_starts_in_walls as place_starts, solid_cell, stop_at_walls",
    )


def _dimension(dims: int) -> dict:
    """The parts of the driver's text that are as long as the dimension: the grid's shape, an
    agent's cell, a source before the first step."""
    sides = (f"cfg[{C_WIDTH}]", f"cfg[{C_HEIGHT}]", f"cfg[{C_DEPTH}]")[:dims]
    return dict(shape="(" + ", ".join(sides) + ")",
                cell="(" + ", ".join(f"pos[i, {c}]" for c in range(dims)) + ")",
                source_zeros="(" + ", ".join("0.0" for _ in range(dims)) + ")")


_RECORD_SLOTS = ("PP", "PS", "AP", "AS", "RP")  # then SPk, SSk, IPk per sensor k

# A model's named record of more fields than this is held by reference in the driver (``as_ref``),
# a smaller one by value; the core always by reference. A record by value costs at every copy and
# call (each array counted, each field passed): a puff plume's 48 parameters and 26 state arrays
# were most of its driver's code. One held by reference costs at every read instead (a load through
# a pointer, and an array's count): with every named record so held, the default step at 64 agents
# per world ran 6 % slower (its body's move table, read per agent); with the large ones alone, no
# slower (docs/benchmarks.md).
BY_REFERENCE_FIELDS = 16


def _record_slots(n_sensors: int) -> list:
    """The names of the records of a driver of ``n_sensors`` sensors, in ``Layout.records``' order."""
    return list(_RECORD_SLOTS) + [f"{kind}{k}" for k in range(n_sensors) for kind in ("SP", "SS", "IP")]


def _slot_values(models) -> list:
    """The records of ``models`` (a ``Models``) in ``_record_slots``' order."""
    values = [models.plume.params, models.plume.state, models.body.params, models.body.state, models.reward]
    for sensor in models.sensors:
        values += [sensor.params, sensor.state, sensor.inner]
    return values


def entry_args(models, core) -> tuple:
    """The last two arguments of the entry points ``run`` and ``step_parallel``: ``models``' records
    (``_record_slots``' order) and ``core``'s arrays, as plain tuples; the driver builds the named
    ones again. Numba types a plain tuple's arguments in C at every call, a named tuple's in
    Python: passed as records, ``Models`` and ``Core`` made the default step at 64 agents 1.8x
    slower (26 against 14 us a call)."""
    return tuple(tuple(v) if hasattr(type(v), "_fields") else v for v in _slot_values(models)), tuple(core)


def records_of(models) -> tuple:
    """``Layout.records`` of ``models`` (a ``Models``): the class of each named tuple, as a
    ``FunctionRef`` (where the driver imports it from), None for a plain tuple."""
    out = []
    for value in _slot_values(models):
        cls = type(value)
        out.append(FunctionRef(cls.__module__, cls.__qualname__) if hasattr(cls, "_fields") else None)
    return tuple(out)


def _threaded(layout: Layout) -> dict:
    """``step_parallel``'s parts: every record read as a plain tuple before the parallel loop, and
    the named ones built again in it (``_as_<slot>``, one per named tuple class; a large one held by
    reference)."""
    slots = _record_slots(len(layout.sensors))
    records = layout.records or (None,) * len(slots)
    unpack, rebuild, helpers, names = [], [], [], {}
    for index, (slot, ref) in enumerate(zip(slots, records)):
        unpack.append(f"    {slot} = slots[{index}]")
        names[slot] = slot if ref is None else f"_as_{slot}({slot})"
        if ref is not None:
            rebuild.append(f"from {ref.module} import {ref.name} as _{slot}_record")
            record = f"_{slot}_record(*t)"
            held = f"as_ref({record})" if len(ref.resolve()._fields) > BY_REFERENCE_FIELDS else record
            helpers.append(f"\n\n@njit(inline=\"always\")\ndef _as_{slot}(t):\n    return {held}")
    return dict(unpack_plain="\n".join(unpack), world_t=CORE_FIELDS.index("world_t"), record_imports="\n".join(rebuild), record_helpers="".join(helpers),
                sensor_records="".join(f"sensor_args({names[f'SP{k}']}, {names[f'SS{k}']}, {names[f'IP{k}']}), "
                                       for k in range(len(layout.sensors))),
                **{slot: names[slot] for slot in _RECORD_SLOTS})


def _arrival(layout: Layout) -> dict:
    """How an agent that moved arrives. One source: its distance to the world's source; the first
    arrival is the one that counts for a team. Several (2-D): the plume's ``reach`` says whether it
    reached one (and marks it found), and a team's search ends when every source is found."""
    if not layout.several_sources:
        return dict(arrival_test=" " * 24 + "if squared_distance(point, src) <= goal_d2:", arrived="True")
    if layout.dims != 2:
        raise ValidationError(f"{layout.label}: several sources per world are 2-D; the scenario is {layout.dims}-D")
    lines = ("reached, everything = plume_reach(PP, PS, b, point, goal_d2, team)", "if reached:")
    return dict(arrival_test="\n".join(" " * 24 + line for line in lines), arrived="arrived or everything")


def source(layout: Layout) -> str:
    """The driver module's text for ``layout``."""
    imports = []
    for prefix, roles in (("plume", layout.plume), ("body", layout.body), ("reward", layout.reward)):
        imports += [f"from {ref.module} import {ref.name} as {prefix}_{role}" for role, ref in roles]
    agent_calls, world_calls = [], []
    for k, (agent, world, inner) in enumerate(layout.sensors):
        inner_name = f"InnerSensor(no_sensor, IP{k})"
        if inner is not None:
            imports.append(f"from {inner.module} import {inner.name} as s{k}_inner")
            inner_name = f"InnerSensor(s{k}_inner, IP{k})"
        if agent is not None:
            imports.append(f"from {agent.module} import {agent.name} as s{k}_agent")
            agent_calls.append(f"s{k}_agent(SP{k}, SS{k}, obs, col{k}, pv, agent, {inner_name})")
        if world is not None:
            imports.append(f"from {world.module} import {world.name} as s{k}_world")
            world_calls.append(f"    s{k}_world(SP{k}, SS{k}, obs, col{k}, pv, world, {inner_name})")
    dimension = _dimension(layout.dims)
    walls = _walls(layout.walls, dimension["cell"])
    agent_block = "\n".join([line.format(cell=dimension["cell"]) for line in _AGENT_VIEW] + agent_calls) \
        if agent_calls else "pass"
    n_sensors = len(layout.sensors)
    modules = [sys.modules[ref.module] for ref in layout.refs()]
    files = sorted(set(module_files(modules).values()))
    source_lines = [f"# source: {f}" for f in files] + [f"# code: {_fingerprint(ref.resolve())}"
                                                          for ref in layout.refs() if _fileless(ref)]
    return _TEMPLATE.format(
        source_lines="\n".join(source_lines), imports="\n".join(imports),
        next_step=AUTORESET_NEXT_STEP, same_step=AUTORESET_SAME_STEP,
        unpack_sensors="\n".join(f"    SP{k} = models.sensors[{k}].params\n    SS{k} = models.sensors[{k}].state\n"
                                 f"    IP{k} = models.sensors[{k}].inner" for k in range(n_sensors)),
        columns="\n".join(f"    col{k} = cols[{k}]" for k in range(n_sensors)),
        observe_agent=textwrap.indent(agent_block, " " * 16),
        world_calls="\n".join(world_calls) or "    pass",
        has_world_code=bool(world_calls), C_N_AGENTS=C_N_AGENTS, C_AUTORESET=C_AUTORESET, C_TEAM=C_TEAM,
        C_MAX_STEPS=C_MAX_STEPS, F_GOAL_D2=F_GOAL_D2, **dimension, **walls, **_arrival(layout), **_threaded(layout),
    )


def _fileless(ref: FunctionRef) -> bool:
    """A function whose module has no source file the cache can hash (a notebook's, exec'd code)."""
    return without_source_file(sys.modules[ref.module])


def _fingerprint(fn) -> str:
    """A hash of what Numba compiles of a function without a source file (its ``py_func``): its
    code, nested code included, and every value it reads that Numba freezes (module globals and
    closure cells): numbers, strings, tuples, arrays (by their bytes), and the functions it calls
    (the same hash of theirs; those of modules with a source file are part of the driver's key)."""
    digest = hashlib.sha1()
    _fold(fn, digest, set())
    return digest.hexdigest()[:16]


def _fold(value, digest, seen: set) -> None:
    py_func = getattr(value, "py_func", value)
    code = getattr(py_func, "__code__", None)
    if code is None or id(py_func) in seen:
        return
    seen.add(id(py_func))
    digest.update(marshal.dumps(code))  # not repr: a nested code object's repr holds its address
    codes, names = [code], []
    while codes:
        c = codes.pop()
        names += c.co_names
        codes += [k for k in c.co_consts if isinstance(k, types.CodeType)]
    values = [(n, py_func.__globals__.get(n)) for n in sorted(set(names))]
    values += [(f"<cell {i}>", cell.cell_contents) for i, cell in enumerate(py_func.__closure__ or ())
               if _filled(cell)]
    for name, v in values:
        digest.update(f"\0{name}=".encode())
        _fold_value(v, digest, seen)


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:  # a cell not yet filled
        return False
    return True


def _fold_value(v, digest, seen: set) -> None:
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes, np.generic)):
        digest.update(repr(v).encode())
    elif isinstance(v, np.ndarray):
        digest.update(f"{v.dtype.str}{v.shape}".encode() + hashlib.sha1(np.ascontiguousarray(v).tobytes()).digest())
    elif isinstance(v, tuple):
        digest.update(f"{type(v).__qualname__}(".encode())
        for item in v:
            _fold_value(item, digest, seen)
        digest.update(b")")
    elif callable(v) and hasattr(getattr(v, "py_func", v), "__code__"):
        module = sys.modules.get(getattr(getattr(v, "py_func", v), "__module__", None) or "")
        if module is None or without_source_file(module):
            _fold(v, digest, seen)
        else:  # a function of a module with a file (or installed): its module's source is in the key
            digest.update(f"{module.__name__}.{getattr(v, '__qualname__', '')}".encode())
    else:  # a module, a class, another object: by name (a repr may hold an address)
        text = repr(v)
        digest.update((f"{type(v).__module__}.{type(v).__qualname__}" if " at 0x" in text else text).encode())


def _write_driver(folder, name: str, text: str):
    """The driver's file in the cache (written unless it holds ``text`` already), or None when it
    cannot be written (a full disk: the cache reports it once)."""
    path = folder / f"{name}.py"
    # a name of this process alone: two processes writing one temporary file could move it into
    # place half-written while the other still writes
    tmp = folder / f".{name}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp"
    try:
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            folder.mkdir(parents=True, exist_ok=True)
            tmp.write_text(text, encoding="utf-8")  # a module's source is UTF-8; its name hashes these bytes
            tmp.replace(path)  # atomic: a concurrent process never reads half a file
    except (OSError, UnicodeDecodeError) as exc:
        cache_failed(path, exc)
        with contextlib.suppress(OSError):
            tmp.unlink()
        return None
    return path


def assemble(layout: Layout):
    """The driver module for ``layout`` (written once, imported once per process).

    It has ``run(mode, mask, seed, actions, *args)`` (step, reset or observe: one compiled entry
    point; a serial simulator's), ``run_threaded`` (the same, for a threaded simulator) and
    ``step_parallel(actions, mask, *args)``, ``args`` in ``Layout.args()`` order. Nothing is compiled
    here: each entry point compiles (or loads from the cache) at its first use.
    """
    # the functions themselves are part of the key: a model redefined in a running session (a
    # notebook cell run again) is a new function, and gets a new driver
    key = (layout, tuple(id(ref.resolve()) for ref in layout.refs() + [r for r in layout.records if r is not None]))
    module = _loaded.get(key)
    if module is not None:
        return module
    if not _loaded:
        try:
            prune()
        except OSError:  # a cache another process is pruning too: nothing lost
            pass
    text = source(layout)
    digest = hashlib.sha1(text.encode()).hexdigest()[:16]
    name = f"plume_multi_driver_{digest}"
    path = None if CACHE_DIR is None else _write_driver(CACHE_DIR / "drivers", name, text)
    if path is not None:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    else:  # no writable folder, or a full one: compile from memory (Numba cannot cache it then)
        module = types.ModuleType(name)
        module.__file__ = f"<{name}>"
        sys.modules[name] = module
        with compiled_in_memory():
            exec(compile(text, module.__file__, "exec"), module.__dict__)
    _loaded[key] = module
    return module
