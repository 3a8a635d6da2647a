"""What every Poisson-hit plume shares: the compiled roles, the tables they read, the engine interface.

A Poisson-hit plume is its tables. ``PoissonHits`` (isotropic, ``model.py``) and
``WindyPoissonHits`` (a mean wind, ``windy.py``) differ only in how they fill them; the compiled
code below reads the tables alone, so both run through the same compiled functions (one driver per
combination of the other models, whichever hit law):

* ``centred_likelihood`` ``(n_hits, 2H-1, 2W-1)`` float64: ``Pr(h | offset)``, entry
  ``[h, dy + H-1, dx + W-1]`` for the source at offset ``(dx, dy)`` from the agent, 0 at the
  centre (an agent on the source draws no hit);
* ``first_hit_cdf`` ``(n_hits,)``: the cumulative law of the first hit (``cdf[0] = 0``);
* the mean hits per step ``(2H-1, 2W-1)`` float32, entry ``[ay - sy + H-1, ax - sx + W-1]`` for an
  agent at offset ``(ax - sx, ay - sy)`` from the source (``sensors.Concentration`` reads it).

Each world draws, at every reset, its first hit and then its source from the belief that hit
gives (``kernels.draw_source_after``); with a fixed ``source`` the first hit is drawn from
``Pr(h | offset of the source from the first agent, h >= 1)`` instead. State: ``source``
``(B, D)`` float64 cells, ``first_hit`` ``(B,)`` int64.

In 3-D (``PoissonHits(dims=3)``) the same compiled functions read tables with a third axis: the
likelihood ``(n_hits, 2D-1, 2H-1, 2W-1)`` (entry ``[h, dz + D-1, dy + H-1, dx + W-1]``) and the mean
hits ``(2D-1, 2H-1, 2W-1)``; cells and offsets are tuples (``engine/tuples.py``).
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np


from ....checks import check_point, fail, is_int
from ....engine import rng as _rng
from ....engine.api import grid_point
from ....engine.jit import njit
from ....engine.tuples import cell_of, per_coordinate, put_row, row, take
from ....errors import ValidationError
from ...base import Plume, PlumeKernels, StateArray
from . import kernels as _kp

__all__ = ["PoissonHitPlume", "PoissonHitsParams", "KERNELS", "MOVES_1D", "MOVES_2D", "MOVES_3D", "SUM_TOL", "readonly",
           "centre", "check_source", "window", "log_where_positive"]

# likelihood (n_hits, 2H-1, 2W-1) float64 centred; first_hit_cdf (n_hits,); mean_hits (2H-1, 2W-1)
# float32 centred on the source (one more axis first in 3-D); the grid's width, height and depth (1 in
# 2-D); a fixed source (-1, -1, -1 when drawn; source_z 0 in 2-D); the target's motion record
# (None when it stays)
PoissonHitsParams = namedtuple("PoissonHitsParams", "likelihood first_hit_cdf mean_hits width height depth source_x "
                                                    "source_y source_z motion")
# the parameters of a moving target (moving.py): the same fields in a class of their own (the samplers
# find a plume's compiled functions from its parameters' class, and these are not the static plume's)
MovingPoissonHitsParams = namedtuple("MovingPoissonHitsParams", PoissonHitsParams._fields)

# The 2*dims unit moves as (dx, dy). 2-D follows the engine's "cardinal" order (UP, RIGHT, DOWN,
# LEFT) so the same action indices mean the same moves everywhere; 1-D is (RIGHT, LEFT); 3-D adds
# RISE and SINK after the four, as bodies.Cardinal does in 3-D.
MOVES_2D = ((0, 1), (1, 0), (0, -1), (-1, 0))
MOVES_1D = ((1, 0), (-1, 0))
MOVES_3D = ((0, 1, 0), (1, 0, 0), (0, -1, 0), (-1, 0, 0), (0, 0, 1), (0, 0, -1))

SUM_TOL = 1e-9  # a restored belief must sum to 1 within this


def readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


def log_where_positive(table: np.ndarray) -> np.ndarray:
    """``log(table)`` where it is positive, else 0 (read-only): terms of ``L log L`` where ``L = 0``
    are multiplied by 0."""
    out = np.zeros_like(table)
    np.log(table, out=out, where=table > 0)
    return readonly(out)


def centre(table: np.ndarray, axes: int | None = None) -> np.ndarray:
    """A table indexed by absolute offsets on its last ``axes`` axes (default 2, or 3 for a 4-D
    table), mirrored to ``2n - 1`` entries per axis: ``[..., k]`` for ``k = 0..2n-2`` holds the
    entry at ``|k - (n - 1)|``."""
    axes = (3 if table.ndim == 4 else 2) if axes is None else axes
    t = table
    for axis in range(-1, -axes - 1, -1):
        t = np.concatenate([np.flip(t, axis=axis).take(range(t.shape[axis] - 1), axis=axis), t], axis=axis)
    return t


def check_source(owner: str, value, shape) -> tuple | None:
    """``None`` or ``(x, y)`` (``(x, y, z)`` in 3-D): integers (not bools) inside the domain of
    belief shape ``shape`` (``(H, W)`` or ``(D, H, W)``)."""
    if value is None:
        return None
    sides = shape[::-1]  # (W, H[, D])
    names = "xyz"[:len(sides)]
    cells = ", ".join(f"0 <= {a} < {n}" for a, n in zip(names, sides))
    expected = f"None (drawn from the first hit's belief) or ({', '.join(names)}) integer cells with {cells}"
    point = check_point(owner, "source", value, length=len(sides), integer=True, expected=expected)
    if not all(0 <= c < n for c, n in zip(point, sides)):
        fail(owner, "source", value, expected)
    return point


def window(table: np.ndarray, shape, cell) -> np.ndarray:
    """The window of a centred table (last axes ``2n - 1``) that lines up with the grid of belief
    shape ``shape`` for an agent at ``cell`` (``(x, y[, z])``)."""
    index = tuple(slice(n - 1 - c, 2 * n - 1 - c) for n, c in zip(shape, cell[::-1]))
    return table[(Ellipsis,) + index]


# --------------------------------------------------------------------- compiled functions
# S = (sources (B, D) float64, first_hit (B,) int64). ``P.mean_hits.shape`` is as long as the
# dimension: a tuple of it says how many coordinates a cell has where no coordinate is given.

@njit(inline="always")
def reset_world(P, S, b, seed, episode, pos, base, n_agents):
    start = row(pos, base, P.mean_hits.shape)
    if P.source_x < 0:  # the protocol: a first hit, then the source drawn from its belief
        h0 = _kp.draw_first_hit(seed, episode, P.first_hit_cdf)
        src = _kp.draw_source_after(seed, episode, P.likelihood, start, h0,
                                     take((P.width, P.height, P.depth), start)[::-1])
    else:  # a fixed source: the first hit given its offset from the first agent
        src = take((P.source_x, P.source_y, P.source_z), start)
        h0 = _kp.draw_first_hit_at(seed, episode, P.likelihood, _offset(src, start))
    S[1][b] = h0
    put_row(S[0], b, src)


@njit(inline="always")
def source(P, S, b, shape):
    return row(S[0], b, shape)


@njit(inline="always")
def sample_cell(P, S, pw, cell):
    index = _centred(cell, row(S[0], pw, cell), take((P.width, P.height, P.depth), cell))
    return P.mean_hits[index[::-1]]


@njit(inline="always")
def sample_at(P, S, pw, point):
    """Mean hits at the nearest cell; 0 farther than half a cell off a 2-D grid (``grid_point``)."""
    inside, point = grid_point(point, take((P.width, P.height, P.depth), point))
    if not inside:
        return np.float32(0.0)
    return sample_cell(P, S, pw, cell_of(point))


# What sensors.Hits and sensors.Belief read.
@njit(inline="always")
def likelihood(P):
    return P.likelihood


@njit(inline="always")
def first_hit(P, S, b):
    return S[1][b]


@njit(inline="always")
def hit(P, S, b, t, n, seed, episode, cell):
    """Hits of agent ``n`` (index in its world) at ``cell`` at step ``t >= 1``: a draw from
    ``Pr(h | offset of the source)`` at counters ``(t, n)``; 0 on the source."""
    offset = _offset(row(S[0], b, cell), cell)
    on_source = True
    for c in range(len(offset)):
        on_source = on_source and offset[c] == 0
    if on_source:
        return 0
    key = _rng.stream_key(seed, episode, _kp.STREAM_HITS)
    return _kp.draw_hit(key, t, n, P.likelihood, offset)


KERNELS = PlumeKernels(source=source, sample_cell=sample_cell, sample_at=sample_at, reset_world=reset_world)


@per_coordinate("np.int64(src[{k}]) - cell[{k}]", like="cell")
def _offset(src, cell):
    """``int(src[c]) - cell[c]`` of each axis: the source's offset from a cell."""


