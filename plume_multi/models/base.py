"""What every model is made of: the base classes ``Plume``, ``Body``, ``Sensor`` and ``Reward``.

A model is a frozen dataclass whose fields are its configuration, checked in ``__post_init__``
(``ValidationError`` naming the field). Its behaviour in the step is a few compiled functions
(``@njit(inline="always")``, module-level, in the model's own file), one fixed signature per role,
listed in its family's ``Kernels`` record and given to the class as ``kernels = ...Kernels(...)``.
The step driver generated for a scenario (``plume_multi/engine/assemble.py``) imports those
functions by name and calls them; Numba inlines them, so the step runs as fast as a hand-written
loop. In every signature ``P`` is the model's parameters (``params()``: a named tuple, or a plain
tuple) and ``S`` its state (``state_tuple()``: the arrays of ``state_spec()``).

Coordinates are fixed-length tuples (``plume_multi.engine.tuples``): a ``point`` ``(x, y)`` or
``(x, y, z)`` of floats, a ``cell`` of integers, the grid's ``shape`` ``(W, H)`` or ``(W, H, D)``.
One function per role serves every dimension: Numba compiles it for the tuples' length. A model
declares the dimensions its functions serve in ``dimensions`` (a class attribute, ``(2,)`` by
default, ``(2, 3)`` for most built-in models); a scenario of another dimension refuses it by name
before anything compiles (``Model.check_dims``).

Python members (shapes, bounds, pictures) have defaults here; a model overrides what it needs.
How to write one: docs/developing-models.md.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections import namedtuple
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..checks import (CheckedArguments, check_bool, check_choice, check_heading, check_int, check_point, check_real,
                      fail, is_int, is_real)
from ..engine import api
from ..world import rows_where as _rows_where
from .units import Units

__all__ = ["Model", "StateArray", "StateWorld", "grid_high", "Plume", "Body", "Sensor", "Reward", "PlumeKernels", "BodyKernels",
           "SensorKernels", "RewardKernels", "PlumeKernels3D", "BodyKernels3D", "dims_of", "check_real", "check_int",
           "check_choice", "check_bool", "check_heading", "check_point", "is_int", "is_real", "fail"]


@dataclass(frozen=True)
class Need:
    """What a component needs of another part of the scenario.

    Attributes:
        part: ``"plume"``, ``"body"`` or ``"sensor"`` (one of the scenario's sensors must do).
        test: what the part's class must be: a class (it or a subclass), a dotted class path
            (``"plume_multi.models.sensors.belief.Belief"``, imported when first asked), a class
            attribute's name (``"oriented"``: true on the class), or a function of the class
            returning a bool.
        words: what it needs, as the error and the table say it (``"a Poisson-hit plume"``).
        why: why, in a few words (``"hits are its observation"``).
        unless: the name of a field of the needing component that, when set (not None), waives the
            need: ``sensors.Belief`` needs a Poisson-hit plume unless it is given a ``likelihood``.
    """

    part: str
    test: Any
    words: str
    why: str = ""
    unless: str = ""

    def waived_by(self, component) -> bool:
        """True when ``component`` (a model or policy object; never a class) sets the field that
        waives this need (``unless``)."""
        return bool(self.unless) and not isinstance(component, type) and getattr(component, self.unless, None) is not None

    def met_by(self, cls) -> bool:
        """True when a part of class ``cls`` meets this need."""
        if isinstance(self.test, type):
            return isinstance(cls, type) and issubclass(cls, self.test)
        if callable(self.test):
            return bool(self.test(cls))
        if "." in self.test:
            module, _, name = self.test.rpartition(".")
            return isinstance(cls, type) and issubclass(cls, getattr(importlib.import_module(module), name))
        return bool(getattr(cls, self.test, False))


@dataclass(frozen=True)
class StateArray:
    """An array a model keeps, and the range of its values.

    ``per`` is ``"agent"`` (leading size B*N) or ``"world"`` (B); ``tail`` the shape after it.
    ``low`` and ``high``: the values' bounds, inclusive, each None (unbounded), a number, or one
    number per entry of the last axis (``high=(W - 1, H - 1)`` for positions ``(x, y)``: the grid's
    own shape, so a 3-D grid gives three); ``integral``: the values are whole numbers (cells, counts
    held in floats). ``validate()`` checks that float values are finite and every value lies in
    range, and ``restore`` refuses what it refuses: declare the range every compiled function
    needs, so that no value within it makes a compiled function read or write outside an array.
    Relations between arrays (a count and the rows it counts) go in ``Model.check_state``.
    """

    dtype: type
    per: str
    tail: tuple = ()
    low: float | tuple | None = None
    high: float | tuple | None = None
    integral: bool = False

    def shape(self, num_worlds: int, n_agents: int) -> tuple:
        lead = num_worlds * n_agents if self.per == "agent" else num_worlds
        return (lead, *self.tail)

    def problems(self, arr: np.ndarray) -> list:
        """``(what, rows)`` for each way ``arr`` (of this shape and dtype) leaves its range: ``rows``
        the indices along the first axis where it does. Never raises."""
        out = []
        if arr.dtype.kind == "f":
            out.append(("not finite", _rows_where(~np.isfinite(arr))))
        with np.errstate(invalid="ignore"):
            if self.low is not None:
                out.append((f"below {_bound(self.low)}", _rows_where(arr < np.asarray(self.low))))
            if self.high is not None:
                out.append((f"above {_bound(self.high)}", _rows_where(arr > np.asarray(self.high))))
            if self.integral and arr.dtype.kind == "f":
                out.append(("not whole numbers", _rows_where(np.isfinite(arr) & (arr != np.floor(arr)))))
        return [(what, rows) for what, rows in out if rows.size]


StateWorld = namedtuple("StateWorld", "state sources")
StateWorld.__doc__ = """What a model's arrays must agree with beyond themselves (``Model.check_state``):
``state``, the ``WorldState`` (``pos`` ``(B*N, dims)``, ``active``, ``world_t``, ``n_agents``, ...),
and ``sources``, ``(B, dims)`` float64 every world's source (None for the plume, whose arrays hold
them)."""


def grid_high(ctx) -> tuple:
    """The largest coordinate of each axis of the scenario's grid, ``(W - 1, H - 1)`` (and
    ``D - 1`` in 3-D): the ``high`` of a position's ``StateArray``."""
    return tuple(float(side - 1) for side in ctx.grid_size)


