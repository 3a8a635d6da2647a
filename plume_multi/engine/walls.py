"""Walls in the compiled step: the mask a world draws, start cells on free cells, and where a
continuous body stops.

A wall mask is a ``(H, W)`` (``(D, H, W)`` in 3-D) bool array indexed ``[y, x]`` (``[z, y, x]``),
True where a cell is solid; a scenario's masks are one ``(K, ...)`` read-only array ``masks``, and
world ``b`` uses mask ``k = index[b]`` (``mask_index`` of its seed and episode, drawn at every
reset). Functions take ``(masks, k)`` and read ``masks[k, ...]``: a view ``masks[k]`` made in the
step would be an array of its own, reference-counted wherever it goes (it made a step among walls
3x slower than one without; the scenario's array, an argument of the step, costs nothing). Cells are
those of the engine: a float position ``c`` lies in cell ``floor(c + 0.5)`` along each axis, so
cell ``k`` spans ``[k - 0.5, k + 0.5)``. Points and cells are tuples (``engine/tuples.py``): one
function serves 2-D and 3-D walls.

The driver generated for a scenario with walls (``assemble.py``, ``Layout.walls``) calls these;
the driver of a scenario without walls never imports this module.
"""

from __future__ import annotations

import numpy as np
from numba.extending import overload

from . import rng
from .assemble import C_N_AGENTS, C_START_MODE, START_FIXED
from .jit import njit
from .shared import fixed_starts, start_box
from .tuples import as_int, cell_of, per_coordinate, replaced, row

__all__ = ["WALLS_STREAM", "mask_index", "mask_indices", "solid_row", "solid_cell", "place_starts_in_walls",
           "place_starts_in_walls3", "pcg64_free_cells", "counter_free_cells", "stop_at_walls", "solid_at"]

WALLS_STREAM = 0x1F83D9AB  # the per-episode mask draw's stream (rng.stream_key)


@njit(cache=True, inline="always")
def mask_index(seed, episode, n_masks):
    """The mask world ``(seed, episode)`` uses among ``n_masks``: 0 for one, else
    ``floor(u * n_masks)`` of the uniform at counters ``(0, 0)`` of its walls stream."""
    if n_masks <= 1:
        return 0
    k = np.int64(rng.uniform(rng.stream_key(seed, episode, WALLS_STREAM), 0, 0) * n_masks)
    return min(k, n_masks - 1)


@njit(cache=True)
def mask_indices(seeds, episodes, n_masks, out):
    """``out[b] = mask_index(seeds[b], episodes[b], n_masks)`` for every world (``validate()``)."""
    for b in range(seeds.shape[0]):
        out[b] = mask_index(seeds[b], episodes[b], n_masks)


def solid_row(masks, k, pos, row):
    """In compiled code: whether cell ``pos[row]`` is solid in mask ``k`` (2-D or 3-D, by the type
    of ``masks``)."""


@overload(solid_row, inline="always")
def _solid_row(masks, k, pos, row):
    if masks.ndim == 3:
        return lambda masks, k, pos, row: masks[k, pos[row, 1], pos[row, 0]]
    return lambda masks, k, pos, row: masks[k, pos[row, 2], pos[row, 1], pos[row, 0]]


# ------------------------------------------------------------------------------------ start cells
@njit(cache=True)
def pcg64_free_cells(seed, n_agents, box, wall, out, row0):
    """``rng.pcg64_cells`` on free cells: with ``box = (origin, sizes)`` each agent draws
    ``integers(0, sizes[c])`` per axis from ``default_rng(seed)``, offset by ``origin``, and draws
    its whole cell again, from the same generator, while that cell is solid in mask ``k`` of
    ``wall = (masks, k)``. With no solid cell in the box this is ``pcg64_cells``'s draw exactly.
    ``out``: ``(rows, len(sizes))`` int32, rows ``row0 .. row0 + n_agents`` written."""
    origin, sizes = box
    masks, k = wall
    st_hi, st_lo, inc_hi, inc_lo = rng.pcg64_state(seed)
    has_buf = False
    buf = rng.ZERO
    for n in range(n_agents):
        while True:
            for c in range(len(sizes)):
                v, st_hi, st_lo, has_buf, buf = rng.pcg64_integer(sizes[c], st_hi, st_lo, inc_hi, inc_lo, has_buf, buf)
                out[row0 + n, c] = v + origin[c]
            if not solid_cell(masks, k, row(out, row0 + n, sizes)):
                break


@njit(cache=True)
def counter_free_cells(seed, episode, n_agents, box, wall, out, row0):
    """``rng.counter_cells`` on free cells: a solid cell is drawn again, whole, from the next
    counters of the episode's words (the counters run on through every agent's draws)."""
    origin, sizes = box
    masks, k = wall
    counter = 0
    for n in range(n_agents):
        while True:
            for c in range(len(sizes)):
                v, counter = rng.counter_integer(seed, episode, counter, sizes[c])
                out[row0 + n, c] = v + origin[c]
            if not solid_cell(masks, k, row(out, row0 + n, sizes)):
                break


@njit(inline="always")
def free_cells(seed, episode, n_agents, box, wall, pos, row0):
    """Episode 0's draws (``pcg64_free_cells``) or a later episode's (``counter_free_cells``)."""
    if episode == 0:
        pcg64_free_cells(seed, n_agents, box, wall, pos, row0)
    else:
        counter_free_cells(seed, episode, n_agents, box, wall, pos, row0)


