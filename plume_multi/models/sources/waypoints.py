"""``Waypoints(points, speed)``: sources travel a path of points at a constant speed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...engine.jit import njit
from ..base import check_bool, check_real, fail, is_real
from .motion import MotionKernels, SourceMotion, motion_record

MAX_POINTS = 64
MAX_SPEED = 1000.0
RECORD = np.dtype([("path_speed", np.float64), ("path_loop", np.int64), ("path_n", np.int64),
                   ("path_points", np.float64, (MAX_POINTS, 2))], align=True)


@njit(inline="always")
def start(M, MS, xy, b, k, seed, episode, lattice):
    MS[b, k, 0] = 0.0


@njit(inline="always")
def move(M, MS, xy, b, k, t, shape, seed, episode, lattice):
    n = M.path_n
    leg = min(max(int(MS[b, k, 0]), 0), n)  # a restored state cannot index past the points
    left = M.path_speed
    x = xy[b, k, 0]
    y = xy[b, k, 1]
    for _ in range(n + 1):  # each pass reaches a point or spends the step
        if leg >= n:
            if M.path_loop == 0:
                break
            leg = 0
        dx = M.path_points[leg, 0] - x
        dy = M.path_points[leg, 1] - y
        d = np.sqrt(dx * dx + dy * dy)
        if d <= left:
            x = M.path_points[leg, 0]
            y = M.path_points[leg, 1]
            left -= d
            leg += 1
        else:
            x += dx / d * left
            y += dy / d * left
            left = 0.0
        if left <= 0.0:
            break
    xy[b, k, 0] = x
    xy[b, k, 1] = y
    MS[b, k, 0] = leg


@dataclass(frozen=True)
class Waypoints(SourceMotion):
    """Each source travels from where it starts to ``points[0]``, ``points[1]``, ... in straight
    lines at ``speed`` cells per step (a step may pass several points); after the last point it
    stays there, or with ``loop=True`` goes on to ``points[0]`` again, round and round. ``points``:
    1..64 ``(x, y)`` cells inside the grid. Several sources each travel the same points from their
    own start. State: ``leg``, the index of the point a source is heading for (``len(points)``
    once it has stopped).
    """

    points: tuple = ((0.0, 0.0),)
    speed: float = 0.5
    loop: bool = False

    kernels: ClassVar = MotionKernels(move=move, start=start)
    RECORD: ClassVar = RECORD
    STATE: ClassVar[tuple] = ("leg",)

    def __post_init__(self):
        rule = f"1..{MAX_POINTS} (x, y) pairs of finite cells"
        try:
            pts = [tuple(p) for p in self.points]
        except TypeError:
            fail("Waypoints", "points", self.points, rule)
        if not 1 <= len(pts) <= MAX_POINTS or not all(len(p) == 2 and all(is_real(c) and np.isfinite(c) for c in p)
                                                         for p in pts):
            fail("Waypoints", "points", self.points, rule)
        self._set("points", tuple((float(x), float(y)) for x, y in pts))
        self._set("speed", check_real("Waypoints", "speed", self.speed, 0.0, MAX_SPEED))
        self._set("loop", check_bool("Waypoints", "loop", self.loop))

    def check_grid(self, grid_size, owner: str) -> None:
        w, h = grid_size
        for x, y in self.points:
            if not (0.0 <= x <= w - 1 and 0.0 <= y <= h - 1):
                fail(owner, "source_motion", self, f"Waypoints whose points lie in the {w}x{h} grid "
                     f"([0, {w - 1}] x [0, {h - 1}]); {(x, y)} does not")

    def record(self):
        points = np.zeros((MAX_POINTS, 2))
        points[:len(self.points)] = self.points
        return motion_record(RECORD, path_speed=self.speed, path_loop=int(self.loop), path_n=len(self.points),
                             path_points=points)
