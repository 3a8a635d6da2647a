"""``RandomWalk(speed, persistence)``: sources that run and tumble (a random walk with a mean run length)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...engine import rng
from ...engine.api import is_on
from ...engine.jit import njit
from ..base import check_real
from .motion import MotionKernels, SourceMotion, motion_record, reflect

STREAM = 0x3F84D5B5  # this motion's random stream
MAX_SPEED = 1000.0
MAX_PERSISTENCE = 1e9
RECORD = np.dtype([("walk_speed", np.float64), ("walk_tumble", np.float64)], align=True)


@njit(inline="always")
def lattice_step(heading):
    """The cell step ``(dx, dy)`` of a cardinal heading (0, 90, 180 or 270 degrees)."""
    q = int(heading) // 90
    if q == 0:
        return 1, 0
    if q == 1:
        return 0, 1
    if q == 2:
        return -1, 0
    return 0, -1


@njit(inline="always")
def start(M, MS, xy, b, k, seed, episode, lattice):
    u = rng.uniform(rng.stream_key(seed, episode, STREAM), 0, k)
    if is_on(lattice):
        MS[b, k, 0] = 90.0 * np.floor(4.0 * u)
    else:
        MS[b, k, 0] = 360.0 * u


@njit(inline="always")
def move(M, MS, xy, b, k, t, shape, seed, episode, lattice):
    key = rng.stream_key(seed, episode, STREAM)
    heading = MS[b, k, 0]
    if rng.uniform(key, t, 3 * k) < M.walk_tumble:
        u = rng.uniform(key, t, 3 * k + 1)
        heading = 90.0 * np.floor(4.0 * u) if is_on(lattice) else 360.0 * u
    if is_on(lattice):
        # one cell along the heading with probability speed; a step off the grid is refused
        if rng.uniform(key, t, 3 * k + 2) < M.walk_speed:
            dx, dy = lattice_step(heading)
            x = xy[b, k, 0] + dx
            y = xy[b, k, 1] + dy
            if 0.0 <= x <= shape[0] - 1.0 and 0.0 <= y <= shape[1] - 1.0:
                xy[b, k, 0] = x
                xy[b, k, 1] = y
    else:
        rad = heading * (np.pi / 180.0)
        x, flip_x = reflect(xy[b, k, 0] + M.walk_speed * np.cos(rad), shape[0] - 1.0)
        y, flip_y = reflect(xy[b, k, 1] + M.walk_speed * np.sin(rad), shape[1] - 1.0)
        xy[b, k, 0] = x
        xy[b, k, 1] = y
        if flip_x:
            heading = (540.0 - heading) % 360.0
        if flip_y:
            heading = (360.0 - heading) % 360.0
    MS[b, k, 0] = heading


@njit(inline="always")
def predict(M, belief, scratch):
    """The Bayes filter's prediction for a target moving on cells as a walk of no memory: it stays
    with probability ``1 - s`` and steps to each of the four neighbours with probability ``s / 4``
    (a step off the grid refused: it stays), ``s = speed``. Exact for ``persistence=1``; for longer
    runs the walk's memory (its heading) is not tracked. Each cell sums, in this order: staying,
    then arriving from below, the left, above, the right, then its refused steps."""
    h, w = belief.shape
    s = M.walk_speed
    q = 0.25 * s
    for y in range(h):
        for x in range(w):
            scratch[y, x] = belief[y, x]
    for y in range(h):
        for x in range(w):
            p = scratch[y, x]
            total = (1.0 - s) * p
            total += q * scratch[y - 1, x] if y > 0 else 0.0  # stepped up (+y) from below
            total += q * scratch[y, x - 1] if x > 0 else 0.0  # stepped right from the left
            total += q * scratch[y + 1, x] if y < h - 1 else 0.0  # stepped down from above
            total += q * scratch[y, x + 1] if x < w - 1 else 0.0  # stepped left from the right
            blocked = (y == h - 1) + (x == w - 1) + (y == 0) + (x == 0)
            belief[y, x] = total + blocked * q * p


@dataclass(frozen=True)
class RandomWalk(SourceMotion):
    """Run and tumble: each source runs along its heading at ``speed`` cells per step and, at each
    step, first tumbles to a new heading drawn uniformly with probability ``1 / persistence``: runs
    last ``persistence`` steps on average (geometrically distributed), ``speed * persistence``
    cells. ``persistence=1``: a new heading every step (a diffusive walk). Reflected at the grid's
    edges (the heading mirrored). Headings at a reset are drawn uniformly.

    On cells (``PoissonHits``): headings are the four cardinal directions and a source moves one
    cell with probability ``speed`` (<= 1) per step; a step off the grid is refused (it stays).
    ``predict`` (and ``predicted``, its NumPy) is the Bayes filter's prediction of such a target
    for a belief over the cells, with no memory of its heading: exact for ``persistence=1``.

    Draws: ``rng.stream_key(seed, episode, STREAM)``, counters ``(0, k)`` at a reset, ``(t, 3k)``
    (tumble?), ``(t, 3k + 1)`` (new heading), ``(t, 3k + 2)`` (move, on cells) at step ``t``.
    State: ``heading`` in degrees.
    """

    speed: float = 0.5
    persistence: float = 10.0

    kernels: ClassVar = MotionKernels(move=move, start=start, predict=predict)
    RECORD: ClassVar = RECORD
    STATE: ClassVar[tuple] = ("heading",)
    lattice_ok: ClassVar[bool] = True

    def __post_init__(self):
        self._set("speed", check_real("RandomWalk", "speed", self.speed, 0.0, MAX_SPEED))
        self._set("persistence", check_real("RandomWalk", "persistence", self.persistence, 1.0, MAX_PERSISTENCE))

    def record(self):
        return motion_record(RECORD, walk_speed=self.speed, walk_tumble=1.0 / self.persistence)

    def predicted(self, beliefs) -> np.ndarray:
        """``predict`` in NumPy over beliefs ``(G, H, W)`` (a new array): the same sums in the same
        order, so the same numbers bit for bit."""
        p = np.asarray(beliefs, np.float64)
        s = self.speed
        q = 0.25 * s
        h, w = p.shape[-2:]
        zero = np.zeros_like(p)
        came = []
        for axis, shift in ((-2, 1), (-1, 1), (-2, -1), (-1, -1)):  # from below, the left, above, the right
            moved = np.roll(p, shift, axis=axis)
            edge = [slice(None)] * p.ndim
            edge[axis] = 0 if shift == 1 else -1
            keep = np.ones_like(p, dtype=bool)
            keep[tuple(edge)] = False
            came.append(np.where(keep, q * moved, zero))
        total = (1.0 - s) * p
        for term in came:
            total = total + term
        y, x = np.mgrid[0:h, 0:w]
        blocked = (y == h - 1).astype(np.int64) + (x == w - 1) + (y == 0) + (x == 0)
        return total + blocked * q * p