@njit(inline="always")
def place_starts_in_walls(b, cfg, starts, pos, shape, seed, episode, wall):
    """``shared.place_starts`` among walls (mask ``k`` of ``wall = (masks, k)``): fixed starts are
    copied (``Scenario`` checked them free in every mask); drawn ones are drawn again while solid
    (``free_cells``). The start region holds a free cell of every mask (``Scenario``)."""
    if cfg[C_START_MODE] == START_FIXED:
        # the copy alone: shared.place_starts would bring its draws off walls, compiled for nothing (0.6 s)
        fixed_starts(b, cfg, starts, pos, shape)
        return
    n_agents = cfg[C_N_AGENTS]
    free_cells(seed, episode, n_agents, start_box(cfg, shape), wall, pos, b * n_agents)


place_starts_in_walls3 = place_starts_in_walls  # deprecated: one function for every dimension


@njit(inline="always")
def solid_cell(masks, k, cell):
    """Whether the integer ``cell`` (inside the grid) is solid in mask ``k``."""
    return masks[(k,) + cell[::-1]]


# ------------------------------------------------------------------------------------ reading
@njit(inline="always")
def solid_at(masks, k, point):
    """Whether the float ``point`` (cells) lies in a solid cell of mask ``k``; False off the grid
    (and for NaN)."""
    inside = True
    for c in range(len(point)):
        f = np.floor(point[c] + 0.5)
        inside = inside and f >= 0.0 and f < masks.shape[len(point) - c]
    if not inside:
        return False
    return solid_cell(masks, k, cell_of(point))


# ------------------------------------------------------------------------------------ continuous bodies
@njit(inline="always")
def _face(c, step):
    """The face of cell ``c`` that a path leaving it by ``step`` (+1 or -1) crosses."""
    return c + 0.5 if step > 0 else c - 0.5


@njit(inline="always")
def _top(c):
    """The largest float ``v`` of cell ``c`` (``floor(v + 0.5) == c`` in float arithmetic): the
    float below ``c + 0.5``, or the one below that where ``v + 0.5`` would round up (``c = 0``)."""
    v = np.nextafter(c + 0.5, -np.inf)
    while np.floor(v + 0.5) > c:
        v = np.nextafter(v, -np.inf)
    return v


@njit(inline="always")
def _inside(v, c):
    """``v`` moved into cell ``c``'s span ``[c - 0.5, _top(c)]`` (it is there, or at most a
    rounding away)."""
    return min(max(v, c - 0.5), _top(c))


@njit(inline="always")
def _at_face(c, step):
    """The coordinate where a path leaving cell ``c`` by ``step`` stops: on the face, in ``c``
    (``c - 0.5`` belongs to ``c``; ``c + 0.5`` to the next cell, so ``_top(c)``)."""
    return _top(c) if step > 0 else c - 0.5


@njit(inline="always")
def _toward(a, b):
    return 1 if b > a else (-1 if b < a else 0)


@njit(inline="always")
def _crossing(c, step, start, delta):
    """The path's parameter ``t`` in ``[0, 1]`` where it leaves cell ``c`` along an axis (``inf``
    when it does not move along it)."""
    if step == 0:
        return np.inf
    return (_face(c, step) - start) / delta


@njit(inline="always")
def stop_at_walls(masks, k, start, end):
    """Where a body moving straight from ``start`` (a point in a free cell) to ``end`` stops among
    the solid cells of mask ``k``: ``(end, False)`` when no solid cell lies on the way, else
    ``(point, True)``, the point where the path meets the face of the first solid cell it enters,
    on the free side.

    The cells on the way are visited in the order the path enters them (Amanatides and Woo's
    traversal): from a cell the next is along the axis whose face the path crosses first, at
    ``t = (face - start) / (end - start)``; on a tie the lower axis first (x, then y, then z: a path
    through a corner enters the x neighbour first), and only toward the end cell on each axis, so
    the traversal ends in it. At a solid cell entered along axis ``a`` at ``t``: coordinate ``a`` is
    the crossed face on the free side (``c - 0.5`` going down, the largest float of cell ``c``
    going up) and every other coordinate is the path's at ``t``, put inside its cell's span.
    """
    cell = _floors(start)
    last = _floors(end)
    step = _towards(cell, last)
    delta = _differences(end, start)
    moves = 0.0
    for c in range(len(start)):
        moves += abs(last[c] - cell[c])
    for _ in range(int(moves)):
        t = np.inf
        axis = 0
        for c in range(len(start)):
            if cell[c] != last[c]:
                tc = _crossing(cell[c], step[c], start[c], delta[c])
                if tc < t:  # strictly: the lower axis wins a tie
                    t = tc
                    axis = c
        entered = replaced(cell, axis, cell[axis] + step[axis])
        if solid_cell(masks, k, as_int(entered)):
            return _stop(cell, step, start, delta, t, axis), True
        cell = entered
    return end, False


@per_coordinate("np.floor(point[{k}] + 0.5)")
def _floors(point):
    """``floor(c + 0.5)`` of each coordinate, as floats."""


@per_coordinate("_toward(a[{k}], b[{k}])", scope={"_toward": _toward})
def _towards(a, b):
    """``_toward(a[c], b[c])`` of each axis."""


@per_coordinate("a[{k}] - b[{k}]")
def _differences(a, b):
    """``a[c] - b[c]`` of each axis."""


@per_coordinate("_at_face(cell[{k}], step[{k}]) if axis == {k} else _inside(start[{k}] + t * delta[{k}], cell[{k}])",
                scope={"_at_face": _at_face, "_inside": _inside})
def _stop(cell, step, start, delta, t, axis):
    """The stop point: on the face along ``axis``, the path's point at ``t`` inside the cell along
    the others."""
