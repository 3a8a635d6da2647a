"""What a model's compiled functions receive from the step driver, and the defaults of optional ones.

Coordinates are fixed-length tuples (``engine/tuples.py``): a float position ``point`` ``(x, y)``
or ``(x, y, z)``, an integer ``cell``, the grid's ``shape`` ``(W, H)`` or ``(W, H, D)``. One
function serves every dimension: Numba compiles it for the length of the tuples it is given.

The driver (``assemble.py``) passes every sensor the same three records, built once per world or
per agent (Numba keeps them in registers: they cost nothing):

``PlumeView(params, state, world)``
    the plume of the world being stepped. Read it with ``sample_cell(plume, cell)``,
    ``sample_at(plume, point)`` and ``wind_at(plume, point)`` below: they call the plume's own
    compiled functions, found when the step compiles from the class of ``params`` (every plume's
    ``params()`` is a named tuple of its own class, ``register_plume``). A sensor written for one
    plume (``sensors.Hits`` for ``plumes.PoissonHits``) may call that plume's functions directly
    with ``plume.params``, ``plume.state``, ``plume.world``.

``AgentView`` (per agent, after it moved)
    ``i`` row of the agent in every per-agent array, ``b`` its world, ``n`` its index in its world,
    ``t`` step of the episode (0 after a reset), ``first`` (True right after a reset), ``active``
    (still searching), ``seed``, ``episode`` (for counter-based draws), ``point`` float position
    (the cell for grid bodies), ``cell`` (ints), ``shape`` the grid's, ``heading`` (degrees, 0 = +x,
    90 = +y; 0 for bodies without one), ``n_agents`` (per world), ``heading_index``: ``k >= 0``
    when the heading is exactly ``heading_table[k]`` of the body's parameters (a body on a lattice
    of headings, ``Oriented``), else -1 (always -1 for bodies without ``BodyKernels.heading_index``:
    a constant, so the branch it guards compiles away). A sensor reads ``body_heading_table(ctx)``
    when it builds its parameters and keeps tables of what it computes from the heading, indexed
    by ``k``: exactly today's values, without their sines.
    The 2-D names stay for sensors written before tuples: ``x, y`` (``point[0], point[1]``),
    ``cx, cy`` (the cell's) and ``width, height`` (the shape's); a model that reads them declares
    ``dimensions = (2,)`` (the default), so a 3-D scenario refuses it.

``WorldView`` (per world, after all its agents moved)
    ``b``, ``t``, ``first``, ``was_done`` (the episode was already over before this step: stepping on
    with autoreset off), ``seed``, ``episode``, ``n_agents``, ``base`` (row of the world's first
    agent), ``shape``, ``pos`` ((B*N, D) int32 cells of every agent), ``active`` ((B*N,) bool), and
    ``width``, ``height`` (the shape's first two sides).

In a scenario with walls (``Scenario(walls=...)``) the sensors receive a ``WalledPlumeView(params,
state, world, walls, wall)`` instead: ``walls`` the scenario's ``(K, H, W)`` (``(K, D, H, W)``) bool
masks, True where solid, ``wall`` the index of the world's mask (its cells are
``walls[(wall,) + cell[::-1]]``): the readers below return 0 (a calm wind) for a point inside a
solid cell (the cell ``floor(c + 0.5)`` of each coordinate), before asking the plume. The view's
type says whether it has walls, so the readers of a scenario without walls compile to what they
were, with no test.

Compile-time flags: ``static_flag(value)`` is ``True`` or ``None``; in compiled code ``is_on(flag)``
is a constant decided by the flag's type, so the branch it guards costs nothing when off (a
run-time bool made the default scenario's step 4x slower at one agent per world; an empty array
as a flag cost 20 % in reference counting).

Records passed to the driver (a model's ``params()`` and ``state_tuple()``) must be flat: numbers,
arrays and flags, no tuple inside (Numba's parallel loop refuses nested tuples).

Deprecated: the readers' 2-D spelling ``sample_cell(plume, ix, iy)``, ``sample_at(plume, x, y)``,
``wind_at(plume, x, y)`` (a model that uses it declares ``dimensions = (2,)``, the default);
``AgentView3``, ``WorldView3`` (now ``AgentView``, ``WorldView``), ``calm3``,
``body_location3``, ``body_place3`` (the functions without ``3``, which serve every dimension) and
the readers ``sample_cell3(plume, ix, iy, iz)``, ``sample_at3(plume, x, y, z)``,
``wind_at3(plume, x, y, z)`` (the readers above, given the tuple).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from numba import types
from numba.extending import overload

from .jit import njit
from .tuples import as_float, clamp_point, take

__all__ = ["PlumeView", "WalledPlumeView", "InnerSensor", "AgentView", "WorldView", "AgentView3", "WorldView3", "sample_cell", "sample_at",
           "wind_at", "sample_cell3", "sample_at3", "wind_at3", "observe_inner", "register_plume", "static_flag",
           "is_on", "plume_reset_world", "plume_advance", "plume_view", "calm", "calm3", "plume_reach",
           "body_reset_agent", "body_location", "body_location3", "body_heading", "body_heading_index",
           "body_heading_table", "body_place", "body_place3", "no_sensor", "grid_point"]

PlumeView = namedtuple("PlumeView", "params state world")
"""The plume of the world being stepped, as sensors receive it (see the module's documentation)."""
WalledPlumeView = namedtuple("WalledPlumeView", "params state world walls wall")
"""``PlumeView`` in a scenario with walls: ``walls`` the scenario's masks, ``(K, H, W)`` (``(K, D, H,
W)``) bool, ``wall`` the index of the world's."""
InnerSensor = namedtuple("InnerSensor", "observe_agent params")
"""What a wrapper sensor (``History``) receives as ``inner``: the wrapped sensor's function and parameters."""
AgentView = namedtuple("AgentView", "i b n t first active seed episode point cell shape heading n_agents heading_index "
                                   "x y cx cy width height")
"""One agent after it moved, as ``observe_agent`` receives it (the fields: the module's documentation)."""
WorldView = namedtuple("WorldView", "b t first was_done seed episode n_agents base shape pos active width height")
"""One world after all its agents moved, as ``observe_world`` receives it (the fields: the module's documentation)."""
AgentView3 = AgentView  # deprecated: one view for every dimension
WorldView3 = WorldView  # deprecated: one view for every dimension


def static_flag(value: bool):
    """A flag the compiler sees (test it with ``is_on``): ``True`` when on, ``None`` when off."""
    return True if value else None


def is_on(flag):
    """In compiled code: a constant, True for ``static_flag(True)``, False for ``static_flag(False)``."""
    return flag is not None


@overload(is_on, inline="always")
def _is_on(flag):
    if isinstance(flag, types.NoneType):
        return lambda flag: False
    return lambda flag: True


# ------------------------------------------------------------------------ reading the plume
# These helpers find the plume's function from the type of ``plume.params`` when they compile (an
# overload), so the call is resolved and inlined as if the sensor had named it. Values that hold
# functions would cost a step 20 % at one agent per world.
_PLUMES: dict = {}


def register_plume(params, kernels, owner: str, dims: int | None = None) -> None:
    """Make ``sample_cell(plume, ...)`` and the others find ``kernels`` for plumes whose parameters
    are of ``type(params)``: a named tuple class of the plume's own. (``dims`` is not used: the
    same functions serve every dimension.)"""
    from ..errors import ValidationError

    cls = type(params)
    if not (isinstance(params, tuple) and hasattr(cls, "_fields")):
        raise ValidationError(f"{owner}: params() returned {cls.__name__}; expected a named tuple "
                              "(collections.namedtuple) of the plume's own class")
    known = _PLUMES.get(cls)
    if known is not None and known is not kernels:
        raise ValidationError(f"{owner}: params() returns {cls.__qualname__}, which another plume with other "
                              "compiled functions returns too; give this plume a named tuple class of its own")
    _PLUMES[cls] = kernels


def _plume_function(plume_type, role: str):
    cls = getattr(plume_type.types[0], "instance_class", None)
    return getattr(_PLUMES[cls], role)


def sample_cell(plume, cell, iy=None):
    """Concentration at the integer cell ``cell`` (inside the grid), float32. (Deprecated 2-D
    spelling: ``sample_cell(plume, ix, iy)``.)"""


def sample_at(plume, point, y=None):
    """Concentration at a float position in cells, float32: within half a cell of a 2-D grid, the
    value at the nearest point of ``[0, W-1] x [0, H-1]`` (``grid_point``); 0 farther out.
    (Deprecated 2-D spelling: ``sample_at(plume, x, y)``.)"""


def wind_at(plume, point, y=None):
    """Wind in cells per step at a float position: a tuple as long as ``point``. (Deprecated 2-D
    spelling: ``wind_at(plume, x, y)``.)"""


def observe_inner(inner, S, obs, col, plume, agent):
    """A wrapper sensor's call of the sensor it wraps (``inner``: an ``InnerSensor``)."""


def _function_of(record_type, index: int):
    return record_type.types[index].dispatcher


def _walled(plume_type) -> bool:
    """The view is a ``WalledPlumeView`` (decided when the step compiles, from its type)."""
    return getattr(plume_type, "instance_class", None) is WalledPlumeView


def _pair(second) -> bool:
    """A reader called with two coordinates (the 2-D spelling before tuples), not a tuple."""
    return second is not None and not isinstance(second, (types.Omitted, types.NoneType))


@overload(sample_cell, inline="always")
def _sample_cell(plume, cell, iy=None):
    if _pair(iy):
        return lambda plume, cell, iy=None: sample_cell(plume, (cell, iy))
    fn = _plume_function(plume, "sample_cell")
    if not _walled(plume):
        return lambda plume, cell, iy=None: fn(plume.params, plume.state, plume.world, cell)

    def impl(plume, cell, iy=None):
        # read, then select: a branch around the read made the default scenario's step among
        # walls 0.3x of the step without (a select: 0.55x; benchmarks/walls.py)
        v = fn(plume.params, plume.state, plume.world, cell)
        return np.float32(0.0) if plume.walls[(plume.wall,) + cell[::-1]] else v
    return impl


def _at_point(stub, role: str, inside_a_wall) -> None:
    """Compile ``stub(plume, point)`` as a call of the plume's own ``role`` function; in a
    ``WalledPlumeView``, ``inside_a_wall(point)`` for a point inside a solid cell instead."""
    from .walls import solid_at

    @overload(stub, inline="always")
    def _typed(plume, point, y=None):
        if _pair(y):
            return lambda plume, point, y=None: stub(plume, (point, y))
        fn = _plume_function(plume, role)
        if not _walled(plume):
            return lambda plume, point, y=None: fn(plume.params, plume.state, plume.world, point)

        def impl(plume, point, y=None):
            if solid_at(plume.walls, plume.wall, point):
                return inside_a_wall(point)
            return fn(plume.params, plume.state, plume.world, point)
        return impl


@njit(inline="always")
def _no_concentration(point):
    return np.float32(0.0)


@njit(inline="always")
def _no_wind(point):
    return take((0.0, 0.0, 0.0), point)


_at_point(sample_at, "sample_at", _no_concentration)
_at_point(wind_at, "wind_at", _no_wind)


@overload(observe_inner, inline="always")
def _observe_inner(inner, S, obs, col, plume, agent):
    fn = _function_of(inner, 0)

    def impl(inner, S, obs, col, plume, agent):
        fn(inner.params, S, obs, col, plume, agent, InnerSensor(no_sensor, ()))
    return impl


@njit(inline="always")
def sample_cell3(plume, ix, iy, iz):
    """Deprecated: ``sample_cell(plume, (ix, iy, iz))``."""
    return sample_cell(plume, (ix, iy, iz))


@njit(inline="always")
def sample_at3(plume, x, y, z):
    """Deprecated: ``sample_at(plume, (x, y, z))``."""
    return sample_at(plume, (x, y, z))


@njit(inline="always")
def wind_at3(plume, x, y, z):
    """Deprecated: ``wind_at(plume, (x, y, z))``."""
    return wind_at(plume, (x, y, z))


# ------------------------------------------------------------------------ defaults of optional members
@njit(inline="always")
def plume_reset_world(P, S, b, seed, episode, pos, base, n_agents):
    """A plume with nothing to draw at a reset."""


@njit(inline="always")
def plume_advance(P, S, b, t, seed, episode):
    """A plume that does not change with time."""


@njit(inline="always")
def plume_view(P, S, b, t):
    """The world view of a plume: the world's index."""
    return b


@njit(inline="always")
def calm(P, S, pw, point):
    """No wind: zeros, as many as the point's coordinates."""
    return take((0.0, 0.0, 0.0), point)


calm3 = calm  # deprecated: ``calm`` serves every dimension


@njit(inline="always")
def plume_reach(P, S, b, point, goal_d2, team):
    """A plume of one source: the step compares the agent's distance to ``source`` itself and
    never calls this."""
    return False, False


@njit(inline="always")
def body_reset_agent(P, S, i, n, pos, seed, episode):
    """A body with nothing to set at a reset but its cell (already placed)."""


@njit(inline="always")
def body_location(P, S, i, cell):
    """A grid body's float position: its cell."""
    return as_float(cell)


body_location3 = body_location  # deprecated: ``body_location`` serves every dimension


@njit(inline="always")
def body_place(P, S, i, pos, point):
    """A grid body is never placed between cells: among walls its refused move puts its cell back."""


body_place3 = body_place  # deprecated: ``body_place`` serves every dimension


@njit(inline="always")
def body_heading(P, S, i):
    """A body without a heading faces +x."""
    return 0.0


@njit(inline="always")
def body_heading_index(P, S, i):
    """A body without a lattice of headings: no index (sensors compute from the heading)."""
    return -1


def body_heading_table(ctx) -> np.ndarray:
    """The scenario's body's lattice of headings, ``(K,)`` float64 degrees (``heading_table`` of its
    parameters: ``AgentView.heading_index`` indexes it), or an empty array for a body without
    ``BodyKernels.heading_index``. For a sensor's ``params(ctx)``."""
    body = getattr(ctx, "body", None)
    kernels = getattr(body, "kernels", None)
    if getattr(kernels, "heading_index", body_heading_index) is body_heading_index:
        return np.zeros(0, np.float64)
    table = getattr(body.params(ctx), "heading_table", None)
    if table is None:
        return np.zeros(0, np.float64)
    return np.ascontiguousarray(table, dtype=np.float64)


@njit(inline="always")
def no_sensor(P, S, obs, col, plume, view, inner):
    """A sensor role with nothing to do (the default of ``observe_agent`` and ``observe_world``)."""


@njit(inline="always")
def grid_point(point, shape):
    """Where a plume's ``sample_at`` reads a float ``point`` (cells) of a grid of ``shape``:
    ``(inside, clamped)``.

    Cell ``k`` covers ``[k - 1/2, k + 1/2]`` along each axis, so a 2-D grid covers ``[-1/2, W - 1/2]
    x [-1/2, H - 1/2]``: a point there is ``inside`` and reads at ``clamped``, the point clamped
    into ``[0, W-1] x [0, H-1]`` (a point within half a cell of the edge reads the edge, as its cell
    does; ``x = -5.5e-16`` from an antenna's rounding reads cell 0). In 3-D a point is ``inside``
    within ``[0, W-1] x [0, H-1] x [0, D-1]`` only (the 3-D plumes' rule since they were written;
    no 3-D sensor reads off its agent's own position). A point outside, or NaN, is not ``inside``
    and reads 0.
    """
    margin = 0.5 if len(point) == 2 else 0.0
    inside = True
    for c in range(len(point)):
        inside = inside and point[c] >= -margin and point[c] <= shape[c] - 1 + margin
    return inside, clamp_point(point, shape)

