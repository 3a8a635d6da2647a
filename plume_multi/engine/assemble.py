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
measured no faster); a structural property is the dimension (``Layout.dims``: a 3-D driver
carries the third coordinate everywhere, with the models' ``kernels_3d``; the 2-D driver has no
trace of it). The driver's arguments are, in order: ``PP, PS`` (plume parameters and
state), ``AP, AS`` (body), ``RP`` (reward), then ``SP0, SS0, IP0, SP1, SS1, IP1, ...`` (sensors:
parameters, state, and the wrapped sensor's parameters for a wrapper, else ``()``), then the core
arrays (``CORE_ARGS``).

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
from dataclasses import dataclass, field

import numpy as np

from ..errors import ValidationError
from .jit import CACHE_DIR, cache_failed, compiled_in_memory, module_files, prune, without_source_file

__all__ = ["Layout", "FunctionRef", "assemble", "function_ref", "CORE_ARGS", "C_N_AGENTS", "C_WIDTH", "C_HEIGHT",
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


@dataclass(frozen=True)
class FunctionRef:
    """A compiled function the driver imports: ``from module import name``."""

    module: str
    name: str

    def resolve(self):
        return getattr(sys.modules[self.module], self.name)


def function_ref(fn, owner: str, role: str) -> FunctionRef:
    """Where ``fn`` (a model's compiled function for ``role``) can be imported from; a
    ``ValidationError`` naming ``owner`` when it is not a module-level Numba function."""
    py_func = getattr(fn, "py_func", None)
    if py_func is None:
        raise ValidationError(f"{owner}: kernels.{role} is {fn!r}; expected a function compiled with "
                              "plume_multi.engine.jit.njit (or numba.njit), inline='always'")
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
    3 (then the functions are the models' ``kernels_3d`` and the driver passes the third
    coordinate). ``walls``: ``""`` (none: the driver has no trace
    of them), ``"cells"`` (a grid body's move into a solid cell is refused) or ``"faces"`` (a
    continuous body stops at a solid cell's face: its ``place`` role); with walls the driver takes
    ``WM, WI`` (the masks, each world's mask) after ``RP``. ``several_sources``: the plume has
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

    def __post_init__(self):
        if not self.several_sources:  # reach is never called: not part of the driver
            object.__setattr__(self, "plume", tuple((r, ref) for r, ref in self.plume if r != "reach"))

    def args(self) -> str:
        sensor_args = "".join(f"SP{k}, SS{k}, IP{k}, " for k in range(len(self.sensors)))
        walls = "WM, WI, " if self.walls else ""
        return "PP, PS, AP, AS, RP, " + walls + sensor_args + ", ".join(CORE_ARGS)

    def refs(self) -> list:
        refs = [r for _, r in self.plume + self.body + self.reward]
        for agent, world, inner in self.sensors:
            refs += [r for r in (agent, world, inner) if r is not None]
        return refs


_TEMPLATE = '''\
# Generated by plume_multi.engine.assemble. Do not edit.
{source_lines}
import numpy as np
from numba import prange

from plume_multi.engine.jit import njit
{engine_imports}
{imports}

HAS_WORLD_CODE = {has_world_code}
NEXT_STEP = {next_step}
SAME_STEP = {same_step}
PARALLEL_CHUNKS = 64
COUNT_MAX = 2147483647


@njit(no_cpython_wrapper=True)
def observe_world(b, t, seed, episode, pv, first, n_agents, {sizes}, {args}):
{columns}
    world = WorldView(b, t, first, world_done[b], seed, episode, n_agents, b * n_agents, {sizes}, pos, active)
{world_calls}


@njit(no_cpython_wrapper=True)
def reset_world(b, seeded, clear_outputs, {args}):
    """World ``b``'s new episode: start cells, the plume's and the bodies' draws. Its agents are
    observed afterwards by ``advance`` (the one place the sensors' code is compiled)."""
    n_agents = cfg[{C_N_AGENTS}]
    base = b * n_agents
    if seeded:
        world_episode[b] = 0
    else:
        world_episode[b] += 1
    seed = world_seed[b]
    episode = world_episode[b]
{draw_wall}    place_starts(b, n_agents, cfg, starts, pos, seed, episode{wall_arg})
    world_t[b] = 0
    if clear_outputs:
        world_done[b] = False
    plume_reset_world(PP, PS, b, seed, episode, pos, base, n_agents)
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
def advance(b_start, b_stop, actions, observe_only, mask, {args}):
    """Step the worlds ``b_start .. b_stop`` (each one step, or a reset where autoreset says so),
    then observe them; with ``observe_only``, only observe the worlds where ``mask`` (after a
    reset, or for ``validate``). Observations are written only here, so the sensors' code is
    compiled once per driver (pasted, not called: the step's speed)."""
    n_agents = cfg[{C_N_AGENTS}]
{load_sizes}
{columns}
    max_steps = cfg[{C_MAX_STEPS}]
    goal_d2 = fcfg[{F_GOAL_D2}]
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
            reset_world(b, no, yes, {args})
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
                {source_names} = plume_source(PP, PS, b)
            else:
                {source_names} = {source_zeros}
            for i in range(base, base + n_agents):
                if stepping:
                    if active[i]:
{move}
                        ep_length[i] = min(ep_length[i] + 1, COUNT_MAX)
{distance}
                        if {arrival}:
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
                observe_world(b, t, seed, episode, pv, first, n_agents, {sizes}, {args})
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
            reset_world(b, no, no, {args})
            stepping = no  # observe the new episode


@njit
def run(mode, mask, seed, actions, {args}):
    """The serial entry point (one compiled function for the three, so one CPython wrapper).

    ``mode`` 0: check every action, then advance every world one step; returns -1, or the index
    of the first invalid action (then nothing changed). ``mode`` 1: reset the worlds where
    ``mask``: seeded ``seed + b`` (episode 0) when ``seed >= 0``, else each world's next episode.
    ``mode`` 2: write every agent's observation of the current state into ``obs`` (where ``mask``;
    ``Simulator.validate`` runs it on copies of the state).
    """
    n_worlds = world_t.shape[0]
    yes = seed == seed  # a run-time True (see ``advance``)
    no = not yes
    # a run-time 0: a literal 0 types ``advance`` apart from ``step_parallel``'s call, which then
    # compiled all of it a second time
    first = n_worlds - n_worlds
    if mode == 0:
        bad = body_first_invalid(AP, actions)
        if bad >= 0:
            return bad
        advance(first, n_worlds, actions, no, mask, {args})
        return -1
    if mode == 1:
        for b in range(n_worlds):
            if mask[b]:
                if seed >= 0:
                    world_seed[b] = seed + b
                reset_world(b, seed >= 0, yes, {args})
    advance(first, n_worlds, actions, yes, mask, {args})
    return -1


@njit(parallel=True)
def step_parallel(actions, mask, {args}):
    """``step`` with chunks of worlds on threads; each world writes only its own rows, so the
    result is identical to ``step``'s whatever the thread count."""
    bad = body_first_invalid(AP, actions)
    if bad >= 0:
        return bad
    n_worlds = world_t.shape[0]
    chunks = min(PARALLEL_CHUNKS, n_worlds)
    observe_only = n_worlds < 0  # a run-time False (see ``advance``)
    for c in prange(chunks):
        advance(c * n_worlds // chunks, (c + 1) * n_worlds // chunks, actions, observe_only, mask, {args})
    return -1
'''

_loaded: dict = {}

# The agent loops' sensor block (pasted where the template says: a call of an inlined function with
# more than 30 arguments is one Numba cannot inline), then one line per sensor.
_AGENT_VIEW = [
    "ax, ay = body_location(AP, AS, i, pos)",
    "agent = AgentView(i, b, i - base, t, first, active[i], seed, episode, ax, ay, pos[i, 0], pos[i, 1],",
    "                  body_heading(AP, AS, i), width, height, n_agents, body_heading_index(AP, AS, i))",
]
_AGENT_VIEW_3D = [
    "ax, ay, az = body_location(AP, AS, i, pos)",
    "agent = AgentView(i, b, i - base, t, first, active[i], seed, episode, ax, ay, az, pos[i, 0], pos[i, 1],",
    "                  pos[i, 2], body_heading(AP, AS, i), width, height, depth, n_agents,",
    "                  body_heading_index(AP, AS, i))",
]


# A body's move: plain, or among walls (Layout.walls): a grid body's move into a solid cell is
# refused (its cell put back); a continuous body is stopped at the face of the first solid cell
# on its straight path (engine/walls.py) and placed there by its ``place`` role. ``wall`` is the
# index of the world's mask in ``WM``: a view ``WM[wall]`` would be reference-counted wherever it
# goes (3x slower).
_MOVE = "body_move(AP, AS, i, actions, pos, {sizes}, seed, episode, t)"
_MOVE_CELLS = {2: """\
ox = pos[i, 0]
oy = pos[i, 1]
body_move(AP, AS, i, actions, pos, {sizes}, seed, episode, t)
if WM[wall, pos[i, 1], pos[i, 0]]:
    pos[i, 0] = ox
    pos[i, 1] = oy""", 3: """\
ox = pos[i, 0]
oy = pos[i, 1]
oz = pos[i, 2]
body_move(AP, AS, i, actions, pos, {sizes}, seed, episode, t)
if WM[wall, pos[i, 2], pos[i, 1], pos[i, 0]]:
    pos[i, 0] = ox
    pos[i, 1] = oy
    pos[i, 2] = oz"""}
_MOVE_FACES = {2: """\
wx0, wy0 = body_location(AP, AS, i, pos)
body_move(AP, AS, i, actions, pos, {sizes}, seed, episode, t)
wx1, wy1 = body_location(AP, AS, i, pos)
wx, wy, hit = stop_at_walls(WM, wall, wx0, wy0, wx1, wy1)
if hit:
    body_place(AP, AS, i, pos, wx, wy)""", 3: """\
wx0, wy0, wz0 = body_location(AP, AS, i, pos)
body_move(AP, AS, i, actions, pos, {sizes}, seed, episode, t)
wx1, wy1, wz1 = body_location(AP, AS, i, pos)
wx, wy, wz, hit = stop_at_walls3(WM, wall, wx0, wy0, wz0, wx1, wy1, wz1)
if hit:
    body_place(AP, AS, i, pos, wx, wy, wz)"""}


def _walls(walls: str, dims: int, sizes: str) -> dict:
    """The parts of the driver's text that walls change (nothing without walls)."""
    if not walls:
        return dict(draw_wall="", load_wall="", wall_arg="", move=" " * 24 + _MOVE.format(sizes=sizes),
                    walls_imports="")
    move = (_MOVE_CELLS if walls == "cells" else _MOVE_FACES)[dims].format(sizes=sizes)
    suffix = "3" if dims == 3 else ""
    return dict(
        draw_wall="    WI[b] = wall_mask_index(seed, episode, WM.shape[0])\n    wall = WI[b]\n",
        load_wall="            wall = WI[b]\n", wall_arg=", WM, wall", move=textwrap.indent(move, " " * 24),
        walls_imports=(f"from plume_multi.engine.walls import mask_index as wall_mask_index, "
                       f"place_starts_in_walls{suffix} as place_starts, stop_at_walls{suffix}\n"),
    )


def _dimension(dims: int) -> dict:
    """The parts of the driver's text that name coordinates: 2-D's as they always were, 3-D's with
    the third coordinate (the 3-D records imported under the 2-D names, so the rest is shared)."""
    if dims == 2:
        return dict(
            engine_imports="from plume_multi.engine.api import AgentView, InnerSensor, PlumeView, WorldView, no_sensor\n"
                           "from plume_multi.engine.shared import place_starts",
            sizes="width, height",
            load_sizes=f"    width = cfg[{C_WIDTH}]\n    height = cfg[{C_HEIGHT}]",
            source_names="sx, sy",
            source_zeros="0.0, 0.0",
            distance="\n".join(" " * 16 + line for line in ("ax, ay = body_location(AP, AS, i, pos)",
                                                            "dx = ax - sx", "dy = ay - sy")),
            d2="dx * dx + dy * dy",
            agent_view=_AGENT_VIEW,
        )
    return dict(
        engine_imports="from plume_multi.engine.api import AgentView3 as AgentView, InnerSensor, PlumeView, "
                       "WorldView3 as WorldView, no_sensor\n"
                       "from plume_multi.engine.shared import place_starts3 as place_starts",
        sizes="width, height, depth",
        load_sizes=f"    width = cfg[{C_WIDTH}]\n    height = cfg[{C_HEIGHT}]\n    depth = cfg[{C_DEPTH}]",
        source_names="sx, sy, sz",
        source_zeros="0.0, 0.0, 0.0",
        distance="\n".join(" " * 16 + line for line in ("ax, ay, az = body_location(AP, AS, i, pos)",
                                                        "dx = ax - sx", "dy = ay - sy", "dz = az - sz")),
        d2="dx * dx + dy * dy + dz * dz",
        agent_view=_AGENT_VIEW_3D,
    )


def _arrival(layout: Layout, dimension: dict) -> dict:
    """How an agent that moved arrives. One source: its distance to the world's source; the first
    arrival is the one that counts for a team. Several (2-D): the plume's ``reach`` says whether it
    reached one (and marks it found), and a team's search ends when every source is found."""
    d2 = dimension.pop("d2")
    if not layout.several_sources:
        return dict(arrival=f"{d2} <= goal_d2", arrived="True")
    if layout.dims != 2:
        raise ValidationError(f"{layout.label}: several sources per world are 2-D; the scenario is {layout.dims}-D")
    lines = ("ax, ay = body_location(AP, AS, i, pos)",
             "reached, everything = plume_reach(PP, PS, b, ax, ay, goal_d2, team)")
    return dict(distance="\n".join(" " * 16 + line for line in lines), arrival="reached",
                arrived="arrived or everything")


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
    walls = _walls(layout.walls, layout.dims, dimension["sizes"])
    walls_imports = walls.pop("walls_imports")
    if layout.walls:  # the walled view under the plain one's name, and the start cells among walls
        head, _ = dimension["engine_imports"].split("\nfrom plume_multi.engine.shared")
        dimension["engine_imports"] = head.replace("PlumeView,", "WalledPlumeView as PlumeView,") + "\n" + \
            walls_imports.rstrip("\n")
    dimension.update(_arrival(layout, dimension))
    # the step's per-agent lines sit in ``advance`` under ``if stepping:`` and ``if active[i]:``
    dimension["distance"] = textwrap.indent(dimension["distance"], " " * 8)
    agent_block = "\n".join(dimension.pop("agent_view") + agent_calls) if agent_calls else "pass"
    modules = [sys.modules[ref.module] for ref in layout.refs()]
    files = sorted(set(module_files(modules).values()))
    source_lines = [f"# source: {f}" for f in files] + [f"# code: {_fingerprint(ref.resolve())}"
                                                          for ref in layout.refs() if _fileless(ref)]
    return _TEMPLATE.format(
        source_lines="\n".join(source_lines), imports="\n".join(imports),
        next_step=AUTORESET_NEXT_STEP, same_step=AUTORESET_SAME_STEP, args=layout.args(),
        columns="\n".join(f"    col{k} = cols[{k}]" for k in range(len(layout.sensors))),
        observe_agent=textwrap.indent(agent_block, " " * 16),
        world_calls="\n".join(world_calls) or "    pass",
        has_world_code=bool(world_calls), C_N_AGENTS=C_N_AGENTS, C_AUTORESET=C_AUTORESET, C_TEAM=C_TEAM,
        C_MAX_STEPS=C_MAX_STEPS, F_GOAL_D2=F_GOAL_D2, **dimension, **walls,
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
    point) and ``step_parallel(actions, mask, *args)``, ``args`` in ``Layout.args()`` order. Nothing is compiled
    here: each entry point compiles (or loads from the cache) at its first use.
    """
    # the functions themselves are part of the key: a model redefined in a running session (a
    # notebook cell run again) is a new function, and gets a new driver
    key = (layout, tuple(id(ref.resolve()) for ref in layout.refs()))
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
