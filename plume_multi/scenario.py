"""Scenario: the frozen, validated configuration of a plume search.

A ``Scenario`` says how a world is set up: the grid, the plume (``plumes``), the agents' bodies
(``actions``), what they sense (``sensors``), what they earn (``rewards``), where they start and how
long an episode lasts. It holds no state: the same scenario can drive any number of simulators.
Every field is checked on construction; an invalid value raises ``ValidationError`` naming the
field, the value given and what is valid.

``scenario_from_metadata``, ``load_scenario`` and ``save_scenario`` read and write a scenario as
JSON, in the shape ``Scenario.metadata()`` writes.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Optional

import numpy as np

from .models import capability_table as _capabilities
from . import files as _files
from .errors import ValidationError
from .models import bodies as _actions
from .models import plumes as _plumes
from .models import rewards as _rewards
from .models import sensors as _sensors
from .checks import refuse
from .models.base import Model, check_real, is_int, is_real
from .models.units import MAX_UNIT, MIN_UNIT, Units
from .walls import Walls

__all__ = ["Scenario", "ACTION_MODELS", "MAX_GRID_SIDE", "MAX_CELLS_3D", "MAX_AGENTS", "MAX_SENSORS",
           "DEFAULT_GOAL_RADIUS", "DEFAULT_GRID", "scenario_from_metadata", "load_scenario", "save_scenario"]

MAX_GRID_SIDE = 2048
# A 3-D grid holds at most this many cells (a shared float32 field of them is 512 MiB)
MAX_CELLS_3D = 1 << 27
MAX_AGENTS = 1 << 24
# Every sensor is inlined into the compiled step, and compiling grows faster than the sensors: 16
# Concentration sensors took 42 s of CPU and 0.5 GB, 48 took 149 s and 1.7 GB (2048 ran out of
# memory at 18 GB). A scenario has at most this many (a wrapper such as History counts with the
# sensor it wraps); one Antennae reads up to 64 points.
MAX_SENSORS = 32
DEFAULT_GRID = (128, 128)
# The smallest positive float32: only the source cell itself is within the goal radius.
DEFAULT_GOAL_RADIUS = float(np.finfo(np.float32).smallest_subnormal)

# The named displacement-table action models: action k moves an agent by ACTION_MODELS[name][k].
ACTION_MODELS = {name: cls.MOVES for name, cls in _actions.BY_NAME.items()}


def _fail(name: str, value, expected: str):
    refuse("Scenario", name, repr(value), expected)


def _as_scenario_field(err: ValidationError, fields: dict) -> ValidationError:
    """``err`` of the default Gaussian (``Gaussian.source``) as the Scenario field the user gave
    (``Scenario.source_location``); ``fields`` maps the model's field names to the Scenario's."""
    message = str(err)
    for model_field, field in fields.items():
        message = message.replace(f"Gaussian.{model_field}", f"Scenario.{field}")
    ours = err.owner == "Gaussian" and err.field in fields
    return ValidationError(message, owner="Scenario" if ours else err.owner,
                           field=fields[err.field] if ours else err.field, got=err.got, expected=err.expected)


def _pair(name: str, value, expected: str) -> tuple[int, int]:
    return _cells(name, value, expected, 2)


def _cells(name: str, value, expected: str, *lengths: int) -> tuple:
    """``value`` as a tuple of ints of one of ``lengths`` (a pair, a triple)."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, (tuple, list)) or len(value) not in lengths:
        _fail(name, value, expected)
    if not all(is_int(c) for c in value):
        _fail(name, value, expected)
    return tuple(int(c) for c in value)


_AXES = "xyz"


def _model(name: str, value, family: str, by_name: dict | None = None):
    if by_name is not None and isinstance(value, str):
        if value not in by_name:
            _fail(name, value, f"one of {sorted(by_name)} or a plume_multi.{family}s model")
        return by_name[value]()
    if not isinstance(value, Model) or value.family != family:
        names = f" or one of {sorted(by_name)}" if by_name else ""
        _fail(name, value, f"a plume_multi.{family}s model{names}")
    return value


