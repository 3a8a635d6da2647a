"""Walls in the compiled step: the mask a world draws, start cells on free cells, and where a
continuous body stops.

A wall mask is a ``(H, W)`` (``(D, H, W)`` in 3-D) bool array indexed ``[y, x]`` (``[z, y, x]``),
True where a cell is solid; a scenario's masks are one ``(K, ...)`` read-only array ``masks``, and
world ``b`` uses mask ``k = index[b]`` (``mask_index`` of its seed and episode, drawn at every
reset). Functions take ``(masks, k)`` and read ``masks[k, ...]``: a view ``masks[k]`` made in the
step would be an array of its own, reference-counted wherever it goes (it made a step among walls
3x slower than one without; the scenario's array, an argument of the step, costs nothing). Cells are
those of the engine: a float position ``c`` lies in cell ``floor(c + 0.5)`` along each axis, so
cell ``k`` spans ``[k - 0.5, k + 0.5)``.

The driver generated for a scenario with walls (``assemble.py``, ``Layout.walls``) calls these;
the driver of a scenario without walls never imports this module.
"""

from __future__ import annotations

import numpy as np
from numba.extending import overload

from . import rng
from .assemble import C_START_MODE, C_X0, C_X1, C_Y0, C_Y1, C_Z0, C_Z1, START_FIXED
from .jit import njit
from .shared import place_starts, place_starts3

__all__ = ["WALLS_STREAM", "mask_index", "mask_indices", "solid_row", "place_starts_in_walls",
           "place_starts_in_walls3", "pcg64_free_cells", "counter_free_cells", "stop_at_walls", "stop_at_walls3",
           "solid_at", "solid_at3"]

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
def pcg64_free_cells(seed, n_agents, sizes, origin, masks, k, out, row0):
    """``rng.pcg64_cells`` on free cells: each agent draws ``integers(0, sizes[c])`` per axis from
    ``default_rng(seed)``, offset by ``origin``, and draws its whole cell again, from the same
    generator, while that cell is solid in mask ``k``. With no solid cell in the box this is
    ``pcg64_cells``'s draw exactly. ``out``: ``(rows, len(sizes))`` int32, rows ``row0 .. row0 + n_agents`` written."""
    st_hi, st_lo, inc_hi, inc_lo = rng.pcg64_state(seed)
    has_buf = False
    buf = rng.ZERO
    for n in range(n_agents):
        while True:
            for c in range(len(sizes)):
                v, st_hi, st_lo, has_buf, buf = rng.pcg64_integer(sizes[c], st_hi, st_lo, inc_hi, inc_lo, has_buf, buf)
                out[row0 + n, c] = v + origin[c]
            if not solid_row(masks, k, out, row0 + n):
                break


@njit(cache=True)
def counter_free_cells(seed, episode, n_agents, sizes, origin, masks, k, out, row0):
    """``rng.counter_cells`` on free cells: a solid cell is drawn again, whole, from the next
    counters of the episode's words (the counters run on through every agent's draws)."""
    counter = 0
    for n in range(n_agents):
        while True:
            for c in range(len(sizes)):
                v, counter = rng.counter_integer(seed, episode, counter, sizes[c])
                out[row0 + n, c] = v + origin[c]
            if not solid_row(masks, k, out, row0 + n):
                break


@njit(inline="always")
def free_cells(seed, episode, n_agents, sizes, origin, masks, k, pos, row0):
    """Episode 0's draws (``pcg64_free_cells``) or a later episode's (``counter_free_cells``)."""
    if episode == 0:
        pcg64_free_cells(seed, n_agents, sizes, origin, masks, k, pos, row0)
    else:
        counter_free_cells(seed, episode, n_agents, sizes, origin, masks, k, pos, row0)


@njit(inline="always")
def place_starts_in_walls(b, n_agents, cfg, starts, pos, seed, episode, masks, k):
    """``shared.place_starts`` among walls (mask ``k``): fixed starts are copied (``Scenario``
    checked them free in every mask); drawn ones are drawn again while solid (``free_cells``).
    The start region holds a free cell of every mask (``Scenario``)."""
    if cfg[C_START_MODE] == START_FIXED:
        place_starts(b, n_agents, cfg, starts, pos, seed, episode)
        return
    x0 = cfg[C_X0]
    y0 = cfg[C_Y0]
    sizes = (cfg[C_X1] - x0 + 1, cfg[C_Y1] - y0 + 1)
    free_cells(seed, episode, n_agents, sizes, (x0, y0), masks, k, pos, b * n_agents)


@njit(inline="always")
def place_starts_in_walls3(b, n_agents, cfg, starts, pos, seed, episode, masks, k):
    """``place_starts_in_walls`` in 3-D (``shared.place_starts3``'s box and draws)."""
    if cfg[C_START_MODE] == START_FIXED:
        place_starts3(b, n_agents, cfg, starts, pos, seed, episode)
        return
    x0 = cfg[C_X0]
    y0 = cfg[C_Y0]
    z0 = cfg[C_Z0]
    sizes = (cfg[C_X1] - x0 + 1, cfg[C_Y1] - y0 + 1, cfg[C_Z1] - z0 + 1)
    free_cells(seed, episode, n_agents, sizes, (x0, y0, z0), masks, k, pos, b * n_agents)


