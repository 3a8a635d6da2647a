"""Pictures and movies of a search.

* ``TrajectoryRecorder`` collects the positions and active flags of one world's agents, step by
  step (from a ``Simulator`` or from arrays), and writes them as a PNG or a movie.
* ``save_trajectory_png`` draws every trajectory over the field, with the source and where each
  agent ended (matplotlib: the ``viz`` extra).
* ``write_movie`` writes frames (from ``render_frame``, or any ``rgb_array`` render) as a GIF or
  an MP4 (imageio and imageio-ffmpeg: the ``movie`` extra).
* ``annotate_frame`` (from ``plume_multi.viz.captions``) adds a caption strip under a frame: the step
  counter and a legend of the markers. The recorder's movies carry it on every frame.

A recorder of a 3-D world (``Scenario(grid_size=(W, H, D))``) keeps ``(x, y, z)`` cells and draws
its frames, PNG and movies as ``plume_multi.viz.volume.render_volume`` panels (x-y, x-z and y-z
maximum projections side by side, with the trajectories).

Example:
    >>> sim = Simulator(Scenario(n_agents=8, grid_size=(64, 48)), autoreset="disabled")
    >>> obs = sim.reset(seed=0)
    >>> rec = TrajectoryRecorder.from_simulator(sim)
    >>> policy = GradientClimber(seed=0)
    >>> for _ in range(100):
    ...     obs, *_ = sim.step(policy(obs))
    ...     rec.record()
    >>> rec.save_png("search.png"); rec.save_movie("search.gif", fps=20)
"""

from __future__ import annotations

import math
import numbers
import os
from pathlib import Path

import numpy as np

from .. import files
from ..checks import is_int
from ..errors import RenderingError, StateError, ValidationError
from .captions import annotate_frame, caption_height
from .scene import world_overlays
from .render import (SOURCE_COLOUR, WALL_COLOUR, check_field, check_sources, agent_colours, check_frame,
                     render_frame)
from .volume import check_volume_cells, check_volume, render_volume, volume_scale

__all__ = ["TrajectoryRecorder", "save_trajectory_png", "save_volume_png", "write_movie", "annotate_frame", "caption_height", "auto_scale",
           "MOVIE_FORMATS"]

MOVIE_FORMATS = (".gif", ".mp4")
MOVIE_EXTRA = "pip install 'plume-multi[movie]' (or pip install imageio imageio-ffmpeg)"
VIZ_EXTRA = "pip install 'plume-multi[viz]' (or pip install matplotlib)"


def auto_scale(width: int, height: int, target: int = 256) -> int:
    """The smallest integer scale that makes the longer side of a frame at least ``target`` pixels."""
    width = _positive_int("width", width)
    height = _positive_int("height", height)
    target = _positive_int("target", target)
    return max(1, math.ceil(target / max(width, height)))


def _check_path(path, suffixes, what: str) -> Path:
    if not isinstance(path, (str, os.PathLike)) or str(path) == "":
        raise ValidationError(f"{what} path: got {path!r}; expected a file name (str or pathlib.Path) "
                              f"ending in {' or '.join(suffixes)}")
    path = Path(path)
    if path.is_dir():
        raise ValidationError(f"{what} path: got {str(path)!r}, which is a folder; expected a file name "
                              f"ending in {' or '.join(suffixes)}")
    if path.suffix.lower() not in suffixes:
        raise ValidationError(f"{what} path: got {str(path)!r}; expected a file name ending in {' or '.join(suffixes)}")
    if not path.parent.is_dir():
        raise ValidationError(f"{what} path: the folder {str(path.parent)!r} of {str(path)!r} does not exist; create it first")
    return path


def _positive_int(name: str, value, low: int = 1) -> int:
    if not is_int(value) or value < low:
        raise ValidationError(f"{name}: got {value!r}; expected an integer >= {low}")
    return int(value)