@dataclass(frozen=True)
class Scenario:
    """Configuration of a plume search (immutable, validated).

    Attributes:
        grid_size: ``(width, height)`` in cells, each 1..2048. Default: the plume's own size (a
            movie's frames) or ``(128, 128)``. A triple ``(width, height, depth)`` makes a 3-D
            scenario (``dims == 3``; at most 2**27 cells): positions, starts, sources and the
            models' functions have three coordinates, and every model must support 3-D (a 2-D-only
            model raises ``CapabilityError`` naming it: ``plume_multi.capabilities()`` says which do).
        plume: a ``plumes`` model. Default: ``plumes.Gaussian(source=source_location, sigma=sigma)``.
        source_location, sigma: the default Gaussian plume's source ``(x, y)`` (``(x, y, z)`` in
            3-D; default the centre) and spread (default 12.0). Give these or ``plume``, not both.
        n_agents: searchers per world, 1..2**24.
        goal_radius: an agent whose Euclidean distance to its world's source is ``<= goal_radius``
            has found it. Default: the smallest positive float32, so only the source cell counts.
        max_steps: steps per episode before truncation, 1..2**31-1.
        start_positions: ``None`` to draw start cells from the seed, or ``n_agents`` pairs
            ``(x, y)`` (triples ``(x, y, z)`` in 3-D) used in every episode.
        start_region: ``None`` (the whole grid) or ``((x0, y0), (x1, y1))`` (3-D:
            ``((x0, y0, z0), (x1, y1, z1))``): start cells are drawn uniformly in that box,
            corners included.
        action_model: an ``actions`` model, or ``"cardinal"`` (4 moves, the default) or ``"moore"``.
        sensors: a tuple of ``sensors`` models; the observation is their columns in order.
            Default: ``(Concentration(), Position())`` plus ``Neighbours(n_neighbours)`` when
            ``n_neighbours > 0``.
        n_neighbours: shorthand for a ``sensors.Neighbours(k)`` after the default sensors (0 = off).
        reward: a ``rewards`` model (default ``SparseGoal()``: 1.0 on arrival).
        team: ``True``: the first agent to reach the source ends the episode for all agents of
            its world, and every active agent receives the goal reward.
        cell_size: the length of a cell (the plume's length unit), or None (unknown). Default the
            plume's: a movie's ``pixel_to_grid``, the puff plume's cell size; a given one must
            agree with the plume's.
        step_duration: seconds per step, or None (unknown). Default the plume's: ``1 / fps`` of a
            movie, ``dt`` of the puff plume; a given one must agree with the plume's.
            ``units`` converts between cells and steps and lengths and seconds.
        walls: ``None``, or solid cells: a bool array of the grid's shape ``(H, W)`` (``(D, H, W)``
            in 3-D), True where solid, or a sequence of such masks, of which each world draws one
            at every reset from its own stream (``plume_multi.walls``). Held as a ``Walls``. Grid
            bodies never enter a solid cell (the move is refused: the agent stays), continuous
            bodies stop at its face, start cells are drawn on free cells, every sensor reads 0
            inside one, puffs reflect off walls. Fixed starts and the source must be free in every
            mask, and the start region must hold a free cell of each.
    """

    grid_size: Optional[tuple] = None
    source_location: Optional[tuple] = None
    sigma: Optional[float] = None
    n_agents: int = 1
    goal_radius: float = DEFAULT_GOAL_RADIUS
    max_steps: int = 1000
    start_positions: Optional[tuple] = None
    action_model: object = "cardinal"
    n_neighbours: int = 0
    team: bool = False
    plume: object = None
    sensors: Optional[tuple] = None
    reward: object = None
    start_region: Optional[tuple] = None
    cell_size: Optional[float] = None
    step_duration: Optional[float] = None
    walls: object = None

    def __post_init__(self):
        set_ = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731
        # what the caller gave, before resolution: replace() starts again from it
        set_("_given", {f.name: getattr(self, f.name) for f in fields(self)})

        # ---- plume and grid
        if self.plume is not None:
            plume = _model("plume", self.plume, "plume")
            for legacy in ("source_location", "sigma"):
                if getattr(self, legacy) is not None:
                    _fail(legacy, getattr(self, legacy),
                          f"None when plume= is given (set the {legacy} on the plume model instead)")
        else:
            if self.sigma is not None and not is_real(self.sigma):
                _fail("sigma", self.sigma, "a finite number with 0.1 <= sigma <= 100")
            plume = None
        size_rule = (f"(width, height) or (width, height, depth), integers in 1..{MAX_GRID_SIDE} "
                     f"(at most {MAX_CELLS_3D} cells in 3-D)")
        if self.grid_size is not None:
            size = _cells("grid_size", self.grid_size, size_rule, 2, 3)
            if not all(1 <= c <= MAX_GRID_SIDE for c in size) or (len(size) == 3 and math.prod(size) > MAX_CELLS_3D):
                _fail("grid_size", self.grid_size, size_rule)
            if plume is not None:  # before anything reads a plume of the other dimension's grid
                _capabilities.check_plume(plume, size)
                plume.check_dims(len(size), size)
        natural = plume.natural_grid_size() if plume is not None and hasattr(plume, "natural_grid_size") else None
        if self.grid_size is None:
            size = tuple(natural or DEFAULT_GRID)
        elif natural is not None and size != tuple(natural):
            _fail("grid_size", self.grid_size, f"None or the plume's own size {tuple(natural)}")
        set_("grid_size", size)
        dims = len(size)
        w, h = size[:2]
        if plume is None:
            src = None
            if self.source_location is not None:
                names = _AXES[:dims]
                src = _cells("source_location", self.source_location,
                             f"({', '.join(names)}) integers with "
                             + " and ".join(f"0 <= {a} < {n}" for a, n in zip(names, size)), dims)
            try:
                plume = _plumes.Gaussian(source=src, sigma=12.0 if self.sigma is None else self.sigma)
            except ValidationError as err:
                raise _as_scenario_field(err, {"source": "source_location", "sigma": "sigma"}) from None
        try:
            plume = plume.bind(size)
        except ValidationError as err:
            if self.plume is None:
                raise _as_scenario_field(err, {"source": "source_location"}) from None
            raise
        set_("plume", plume)
        self._resolve_units(plume.units((w, h)))
        fixed = plume.fixed_source()
        set_("source_location", None if fixed is None else tuple(int(round(c)) for c in fixed))
        set_("sigma", getattr(plume, "sigma", None))

        # ---- agents and episode
        if not is_int(self.n_agents) or not 1 <= self.n_agents <= MAX_AGENTS:
            _fail("n_agents", self.n_agents, f"an integer in 1..{MAX_AGENTS}")
        set_("n_agents", int(self.n_agents))
        try:
            radius_ok = is_real(self.goal_radius) and math.isfinite(float(self.goal_radius)) and self.goal_radius > 0
        except OverflowError:
            radius_ok = False
        if not radius_ok:
            _fail("goal_radius", self.goal_radius, "a finite number > 0")
        set_("goal_radius", float(self.goal_radius))
        if not is_int(self.max_steps) or not 1 <= self.max_steps < 2**31:
            _fail("max_steps", self.max_steps, "an integer in 1..2**31-1")
        set_("max_steps", int(self.max_steps))
        if not isinstance(self.team, (bool, np.bool_)):
            _fail("team", self.team, "True or False")
        set_("team", bool(self.team))

        grid = "x".join(str(c) for c in size)
        axes = _AXES[:dims]
        if self.start_positions is not None:
            rule = (f"None or {self.n_agents} {'pairs' if dims == 2 else 'triples'} ({', '.join(axes)}) of integers "
                    f"inside the {grid} grid")
            try:
                arr = np.asarray(self.start_positions)
            except (TypeError, ValueError):
                _fail("start_positions", self.start_positions, rule)
            if arr.dtype.kind not in "iu" or arr.shape != (self.n_agents, dims):
                _fail("start_positions", self.start_positions, rule)
            if (arr < 0).any() or (arr >= np.array(size)).any():
                _fail("start_positions", self.start_positions, rule)
            set_("start_positions", tuple(tuple(int(c) for c in row) for row in arr))
        if self.start_region is not None:
            corner0 = "(" + ", ".join(f"{a}0" for a in axes) + ")"
            corner1 = "(" + ", ".join(f"{a}1" for a in axes) + ")"
            rule = (f"None or ({corner0}, {corner1}) with "
                    + " and ".join(f"0 <= {a}0 <= {a}1 < {n}" for a, n in zip(axes, size)))
            if not isinstance(self.start_region, (tuple, list)) or len(self.start_region) != 2:
                _fail("start_region", self.start_region, rule)
            lo, hi = (_cells("start_region", c, rule, dims) for c in self.start_region)
            if not all(0 <= a <= b < n for a, b, n in zip(lo, hi, size)):
                _fail("start_region", self.start_region, rule)
            if self.start_positions is not None:
                _fail("start_region", self.start_region, "None when start_positions is given")
            set_("start_region", (lo, hi))

        # ---- body, sensors, reward
        set_("action_model", _model("action_model", self.action_model, "action", _actions.BY_NAME))
        if not is_int(self.n_neighbours) or not 0 <= self.n_neighbours < self.n_agents:
            _fail("n_neighbours", self.n_neighbours, f"an integer in 0..{self.n_agents - 1} (n_agents - 1)")
        set_("n_neighbours", int(self.n_neighbours))
        if self.sensors is None:
            chosen = [_sensors.Concentration(), _sensors.Position()]
            if self.n_neighbours:
                chosen.append(_sensors.Neighbours(self.n_neighbours))
        else:
            if isinstance(self.sensors, Model) or not isinstance(self.sensors, (tuple, list)) or not self.sensors:
                _fail("sensors", self.sensors, "a non-empty tuple of plume_multi.sensors models")
            compiled = sum(1 + (s.wraps is not None) if isinstance(s, Model) and s.family == "sensor" else 1
                           for s in self.sensors)
            if compiled > MAX_SENSORS:
                _fail("sensors", f"<{len(self.sensors)} sensors>",
                      f"at most {MAX_SENSORS} sensors (wrapped ones included; here {compiled}): each is compiled into "
                      f"the step, and compiling grows faster than the sensors (48 took 149 s of CPU and 1.7 GB). "
                      f"Read several columns with one sensor instead (Antennae takes up to 64 angles)")
            chosen = [_model("sensors", s, "sensor") for s in self.sensors]
            if self.n_neighbours:
                _fail("n_neighbours", self.n_neighbours,
                      "0 when sensors= is given (add sensors.Neighbours(k) to the sensors instead)")
        set_("sensors", tuple(chosen))
        set_("reward", _rewards.SparseGoal() if self.reward is None else _model("reward", self.reward, "reward"))
        # what works with what (dimensions, walls, moving and several sources, teams, what each part
        # needs of the others), from the parts' declarations: plume_multi/models/capability_table.py
        _capabilities.check(self)
        for model in (self.plume, self.action_model, *self.sensors, self.reward):
            model.check_dims(dims, size)  # what a model's values allow (a movie of frames runs in 2-D)
        if self.walls is not None:
            set_("walls", Walls.of(self.walls, size))
            self._check_walls()
        ctx = ModelContext(self)
        for sensor in self.sensors:
            sensor.check(ctx)
        for model in (self.plume, self.action_model, self.reward):
            if hasattr(model, "check"):
                model.check(ctx)

    def _check_walls(self) -> None:
        """Starts, sources and bodies among the walls (``__post_init__``, ``self.walls`` set)."""
        walls, dims = self.walls, self.dims
        self.plume.check_walls(walls)
        fixed = self.plume.fixed_source()
        if fixed is not None:
            cell = tuple(int(math.floor(float(c) + 0.5)) for c in fixed)
            solid = walls.solid_in(cell)
            if solid:
                _fail("walls", walls, f"masks free at the {self.plume.name} plume's source {tuple(fixed)} (cell "
                                      f"{cell}); it is solid in mask {solid[0]}")
        if self.start_positions is not None:
            for n, cell in enumerate(self.start_positions):
                solid = walls.solid_in(cell)
                if solid:
                    _fail("start_positions", self.start_positions,
                          f"cells free in every wall mask; agent {n}'s {cell} is solid in mask {solid[0]}")
        else:
            lo, hi = self.start_region or ((0,) * dims, tuple(n - 1 for n in self.grid_size))
            full = walls.masks_full_in(lo, hi)
            if full:
                where = "start region" if self.start_region else "grid"
                _fail("walls", walls, f"masks with a free cell in the {where} {lo}..{hi} (start cells are drawn "
                                      f"there); mask {full[0]} has none")

    def _resolve_units(self, plumes_units: Units) -> None:
        """``cell_size`` and ``step_duration``: given (checked against the plume's) or the plume's."""
        for name, why in (("cell_size", "a movie's pixel_to_grid or cell_size, the puff plume's cell"),
                          ("step_duration", "1 / a movie's fps, the puff plume's dt")):
            given, known = getattr(self, name), getattr(plumes_units, name)
            if given is not None:
                given = check_real("Scenario", name, given, MIN_UNIT, MAX_UNIT)
                if known is not None and abs(given - known) > 1e-9 * known:
                    _fail(name, given, f"None or the plume's own {known!r} ({why})")
            object.__setattr__(self, name, known if given is None else given)
        object.__setattr__(self, "_units", Units(self.cell_size, self.step_duration, plumes_units.origin,
                                                 plumes_units.length_unit))

    # ----------------------------------------------------------------- derived, read-only
    @property
    def units(self) -> Units:
        """The physical size of a cell and duration of a step (``Units``: conversions between
        cells, steps, lengths, seconds and speeds; None where unknown)."""
        return self._units

    @property
    def width(self) -> int:
        return self.grid_size[0]

    @property
    def height(self) -> int:
        return self.grid_size[1]

    @property
    def depth(self) -> int:
        """Cells along z in a 3-D scenario; 1 in 2-D."""
        return self.grid_size[2] if len(self.grid_size) == 3 else 1

    @property
    def dims(self) -> int:
        """2, or 3 for a 3-D scenario (``grid_size=(W, H, D)``): the number of coordinates of a
        position. A compile-time property of the step: each dimension has its own driver."""
        return len(self.grid_size)

    @property
    def continuous(self) -> bool:
        """True when actions are float vectors (``actions.Continuous``)."""
        return self.action_model.continuous

    @property
    def n_actions(self) -> int:
        """Number of discrete actions in this scenario's dimension (``ValidationError`` for a
        continuous body)."""
        if self.continuous:
            raise ValidationError("n_actions: this scenario's action model is continuous (see action_bounds())")
        return self.action_model.n_actions_for(self.dims)

    @property
    def action_names(self) -> tuple:
        """The discrete actions' names in this scenario's dimension (empty for a continuous body)."""
        return () if self.continuous else tuple(self.action_model.action_names(self.dims))

    def action_bounds(self) -> tuple:
        """A continuous body's ``(low, high)`` float32 arrays in this scenario's dimension (2-D
        ``Continuous``: ``(speed, turn)``; 3-D: the velocity ``(vx, vy, vz)``)."""
        if not self.continuous:
            raise ValidationError(f"action_bounds: the action model {self.action_model.name} is discrete "
                                  f"(see n_actions)")
        return self.action_model.action_box(self.dims)

    @property
    def obs_dim(self) -> int:
        """Length of an agent's observation vector: the sensors' columns (counted, not named: a
        sensor of millions of columns is refused for its memory at once)."""
        ctx = ModelContext(self)
        return sum(sensor.width(ctx) for sensor in self.sensors)

    @property
    def observation_layout(self) -> list:
        """The name of every observation column, in order (sensor by sensor)."""
        ctx = ModelContext(self)
        names = []
        for sensor in self.sensors:
            names.extend(sensor.columns(ctx))
        return names

    def observation_bounds(self) -> tuple:
        """``(low, high)`` float32 arrays of length ``obs_dim`` (infinite where unbounded)."""
        ctx = ModelContext(self)
        lows, highs = zip(*(sensor.bounds(ctx) for sensor in self.sensors))
        return np.concatenate(lows).astype(np.float32), np.concatenate(highs).astype(np.float32)

    def moves(self) -> np.ndarray:
        """The displacement table ``(n_actions, dims)`` int32 of a table body (cardinal, moore)."""
        if not hasattr(self.action_model, "moves"):
            raise ValidationError(f"moves: the action model {self.action_model.name} has no displacement table")
        return self.action_model.moves(self.dims)

    def goal_d2(self) -> float:
        """The squared distance the step compares with: arrival iff ``dx^2 + dy^2 <= goal_d2()``
        (``dx^2 + dy^2 + dz^2`` in 3-D).

        For grid bodies and a source on a cell (integer coordinates) the largest integer ``d2``
        with ``sqrt(d2) <= goal_radius``, which decides exactly as ``math.sqrt(dx*dx + dy*dy) <=
        goal_radius`` does, with no float rounding at the edge; for continuous bodies, or a source
        between cells (a movie's), ``goal_radius**2``.
        """
        if self.continuous or not self.plume.on_cells():
            return self.goal_radius ** 2
        limit = sum((n - 1) ** 2 for n in self.grid_size)
        if self.goal_radius >= math.sqrt(limit):
            return float(limit)
        k = min(int(self.goal_radius * self.goal_radius), limit)
        while k > 0 and math.sqrt(k) > self.goal_radius:
            k -= 1
        while k < limit and math.sqrt(k + 1) <= self.goal_radius:
            k += 1
        return float(k)

    def metadata(self) -> dict:
        """JSON-able description of the scenario, models included (enough to rebuild it)."""
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, (Model, Walls)):
                value = value.metadata()
            elif f.name == "sensors":
                value = [s.metadata() for s in value]
            elif isinstance(value, tuple):
                value = [list(v) if isinstance(v, tuple) else v for v in value]
            out[f.name] = value
        return out

    def replace(self, **changes) -> "Scenario":
        """A copy with some fields changed (validated again)."""
        unknown = sorted(set(changes) - {f.name for f in fields(self)})
        if unknown:
            raise ValidationError(f"Scenario.replace: unknown field(s) {unknown}; expected Scenario fields")
        return Scenario(**{**self._given, **changes})


