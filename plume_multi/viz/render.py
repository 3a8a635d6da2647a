"""One renderer for every front-end.

``render_frame`` draws a plain-NumPy RGB frame: the field as a perceptually uniform heat map
(viridis), solid cells (walls) in grey, the source as a red cross, every searching agent as a square of its own colour, agents
that have finished as white squares, and optionally each agent's recent trail, with y drawn upward
(UP moves up on screen). It is vectorized over agents, so it can be called every step.
``HumanWindow`` shows frames in one matplotlib window (matplotlib is the optional ``viz`` extra).
``display_scale`` picks the integer scale that makes a frame large enough to look at (at least
256 pixels on its shorter side where the grid allows), and ``upscale`` enlarges a finished frame by
an integer factor, nearest neighbour.

Pixel geometry: with ``scale`` s, cell ``(x, y)`` of a ``W x H`` grid is the s x s block whose
top-left pixel is ``row = (H - 1 - y) * s``, ``col = x * s``; markers are centred on pixel
``(row + s // 2, col + s // 2)`` (``cell_centre_pixel``).
"""

from __future__ import annotations

import functools
import numbers

import numpy as np

from ..checks import is_int
from ..errors import RenderingError, ValidationError

__all__ = [
    "render_frame",
    "render_puffs",
    "display_scale",
    "upscale",
    "check_frame",
    "HumanWindow",
    "agent_colours",
    "cell_centre_pixel",
    "marker_radius",
    "SOURCE_COLOUR",
    "FINISHED_COLOUR",
    "POINT_COLOUR",
    "WIND_COLOUR",
    "WALL_COLOUR",
]

# viridis, sampled at 9 points; interpolated to a 256-entry table once at import.
_VIRIDIS_ANCHORS = np.array([
    [68, 1, 84], [71, 44, 122], [59, 81, 139], [44, 113, 142], [33, 144, 141],
    [39, 173, 129], [92, 200, 99], [170, 220, 50], [253, 231, 37],
], dtype=np.float64)
_LUT = np.stack([
    np.interp(np.linspace(0, 1, 256), np.linspace(0, 1, len(_VIRIDIS_ANCHORS)), _VIRIDIS_ANCHORS[:, c])
    for c in range(3)
], axis=1).round().astype(np.uint8)

SOURCE_COLOUR = np.array([255, 40, 40], dtype=np.uint8)
FINISHED_COLOUR = np.array([255, 255, 255], dtype=np.uint8)
POINT_COLOUR = np.array([255, 160, 0], dtype=np.uint8)  # sample points given without an agent axis
WIND_COLOUR = np.array([255, 255, 255], dtype=np.uint8)
WALL_COLOUR = np.array([128, 128, 128], dtype=np.uint8)  # solid cells: mid grey, off the viridis ramp

MAX_SCALE = 64  # pixels per cell; beyond it a frame of even a small grid becomes huge
DISPLAY_MIN_SIDE = 256  # pixels on the shorter side that display_scale aims for
DISPLAY_MAX_SIDE = 4096  # ... without the longer side passing this


def _integer(name: str, value, low: int, high: int | None = None) -> int:
    """``value`` as an int in ``low..high``, else a ValidationError naming ``name`` (bools refused)."""
    if not is_int(value) or value < low or (
            high is not None and value > high):
        expected = f"an integer >= {low}" if high is None else f"an integer in {low}..{high}"
        raise ValidationError(f"{name}: got {value!r}; expected {expected}")
    return int(value)


def check_field(field) -> np.ndarray:
    """The field as an ``(H, W)`` real array with finite values, else a ValidationError."""
    field = np.asarray(field)
    if field.ndim != 2 or field.dtype.kind not in "fiu" or field.size == 0:
        raise ValidationError(
            f"field: got shape {field.shape} dtype {field.dtype}; expected a non-empty (H, W) float array"
        )
    if field.dtype.kind == "f" and not np.isfinite(field).all():
        raise ValidationError("field: contains NaN or infinite values; expected finite concentrations in [0, 1]")
    return field