@per_coordinate("cell[{k}] - np.int64(src[{k}]) + sides[{k}] - 1")
def _centred(cell, src, sides):
    """The index into a table centred on the source of ``cell``'s offset from ``src`` (x first)."""


@dataclass(frozen=True)
class PoissonHitPlume(Plume):
    """Base of the Poisson-hit plumes (``plumes.PoissonHits``, ``plumes.WindyPoissonHits``): what
    ``sensors.Hits``, ``sensors.Belief`` and ``policies.Infotaxis`` read.

    A subclass is a frozen dataclass with the fields ``n_hits`` and ``source`` and defines
    ``shape`` ``(H, W)``, ``start`` ``(x, y)``, ``dims``, ``_centred_table()`` (the centred
    likelihood), ``_centred_mean()`` (the centred mean hits, float64) and
    ``first_hit_probabilities``; everything else (the tables the kernels read, the engine
    interface, the state's checks) is here.
    """

    kernels: ClassVar = KERNELS
    # a subclass whose tables have a third axis declares (2, 3); the model's own ``dims`` says which
    dimensions: ClassVar[tuple] = (2,)
    moving_sources: ClassVar = False
    several_sources: ClassVar = False  # one target: the likelihood is of one source's hits

    # -- what a subclass gives --------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        """``(H, W)`` of a belief."""
        raise NotImplementedError

    @property
    def start(self) -> tuple:
        """The protocol's start cell ``(x, y)``."""
        raise NotImplementedError

    def _centred_table(self) -> np.ndarray:
        raise NotImplementedError

    def _centred_mean(self) -> np.ndarray:
        raise NotImplementedError

    # -- tables -------------------------------------------------------------------------------
    @property
    def n_actions(self) -> int:
        return 2 * self.dims

    @cached_property
    def moves(self) -> np.ndarray:
        """``(n_actions, 2)`` int32 ``(dx, dy)`` of each action (2-D: UP, RIGHT, DOWN, LEFT); in 3-D
        ``(6, 3)`` ``(dx, dy, dz)`` (then RISE, SINK)."""
        return readonly(np.array({1: MOVES_1D, 2: MOVES_2D, 3: MOVES_3D}[self.dims], dtype=np.int32))

    @cached_property
    def centred_likelihood(self) -> np.ndarray:
        """``Pr(h | offset)``: ``(n_hits, 2H-1, 2W-1)`` float64, entry ``[h, dy + H-1, dx + W-1]``
        for the source at offset ``(dx, dy)`` from the agent; 0 at the centre."""
        return readonly(self._centred_table())

    @cached_property
    def centred_log_likelihood(self) -> np.ndarray:
        """``log(centred_likelihood)`` where it is positive, else 0 (those terms are multiplied by 0)."""
        return log_where_positive(self.centred_likelihood)

    @cached_property
    def centred_likelihood_log(self) -> np.ndarray:
        """The infotaxis kernels' table: ``(n_hits + 1, ...)`` float64, ``L log L`` of each hit value
        centred as ``centred_likelihood`` (0 where ``L = 0``), then their sum over the hit values
        (minus the entropy of the hit at each offset, nats)."""
        m = self.centred_likelihood * self.centred_log_likelihood
        return readonly(np.concatenate([m, m.sum(axis=0)[None]]))

    @cached_property
    def centred_manhattan(self) -> np.ndarray:
        """``|dy| + |dx|`` as float64 ``(2H-1, 2W-1)``, centred (space-aware infotaxis); in 3-D
        ``|dz| + |dy| + |dx|``, ``(2D-1, 2H-1, 2W-1)``."""
        grids = np.meshgrid(*[np.arange(1 - n, n) for n in self.shape], indexing="ij")
        return readonly(sum(np.abs(g) for g in grids).astype(np.float64))

    @cached_property
    def centred_mean_hits(self) -> np.ndarray:
        """Mean hits per step, ``(2H-1, 2W-1)`` float32, entry ``[ay - sy + H-1, ax - sx + W-1]``
        for an agent at offset ``(ax - sx, ay - sy)`` from the source (what
        ``sensors.Concentration`` reads; at the source, the value one cell away)."""
        return readonly(self._centred_mean().astype(np.float32))

    @cached_property
    def first_hit_cdf(self) -> np.ndarray:
        """Cumulative ``first_hit_probabilities``, shape ``(n_hits,)``, last entry exactly 1."""
        c = np.cumsum(self.first_hit_probabilities)
        c[-1] = 1.0
        return readonly(c)

    def initial_belief(self, first_hit: int, start=None) -> np.ndarray:
        """The belief after ``first_hit`` at ``start`` (default the protocol's): ``(H, W)``
        (``(D, H, W)`` in 3-D) float64, sums to 1 (the kernels' ``init_belief``, bit for bit)."""
        if not is_int(first_hit) or not 1 <= first_hit < self.n_hits:
            raise ValidationError(f"{self.name}.initial_belief: got first_hit={first_hit!r}; expected an integer "
                                  f"in 1..{self.n_hits - 1}")
        cell = tuple(int(c) for c in (self.start if start is None else start))
        p = np.empty(self.shape)
        total = _kp.init_belief(p, self.centred_likelihood, cell, int(first_hit), None)
        if total <= 0.0:
            raise ValidationError(f"{self.name}.initial_belief: a first hit {first_hit} is impossible at {cell}")
        return p

    def first_hit_possible(self, *cell) -> bool:
        """Whether a fixed source (or, without one, some cell) gives a first hit ``>= 1`` to an
        agent at ``cell`` (``x, y[, z]``)."""
        lik = self.centred_likelihood
        if self.source is None:
            return bool((self.first_hit_probabilities[1:] > 0).any() and window(lik[1:], self.shape, cell).sum() > 0)
        index = tuple(s - c + n - 1 for s, c, n in zip(self.source[::-1], cell[::-1], self.shape))
        return bool(lik[(slice(1, None),) + index].sum() > 0)

    # -- engine interface ---------------------------------------------------------------------
    @property
    def random_source(self) -> bool:
        """Each world draws its source at every reset (from the first hit), unless it is fixed."""
        return self.source is None

    def natural_grid_size(self) -> tuple:
        """``(width, height)`` of the domain (``(width, height, depth)`` in 3-D)."""
        return tuple(self.shape[::-1])

    def _grid_dims(self) -> int:
        """The dimension of the scenarios this plume runs in: 3 for a 3-D model, else 2 (a 1-D
        model runs on a grid of one row)."""
        return 3 if self.dims == 3 else 2

    def kernels_for(self, dims: int):
        return self.kernels if dims == self._grid_dims() else None

    def check_dims(self, dims: int, grid_size) -> None:
        if dims not in self.dimensions:
            return super().check_dims(dims, grid_size)  # refused by name
        if dims != self._grid_dims():
            fail(self.name, "dims", self.dims, f"{dims} to run in the {dims}-D scenario of grid_size={tuple(grid_size)}")

    def bind(self, grid_size) -> "PoissonHitPlume":
        if tuple(grid_size) != self.natural_grid_size():
            fail(self.name, "grid_size", self.natural_grid_size(),
                 f"a domain matching the scenario's grid {tuple(grid_size)}")
        return self

    def fixed_source(self):
        return self.source

    def check(self, ctx) -> None:
        """A fixed source needs fixed starts, the first agent's able to receive a first hit."""
        if self.source is None:
            return
        starts = ctx.scenario.start_positions
        if starts is None:
            fail(self.name, "source", self.source,
                 "None with drawn start cells (a fixed source needs Scenario.start_positions: the first hit is "
                 "drawn given the first agent's offset from it)")
        if not self.first_hit_possible(*starts[0]):
            fail(self.name, "source", self.source, f"a source from which the first agent's start {starts[0]} can "
                 "receive a first hit >= 1 (Pr(h >= 1) is 0 there)")

    def concentration_bounds(self) -> tuple:
        """What ``sensors.Concentration`` reads: the mean number of hits per step."""
        return 0.0, float(self.centred_mean_hits.max())

    def field(self, grid_size):
        return None

    @property
    def motion(self):
        """How the target moves (``sources``): ``source_motion`` where the model has one, else
        ``sources.Static()``."""
        from ...sources.static import Static

        motion = getattr(self, "source_motion", None)
        return Static() if motion is None else motion

    def params(self, scenario) -> tuple:
        sides = (*self.shape[::-1], 1)[:3]
        fixed = ((-1,) * 3 if self.source is None else (*self.source, 0))[:3]
        record = MovingPoissonHitsParams if self.motion.moves else PoissonHitsParams
        return record(self.centred_likelihood, self.first_hit_cdf, self.centred_mean_hits,
                      *(int(n) for n in sides), *(int(c) for c in fixed), self.motion.record())

    def state_spec(self, scenario) -> dict:
        sides = self.shape[::-1]
        # sources on cells within the domain's own sides (a 1-D domain's y is 0: its table has one row)
        spec = {"source": StateArray(np.float64, "world", (len(sides),), 0.0, tuple(float(n - 1) for n in sides),
                                     integral=True),
                "first_hit": StateArray(np.int64, "world", (), 0, self.n_hits - 1)}
        if self.motion.moves:  # the motion's state columns (moving.py)
            spec["motion"] = StateArray(np.float64, "world", (1, self.motion.state_width()))
        return spec

    def state_tuple(self, arrays: dict) -> tuple:
        if self.motion.moves:
            return (arrays["source"], arrays["first_hit"], arrays["motion"])
        return (arrays["source"], arrays["first_hit"])

    def check_state(self, ctx, arrays: dict, world=None) -> list:
        """Once reset, every world's first hit is at least 1 (the protocol conditions the search on
        one: a first hit of 0 would start from a belief of nothing), and a fixed source is every
        world's (the range of ``source`` is its cells)."""
        if world is None:
            return []
        none = np.flatnonzero(arrays["first_hit"] < 1)
        if none.size:
            return [("first_hit", f"{none.size} worlds with a first hit below 1 (first: world {none[0]}, "
                                  f"{int(arrays['first_hit'][none[0]])}); expected 1..{self.n_hits - 1} once reset")]
        if self.source is None:
            return []
        moved = np.flatnonzero((arrays["source"] != np.array(self.source, dtype=np.float64)).any(axis=1))
        if moved.size:
            return [("source", f"{moved.size} worlds whose source is not the fixed {self.source} (first: world "
                               f"{moved[0]})")]
        return []

    def image(self, params, state, b: int, t: int) -> np.ndarray:
        """``(H, W)`` float32 mean hits per step around world ``b``'s source (``(D, H, W)`` in
        3-D), for pictures."""
        return np.ascontiguousarray(window(params.mean_hits, self.shape, tuple(int(v) for v in state[0][b])))

    def sources(self, params, state, num_worlds: int) -> np.ndarray:
        return state[0].copy()