# ----------------------------------------------------------------------------------------- JSON
# Scenarios to and from JSON files (what `plume-multi render --scenario FILE.json` reads).
_FIELDS = {f.name for f in fields(Scenario)}
_MODEL_KEYS = {"plume": "plume", "action_model": "action", "reward": "reward"}
# derived from the plume / the sensors when those are given: Scenario refuses them beside them
_DERIVED = {"source_location": "plume", "sigma": "plume", "n_neighbours": "sensors"}
# derived from the plume when it knows them, given otherwise
_UNITS = ("cell_size", "step_duration")


def _meta_model(key: str, value, family: str):
    if value is None or (key == "action_model" and isinstance(value, str)):
        return value
    from .models.registry import from_metadata

    try:
        return from_metadata(value, family)
    except ValidationError as exc:
        raise ValidationError(f"Scenario.{key}: {exc}") from None


def _nested_tuples(value):
    return tuple(_nested_tuples(v) for v in value) if isinstance(value, list) else value


def _shorthand(meta: dict) -> dict:
    """``n_neighbours = k`` with the sensors it stands for (Concentration, Position, Neighbours(k)):
    keep the shorthand, so the rebuilt scenario is the one that wrote the metadata."""
    k = meta.get("n_neighbours")
    sensors = meta.get("sensors")
    if not (isinstance(k, int) and k > 0 and isinstance(sensors, list) and len(sensors) == 3):
        return meta
    names = [s.get("model") if isinstance(s, dict) else None for s in sensors]
    if names == ["Concentration", "Position", "Neighbours"] and sensors[2].get("k") == k:
        return {key: value for key, value in meta.items() if key != "sensors"}
    return meta


