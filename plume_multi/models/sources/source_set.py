"""A plume's sources when they are several, drawn or moving: what the plume keeps, and the compiled
helpers its functions call.

A plume with such sources keeps three state arrays (``source_state_spec``):

* ``source``: ``(B, K, 2)`` float64, the cells of world ``b``'s ``K`` sources now;
* ``found``: ``(B, K)`` bool, which of them an agent of the world has reached this episode;
* ``motion``: ``(B, K, W)`` float64, the source motion's own state (``W`` columns, its ``STATE``).

Its compiled functions call ``place_sources`` (at a reset), ``move_sources`` (each step, before
the agents move) and, as the plume's ``reach`` role (``PlumeKernels``), ``reach_source``.
Random sources draw their cells at a reset from the plume's stream, counters ``(0, 2k)`` and
``(0, 2k + 1)`` for source ``k`` (a plume with one random source draws what it drew before).
"""

from __future__ import annotations

import numpy as np

from ...engine import rng
from ...engine.api import is_on
from ...engine.jit import njit
from ...engine.walls import solid_at
from ...checks import check_point
from ...errors import ValidationError
from ..base import StateArray, fail
from .motion import move_source, start_source
from .static import Static

__all__ = ["MAX_SOURCES", "parse_source", "source_cells", "source_state_spec", "motion_of", "place_sources",
           "move_sources", "move_sources_among_walls", "reach_source", "nearest_counted"]

MAX_SOURCES = 16


def parse_source(owner: str, value, *, allow_random: bool, integer: bool, default_ok: bool = True):
    """``value`` normalised: None (default), ``"random"``, one ``(x, y)``, or a tuple of ``K >= 2``
    ``(x, y)`` pairs. ``ValidationError`` naming ``owner.source`` otherwise, a list (or ``(1, 2)``
    array) of one pair included: one source is its pair itself."""
    kind = "integer cells" if integer else "cells, finite numbers"
    rule = ("None, " if default_ok else "") + ("'random', " if allow_random else "") + \
        f"(x, y) or a list of up to {MAX_SOURCES} (x, y) pairs ({kind})"
    if value is None and default_ok:
        return None
    if isinstance(value, str):
        if allow_random and value == "random":
            return value
        fail(owner, "source", value, rule)
    if isinstance(value, np.ndarray) and value.ndim == 2:
        pairs = list(value)  # (K, 2): K sources
    elif isinstance(value, (tuple, list)) and value and isinstance(value[0], (tuple, list, np.ndarray)):
        pairs = list(value)
    else:
        pairs = [value]  # one point (check_point refuses anything that is not one)
    if len(pairs) > MAX_SOURCES:
        fail(owner, "source", value, rule)
    if len(pairs) == 1 and pairs[0] is not value:
        # a list of one pair: one source given as a list of several, or a pair wrapped once too often
        fail(owner, "source", value, f"one source as its (x, y) itself, not a list of one, or a list of "
                                     f"2..{MAX_SOURCES} (x, y) pairs ({kind})")
    out = []
    for pair in pairs:
        try:
            out.append(check_point(owner, "source", pair, integer=integer, expected=rule))
        except ValidationError:
            fail(owner, "source", value, rule)  # the whole value in the message, not the pair
    return out[0] if len(out) == 1 else tuple(out)


def source_cells(source) -> list:
    """The fixed sources of a normalised ``source`` as a list of ``(x, y)`` (empty for random)."""
    if source is None or isinstance(source, str):
        return []
    return list(source) if isinstance(source[0], tuple) else [source]


def motion_of(owner: str, motion, *, lattice: bool = False):
    """``source_motion`` checked: a ``sources`` model (None: ``Static()``)."""
    from .motion import SourceMotion

    if motion is None:
        return Static()
    if not isinstance(motion, SourceMotion):
        fail(owner, "source_motion", motion, "a plume_multi.sources model (Static, Drift, RandomWalk, Waypoints)")
    if lattice and not motion.lattice_ok:
        fail(owner, "source_motion", motion, "a motion that moves sources on cells: sources.Static or sources.RandomWalk")
    return motion