# --------------------------------------------------------------------------------------- movies
def write_movie(path, frames, *, fps: float = 15, hold_last: float = 1.0) -> Path:
    """Write ``frames`` (an iterable of ``(H, W, 3)`` uint8 arrays, all one shape) as a GIF or MP4.

    Frames are consumed one at a time (a generator need not fit in memory as arrays).

    Args:
        path: ``*.gif`` or ``*.mp4``; its folder must exist.
        fps: frames per second, > 0.
        hold_last: seconds the last frame stays on screen before a GIF loops (0 for none).

    Returns:
        the path written.

    Raises:
        RenderingError: imageio (or, for MP4, an ffmpeg backend) is not installed, or no frames.
        ValidationError: a bad path, fps, or a frame of the wrong shape or dtype.
    """
    path = _check_path(path, MOVIE_FORMATS, "movie")
    if not isinstance(fps, numbers.Real) or isinstance(fps, bool) or not (0 < fps <= 100):
        raise ValidationError(f"fps: got {fps!r}; expected a number with 0 < fps <= 100")
    if not isinstance(hold_last, numbers.Real) or isinstance(hold_last, bool) or not (0 <= hold_last <= 60):
        raise ValidationError(f"hold_last: got {hold_last!r}; expected seconds with 0 <= hold_last <= 60")
    if isinstance(frames, np.ndarray) and frames.ndim == 3:
        raise ValidationError(f"frames: got one array of shape {frames.shape}; expected a sequence of (H, W, 3) "
                              "uint8 frames (wrap a single frame in a list)")
    try:
        frames = iter(frames)
    except TypeError as exc:
        raise ValidationError(f"frames: got {type(frames).__name__}; expected an iterable of (H, W, 3) uint8 "
                              "arrays") from exc
    try:
        import imageio.v3 as iio
    except ImportError as exc:
        raise RenderingError(f"writing a movie needs imageio: {MOVIE_EXTRA}") from exc

    first = next(frames, None)
    if first is None:
        raise RenderingError(f"no frames to write to {str(path)!r}: record at least one step first")
    first = check_frame(first, "frames")

    def checked():
        yield first
        for k, frame in enumerate(frames, start=1):
            frame = np.asarray(frame)
            if frame.shape != first.shape or frame.dtype != np.uint8:
                raise ValidationError(
                    f"frames[{k}]: got shape {frame.shape} dtype {frame.dtype}; expected {first.shape} uint8 like frames[0]"
                )
            yield frame

    try:
        if path.suffix.lower() == ".gif":
            return _write_gif(iio, path, checked(), fps, hold_last)
        return _write_mp4(path, checked(), fps)
    except BaseException:
        path.unlink(missing_ok=True)  # no half-written movie left behind
        raise


def _write_gif(iio, path: Path, frames, fps: float, hold_last: float) -> Path:
    durations = []
    with iio.imopen(path, "w", plugin="pillow") as out:
        pending = None
        for frame in frames:
            if pending is not None:
                out.write(pending, is_batch=False)
                durations.append(1000.0 / fps)
            pending = frame
        # The last frame is held a little, so the end of the search is seen before the GIF
        # loops. The keywords of the last write apply to the whole file: one duration per frame.
        durations.append(max(1000.0 / fps, 1000.0 * hold_last))
        # (Pillow wants a number, not a list, for a single frame)
        out.write(pending, is_batch=False, duration=durations if len(durations) > 1 else durations[0], loop=0)
    return path


def _write_mp4(path: Path, frames, fps: float) -> Path:
    import imageio.v2 as imageio

    try:
        writer = imageio.get_writer(path, format="FFMPEG", mode="I", fps=fps, macro_block_size=1,
                                    codec="libx264", pixelformat="yuv420p")
    except (ImportError, ValueError, RuntimeError, OSError) as exc:
        raise RenderingError(
            f"writing MP4 needs an ffmpeg backend for imageio: pip install imageio-ffmpeg "
            f"(GIF needs only {MOVIE_EXTRA}); the backend said: {exc}"
        ) from exc
    with writer:
        for frame in frames:
            # H.264 with yuv420p needs even sides: repeat the last row / column where odd
            h, w = frame.shape[:2]
            if h % 2 or w % 2:
                frame = np.pad(frame, ((0, h % 2), (0, w % 2), (0, 0)), mode="edge")
            writer.append_data(frame)
    return path