def scenario_from_metadata(meta: dict) -> Scenario:
    """The ``Scenario`` described by ``meta``: ``Scenario.metadata()``'s shape, read back.

        {"grid_size": [128, 128], "n_agents": 16, "max_steps": 500,
         "plume": {"model": "Gaussian", "sigma": 8, "source": "random"},
         "action_model": {"model": "Oriented", "turn_degrees": 45},
         "sensors": [{"model": "Concentration"}, {"model": "Antennae", "distance": 2}],
         "reward": {"model": "StepPenalty", "step_penalty": 0.01}}

    Every key is optional (left out: the ``Scenario`` default). Models are ``plume_multi.models.
    from_metadata`` dicts (``"family"`` may be left out); ``action_model`` may also be a name
    (``"cardinal"``). The derived keys ``Scenario.metadata()`` writes (``source_location`` and
    ``sigma`` when a plume is given, ``n_neighbours`` when sensors are) are accepted when they agree
    with the models, so ``scenario_from_metadata(sc.metadata())`` rebuilds ``sc``.

    Raises:
        ValidationError: not a dict, an unknown key, a bad model or value, or a derived key that
            disagrees with the models (naming it).
    """
    if not isinstance(meta, dict):
        raise ValidationError(f"scenario: got {type(meta).__name__}; expected a dict of Scenario fields")
    unknown = sorted(set(meta) - _FIELDS)
    if unknown:
        raise ValidationError(f"scenario: got unknown key(s) {unknown}; expected some of {sorted(_FIELDS)}")
    kwargs, derived = {}, {}
    meta = _shorthand(meta)
    units = {}
    for key, value in meta.items():
        if key in _DERIVED and meta.get(_DERIVED[key]) is not None:
            derived[key] = value
        elif key in _UNITS and meta.get("plume") is not None:
            units[key] = value
        elif key in _MODEL_KEYS:
            kwargs[key] = _meta_model(key, value, _MODEL_KEYS[key])
        elif key == "walls" and value is not None:
            # Walls.metadata()'s dict, inflated by Scenario once the grid is known: a shape that is
            # not the grid's is refused before a byte is inflated
            kwargs[key] = value if isinstance(value, dict) else Walls.from_metadata(value)
        elif key == "sensors" and value is not None:
            if not isinstance(value, list) or not value:
                raise ValidationError(f"Scenario.sensors: got {value!r}; expected a non-empty list of sensor dicts")
            kwargs[key] = tuple(_meta_model(key, s, "sensor") for s in value)
        else:
            kwargs[key] = _nested_tuples(value)
    scenario = Scenario(**kwargs)
    built = scenario.metadata()
    for key, value in derived.items():
        want = built[key]
        if key == "n_neighbours":  # the shorthand's Neighbours(k) is in the sensors list
            from .models.sensors import Neighbours

            ks = [s.k for s in scenario.sensors if isinstance(s, Neighbours)]
            if value == 0 or value in ks:
                continue
            want = ks[0] if ks else 0
        if value is not None and _nested_tuples(value) != _nested_tuples(want):
            raise ValidationError(f"Scenario.{key}: got {value!r}, but the {_DERIVED[key]} gives {want!r}; expected "
                                  f"the same value or the key left out")
    # units the plume knows are derived (a replace() on another grid derives them again); others are given
    given = {key: value for key, value in units.items() if value is not None and getattr(scenario, key) != value}
    return scenario.replace(**given) if given else scenario