def check_frame(frame, name: str = "frame") -> np.ndarray:
    """``frame`` as an ``(H, W, 3)`` uint8 array with H, W >= 1, else a ValidationError naming ``name``."""
    if isinstance(frame, (str, bytes)) or frame is None:
        raise ValidationError(f"{name}: got {type(frame).__name__}; expected an (H, W, 3) uint8 array")
    try:
        frame = np.asarray(frame)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"{name}: got {type(frame).__name__}; expected an (H, W, 3) uint8 array") from exc
    if frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8 or 0 in frame.shape:
        raise ValidationError(f"{name}: got shape {frame.shape} dtype {frame.dtype}; expected (H, W, 3) uint8, H and W >= 1")
    return frame


def display_scale(width: int, height: int, min_side: int = DISPLAY_MIN_SIDE) -> int:
    """Pixels per cell that make a ``width x height`` grid's frame comfortable to look at.

    The smallest integer scale giving at least ``min_side`` pixels on the shorter side, but no more
    than 64 and no more than keeps the longer side within 4096 pixels (so a 1 x 2048 strip stays
    drawable); at least 1. E.g. 128 x 96 -> 3 (384 x 288 pixels), 32 x 32 -> 8, 512 x 512 -> 1.
    """
    width = _integer("width", width, 1)
    height = _integer("height", height, 1)
    min_side = _integer("min_side", min_side, 1)
    wanted = -(-min_side // min(width, height))
    return max(1, min(wanted, MAX_SCALE, DISPLAY_MAX_SIDE // max(width, height)))


def upscale(frame: np.ndarray, scale: int) -> np.ndarray:
    """``frame`` ``(H, W, 3)`` uint8 enlarged to ``(H * scale, W * scale, 3)``, each pixel an
    ``scale x scale`` block (nearest neighbour, no smoothing); a new array even for ``scale`` 1."""
    frame = check_frame(frame)
    scale = _integer("scale", scale, 1, MAX_SCALE)
    return np.repeat(np.repeat(frame, scale, axis=0), scale, axis=1)


@functools.lru_cache(maxsize=16)
def _cached_colours(n: int) -> np.ndarray:
    # golden-ratio steps spread any number of hues; the band around pure red is left to the source
    hues = 0.08 + 0.84 * ((np.arange(n) * 0.618033988749895) % 1.0)
    h6 = hues * 6.0
    c = np.stack([np.abs(h6 - 3) - 1, 2 - np.abs(h6 - 2), 2 - np.abs(h6 - 4)], axis=1)
    rgb = np.clip(c, 0, 1) * 0.75 + 0.25
    colours = (rgb * 255).round().astype(np.uint8)
    colours.flags.writeable = False
    return colours


def agent_colours(n: int) -> np.ndarray:
    """``(n, 3)`` uint8 distinct, bright colours (golden-ratio hues, none red like the source);
    agent k gets the same colour whatever n is."""
    return _cached_colours(_integer("n", n, 0)).copy()


def marker_radius(width: int, height: int, scale: int = 1) -> int:
    """Half-size in pixels of the square drawn for an agent (the source cross is one larger).

    About 1/48 of the picture's shorter side, at least 1 pixel, and never smaller than a cell.
    """
    width, height = _integer("width", width, 1), _integer("height", height, 1)
    scale = _integer("scale", scale, 1, MAX_SCALE)
    return max(1, scale // 2, (min(width, height) * scale) // 48)


def cell_centre_pixel(x, y, height: int, scale: int = 1):
    """``(row, col)`` of the pixel at the centre of cell ``(x, y)`` (y upward)."""
    height = _integer("height", height, 1)
    scale = _integer("scale", scale, 1, MAX_SCALE)
    x = np.asarray(x)
    y = np.asarray(y)
    return (height - 1 - y) * scale + scale // 2, x * scale + scale // 2


def _check_cells(name: str, cells, w: int, h: int) -> np.ndarray:
    try:
        cells = np.asarray(cells)
    except (TypeError, ValueError) as exc:  # ragged lists
        raise ValidationError(f"{name}: got {type(cells).__name__} of uneven length; expected integer cells (..., 2) of (x, y)") from exc
    if cells.ndim < 2 or cells.shape[-1] != 2 or cells.dtype.kind not in "iuf":
        raise ValidationError(f"{name}: got shape {cells.shape} dtype {cells.dtype}; expected integer cells (..., 2) of (x, y)")
    if cells.dtype.kind == "f" and cells.size and not (np.isfinite(cells).all() and (cells == np.round(cells)).all()):
        raise ValidationError(f"{name}: got non-integer or non-finite coordinates; expected integer cells (x, y)")
    if cells.size:
        xs, ys = cells[..., 0], cells[..., 1]
        if xs.min() < 0 or xs.max() >= w or ys.min() < 0 or ys.max() >= h:
            raise ValidationError(
                f"{name}: cells range over x {xs.min()}..{xs.max()}, y {ys.min()}..{ys.max()}; "
                f"expected 0 <= x < {w} and 0 <= y < {h} (the grid is {w}x{h})"
            )
    return cells.astype(np.intp, copy=False)


def _check_source(source, w: int, h: int):
    """``source`` as ``(x, y)`` ints inside the grid (or None), else a ValidationError."""
    if source is None:
        return None
    try:
        values = np.asarray(source)
        ok = values.shape == (2,) and values.dtype.kind in "iuf" and np.isfinite(values).all() and (
            values == np.round(values)).all()
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValidationError(f"source: got {source!r}; expected (x, y), two integers")
    sx, sy = int(values[0]), int(values[1])
    if not (0 <= sx < w and 0 <= sy < h):
        raise ValidationError(f"source: got {(sx, sy)}; expected (x, y) with 0 <= x < {w} and 0 <= y < {h}")
    return sx, sy


def check_sources(source, w: int, h: int):
    """``source`` as a tuple of ``(x, y)`` int cells inside the grid: one ``(x, y)`` or a sequence
    of them (several sources); None stays None. Else a ValidationError."""
    if source is None:
        return None
    try:
        values = np.asarray(source)
    except (TypeError, ValueError):
        values = None
    if values is None or values.ndim != 2 or values.shape[1:] != (2,) or len(values) == 0:
        return (_check_source(source, w, h),)
    out = []
    for k, cell in enumerate(values):
        try:
            out.append(_check_source(cell, w, h))
        except ValidationError as exc:
            raise ValidationError(f"source {k} of {len(values)}: {exc}") from None
    return tuple(out)


def _check_active(active, m: int):
    """``active`` as an ``(m,)`` bool array (or None); bools or 0/1 integers only."""
    if active is None:
        return None
    active = np.asarray(active)
    if active.shape != (m,):
        raise ValidationError(f"active: got shape {active.shape}; expected ({m},) bool, one per agent")
    if active.dtype.kind != "b" and not (active.dtype.kind in "iu" and np.isin(active, (0, 1)).all()):
        raise ValidationError(f"active: got dtype {active.dtype} values {active[:4].tolist()}...; expected bool flags")
    return active.astype(bool, copy=False)


def _stamp_squares(frame, rows, cols, colours, radius):
    """Fill a ``(2r+1)^2`` square around each pixel ``(rows[k], cols[k])`` with ``colours[k]``.

    Later markers cover earlier ones. Offsets falling outside the frame are clamped onto its edge,
    which is already inside the square, so the result equals slicing each square to the frame.
    """
    if len(rows) == 0:
        return
    ph, pw = frame.shape[:2]
    d = np.arange(-radius, radius + 1)
    rr = np.clip(rows[:, None] + d, 0, ph - 1) * pw
    cc = np.clip(cols[:, None] + d, 0, pw - 1)
    flat = (rr[:, :, None] + cc[:, None, :]).reshape(len(rows), -1)  # one flat index per pixel
    pixels = frame.reshape(-1, 3)
    pixels[flat] = np.asarray(colours)[:, None, :]


def _check_headings(headings, m: int | None) -> np.ndarray | None:
    """``headings`` as an ``(m,)`` float64 array of finite degrees (or None)."""
    if headings is None:
        return None
    if m is None:
        raise ValidationError("headings: got headings but no positions; pass positions (M, 2) with headings (M,)")
    try:
        arr = np.asarray(headings)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"headings: got {type(headings).__name__}; expected ({m},) degrees, one per agent") from exc
    if arr.shape != (m,) or arr.dtype.kind not in "iuf":
        raise ValidationError(f"headings: got shape {arr.shape} dtype {arr.dtype}; expected ({m},) degrees, one per agent")
    if arr.size and not np.isfinite(arr).all():
        raise ValidationError("headings: contains NaN or infinite values; expected finite degrees (0 = +x, 90 = +y)")
    return arr.astype(np.float64)


def _check_points(points, m: int | None) -> np.ndarray | None:
    """``points`` as a float64 ``(K, 2)`` or ``(M, K, 2)`` array of finite ``(x, y)`` (or None)."""
    if points is None:
        return None
    try:
        arr = np.asarray(points)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"points: got {type(points).__name__} of uneven length; expected (K, 2) or (M, K, 2) "
                              "float (x, y) in cells") from exc
    if arr.ndim not in (2, 3) or arr.shape[-1] != 2 or arr.dtype.kind not in "iuf":
        raise ValidationError(f"points: got shape {arr.shape} dtype {arr.dtype}; expected (K, 2) or (M, K, 2) float "
                              "(x, y) in cells")
    if arr.ndim == 3 and (m is None or arr.shape[0] != m):
        expected = "positions" if m is None else f"({m}, K, 2), one row of points per agent of positions"
        raise ValidationError(f"points: got shape {arr.shape}; expected {expected} (or (K, 2) points of no agent)")
    if arr.size and not np.isfinite(arr).all():
        raise ValidationError("points: contains NaN or infinite values; expected finite (x, y) in cells")
    return arr.astype(np.float64)


def _check_wind(wind):
    """``wind`` as ``(u, v)`` finite floats (or None)."""
    if wind is None:
        return None
    try:
        arr = np.asarray(wind, dtype=np.float64)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.shape != (2,) or not np.isfinite(arr).all():
        raise ValidationError(f"wind: got {wind!r}; expected (u, v), two finite numbers in cells per step")
    return float(arr[0]), float(arr[1])


def _check_walls(walls, h: int, w: int):
    """``walls`` as an ``(H, W)`` float array in [0, 1] (a bool mask, or the solid fraction of a
    projection), or None."""
    if walls is None:
        return None
    try:
        arr = np.asarray(walls)
    except (TypeError, ValueError):
        arr = np.zeros(0)
    if arr.shape != (h, w) or arr.dtype.kind not in "bf" or (arr.dtype.kind == "f" and not (
            np.isfinite(arr).all() and arr.min(initial=0.0) >= 0.0 and arr.max(initial=0.0) <= 1.0)):
        raise ValidationError(f"walls: got {type(walls).__name__} of shape {getattr(arr, 'shape', None)} dtype "
                              f"{getattr(arr, 'dtype', None)}; expected the field's shape ({h}, {w}), bool (True "
                              "where solid) or floats in [0, 1] (the solid fraction)")
    return arr.astype(np.float64)


def _draw_walls(frame, walls, scale: int) -> None:
    """Blend each cell toward ``WALL_COLOUR`` by its solid fraction (a solid cell is all grey)."""
    shade = walls[::-1]
    if scale > 1:
        shade = np.repeat(np.repeat(shade, scale, axis=0), scale, axis=1)
    where = shade > 0
    if where.any():
        f = shade[where][:, None]
        frame[where] = np.rint((1.0 - f) * frame[where] + f * WALL_COLOUR).astype(np.uint8)


def _draw_line(frame, r0, c0, r1, c1, colour) -> None:
    """Pixels on the segment from ``(r0, c0)`` to ``(r1, c1)`` (rows, cols; arrays of segments or
    scalars), sampled every half pixel; pixels off the frame are skipped."""
    r0, c0, r1, c1 = (np.atleast_1d(np.asarray(v, dtype=np.float64)) for v in (r0, c0, r1, c1))
    if r0.size == 0:
        return
    n = int(np.ceil(2 * max(np.abs(r1 - r0).max(), np.abs(c1 - c0).max()))) + 1
    f = np.linspace(0.0, 1.0, n)
    rows = np.rint(r0[:, None] + (r1 - r0)[:, None] * f).astype(np.intp)
    cols = np.rint(c0[:, None] + (c1 - c0)[:, None] * f).astype(np.intp)
    colour = np.asarray(colour, dtype=np.uint8)
    colours = np.broadcast_to(colour.reshape(-1, 1, 3) if colour.ndim == 2 else colour, rows.shape + (3,))
    ph, pw = frame.shape[:2]
    inside = (rows >= 0) & (rows < ph) & (cols >= 0) & (cols < pw)
    frame[rows[inside], cols[inside]] = colours[inside]


def _draw_wind(frame, wind) -> None:
    """An arrow in the top-right corner pointing along ``(u, v)`` (y up); a dot when calm."""
    ph, pw = frame.shape[:2]
    size = max(4, min(ph, pw) // 10)
    cr, cc = size + 1, pw - size - 2  # centre of the arrow
    u, v = wind
    norm = float(np.hypot(u, v))
    if norm == 0.0:
        frame[max(cr - 1, 0):cr + 2, max(cc - 1, 0):cc + 2] = WIND_COLOUR
        return
    du, dv = u / norm * size, -v / norm * size  # screen rows grow downward
    tail_r, tail_c, head_r, head_c = cr - dv, cc - du, cr + dv, cc + du
    _draw_line(frame, tail_r, tail_c, head_r, head_c, WIND_COLOUR)
    angle = np.arctan2(dv, du)
    for side in (2.5, -2.5):  # two barbs, 2.5 rad back from the direction
        _draw_line(frame, head_r, head_c, head_r + 0.5 * size * np.sin(angle + side),
                   head_c + 0.5 * size * np.cos(angle + side), WIND_COLOUR)


def render_frame(field: np.ndarray, positions=None, *, source=None, active=None, trails=None,
                 scale: int = 1, headings=None, points=None, wind=None, walls=None) -> np.ndarray:
    """An RGB picture of a world.

    Args:
        field: ``(H, W)`` float in [0, 1], indexed ``[y, x]``.
        positions: ``(M, 2)`` int cells ``(x, y)`` of the agents to draw (or None). Agent k is
            drawn in ``agent_colours(M)[k]``.
        source: ``(x, y)`` of the source, drawn as a red cross, or a sequence of such cells
            (several sources: a cross each), or None.
        active: ``(M,)`` bool; agents not active (finished) are drawn as white squares, beneath
            the searching ones so a searcher passing over a finished agent stays visible.
        trails: ``(T, M, 2)`` int cells, each agent's last T positions (oldest first), drawn as
            cells of the agent's colour, three quarters over the field (or None).
        scale: each cell becomes ``scale x scale`` pixels (an int in 1..64; ``display_scale(W, H)``
            gives one that makes the frame at least 256 pixels on its shorter side).
        headings: ``(M,)`` degrees per agent of ``positions`` (0 = +x, 90 = +y, counter-clockwise):
            a short line from each agent's marker in that direction, in its marker's colour.
        points: ``(K, 2)`` or ``(M, K, 2)`` float ``(x, y)`` in cells (e.g. antenna sample
            points): small dots, in each agent's colour when given per agent of ``positions``,
            else orange. Points off the grid are not drawn.
        wind: ``(u, v)`` in cells per step: an arrow in the top-right corner along the wind (a
            dot when calm).
        walls: ``(H, W)`` bool, True where a cell is solid (``Simulator.wall_mask``): drawn in
            ``WALL_COLOUR`` over the field; or floats in [0, 1], each cell blended toward it by
            that fraction (the 3-D views' projections).

    Returns:
        ``(H * scale, W * scale, 3)`` uint8, row 0 at the top (the largest y).

    Raises:
        ValidationError: a field that is not a finite ``(H, W)`` array, cells that are not integer
            ``(x, y)`` pairs inside the grid, ``active``, ``trails``, ``headings`` or ``points``
            that do not match ``positions``, a bad ``source``, ``wind``, ``walls`` or ``scale``.
            Nothing is drawn.
    """
    field = check_field(field)
    scale = _integer("scale", scale, 1, MAX_SCALE)
    h, w = field.shape
    sources = check_sources(source, w, h)
    if positions is not None:
        positions = _check_cells("positions", positions, w, h)
        if positions.ndim != 2:
            raise ValidationError(f"positions: got shape {positions.shape}; expected (M, 2)")
        active = _check_active(active, len(positions))
    elif active is not None:
        raise ValidationError("active: got flags but no positions; pass positions (M, 2) with active (M,)")
    if trails is not None:
        trails = _check_cells("trails", trails, w, h)
        if trails.ndim != 3:
            raise ValidationError(f"trails: got shape {trails.shape}; expected (T, M, 2)")
        if positions is not None and trails.shape[1] != len(positions):
            raise ValidationError(
                f"trails: got shape {trails.shape}; expected (T, {len(positions)}, 2), one trail per agent of positions"
            )
    m = None if positions is None else len(positions)
    headings = _check_headings(headings, m)
    points = _check_points(points, m)
    wind = _check_wind(wind)
    walls = _check_walls(walls, h, w)
    idx = np.clip(field[::-1] * 255.0, 0, 255).astype(np.uint8)
    if scale > 1:
        idx = np.repeat(np.repeat(idx, scale, axis=0), scale, axis=1)
    frame = _LUT[idx]
    if walls is not None:
        _draw_walls(frame, walls, scale)
    r = marker_radius(w, h, scale)

    if trails is not None:
        if trails.size:
            colours = agent_colours(trails.shape[1]).astype(np.uint16)
            pw = frame.shape[1]
            d = np.arange(scale)
            rows = ((h - 1 - trails[..., 1]) * scale)[..., None] + d
            cols = (trails[..., 0] * scale)[..., None] + d
            flat = (rows[..., :, None] * pw + cols[..., None, :]).reshape(trails.shape[:2] + (-1,))
            pixels = frame.reshape(-1, 3)
            pixels[flat] = ((pixels[flat] + 3 * colours[None, :, None, :]) // 4).astype(np.uint8)

    for sx, sy in sources or ():
        row, col = cell_centre_pixel(sx, sy, h, scale)
        frame[max(row - r - 1, 0):row + r + 2, col] = SOURCE_COLOUR
        frame[row, max(col - r - 1, 0):col + r + 2] = SOURCE_COLOUR

    if positions is not None:
        colours = agent_colours(len(positions))
        rows, cols = cell_centre_pixel(positions[:, 0], positions[:, 1], h, scale)
        if active is None:
            _stamp_squares(frame, rows, cols, colours, r)
        else:
            done = ~active
            _stamp_squares(frame, rows[done], cols[done], np.broadcast_to(FINISHED_COLOUR, (int(done.sum()), 3)), r)
            _stamp_squares(frame, rows[active], cols[active], colours[active], r)
        if headings is not None:
            line_colours = colours.copy()
            if active is not None:
                line_colours[~active] = FINISHED_COLOUR
            rad = np.deg2rad(headings)
            length = 2 * r + 2  # sticks out of the marker by r + 2 pixels
            _draw_line(frame, rows, cols, rows - length * np.sin(rad), cols + length * np.cos(rad), line_colours)

    if points is not None and points.size:
        flat = points.reshape(-1, 2)
        if points.ndim == 3:
            point_colours = np.repeat(agent_colours(points.shape[0]), points.shape[1], axis=0)
        else:
            point_colours = np.broadcast_to(POINT_COLOUR, (len(flat), 3))
        on_grid = (flat[:, 0] > -0.5) & (flat[:, 0] < w - 0.5) & (flat[:, 1] > -0.5) & (flat[:, 1] < h - 0.5)
        prow = np.rint((h - 1 - flat[on_grid, 1]) * scale + scale // 2).astype(np.intp)
        pcol = np.rint(flat[on_grid, 0] * scale + scale // 2).astype(np.intp)
        _stamp_squares(frame, prow, pcol, point_colours[on_grid], max(0, r // 3))

    if wind is not None:
        _draw_wind(frame, wind)
    return frame


def _interactive_backend() -> bool:
    import matplotlib

    backend = matplotlib.get_backend().lower()
    try:
        from matplotlib.backends import BackendFilter, backend_registry

        return backend not in backend_registry.list_builtin(BackendFilter.NON_INTERACTIVE)
    except ImportError:  # matplotlib < 3.9
        return backend not in {"agg", "cairo", "pdf", "pgf", "ps", "svg", "template"}


class HumanWindow:
    """One matplotlib window, updated in place with each frame.

    Under a non-interactive backend (``Agg``, as on a headless machine) the frames are drawn onto
    the figure without opening a window, and nothing warns.
    """

    def __init__(self, title: str = "plume_multi", fps: int = 30):
        if not isinstance(title, str):
            raise ValidationError(f"title: got {title!r}; expected a string")
        if not isinstance(fps, numbers.Real) or isinstance(fps, bool) or not (0 < fps <= 1000):
            raise ValidationError(f"fps: got {fps!r}; expected a number with 0 < fps <= 1000")
        try:
            import matplotlib.pyplot as plt
        except ImportError as exc:
            raise RenderingError(
                "render_mode='human' needs matplotlib: pip install 'plume-multi[viz]' (or pip install matplotlib)"
            ) from exc
        self._plt = plt
        self._title = title
        self._pause = 1.0 / fps
        self._fig = None
        self._image = None

    def show(self, frame: np.ndarray) -> None:
        """Draw ``frame`` ``(H, W, 3)`` uint8 (a new window if there is none or it was closed)."""
        frame = check_frame(frame)
        plt = self._plt
        interactive = _interactive_backend()
        if self._fig is None or not plt.fignum_exists(self._fig.number):
            self._fig, ax = plt.subplots()
            ax.set_title(self._title)
            ax.set_axis_off()
            self._image = ax.imshow(frame, interpolation="nearest")
            if interactive:
                plt.show(block=False)
        else:
            if self._image.get_array().shape != frame.shape:
                self._image.set_extent((-0.5, frame.shape[1] - 0.5, frame.shape[0] - 0.5, -0.5))
            self._image.set_data(frame)
        if interactive:
            self._fig.canvas.draw_idle()
            plt.pause(self._pause)
        else:
            self._fig.canvas.draw()

    def close(self) -> None:
        if self._fig is not None:
            try:
                self._plt.close(self._fig)
            except Exception:  # closing a window must never raise
                pass
            self._fig = None


def render_puffs(plume, b: int = 0, positions=None, *, scale: int = 1,
                 decades: float = 3.0, vmax: float | None = None) -> np.ndarray:
    """An RGB picture ``(H * scale, W * scale, 3)`` uint8 of world ``b`` of a ``plumes.PuffPlume``
    (source as a red cross, its walls in grey).

    The concentration is drawn on a log scale over ``decades`` decades below ``vmax`` (default:
    the frame's maximum), so the thin, intermittent puff trail stays visible.
    """
    field = plume.field_image(b)
    top = float(field.max()) if vmax is None else float(vmax)
    if top > 0:
        img = (np.log10(np.maximum(field, top * 10.0 ** -decades) / top) + decades) / decades
    else:
        img = np.zeros_like(field)
    w, h = plume.grid_size
    sx, sy = plume.config.cells()[0]  # the first source (a plume may have several)
    source = (min(max(int(round(sx)), 0), w - 1), min(max(int(round(sy)), 0), h - 1))
    walls = getattr(plume, "walls", None)
    wall = None if walls is None else walls.masks[int(plume.state.wall[b])]
    return render_frame(np.clip(img, 0.0, 1.0), positions, source=source, scale=scale, walls=wall)
