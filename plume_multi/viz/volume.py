"""Pictures of 3-D worlds: three orthogonal views side by side.

A 3-D world (``Scenario(grid_size=(W, H, D))``) is drawn as three ``render_frame`` panels, left to
right:

* **x-y** (seen from above, looking down z): ``(H, W)``, y upward;
* **x-z** (seen from the side, looking along y): ``(D, W)``, z upward;
* **y-z** (seen from the other side, looking along x): ``(D, H)``, z upward.

Each panel shows the concentration either as its **maximum projection** along the axis it looks
down (``mode="max"``: where the plume is anywhere along that axis) or as the **slice** through a
point (``mode="slice"``, the point ``at``, by default the first agent's cell: the plane the agent
is in), walls in grey (a projection's cell blended toward grey by the fraction of its column that
is solid, a slice's solid cells all grey), with every agent, the source and the trajectories
projected onto the panel (a trajectory's
cells drawn in its agent's colour, as ``render_frame``'s trails). Panels share one scale and are
bottom-aligned, separated by a dark gap of ``GAP`` pixels.

``render_volume`` draws arrays; ``world_volume_frame(sim, b)`` draws world ``b`` of a 3-D
``Simulator`` (what the front-ends' ``render()`` returns for a 3-D world);
``TrajectoryRecorder`` (``plume_multi.viz.recording``) records a 3-D search and writes it as a PNG
or a movie with these panels.
"""

from __future__ import annotations

import numpy as np

from ..checks import is_int
from ..errors import ValidationError
from .render import MAX_SCALE, display_scale, render_frame

__all__ = ["render_volume", "world_volume_frame", "volume_scale", "PANELS", "GAP", "MODES"]

# (name, the coordinates drawn as the panel's (x, y), the coordinate it looks down); coordinate c
# (x 0, y 1, z 2) is axis 2 - c of the (D, H, W) volume
PANELS = (("x-y", (0, 1), 2), ("x-z", (0, 2), 1), ("y-z", (1, 2), 0))
GAP = 4  # dark pixels between panels
GAP_COLOUR = np.array([20, 20, 20], dtype=np.uint8)
MODES = ("max", "slice")


def check_volume(volume) -> np.ndarray:
    """The volume as a ``(D, H, W)`` real array with finite values, else a ValidationError."""
    volume = np.asarray(volume)
    if volume.ndim != 3 or volume.dtype.kind not in "fiu" or volume.size == 0:
        raise ValidationError(f"volume: got shape {volume.shape} dtype {volume.dtype}; expected a non-empty "
                              "(D, H, W) float array (a 3-D world's plume_image)")
    if volume.dtype.kind == "f" and not np.isfinite(volume).all():
        raise ValidationError("volume: contains NaN or infinite values; expected finite concentrations in [0, 1]")
    return volume


def check_volume_cells(name: str, cells, size, ndim: int) -> np.ndarray | None:
    """Integer ``(x, y, z)`` cells inside the ``size = (W, H, D)`` grid, of ``ndim`` dimensions."""
    if cells is None:
        return None
    try:
        arr = np.asarray(cells)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"{name}: got {type(cells).__name__} of uneven length; expected integer cells "
                              "(..., 3) of (x, y, z)") from exc
    if arr.ndim != ndim or arr.shape[-1] != 3 or arr.dtype.kind not in "iuf":
        shape = "(M, 3)" if ndim == 2 else "(T, M, 3)"
        raise ValidationError(f"{name}: got shape {arr.shape} dtype {arr.dtype}; expected {shape} integer cells "
                              "(x, y, z)")
    if arr.dtype.kind == "f" and arr.size and not (np.isfinite(arr).all() and (arr == np.round(arr)).all()):
        raise ValidationError(f"{name}: got non-integer or non-finite coordinates; expected integer cells (x, y, z)")
    arr = arr.astype(np.intp)
    if arr.size and ((arr < 0).any() or (arr >= np.array(size)).any()):
        raise ValidationError(f"{name}: cells outside the {'x'.join(map(str, size))} grid")
    return arr


def volume_scale(width: int, height: int, depth: int) -> int:
    """Pixels per cell that make the three panels of a ``W x H x D`` grid comfortable to look at
    (``display_scale`` of the picture's whole size)."""
    for name, value in (("width", width), ("height", height), ("depth", depth)):
        if not is_int(value) or value < 1:
            raise ValidationError(f"{name}: got {value!r}; expected an integer >= 1")
    return display_scale(2 * width + height, max(height, depth))