# a scenario's JSON, its walls included (2**30 cells of random walls pack into 171 MB of base64)
_MAX_SCENARIO_BYTES = 256 * 2**20


def load_scenario(path) -> Scenario:
    """The scenario of a JSON file (``scenario_from_metadata`` of its content).

    Raises:
        ValidationError: naming the file, when it is not a readable regular file (a FIFO, a folder,
            a missing file or link, a name that is not a path: ``plume_multi.files``), holds more
            than 256 MiB, is not UTF-8 JSON, nests deeper than Python can follow,
            holds a number Python will not read (more than 4300 digits), or describes no valid
            scenario.
    """
    expected = "the path of a scenario JSON file (save_scenario's)"
    text = _files.read_text(path, "load_scenario", expected, limit=_MAX_SCENARIO_BYTES)
    try:
        meta = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"scenario: {str(path)!r} is not valid JSON: {exc}") from None
    except RecursionError:
        raise ValidationError(f"scenario: {str(path)!r} nests too deeply to read; expected Scenario.metadata()'s "
                              "shape (a few levels)") from None
    except ValueError as exc:  # Python's limit on the digits of an int read from text
        raise ValidationError(f"scenario: {str(path)!r} holds a number Python will not read ({exc}); expected "
                              "Scenario.metadata()'s values (numbers of a few digits)") from None
    try:
        return scenario_from_metadata(meta)
    except RecursionError:
        raise ValidationError(f"scenario: {str(path)!r} nests too deeply (a value of lists within lists); expected "
                              "Scenario.metadata()'s shape") from None