def _bound(value) -> str:
    return str(np.asarray(value, np.float64).tolist()) if isinstance(value, (tuple, list, np.ndarray)) else str(value)


# models.registry.from_metadata, set when the registry is imported (it imports every model, so the
# models cannot import it): how field_value reads a nested model
NESTED_LOADER = [None]


def field_value(value):
    """A metadata value as a model field: lists become tuples, nested model dicts become models."""
    if isinstance(value, dict) and "model" in value:
        return NESTED_LOADER[0](value)
    if isinstance(value, list):
        return tuple(field_value(v) for v in value)
    return value


# ----------------------------------------------------------------------------- compiled roles
@dataclass(frozen=True)
class PlumeKernels:
    """A plume's compiled functions (``pw`` is the world view ``view`` returns; ``point`` a float
    position ``(x, y[, z])`` in cells, ``cell`` an integer one, ``shape`` the grid's ``(W, H[, D])``:
    tuples, one function for every dimension the plume declares).

    Required:
        source(P, S, b, shape) -> point: world ``b``'s source, float cells, a tuple as long as
            ``shape``.
        sample_cell(P, S, pw, cell) -> float32: concentration at an integer cell inside the grid.
        sample_at(P, S, pw, point) -> float32: concentration at a float position; 0 off the grid
            (``engine.api.grid_point`` says where).
    Optional (default):
        reset_world(P, S, b, seed, episode, pos, base, n_agents): draw world ``b``'s new episode
            (agents are placed already, rows ``base .. base + n_agents`` of ``pos`` ``(B*N, D)``).
            Default: nothing.
        advance(P, S, b, t, seed, episode): move world ``b`` to step ``t``. Default: nothing.
        view(P, S, b, t) -> pw: what the samplers need to find world ``b`` at step ``t`` (a frame
            index, ...). Default: ``b``.
        wind_at(P, S, pw, point) -> tuple: wind in cells per step, as many components as
            ``point``. Default: calm.
        reach(P, S, b, point, goal_d2, team) -> (reached, all_found): for a plume of several
            sources (``Plume.source_count() > 1``), called instead of comparing with ``source``
            after each agent's move: whether the agent at ``point`` reaches a source (within
            ``goal_d2`` squared cells; with ``team``, one no agent of its world has found yet),
            marked found by the plume, and whether every source of the world is found now.
            Default: never called (one source).
    """

    source: Any
    sample_cell: Any
    sample_at: Any
    reset_world: Any = api.plume_reset_world
    advance: Any = api.plume_advance
    view: Any = api.plume_view
    wind_at: Any = api.calm
    reach: Any = api.plume_reach