def source_state_spec(n_sources: int, motion, grid_size) -> dict:
    """The state arrays of ``n_sources`` sources moved by ``motion`` (module docstring)."""
    w, h = grid_size
    return {"source": StateArray(np.float64, "world", (n_sources, 2), 0.0, (float(w - 1), float(h - 1))),
            "found": StateArray(np.bool_, "world", (n_sources,)),
            "motion": StateArray(np.float64, "world", (n_sources, motion.state_width()))}


# --------------------------------------------------------------------- compiled helpers
@njit(inline="always")
def place_sources(starts, random, motion, sources, b, seed, episode, shape, stream, lattice):
    """At a reset of world ``b``: every source at its start (``starts`` ``(K, 2)``), or drawn
    uniformly over the cells of the grid of ``shape`` when ``random``; none found; the motion
    started. ``motion``: ``(M, MS)``, the motion's record and state; ``sources``: ``(xy, found)``."""
    # members by index, not unpacked: see engine/assemble.py (the arrays are written)
    M = motion[0]
    MS = motion[1]
    xy = sources[0]
    found = sources[1]
    key = rng.stream_key(seed, episode, stream)
    for k in range(xy.shape[1]):
        if is_on(random):
            xy[b, k, 0] = np.floor(rng.uniform(key, 0, 2 * k) * shape[0])
            xy[b, k, 1] = np.floor(rng.uniform(key, 0, 2 * k + 1) * shape[1])
        else:
            xy[b, k, 0] = starts[k, 0]
            xy[b, k, 1] = starts[k, 1]
        found[b, k] = False
        if is_on(M):
            start_source(M, MS, xy, b, k, seed, episode, lattice)


@njit(inline="always")
def move_sources(motion, xy, b, t, shape, seed, episode, lattice):
    """Step ``t`` of world ``b``: every source moves (nothing without a motion; ``motion``:
    ``(M, MS)``)."""
    M = motion[0]
    MS = motion[1]
    if is_on(M):
        for k in range(xy.shape[1]):
            move_source(M, MS, xy, b, k, t, shape, seed, episode, lattice)


@njit(inline="always")
def move_sources_among_walls(motion, xy, b, t, shape, seed, episode, lattice, wall):
    """``move_sources`` among the solid cells of mask ``k`` of ``masks`` (``wall = (masks, k)``,
    ``masks`` ``(K, H, W)`` bool): a
    source whose move ends in a solid cell (its cell ``floor(c + 0.5)``) stays where it was; its
    motion's state moves on (a drifting source waits against the wall, a random walker until it
    tumbles away, a waypoint follower until its path leaves the wall)."""
    M = motion[0]
    MS = motion[1]
    masks = wall[0]
    k = wall[1]
    if is_on(M):
        for j in range(xy.shape[1]):
            x0 = xy[b, j, 0]
            y0 = xy[b, j, 1]
            move_source(M, MS, xy, b, j, t, shape, seed, episode, lattice)
            if solid_at(masks, k, (xy[b, j, 0], xy[b, j, 1])):
                xy[b, j, 0] = x0
                xy[b, j, 1] = y0


@njit(inline="always")
def reach_source(xy, found, b, x, y, goal_d2, team):
    """An agent at ``(x, y)`` of world ``b`` reaches the first source within ``goal_d2`` (squared
    cells) of it; with ``team``, the first not found yet by another agent of its world (a source
    found already counts no more). That source is marked found. Returns ``(reached, all found)``."""
    reached = False
    everything = True
    for k in range(xy.shape[1]):
        if not reached and not (team and found[b, k]):
            dx = x - xy[b, k, 0]
            dy = y - xy[b, k, 1]
            if dx * dx + dy * dy <= goal_d2:
                found[b, k] = True
                reached = True
        everything = everything and found[b, k]
    return reached, everything


def nearest_counted(xy: np.ndarray, found: np.ndarray, loc: np.ndarray, n_agents: int, team: bool) -> np.ndarray:
    """``(B*N,)`` squared distance of each agent (``loc`` ``(B*N, 2)``) to the nearest source that
    ``reach_source`` would count (with ``team``, those not found yet; inf when none)."""
    src = np.repeat(xy, n_agents, axis=0)  # (B*N, K, 2)
    d2 = ((loc[:, None, :] - src) ** 2).sum(axis=2)
    if team:
        d2 = np.where(np.repeat(found, n_agents, axis=0), np.inf, d2)
    return d2.min(axis=1)