# ------------------------------------------------------------------------------------ reading
@njit(inline="always")
def solid_at(masks, k, x, y):
    """Whether the float point ``(x, y)`` (cells) lies in a solid cell of mask ``k``; False off
    the grid."""
    cx = np.floor(x + 0.5)
    cy = np.floor(y + 0.5)
    if cx < 0.0 or cy < 0.0 or cx >= masks.shape[2] or cy >= masks.shape[1]:
        return False
    return masks[k, int(cy), int(cx)]


@njit(inline="always")
def solid_at3(masks, k, x, y, z):
    """``solid_at`` in 3-D."""
    cx = np.floor(x + 0.5)
    cy = np.floor(y + 0.5)
    cz = np.floor(z + 0.5)
    if cx < 0.0 or cy < 0.0 or cz < 0.0 or cx >= masks.shape[3] or cy >= masks.shape[2] or cz >= masks.shape[1]:
        return False
    return masks[k, int(cz), int(cy), int(cx)]


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
def stop_at_walls(masks, k, x0, y0, x1, y1):
    """Where a body moving straight from ``(x0, y0)`` (in a free cell) to ``(x1, y1)`` stops among
    the solid cells of mask ``k``:
    ``(x1, y1, False)`` when no solid cell lies on the way, else ``(x, y, True)``, the point where
    the path meets the face of the first solid cell it enters, on the free side.

    The cells on the way are visited in the order the path enters them (Amanatides and Woo's
    traversal): from cell ``(cx, cy)`` the next is along the axis whose face the path crosses first,
    at ``t = (face - start) / (end - start)``; x first on a tie (a path through a corner enters the
    x neighbour first), and only toward the end cell on each axis, so the traversal ends in it. At a
    solid cell entered along x at ``t``: ``x`` is the crossed face on the free side (``cx - 0.5``
    going down, the largest float of cell ``cx`` going up) and ``y = y0 + t (y1 - y0)``, put inside
    row ``cy``'s span; the same with the axes swapped.
    """
    cx = np.floor(x0 + 0.5)
    cy = np.floor(y0 + 0.5)
    ex = np.floor(x1 + 0.5)
    ey = np.floor(y1 + 0.5)
    sx = _toward(cx, ex)
    sy = _toward(cy, ey)
    dx = x1 - x0
    dy = y1 - y0
    for _ in range(int(abs(ex - cx) + abs(ey - cy))):
        tx = _crossing(cx, sx, x0, dx) if cx != ex else np.inf
        ty = _crossing(cy, sy, y0, dy) if cy != ey else np.inf
        if tx <= ty:
            if masks[k, int(cy), int(cx + sx)]:
                return _at_face(cx, sx), _inside(y0 + tx * dy, cy), True
            cx += sx
        else:
            if masks[k, int(cy + sy), int(cx)]:
                return _inside(x0 + ty * dx, cx), _at_face(cy, sy), True
            cy += sy
    return x1, y1, False


@njit(inline="always")
def stop_at_walls3(masks, k, x0, y0, z0, x1, y1, z1):
    """``stop_at_walls`` in 3-D: ties x, then y, then z; at a solid cell entered along one axis
    the other two coordinates are the path's at that ``t``, each put inside its cell's span."""
    cx = np.floor(x0 + 0.5)
    cy = np.floor(y0 + 0.5)
    cz = np.floor(z0 + 0.5)
    ex = np.floor(x1 + 0.5)
    ey = np.floor(y1 + 0.5)
    ez = np.floor(z1 + 0.5)
    sx = _toward(cx, ex)
    sy = _toward(cy, ey)
    sz = _toward(cz, ez)
    dx = x1 - x0
    dy = y1 - y0
    dz = z1 - z0
    for _ in range(int(abs(ex - cx) + abs(ey - cy) + abs(ez - cz))):
        tx = _crossing(cx, sx, x0, dx) if cx != ex else np.inf
        ty = _crossing(cy, sy, y0, dy) if cy != ey else np.inf
        tz = _crossing(cz, sz, z0, dz) if cz != ez else np.inf
        if tx <= ty and tx <= tz:
            if masks[k, int(cz), int(cy), int(cx + sx)]:
                return _at_face(cx, sx), _inside(y0 + tx * dy, cy), _inside(z0 + tx * dz, cz), True
            cx += sx
        elif ty <= tz:
            if masks[k, int(cz), int(cy + sy), int(cx)]:
                return _inside(x0 + ty * dx, cx), _at_face(cy, sy), _inside(z0 + ty * dz, cz), True
            cy += sy
        else:
            if masks[k, int(cz + sz), int(cy), int(cx)]:
                return _inside(x0 + tz * dx, cx), _inside(y0 + tz * dy, cy), _at_face(cz, sz), True
            cz += sz
    return x1, y1, z1, False
