"""What a model's compiled functions receive from the step driver, and the defaults of optional ones.

The driver (``assemble.py``) passes every sensor the same three records, built once per world or
per agent (Numba keeps them in registers: they cost nothing):

``PlumeView(params, state, world, sample_cell_fn, sample_at_fn, wind_at_fn)``
    the plume of the world being stepped. Read it with ``sample_cell(plume, ix, iy)``,
    ``sample_at(plume, x, y)`` and ``wind_at(plume, x, y)`` below; a sensor written for one plume
    (``sensors.Hits`` for ``plumes.PoissonHits``) may call that plume's own functions with
    ``plume.params``, ``plume.state``.

``AgentView`` (per agent, after it moved)
    ``i`` row of the agent in every per-agent array, ``b`` its world, ``n`` its index in its world,
    ``t`` step of the episode (0 after a reset), ``first`` (True right after a reset), ``active``
    (still searching), ``seed``, ``episode`` (for counter-based draws), ``x, y`` float position
    (the cell for grid bodies), ``cx, cy`` the cell (ints), ``heading`` (degrees, 0 = +x,
    90 = +y; 0 for bodies without one), ``width``, ``height``, ``n_agents`` (per world).

``WorldView`` (per world, after all its agents moved)
    ``b``, ``t``, ``first``, ``was_done`` (the episode was already over before this step: stepping on
    with autoreset off), ``seed``, ``episode``,
    ``n_agents``, ``base`` (row of the world's first agent), ``width``, ``height``, ``pos``
    ((B*N, 2) int32 cells of every agent), ``active`` ((B*N,) bool).

Compile-time flags: ``static_flag(value)`` is an empty array whose *number of dimensions* is the
value (2 for on, 1 for off; an array because Numba's parallel loops refuse tuples nested in a
record), so in compiled code ``is_on(flag)`` is a constant and the branch it guards costs nothing
when off (a run-time bool made the default scenario's step 4x slower at one agent per world).

Records passed to the driver (a model's ``params()`` and ``state_tuple()``) must be flat: numbers,
arrays and flags, no tuple inside (Numba's parallel loop refuses nested tuples).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .jit import njit

__all__ = ["PlumeView", "InnerSensor", "AgentView", "WorldView", "sample_cell", "sample_at", "wind_at", "static_flag", "is_on",
           "plume_reset_world", "plume_advance", "plume_view", "calm", "body_reset_agent", "body_location",
           "body_heading", "no_sensor"]

PlumeView = namedtuple("PlumeView", "params state world sample_cell_fn sample_at_fn wind_at_fn")
# what a wrapper sensor (History) receives as ``inner``: the wrapped sensor's function and parameters
InnerSensor = namedtuple("InnerSensor", "observe_agent params")
AgentView = namedtuple("AgentView", "i b n t first active seed episode x y cx cy heading width height n_agents")
WorldView = namedtuple("WorldView", "b t first was_done seed episode n_agents base width height pos active")


_ON = np.zeros((0, 0), np.bool_)
_OFF = np.zeros(0, np.bool_)
_ON.flags.writeable = False
_OFF.flags.writeable = False


def static_flag(value: bool) -> np.ndarray:
    """A flag the compiler sees (test it with ``is_on``)."""
    return _ON if value else _OFF


@njit(inline="always")
def is_on(flag):
    return flag.ndim == 2


# ------------------------------------------------------------------------ reading the plume
@njit(inline="always")
def sample_cell(plume, ix, iy):
    """Concentration at integer cell ``(ix, iy)`` (inside the grid), float32."""
    return plume.sample_cell_fn(plume.params, plume.state, plume.world, ix, iy)


@njit(inline="always")
def sample_at(plume, x, y):
    """Concentration at a float position in cells, float32; 0 off the grid."""
    return plume.sample_at_fn(plume.params, plume.state, plume.world, x, y)


@njit(inline="always")
def wind_at(plume, x, y):
    """Wind ``(u, v)`` in cells per step at a float position."""
    return plume.wind_at_fn(plume.params, plume.state, plume.world, x, y)


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
def body_reset_agent(P, S, i, n, pos, seed, episode):
    """A body with nothing to set at a reset but its cell (already placed)."""


@njit(inline="always")
def body_location(P, S, i, pos):
    """A grid body's float position: its cell."""
    return np.float64(pos[i, 0]), np.float64(pos[i, 1])


@njit(inline="always")
def body_heading(P, S, i):
    """A body without a heading faces +x."""
    return 0.0


@njit(inline="always")
def no_sensor(P, S, obs, col, plume, view, inner):
    """A sensor role with nothing to do (the default of ``observe_agent`` and ``observe_world``)."""