# --------------------------------------------------------------------------------------- pictures
def save_trajectory_png(path, field, trajectory, *, source=None, active=None, title=None,
                        width_inches: float = 6.0, dpi: int = 100, walls=None) -> Path:
    """A PNG of every agent's trajectory over the field.

    The field is the viridis heat map (y upward); each agent's path is a line of its own colour
    (the colours of ``render_frame``), its start a hollow circle; where it ended is a filled circle
    if it was still searching, a white diamond if it had finished (``active`` False: it reached
    the source, or a team-mate did); the source is a red star.

    Args:
        path: ``*.png``; its folder must exist.
        field: ``(H, W)`` float in [0, 1], indexed ``[y, x]``.
        trajectory: ``(T, M, 2)`` int cells ``(x, y)``: the positions of M agents at T times.
        source: ``(x, y)`` of the source, a sequence of such cells (several sources), or None.
        active: ``(M,)`` bool, the agents still searching at the end (or None: not distinguished).
        title: the picture's title (default: agents, steps and how many finished).
        walls: ``(H, W)`` bool, True where a cell is solid (drawn grey), or None.

    Returns:
        the path written.
    """
    path = _check_path(path, (".png",), "picture")
    field = check_field(field)
    h, w = field.shape
    source = check_sources(source, w, h)
    if walls is not None:
        walls = np.asarray(walls)
        if walls.shape != (h, w) or walls.dtype != np.bool_:
            raise ValidationError(f"walls: got shape {walls.shape} dtype {walls.dtype}; expected the field's shape "
                                  f"({h}, {w}) bool (True where solid)")
    if title is not None and not isinstance(title, str):
        raise ValidationError(f"title: got {title!r}; expected a string or None")
    if not isinstance(width_inches, numbers.Real) or isinstance(width_inches, bool) or not (1 <= width_inches <= 50):
        raise ValidationError(f"width_inches: got {width_inches!r}; expected a number in 1..50")
    dpi = _positive_int("dpi", dpi)
    if dpi > 1000:
        raise ValidationError(f"dpi: got {dpi}; expected an integer in 1..1000")
    traj = np.asarray(trajectory)
    if traj.ndim != 3 or traj.shape[2] != 2 or traj.shape[0] < 1 or traj.dtype.kind not in "iu":
        raise ValidationError(f"trajectory: got shape {traj.shape} dtype {traj.dtype}; expected (T, M, 2) integer cells, T >= 1")
    if traj.size and (traj[..., 0].min() < 0 or traj[..., 0].max() >= w or traj[..., 1].min() < 0 or traj[..., 1].max() >= h):
        raise ValidationError(f"trajectory: cells outside the {w}x{h} grid of the field")
    n_steps, m = traj.shape[0] - 1, traj.shape[1]
    if active is not None:
        active = np.asarray(active)
        if active.shape != (m,) or active.dtype.kind not in "biu":
            raise ValidationError(f"active: got shape {active.shape}; expected ({m},) bool, one flag per agent "
                                  f"(got dtype {active.dtype})")
        active = active.astype(bool)
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.collections import LineCollection
        from matplotlib.figure import Figure
        from matplotlib.lines import Line2D
    except ImportError as exc:
        raise RenderingError(f"the trajectory picture needs matplotlib: {VIZ_EXTRA}") from exc

    # A Figure without pyplot: no global state, no window, works under any backend.
    # The axes keep the grid's aspect; tall grids get a narrower figure rather than a taller one.
    aspect = h / w
    ax_w = width_inches * 0.72
    ax_h = ax_w * aspect
    if ax_h > 5.0:
        ax_h, ax_w = 5.0, 5.0 / aspect
    fig = Figure(figsize=(max(ax_w + 1.8, 4.0), ax_h + 1.4), dpi=dpi)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    image = ax.imshow(field, origin="lower", cmap="viridis", vmin=0.0, vmax=1.0, interpolation="nearest",
                      extent=(-0.5, w - 0.5, -0.5, h - 0.5))
    fig.colorbar(image, ax=ax, label="concentration", fraction=0.046, pad=0.03)
    if walls is not None and walls.any():
        from matplotlib.colors import ListedColormap

        ax.imshow(np.ma.masked_where(~walls, walls.astype(np.float64)), origin="lower",
                  cmap=ListedColormap([WALL_COLOUR / 255.0]), vmin=0.0, vmax=1.0, interpolation="nearest",
                  extent=(-0.5, w - 0.5, -0.5, h - 0.5), zorder=1)

    colours = agent_colours(m) / 255.0
    alpha = 0.9 if m <= 32 else max(0.25, 0.9 * math.sqrt(32 / m))
    width = 1.4 if m <= 32 else 0.8
    ax.add_collection(LineCollection([traj[:, k, :] for k in range(m)], colors=colours, linewidths=width,
                                     alpha=alpha, zorder=2))
    marker_size = 22 if m <= 64 else 10
    start, end = traj[0], traj[-1]
    ax.scatter(start[:, 0], start[:, 1], s=marker_size, facecolors="none", edgecolors=colours, linewidths=1.0, zorder=3)
    searching = np.ones(m, dtype=bool) if active is None else active
    ax.scatter(end[searching, 0], end[searching, 1], s=marker_size * 1.3, c=colours[searching],
               edgecolors="black", linewidths=0.6, zorder=4)
    finished = ~searching
    ax.scatter(end[finished, 0], end[finished, 1], s=marker_size * 1.6, marker="D", c="white",
               edgecolors=colours[finished], linewidths=1.2, zorder=5)
    if source is not None:
        ax.scatter([c[0] for c in source], [c[1] for c in source], s=220, marker="*", c=[SOURCE_COLOUR / 255], edgecolors="white",
                   linewidths=1.0, zorder=6)
    ax.set_xlim(-0.5, w - 0.5)
    ax.set_ylim(-0.5, h - 0.5)
    ax.set_xlabel("x (cells)")
    ax.set_ylabel("y (cells)")
    if title is None:
        title = f"{m} agent{'s' if m != 1 else ''}, {n_steps} step{'s' if n_steps != 1 else ''}"
        if active is not None:
            title += f": {int(finished.sum())} finished"
    ax.set_title(title)

    handles = [Line2D([], [], ls="none", marker="o", mfc="none", mec="grey", label="start")]
    if searching.any():
        label = "end" if active is None else f"end, still searching ({int(searching.sum())})"
        handles.append(Line2D([], [], ls="none", marker="o", mfc="grey", mec="black", label=label))
    if finished.any():
        handles.append(Line2D([], [], ls="none", marker="D", mfc="white", mec="grey",
                              label=f"end, finished ({int(finished.sum())})"))
    if source is not None:
        handles.append(Line2D([], [], ls="none", marker="*", ms=12, mfc=SOURCE_COLOUR / 255, mec="white",
                              label="source" if len(source) == 1 else "sources"))
    if walls is not None and walls.any():
        handles.append(Line2D([], [], ls="none", marker="s", ms=9, mfc=WALL_COLOUR / 255, mec=WALL_COLOUR / 255,
                              label="wall"))
    wide = fig.get_figwidth() >= 5.5
    ncol = len(handles) if wide else 2
    legend_inches = 0.3 if wide else 0.55
    if not wide:
        fig.set_figheight(fig.get_figheight() + 0.25)
    fig.legend(handles=handles, loc="lower center", ncol=ncol, frameon=False, fontsize="small")
    fig.tight_layout(rect=(0, legend_inches / fig.get_figheight(), 1, 1))
    with files.writing(path, "save_trajectory_png", "a .png file name", text=False) as f:  # whole or not at all
        fig.savefig(f, format="png")
    return path


