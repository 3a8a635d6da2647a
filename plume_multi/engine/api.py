"""What a model's compiled functions receive from the step driver, and the defaults of optional ones.

The driver (``assemble.py``) passes every sensor the same three records, built once per world or
per agent (Numba keeps them in registers: they cost nothing):

``PlumeView(params, state, world)``
    the plume of the world being stepped. Read it with ``sample_cell(plume, ix, iy)``,
    ``sample_at(plume, x, y)`` and ``wind_at(plume, x, y)`` below: they call the plume's own
    compiled functions, found when the step compiles from the class of ``params`` (every plume's
    ``params()`` is a named tuple of its own class, ``register_plume``). A sensor written for one
    plume (``sensors.Hits`` for ``plumes.PoissonHits``) may call that plume's functions directly
    with ``plume.params``, ``plume.state``, ``plume.world``.

``AgentView`` (per agent, after it moved)
    ``i`` row of the agent in every per-agent array, ``b`` its world, ``n`` its index in its world,
    ``t`` step of the episode (0 after a reset), ``first`` (True right after a reset), ``active``
    (still searching), ``seed``, ``episode`` (for counter-based draws), ``x, y`` float position
    (the cell for grid bodies), ``cx, cy`` the cell (ints), ``heading`` (degrees, 0 = +x,
    90 = +y; 0 for bodies without one), ``width``, ``height``, ``n_agents`` (per world),
    ``heading_index``: ``k >= 0`` when the heading is exactly ``heading_table[k]`` of the body's
    parameters (a body on a lattice of headings, ``Oriented``), else -1 (always -1 for bodies
    without ``BodyKernels.heading_index``: a constant, so the branch it guards compiles away). A
    sensor reads ``body_heading_table(ctx)`` when it builds its parameters and keeps tables of what
    it computes from the heading, indexed by ``k``: exactly today's values, without their sines.

``WorldView`` (per world, after all its agents moved)
    ``b``, ``t``, ``first``, ``was_done`` (the episode was already over before this step: stepping on
    with autoreset off), ``seed``, ``episode``,
    ``n_agents``, ``base`` (row of the world's first agent), ``width``, ``height``, ``pos``
    ((B*N, 2) int32 cells of every agent), ``active`` ((B*N,) bool).

In a 3-D scenario (``Scenario(grid_size=(W, H, D))``) the driver passes ``AgentView3`` and
``WorldView3`` instead: the same fields, plus ``z`` (float), ``cz`` (the cell's z) and ``depth``
in ``AgentView3`` and ``depth`` in ``WorldView3``, whose ``pos`` is ``(B*N, 3)``. Sensors read
the plume with ``sample_cell3(plume, ix, iy, iz)``, ``sample_at3(plume, x, y, z)`` and
``wind_at3(plume, x, y, z) -> (u, v, w)``, which call the plume's ``kernels_3d`` functions.

Compile-time flags: ``static_flag(value)`` is ``True`` or ``None``; in compiled code ``is_on(flag)``
is a constant decided by the flag's type, so the branch it guards costs nothing when off (a
run-time bool made the default scenario's step 4x slower at one agent per world; an empty array
as a flag cost 20 % in reference counting).

Records passed to the driver (a model's ``params()`` and ``state_tuple()``) must be flat: numbers,
arrays and flags, no tuple inside (Numba's parallel loop refuses nested tuples).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from numba import types
from numba.extending import overload

from .jit import njit

__all__ = ["PlumeView", "InnerSensor", "AgentView", "WorldView", "AgentView3", "WorldView3", "sample_cell", "sample_at",
           "wind_at", "sample_cell3", "sample_at3", "wind_at3", "observe_inner", "register_plume", "static_flag",
           "is_on", "plume_reset_world", "plume_advance", "plume_view", "calm", "calm3", "plume_reach",
           "body_reset_agent", "body_location", "body_location3", "body_heading", "body_heading_index",
           "body_heading_table", "no_sensor", "grid_point"]

PlumeView = namedtuple("PlumeView", "params state world")
"""The plume of the world being stepped, as sensors receive it (see the module's documentation)."""
InnerSensor = namedtuple("InnerSensor", "observe_agent params")
"""What a wrapper sensor (``History``) receives as ``inner``: the wrapped sensor's function and parameters."""
AgentView = namedtuple("AgentView", "i b n t first active seed episode x y cx cy heading width height n_agents "
                                   "heading_index")
"""One agent after it moved, as ``observe_agent`` receives it (the fields: the module's documentation)."""
WorldView = namedtuple("WorldView", "b t first was_done seed episode n_agents base width height pos active")
"""One world after all its agents moved, as ``observe_world`` receives it (the fields: the module's documentation)."""
AgentView3 = namedtuple("AgentView3", "i b n t first active seed episode x y z cx cy cz heading width height depth "
                                      "n_agents heading_index")
"""``AgentView`` in a 3-D scenario: its fields and ``z`` (float), ``cz`` (the cell's z), ``depth``."""
WorldView3 = namedtuple("WorldView3", "b t first was_done seed episode n_agents base width height depth pos active")
"""``WorldView`` in a 3-D scenario: its fields and ``depth``; ``pos`` is ``(B*N, 3)``."""


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
# One table per dimension: a plume may return the same parameter class in 2-D and 3-D, with its
# ``kernels`` in one and its ``kernels_3d`` in the other.
_PLUMES: dict = {}
_PLUMES_3D: dict = {}


def register_plume(params, kernels, owner: str, dims: int = 2) -> None:
    """Make ``sample_cell(plume, ...)`` and the others (``sample_cell3`` and the others when ``dims``
    is 3) find ``kernels`` for plumes whose parameters are of ``type(params)``: a named tuple class
    of the plume's own."""
    from ..errors import ValidationError

    cls = type(params)
    if not (isinstance(params, tuple) and hasattr(cls, "_fields")):
        raise ValidationError(f"{owner}: params() returned {cls.__name__}; expected a named tuple "
                              "(collections.namedtuple) of the plume's own class")
    table = _PLUMES_3D if dims == 3 else _PLUMES
    known = table.get(cls)
    if known is not None and known is not kernels:
        raise ValidationError(f"{owner}: params() returns {cls.__qualname__}, which another plume with other "
                              "compiled functions returns too; give this plume a named tuple class of its own")
    table[cls] = kernels


def _plume_function(plume_type, role: str, table: dict):
    cls = getattr(plume_type.types[0], "instance_class", None)
    return getattr(table[cls], role)


def sample_cell(plume, ix, iy):
    """Concentration at integer cell ``(ix, iy)`` (inside the grid), float32."""


def sample_at(plume, x, y):
    """Concentration at a float position in cells, float32: within half a cell of the grid, the
    value at the nearest point of ``[0, W-1] x [0, H-1]`` (``grid_point``); 0 farther out."""


def wind_at(plume, x, y):
    """Wind ``(u, v)`` in cells per step at a float position."""


def sample_cell3(plume, ix, iy, iz):
    """3-D: concentration at integer cell ``(ix, iy, iz)`` (inside the grid), float32."""


def sample_at3(plume, x, y, z):
    """3-D: concentration at a float position in cells, float32; 0 off the grid."""


def wind_at3(plume, x, y, z):
    """3-D: wind ``(u, v, w)`` in cells per step at a float position."""


def observe_inner(inner, S, obs, col, plume, agent):
    """A wrapper sensor's call of the sensor it wraps (``inner``: an ``InnerSensor``)."""


def _function_of(record_type, index: int):
    return record_type.types[index].dispatcher


def _forward_to_the_plume(stub, role: str) -> None:
    """Compile ``stub(plume, a, b)`` as a call of the plume's own ``role`` function."""
    @overload(stub, inline="always")
    def _typed(plume, a, b):
        fn = _plume_function(plume, role, _PLUMES)

        def impl(plume, a, b):
            return fn(plume.params, plume.state, plume.world, a, b)
        return impl


def _forward_to_the_plume3(stub, role: str) -> None:
    """Compile ``stub(plume, a, b, c)`` as a call of the plume's own 3-D ``role`` function."""
    @overload(stub, inline="always")
    def _typed(plume, a, b, c):
        fn = _plume_function(plume, role, _PLUMES_3D)

        def impl(plume, a, b, c):
            return fn(plume.params, plume.state, plume.world, a, b, c)
        return impl


for _stub in (sample_cell, sample_at, wind_at):
    _forward_to_the_plume(_stub, _stub.__name__)
for _stub in (sample_cell3, sample_at3, wind_at3):
    _forward_to_the_plume3(_stub, _stub.__name__[:-1])


@overload(observe_inner, inline="always")
def _observe_inner(inner, S, obs, col, plume, agent):
    fn = _function_of(inner, 0)

    def impl(inner, S, obs, col, plume, agent):
        fn(inner.params, S, obs, col, plume, agent, InnerSensor(no_sensor, ()))
    return impl


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
def calm(P, S, pw, x, y):
    """No wind."""
    return 0.0, 0.0


@njit(inline="always")
def calm3(P, S, pw, x, y, z):
    """No wind (3-D)."""
    return 0.0, 0.0, 0.0


@njit(inline="always")
def plume_reach(P, S, b, x, y, goal_d2, team):
    """A plume of one source: the step compares the agent's distance to ``source`` itself and
    never calls this."""
    return False, False


@njit(inline="always")
def body_reset_agent(P, S, i, n, pos, seed, episode):
    """A body with nothing to set at a reset but its cell (already placed)."""


@njit(inline="always")
def body_location(P, S, i, pos):
    """A grid body's float position: its cell."""
    return np.float64(pos[i, 0]), np.float64(pos[i, 1])


@njit(inline="always")
def body_location3(P, S, i, pos):
    """A grid body's float position in 3-D: its cell."""
    return np.float64(pos[i, 0]), np.float64(pos[i, 1]), np.float64(pos[i, 2])


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
def grid_point(x, y, width, height):
    """Where a plume's ``sample_at`` reads a float point ``(x, y)`` (cells) of a ``width x height``
    grid: ``(inside, xr, yr)``.

    Cell ``(i, j)`` covers ``[i - 1/2, i + 1/2] x [j - 1/2, j + 1/2]``, so the grid covers
    ``[-1/2, W - 1/2] x [-1/2, H - 1/2]``: a point there is ``inside`` and reads at ``(xr, yr)``,
    the point clamped into ``[0, W-1] x [0, H-1]`` (a point within half a cell of the edge reads
    the edge, as its cell does; ``x = -5.5e-16`` from an antenna's rounding reads cell 0). A point
    outside, or NaN, is not ``inside`` and reads 0.
    """
    inside = x >= -0.5 and y >= -0.5 and x <= width - 0.5 and y <= height - 0.5
    return inside, min(max(x, 0.0), width - 1.0), min(max(y, 0.0), height - 1.0)