def save_scenario(scenario: Scenario, path) -> Path:
    """Write ``scenario.metadata()`` as JSON to ``path``, whole or not at all (missing folders are
    made). A ``Movie`` is written as its file's path and checksum (``load_scenario`` refuses the
    file if it changed); a movie held only in memory cannot be saved.

    Raises:
        ValidationError: ``scenario`` is not a ``Scenario``, holds a model that cannot be written
            to JSON, or ``path`` cannot be written (a folder, a path through a file, not a path).
    """
    if not isinstance(scenario, Scenario):
        raise ValidationError(f"scenario: got {type(scenario).__name__}; expected a plume_multi.Scenario")
    _files.check_output(path, "save_scenario", "the path of the JSON file to write")
    for model in (scenario.plume, scenario.action_model, scenario.reward, *scenario.sensors):
        problem = model.saving_problem()
        if problem:
            raise ValidationError(f"save_scenario: {problem}")
    return _files.write_text(path, json.dumps(scenario.metadata(), indent=2) + "\n", "save_scenario",
                             "the path of the JSON file to write")


class ModelContext:
    """What a model needs to know about the scenario it is part of (the ``ctx`` of a model's
    ``check``, ``bind`` and ``state_spec``; built by ``Scenario`` and ``Simulator``)."""

    def __init__(self, scenario: Scenario):
        self.scenario = scenario
        self.grid_size = scenario.grid_size
        self.dims = scenario.dims
        self.n_agents = scenario.n_agents
        self.plume = scenario.plume
        self.body = scenario.action_model
        self.continuous = scenario.action_model.continuous
        # headings turn in the plane: no body has one in 3-D (Continuous moves by a velocity there)
        self.oriented = scenario.action_model.oriented and scenario.dims == 2
        self.sensors = scenario.sensors
        self.walls = scenario.walls