def save_volume_png(path, volume, trajectory, *, source=None, active=None, mode: str = "max",
                    scale: int | None = None, walls=None) -> Path:
    """A PNG of a 3-D world: ``render_volume``'s x-y, x-z and y-z panels with every trajectory,
    each agent at its last position (white when ``active`` is False).

    Args:
        path: ``*.png``; its folder must exist.
        volume: ``(D, H, W)`` float in [0, 1], indexed ``[z, y, x]``.
        trajectory: ``(T, M, 3)`` int cells ``(x, y, z)``, T >= 1.
        source: ``(x, y, z)`` of the source (or None).
        active: ``(M,)`` bool at the end (finished agents drawn white), or None.
        mode: ``"max"`` or ``"slice"``, as ``render_volume``.
        scale: pixels per cell (default ``volume_scale``).
        walls: ``(D, H, W)`` bool, True where solid (drawn grey), or None.

    Returns:
        the path written.
    """
    path = _check_path(path, (".png",), "picture")
    traj = check_volume_cells("trajectory", trajectory, tuple(reversed(np.shape(volume))), 3)
    if traj.shape[0] < 1:
        raise ValidationError(f"trajectory: got shape {traj.shape}; expected (T, M, 3) with T >= 1")
    frame = render_volume(volume, traj[-1], source=source, active=active, trajectories=traj, mode=mode, scale=scale,
                          walls=walls)
    try:
        from matplotlib.image import imsave
    except ImportError as exc:
        raise RenderingError(f"the trajectory picture needs matplotlib: {VIZ_EXTRA}") from exc
    imsave(path, frame, format="png")
    return path