@dataclass(frozen=True)
class BodyKernels:
    """A body's compiled functions (``i``: the agent's row, ``n``: its index in its world; ``pos``
    the ``(B*N, D)`` int32 cells; ``shape``, ``cell``, ``point`` tuples as for ``PlumeKernels``).

    Required:
        first_invalid(P, actions) -> int: row of the first invalid action, or -1.
        move(P, S, i, actions, pos, shape, seed, episode, t): apply ``actions[i]``, writing the
            agent's cell ``pos[i]`` (clamped into the grid of ``shape``).
    Optional (default):
        reset_agent(P, S, i, n, pos, seed, episode): set the agent's own state at a reset (its
            cell is placed already). Default: nothing.
        location(P, S, i, cell) -> point: float position (``cell`` is the agent's). Default: the
            cell.
        heading(P, S, i) -> degrees. Default: 0 (+x).
        heading_index(P, S, i) -> int: ``k`` when the agent's heading is exactly (bit for bit)
            ``P.heading_table[k]`` (the body's parameters then hold ``heading_table``, ``(K,)``
            float64 degrees), else -1. Sensors keep tables of what they compute from a heading,
            indexed by ``k`` (``AgentView.heading_index``): no sine per step. Default: -1.
        place(P, S, i, pos, point): put the agent at the float ``point`` and its cell ``pos[i]``
            there (``floor(c + 0.5)``): how a scenario with walls stops a continuous body at a
            wall's face (the step calls it after ``move``). Required of a continuous body among
            walls; a grid body's refused move puts its cell back instead. Default: nothing.
    """

    first_invalid: Any
    move: Any
    reset_agent: Any = api.body_reset_agent
    location: Any = api.body_location
    heading: Any = api.body_heading
    heading_index: Any = api.body_heading_index
    place: Any = api.body_place


PlumeKernels3D = PlumeKernels  # deprecated: one record for every dimension
BodyKernels3D = BodyKernels  # deprecated: one record for every dimension


@dataclass(frozen=True)
class SensorKernels:
    """A sensor's compiled functions; each writes its columns ``col ..`` of ``obs`` (B*N, D) float32.

    observe_agent(P, S, obs, col, plume, agent, inner): one agent, after it moved (also after a
        reset, with ``agent.first``); ``plume`` a ``PlumeView``, ``agent`` an ``AgentView``
        (``plume_multi.engine.api``: ``agent.point``, ``agent.cell``, ``agent.shape`` are tuples
        as long as the dimension; read the plume with ``sample_cell(plume, cell)``,
        ``sample_at(plume, point)``, ``wind_at(plume, point)``).
    observe_world(P, S, obs, col, plume, world, inner): once per world, after all its agents moved;
        ``world`` a ``WorldView``. Sensors that need the other agents (``Neighbours``) use it.
    ``inner``: the wrapped sensor's ``observe_agent`` for a wrapper (``History``), else a no-op.
    Both default to nothing; a sensor defines at least one.
    """

    observe_agent: Any = api.no_sensor
    observe_world: Any = api.no_sensor


@dataclass(frozen=True)
class RewardKernels:
    """A reward's compiled functions: ``goal(P)`` on arrival, ``step(P)`` on every other step
    (float32)."""

    goal: Any
    step: Any