def render_volume(volume, positions=None, *, source=None, active=None, trajectories=None, mode: str = "max",
                  at=None, scale: int | None = None, walls=None) -> np.ndarray:
    """An RGB picture of a 3-D world: the x-y, x-z and y-z panels side by side (module docstring).

    Args:
        volume: ``(D, H, W)`` float in [0, 1], indexed ``[z, y, x]`` (``Simulator.plume_image``).
        positions: ``(M, 3)`` int cells ``(x, y, z)`` of the agents (or None).
        source: ``(x, y, z)`` of the source, drawn as a red cross in each panel (or None).
        active: ``(M,)`` bool; finished agents are drawn white.
        trajectories: ``(T, M, 3)`` int cells, each agent's positions at T times (oldest first),
            drawn in its colour on every panel (or None).
        mode: ``"max"`` (maximum projections) or ``"slice"`` (the planes through ``at``).
        at: ``(x, y, z)`` the slices go through (``mode="slice"``); default the first agent's
            cell, else the source, else the centre.
        scale: pixels per cell, 1..64 (default ``volume_scale(W, H, D)``).
        walls: ``(D, H, W)`` bool, True where solid (``Simulator.wall_mask``), or None.

    Returns:
        ``(max(H, D) * scale, (2 W + H) * scale + 2 GAP, 3)`` uint8.

    Raises:
        ValidationError: a volume that is not a finite ``(D, H, W)`` array, cells outside the grid,
            a bad mode, ``at``, ``source``, ``active`` or ``scale``. Nothing is drawn.
    """
    volume = check_volume(volume)
    d, h, w = volume.shape
    size = (w, h, d)
    if not isinstance(mode, str) or mode not in MODES:
        raise ValidationError(f"mode: got {mode!r}; expected one of {list(MODES)}")
    positions = check_volume_cells("positions", positions, size, 2)
    trajectories = check_volume_cells("trajectories", trajectories, size, 3)
    if trajectories is not None and positions is not None and trajectories.shape[1] != len(positions):
        raise ValidationError(f"trajectories: got shape {trajectories.shape}; expected (T, {len(positions)}, 3), one "
                              "trajectory per agent of positions")
    if source is not None:
        src = check_volume_cells("source", [source], size, 2)[0]
    else:
        src = None
    if at is None:
        at = positions[0] if positions is not None and len(positions) else (src if src is not None else
                                                                            np.array(size) // 2)
    at = check_volume_cells("at", [at], size, 2)[0]
    if walls is not None:
        walls = np.asarray(walls)
        if walls.shape != volume.shape or walls.dtype != np.bool_:
            raise ValidationError(f"walls: got shape {walls.shape} dtype {walls.dtype}; expected the volume's shape "
                                  f"{volume.shape} bool (True where solid)")
    if scale is None:
        scale = volume_scale(w, h, d)
    if not is_int(scale) or not 1 <= scale <= MAX_SCALE:
        raise ValidationError(f"scale: got {scale!r}; expected an integer in 1..{MAX_SCALE}")

    panels = []
    for _, (a, b), look in PANELS:
        if mode == "max":
            field = volume.max(axis=2 - look)
            shade = None if walls is None else walls.mean(axis=2 - look)
        else:
            field = np.take(volume, at[look], axis=2 - look)
            shade = None if walls is None else np.take(walls, at[look], axis=2 - look)
        # the field is indexed [panel y, panel x]: [y, x] looking down z, [z, x] along y, [z, y] along x
        pick = [a, b]
        panel = render_frame(
            field, None if positions is None else positions[:, pick], source=None if src is None else src[pick],
            active=active, trails=None if trajectories is None or not len(trajectories) else trajectories[..., pick],
            scale=int(scale), walls=shade)
        panels.append(panel)
    height = max(p.shape[0] for p in panels)
    parts = []
    for k, panel in enumerate(panels):
        pad = np.broadcast_to(GAP_COLOUR, (height - panel.shape[0], panel.shape[1], 3))
        parts.append(np.concatenate([pad, panel], axis=0))  # bottom-aligned: y and z grow upward
        if k < len(panels) - 1:
            parts.append(np.broadcast_to(GAP_COLOUR, (height, GAP, 3)))
    return np.ascontiguousarray(np.concatenate(parts, axis=1))


def world_volume_frame(sim, world: int = 0, *, trajectories=None, mode: str = "max",
                       scale: int | None = None) -> np.ndarray:
    """``render_volume`` of world ``world`` of a 3-D ``Simulator`` now: its plume, walls, source
    and agents (``trajectories``: optional ``(T, N, 3)`` cells of its agents)."""
    if getattr(sim, "dims", 2) != 3:
        raise ValidationError(f"sim: its scenario is {getattr(sim, 'dims', 2)}-D; expected a 3-D simulator "
                              "(grid_size=(W, H, D)); use render_frame for 2-D worlds")
    if not is_int(world) or not 0 <= world < sim.num_worlds:
        raise ValidationError(f"world: got {world!r}; expected an integer in 0..{sim.num_worlds - 1}")
    n = sim.n_agents
    rows = slice(world * n, (world + 1) * n)
    source = tuple(int(round(float(c))) for c in sim.sources[world])
    return render_volume(sim.plume_image(world), sim.positions[rows], source=source, active=sim.active[rows],
                         trajectories=trajectories, mode=mode, scale=scale, walls=sim.wall_mask(world))