# --------------------------------------------------------------------------------------- recorder
class TrajectoryRecorder:
    """Positions and active flags of the agents of one world, one entry per step.

    Make one with ``TrajectoryRecorder.from_simulator(sim, world=0)`` after ``sim.reset()`` (it
    records the start at once) and call ``record()`` after each ``sim.step``; or make one from a
    field and call ``record(positions, active)`` with arrays you hold (e.g. from an env).

    It keeps positions (``T x N x 2`` int32) and, bound to a simulator, what a picture of each
    step shows besides (``scene.world_overlays``: headings, antenna points, the wind, and the
    plume image when it is not one static field, e.g. a movie's frame: ``H x W`` float32 per
    entry); it draws frames when a movie is written.
    One recorder holds one episode: with an autoresetting simulator, ``record()`` refuses to
    run across a reset (make a new recorder, or use ``autoreset="disabled"``).

    Args:
        field: ``(H, W)`` float in [0, 1], indexed ``[y, x]``; or a 3-D world's ``(D, H, W)``
            volume (then positions are ``(N, 3)`` cells and pictures are ``render_volume``'s).
        source: ``(x, y)`` of the source (``(x, y, z)`` in 3-D), a sequence of ``(x, y)`` cells
            (several sources), or None; a recorder bound to a simulator keeps where its sources are
            at each entry (they may move).
        walls: the world's wall mask, bool of the field's shape (True where solid), or None; a
            recorder bound to a simulator takes the world's mask of the episode.
    """

    def __init__(self, field, source=None, walls=None):
        if np.ndim(field) == 3:
            self.field = check_volume(field)
            self.dims = 3
            self.source = None if source is None else tuple(int(c) for c in check_volume_cells(
                "source", [source], self.grid_size, 2)[0])
        else:
            field = check_field(field)
            self.field = field
            self.dims = 2
            sources = check_sources(source, field.shape[1], field.shape[0])
            # one source stays an (x, y) pair, as before; several are a tuple of pairs
            self.source = sources if sources is None or np.ndim(source) == 2 else sources[0]
        if walls is not None:
            walls = np.asarray(walls)
            if walls.shape != self.field.shape or walls.dtype != np.bool_:
                raise ValidationError(f"walls: got shape {walls.shape} dtype {walls.dtype}; expected the field's shape "
                                      f"{self.field.shape} bool (True where solid)")
        self.walls = walls
        self._positions: list[np.ndarray] = []
        self._active: list[np.ndarray] = []
        # per entry, from a bound simulator: (field or None when static, headings, points, wind)
        self._overlays: list[tuple] = []
        self._static_field = True
        self._sim = None
        self._rows = None
        self._world = 0
        self._last_t = -1

    @classmethod
    def from_simulator(cls, sim, world: int = 0) -> "TrajectoryRecorder":
        """A recorder bound to world ``world`` of ``sim`` (already reset); records the current state.

        Raises:
            ValidationError: ``sim`` is not a ``Simulator``, or ``world`` is not in ``0..B-1``.
            StateError: ``sim`` has not been reset yet (its state would be all zeros).
        """
        from ..simulator import Simulator

        if not isinstance(sim, Simulator):
            raise ValidationError(f"sim: got {type(sim).__name__}; expected a plume_multi.Simulator")
        if not is_int(world) or not 0 <= world < sim.num_worlds:
            raise ValidationError(f"world: got {world!r}; expected an integer in 0..{sim.num_worlds - 1}")
        if not getattr(sim, "_ready", True):  # Simulator sets _ready on its first reset
            raise StateError("Cannot record before the simulator's reset(): call sim.reset() first, "
                             "then TrajectoryRecorder.from_simulator(sim)")
        rec = cls(sim.plume_image(int(world)), sim.sources[int(world)].round().astype(int),
                  walls=sim.wall_mask(int(world)))  # one episode: one mask
        rec._sim = sim
        rec._world = int(world)
        # a shared static field is drawn from self.field; any other plume (a movie, a random
        # source) is kept per entry, so each frame shows that step's plume image
        rec._static_field = sim._ctx.field is not None
        n = sim.n_agents
        rec._rows = slice(world * n, (world + 1) * n)
        rec.record()
        return rec

    @property
    def grid_size(self) -> tuple:
        """``(width, height)`` of the field (``(width, height, depth)`` of a volume)."""
        return tuple(reversed(self.field.shape))

    def record(self, positions=None, active=None) -> None:
        """Append one step: ``positions`` ``(N, 2)`` cells and ``active`` ``(N,)`` bool (copied).

        Without arguments, reads them from the bound simulator.
        """
        t = None
        if positions is None:
            if self._sim is None:
                raise ValidationError("record(): got no positions and no simulator; pass positions "
                                      "(N, 2), or make the recorder with TrajectoryRecorder.from_simulator(sim)")
            sim = self._sim
            t = int(sim.world_steps[self._world])
            if self._positions and t <= self._last_t:
                raise StateError(
                    f"world {self._world} started a new episode (its step count went from {self._last_t} to {t}); "
                    "a recorder holds one episode: make a new one, or use Simulator(..., autoreset='disabled')"
                )
            positions = sim.positions[self._rows]
            active = sim.active[self._rows]
            overlays = world_overlays(sim, self._world)
            field = None if self._static_field else np.array(overlays["field"], dtype=np.float32)
            if field is not None and self.dims == 3:
                # a volume is large: entries share the last one kept while it does not change
                kept = next((e[0] for e in reversed(self._overlays) if e[0] is not None), None)
                if kept is not None and np.array_equal(kept, field):
                    field = kept
            # the sources now: they may move, or be several
            entry = (field, overlays["headings"], overlays["points"], overlays["wind"], overlays["source"])
        else:
            entry = None
        size = self.grid_size
        dims = len(size)
        cell = "(x, y)" if dims == 2 else "(x, y, z)"
        try:
            raw = np.asarray(positions)
        except (TypeError, ValueError) as exc:
            raise ValidationError(f"positions: got {type(positions).__name__} of uneven length; expected (N, {dims}) "
                                  f"integer cells {cell}") from exc
        if raw.ndim != 2 or raw.shape[1] != dims or raw.dtype.kind not in "iuf":
            raise ValidationError(f"positions: got shape {raw.shape} dtype {raw.dtype}; expected (N, {dims}) integer "
                                  f"cells {cell}")
        if raw.dtype.kind == "f" and raw.size and not (np.isfinite(raw).all() and (raw == np.round(raw)).all()):
            raise ValidationError(f"positions: got non-integer or non-finite coordinates; expected integer cells {cell}")
        positions = raw.astype(np.int32)
        if self._positions and positions.shape != self._positions[0].shape:
            raise ValidationError(f"positions: got shape {positions.shape}; expected {self._positions[0].shape} as before")
        if positions.size and ((positions < 0).any() or (positions >= np.array(size)).any()):
            raise ValidationError(f"positions: cells outside the {'x'.join(map(str, size))} grid")
        n = len(positions)
        if active is None:
            active = np.ones(n, dtype=bool)
        active = np.asarray(active)
        if active.shape != (n,) or active.dtype.kind not in "biu" or (
                active.dtype.kind != "b" and not np.isin(active, (0, 1)).all()):
            raise ValidationError(f"active: got shape {active.shape}; expected ({n},) bool, one flag per agent "
                                  f"(got dtype {active.dtype})")
        active = active.astype(bool)
        if t is not None:
            self._last_t = t  # only once the entry is known to be valid
        self._positions.append(positions)
        self._active.append(active)
        self._overlays.append(entry if entry is not None else (None, None, None, None, None))

    def __len__(self) -> int:
        """Entries recorded (the start plus one per step)."""
        return len(self._positions)

    @property
    def positions(self) -> np.ndarray:
        """``(T, N, dims)`` int32: every recorded position."""
        self._require()
        return np.stack(self._positions)

    @property
    def active(self) -> np.ndarray:
        """``(T, N)`` bool: every recorded active flag."""
        self._require()
        return np.stack(self._active)

    def _require(self):
        if not self._positions:
            raise StateError("nothing recorded yet: call record() first")

    def frame(self, t: int = -1, *, trail: int = 0, scale: int = 1, caption: bool = False) -> np.ndarray:
        """The ``render_frame`` picture of entry ``t`` with the last ``trail`` positions as trails.

        Args:
            t: the entry, ``0 .. len(self) - 1`` (negative counts from the end).
            trail: steps of trail behind each agent (0 for none).
            scale: pixels per cell, 1..64.
            caption: add ``annotate_frame``'s strip below (step counter and legend).
        """
        self._require()
        count = len(self._positions)
        if not is_int(t) or not -count <= t < count:
            raise ValidationError(f"t: got {t!r}; expected an integer in {-count}..{count - 1} ({count} entries recorded)")
        trail = _positive_int("trail", trail, low=0)
        t = range(count)[t]
        trails = None
        if trail > 0 and t > 0:
            trails = np.stack(self._positions[max(0, t - trail):t])
        active = self._active[t]
        field, headings, points, wind, source = self._overlays[t]
        source = self.source if source is None else source
        if self.dims == 3:
            picture = render_volume(self.field if field is None else field, self._positions[t], source=source,
                                    active=active, trajectories=trails, scale=scale, walls=self.walls)
        else:
            picture = render_frame(self.field if field is None else field, self._positions[t], source=source,
                                   active=active, trails=trails, scale=scale, headings=headings, points=points,
                                   wind=wind, walls=self.walls)
        if not caption:
            return picture
        searching = int(active.sum())
        return annotate_frame(picture, step=t, last_step=count - 1, searching=searching,
                              finished=len(active) - searching, source=self.source is not None)

    def frames(self, *, trail: int = 12, scale: int = 1, every: int = 1, caption: bool = False):
        """Yield frames of entries ``0, every, 2*every, ...`` and always the last one (see ``frame``)."""
        self._require()
        every = _positive_int("every", every)
        trail = _positive_int("trail", trail, low=0)
        last = len(self._positions) - 1
        for t in range(0, last + 1, every):
            yield self.frame(t, trail=trail, scale=scale, caption=caption)
        if last % every:
            yield self.frame(last, trail=trail, scale=scale, caption=caption)

    def save_png(self, path, *, title=None) -> Path:
        """PNG of all trajectories (``save_trajectory_png``) with where each agent ended. A 3-D
        world: the ``render_volume`` panels of the last entry with every trajectory (``title`` is
        not drawn)."""
        self._require()
        if self.dims == 3:
            return save_volume_png(path, self.field if self._static_field or self._overlays[-1][0] is None
                                   else self._overlays[-1][0], self.positions, source=self.source,
                                   active=self._active[-1], walls=self.walls)
        source = self.source if self._overlays[-1][4] is None else self._overlays[-1][4]  # where they are now
        return save_trajectory_png(path, self.field, self.positions, source=source,
                                   active=self._active[-1], title=title, walls=self.walls)

    def save_movie(self, path, *, fps: float = 15, trail: int = 12, scale: int | None = None,
                   every: int = 1, caption: bool = True, progress=None) -> Path:
        """GIF or MP4 of the recorded steps (``write_movie``), each frame with a caption strip below
        (``annotate_frame``: the step counter and the legend) unless ``caption=False``.

        Args:
            fps: frames per second, 0 < fps <= 100.
            trail: steps of trail drawn behind each agent (0 for none).
            scale: pixels per cell (default: ``auto_scale``, at least 256 pixels on the longer side).
            every: draw every ``every``-th step (and the last).
            caption: add the step counter and the legend under every frame.
            progress: optional callable ``progress(frames_done, frames_total)``.

        Raises:
            ValidationError: a bad path, fps, trail, scale, every or progress (before any frame is drawn).
            StateError: nothing recorded yet.
            RenderingError: imageio (or, for MP4, its ffmpeg backend) is missing.
        """
        self._require()
        if scale is None:
            scale = auto_scale(*self.grid_size) if self.dims == 2 else volume_scale(*self.grid_size)
        scale = _positive_int("scale", scale)
        if scale > 64:
            raise ValidationError(f"scale: got {scale}; expected an integer in 1..64")
        every = _positive_int("every", every)
        trail = _positive_int("trail", trail, low=0)
        if progress is not None and not callable(progress):
            raise ValidationError(f"progress: got {progress!r}; expected a callable progress(done, total) or None")
        total = (len(self._positions) - 1) // every + 1 + (1 if (len(self._positions) - 1) % every else 0)

        def counted():
            for k, frame in enumerate(self.frames(trail=trail, scale=scale, every=every, caption=caption), start=1):
                if progress is not None:
                    progress(k, total)
                yield frame

        return write_movie(path, counted(), fps=fps)