# ----------------------------------------------------------------------------- the bases
@dataclass(frozen=True)
class Model(metaclass=CheckedArguments):
    """Base of every model. Subclasses are frozen dataclasses of their parameters; a call with an
    unknown keyword (or too many arguments) raises ``ValidationError`` naming ``Model.keyword``."""

    family: ClassVar[str] = ""
    kernels: ClassVar[Any] = None  # the family's Kernels record of compiled functions
    # The dimensions the compiled functions serve (the capability table reads it): (2,) for a model
    # whose functions read 2-D names (agent.x, agent.cx, ...), (2, 3) for one written over tuples.
    # A model may refuse more in check_dims (a movie of frames runs in 2-D only).
    dimensions: ClassVar[tuple] = (2,)
    # What else it works with, read by the capability table (plume_multi/capabilities.py, where each
    # is described) beside dimensions: True, False, or the dimensions where it holds ((2,)); a plume's
    # among_walls may be "fixed sources". needs: what it needs of the other parts (capabilities.Need).
    among_walls: ClassVar[Any] = True
    moving_sources: ClassVar[Any] = True
    several_sources: ClassVar[Any] = True
    in_teams: ClassVar[Any] = True
    needs: ClassVar[tuple] = ()

    def kernels_for(self, dims: int):
        """The compiled functions of a ``dims``-dimensional scenario (None: not in that dimension)."""
        return self.kernels if dims in self.dimensions else None

    def check_dims(self, dims: int, grid_size) -> None:
        """Raise ``ValidationError`` when this model cannot run in a ``dims``-dimensional scenario."""
        if dims not in self.dimensions:
            from ..errors import ValidationError

            old = " (kernels_3d is no longer read: one Kernels record serves every dimension its class declares " \
                  "in dimensions)" if getattr(type(self), "kernels_3d", None) is not None else ""
            raise ValidationError(f"{self.name} is {_dimension_words(self.dimensions)} only; the scenario is {dims}-D "
                                  f"(grid_size={tuple(grid_size)}){old}")

    def _set(self, name: str, value) -> None:
        object.__setattr__(self, name, value)

    @property
    def name(self) -> str:
        return type(self).__name__

    def metadata(self) -> dict:
        """JSON-able description, enough to rebuild the model: ``{"model": name, **fields}``."""
        out = {"family": self.family, "model": self.name}
        for f in dataclasses.fields(self):
            out[f.name] = _jsonable(getattr(self, f.name))
        return out

    @classmethod
    def from_fields(cls, fields: dict) -> "Model":
        """The model of ``fields``: its ``metadata()`` without ``"model"`` and ``"family"``, read back
        from JSON (lists for tuples, nested models as their metadata). ``plume_multi.models.
        from_metadata`` calls it; a model whose metadata is not its fields as they are overrides it."""
        return cls(**{name: field_value(value) for name, value in fields.items()})

    def params(self, ctx) -> tuple:
        """What the compiled functions read as ``P``: a named tuple of numbers and read-only arrays.
        ``ctx`` tells the scenario (``grid_size``, ``n_agents``, ``plume``, ``body``, ...)."""
        return ()

    def state_spec(self, ctx) -> dict:
        """The arrays this model keeps (name -> ``StateArray``): part of the world state, so of
        snapshots, restores and ``validate()``. ``ctx`` may be None (asked before a scenario)."""
        return {}

    def state_tuple(self, arrays: dict) -> tuple:
        """``S`` as the compiled functions receive it, from this model's arrays (by the names of
        ``state_spec``, in its order)."""
        return tuple(arrays.values())

    def check(self, ctx) -> None:
        """Raise ``ValidationError`` when this model cannot run with the scenario's other models."""

    def check_state(self, ctx, arrays: dict, world=None) -> list:
        """What is wrong in this model's arrays (by the names of ``state_spec``) beyond each array's
        own range: relations between them (a count and the rows it counts, bins and what they
        index) and with the rest of the world. A list of ``(array name, what is wrong)``, empty
        when consistent; never raises.

        ``world``: a ``StateWorld`` (the ``WorldState``, every world's source), or None before the
        first reset, when the arrays hold nothing yet. ``validate()`` and ``restore`` call it after
        every array is within its declared range and before any compiled function reads them, so
        it may index with their values; the plume first, and the other models only once the
        plume's arrays (which hold the sources) are consistent."""
        return []

    def step_operations(self, ctx) -> int:
        """About how many elementary operations a step costs per world beyond the per-agent work
        (``Neighbours``: every pair of agents), for ``Simulator``'s refusal of impossible sizes."""
        return 0

    def guard(self):
        """None, or a function of no arguments the simulator calls before every reset and step,
        which raises (``StateError``) when data the kernels read changed under the running
        simulation (a memory-mapped file that was truncated or rewritten)."""
        return None

    def saving_problem(self) -> str | None:
        """Why ``metadata()`` cannot rebuild this model from JSON (frames held only in memory),
        or None; ``save_scenario`` refuses such a scenario with this message."""
        return None


@dataclass(frozen=True)
class Plume(Model):
    """What the agents smell. Compiled functions: ``PlumeKernels``."""

    family: ClassVar[str] = "plume"

    def bind(self, grid_size) -> "Plume":
        """This plume on a ``(width, height)`` grid, or ``(width, height, depth)`` for a plume that
        runs in 3-D (resolving defaults that depend on it); raise ``ValidationError`` when it
        cannot be on that grid."""
        return self

    def natural_grid_size(self) -> tuple | None:
        """The grid this plume is defined on (a movie's frame size), or None (any grid)."""
        return None

    def fixed_source(self):
        """The source cell ``(x, y)`` (``(x, y, z)`` in 3-D) when every world has the same, else None."""
        return None

    def concentration_bounds(self) -> tuple:
        """``(low, high)`` of what ``sample_*`` return (the observation space's bounds)."""
        return 0.0, 1.0

    def units(self, grid_size) -> Units:
        """The physical size of a cell and duration of a step on a ``(width, height)`` grid, where
        the plume knows them (a movie's ``fps`` and ``pixel_to_grid``); default: unknown."""
        return Units()

    def field(self, grid_size) -> np.ndarray | None:
        """A static ``(H, W)`` float32 field shared by every world (``(D, H, W)`` in 3-D), or None."""
        return None

    def image(self, params, state, b: int, t: int) -> np.ndarray:
        """``(H, W)`` float32 concentration of world ``b`` at step ``t`` (``(D, H, W)`` in 3-D),
        for pictures."""
        raise NotImplementedError(f"{self.name}.image: this plume draws no picture")

    def sources(self, params, state, num_worlds: int) -> np.ndarray:
        """``(B, dims)`` float64: every world's source (its first, when it has several)."""
        raise NotImplementedError(f"{self.name}.sources")

    def source_count(self) -> int:
        """Sources per world, ``K`` (more than one: the step calls ``PlumeKernels.reach``)."""
        return 1

    def source_positions(self, params, state, num_worlds: int) -> np.ndarray:
        """``(B, K, dims)`` float64: every source of every world now."""
        return self.sources(params, state, num_worlds)[:, None, :]

    def sources_found(self, params, state, num_worlds: int) -> np.ndarray | None:
        """``(B, K)`` bool: the sources an agent of each world has reached this episode, or None
        when the plume keeps no such record (one source: an arrival ends the search for it)."""
        return None

    def on_cells(self) -> bool:
        """True when every source sits on a cell (integer coordinates) at every step: the goal
        test then compares integer squared distances (``Scenario.goal_d2``)."""
        fixed = self.fixed_source()
        return fixed is None or all(float(c).is_integer() for c in fixed)  # drawn sources are cells


    # among walls only with fixed sources: a drawn or moving source does not know the walls
    among_walls: ClassVar[Any] = "fixed sources"

    def check_walls(self, walls) -> None:
        """Raise ``ValidationError`` when this plume's values cannot be among ``walls`` (a
        ``plume_multi.walls.Walls``): a source on a solid cell. Whether the plume can be among
        walls at all is its ``among_walls`` declaration (the capability table refuses a drawn or
        moving source of a ``"fixed sources"`` plume); ``Scenario`` checks that a fixed source is on
        a free cell of every mask."""

    def sources_move(self) -> bool:
        """True when the sources move during an episode (a ``source_motion`` that moves)."""
        return bool(getattr(getattr(self, "source_motion", None), "moves", False))

    def sources_drawn(self) -> bool:
        """True when each world draws its sources at every reset (none given)."""
        return self.fixed_source() is None and self.source_count() == 1 and not self.sources_move()

    def wall_index(self, params, state) -> np.ndarray | None:
        """``(B,)`` the wall mask each world's plume keeps for itself (a plume that moves among
        walls, ``Puffs``), or None; ``validate()`` checks it is the world's."""
        return None


@dataclass(frozen=True)
class Body(Model):
    """How agents move. Compiled functions: ``BodyKernels``. (In metadata the family is called
    ``"action"``, its name before bodies were called bodies.)"""

    family: ClassVar[str] = "action"
    continuous: ClassVar[bool] = False  # float positions and Box actions
    oriented: ClassVar[bool] = False  # has a heading
    ACTION_NAMES: ClassVar[tuple] = ()

    ACTION_NAMES_3D: ClassVar[tuple] = ()  # the discrete actions in 3-D (bodies that run in 3-D)

    @property
    def n_actions(self) -> int:
        """Number of discrete actions (2-D; ``n_actions_for(dims)`` in either dimension)."""
        return len(self.ACTION_NAMES)

    def action_names(self, dims: int = 2) -> tuple:
        """The discrete actions' names in a ``dims``-dimensional scenario."""
        return self.ACTION_NAMES if dims == 2 else self.ACTION_NAMES_3D

    def n_actions_for(self, dims: int) -> int:
        """Number of discrete actions in a ``dims``-dimensional scenario."""
        return self.n_actions if dims == 2 else len(self.ACTION_NAMES_3D)

    def action_box(self, dims: int = 2) -> tuple:
        """A continuous body's ``(low, high)`` float32 action bounds in a ``dims``-dimensional
        scenario (2-D: ``low``, ``high``)."""
        return self.low, self.high

    def locations(self, params, state, pos) -> np.ndarray:
        """``(B*N, dims)`` float64 positions (the cells, for grid bodies)."""
        return pos.astype(np.float64)


@dataclass(frozen=True)
class Sensor(Model):
    """What an agent observes: a fixed number of observation columns. Compiled functions:
    ``SensorKernels``."""

    family: ClassVar[str] = "sensor"
    # True when the columns are a pure function of the current state (validate() recomputes them)
    recomputable: ClassVar[bool] = True

    @property
    def per_world(self) -> bool:
        """True when the sensor writes once per world (``observe_world``)."""
        return self.kernels is not None and self.kernels.observe_world is not api.no_sensor

    @property
    def wraps(self) -> "Sensor | None":
        """The sensor this one wraps (its ``observe_agent`` is passed as ``inner``), or None."""
        return None

    def columns(self, ctx) -> list:
        """The names of the columns, in order."""
        raise NotImplementedError(f"{self.name}.columns")

    def width(self, ctx) -> int:
        return len(self.columns(ctx))

    def bounds(self, ctx) -> tuple:
        """``(low, high)``: per-column float32 arrays of the observation space."""
        n = self.width(ctx)
        return np.zeros(n, np.float32), np.ones(n, np.float32)


@dataclass(frozen=True)
class Reward(Model):
    """What agents earn. Compiled functions: ``RewardKernels``."""

    family: ClassVar[str] = "reward"
    dimensions: ClassVar[tuple] = (2, 3)  # a reward does not depend on the dimension

    def values(self) -> tuple:
        """Every reward this model can give: ``(on arrival, on another step)``."""
        raise NotImplementedError(f"{self.name}.values")


def _dimension_words(dims) -> str:
    """``(2,)`` as ``"2-D"``, ``(2, 3)`` as ``"2-D and 3-D"``."""
    return " and ".join(f"{d}-D" for d in dims)


def dims_of(ctx) -> int:
    """The dimension of a model's context (2 when ``ctx`` is None or says nothing)."""
    return getattr(ctx, "dims", 2) if ctx is not None else 2


def _jsonable(value):
    if isinstance(value, Model):
        return value.metadata()
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return {"array": list(value.shape), "dtype": str(value.dtype)}
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    return value
