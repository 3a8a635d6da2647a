"""Turbulent plume as Poisson hits: the source-tracking POMDP of infotaxis.

An agent at distance ``d`` (cells, ``d >= 1``) from the source receives a random number of
odor *hits* per step, Poisson-distributed with mean

* 2-D: ``mu(d) = R_dt * K0(d / L) / ln(2 L)`` (``K0``: modified Bessel function of the second
  kind, order 0);
* 1-D: ``mu(d) = R_dt * 2L / (2L - 1) * exp(-d / L)``;

with ``L = lambda_over_dx`` the dispersion length in cells. Hits are counted up to
``n_hits - 1``: the last value lumps the tail, ``Pr(n_hits-1 | d) = Pr(Poisson(mu) >= n_hits-1)``.
On the source (``d = 0``) the search ends and no hit is drawn; the likelihood tables hold 0 there,
so that multiplying a belief by them also removes the agent's cell.

Everything compiled code needs is precomputed here into read-only tables (``K0`` is evaluated by
SciPy once, never in a kernel): ``likelihood`` (indexed by ``[h, |dy|, |dx|]``, so no square root
per cell), the same table centred on the agent (``centred_likelihood``, indexed by
``[h, dy + H - 1, dx + W - 1]``: a contiguous window per position), its log, and the cumulative
distribution of the first hit, and ``L log L`` centred for the entropy sums. See ``kernels.py`` beside this file for the kernels that read them.

Grid: ``H x W`` cells with ``W = grid_size`` and ``H = grid_size`` (2-D) or ``1`` (1-D); the agent
starts at the centre ``(W // 2, H // 2)``. Beliefs are ``(H, W)`` float64 arrays indexed ``[y, x]``.

In the engine (``scenarios.poisson_search``) each world draws, at every reset, its first hit and
then its source from the belief that hit gives (state ``source``, ``first_hit``); an agent's hits
are drawn at counters ``(t, agent index in its world)`` and read by ``sensors.Hits`` and
``sensors.Belief``; ``sensors.Concentration`` reads the mean number of hits at the cell.
"""

from __future__ import annotations

import math
import numbers
from collections import namedtuple
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np

from ....engine import rng as _rng
from ....engine.api import grid_point
from ....engine.jit import njit
from ....errors import ValidationError
from ...base import Plume, PlumeKernels, StateArray, fail
from . import kernels as _kp

__all__ = ["PoissonHits", "NORMS", "P_SOURCE_OUT", "MAX_GRID_SIDE_2D", "MAX_GRID_SIDE_1D", "MAX_N_HITS"]

NORMS = ("euclidean", "manhattan", "chebyshev")
P_SOURCE_OUT = 1e-3  # auto grid: the source lies outside with probability < this after any first hit
MAX_GRID_SIDE_2D = 401  # tables of (n_hits, 2N-1, 2N-1) float64 stay within tens of MB
MAX_GRID_SIDE_1D = 100001
MAX_N_HITS = 64

# likelihood (n_hits, 2H-1, 2W-1) float64 centred; first_hit_cdf (n_hits,); mean_hits (H, W)
# float32 by (|dy|, |dx|); the grid's width and height; the target's motion record (None: it stays)
PoissonHitsParams = namedtuple("PoissonHitsParams", "likelihood first_hit_cdf mean_hits width height motion")

# The 2*dims unit moves as (dx, dy). 2-D follows the engine's "cardinal" order (UP, RIGHT, DOWN,
# LEFT) so the same action indices mean the same moves everywhere; 1-D is (RIGHT, LEFT).
MOVES_2D = ((0, 1), (1, 0), (0, -1), (-1, 0))
MOVES_1D = ((1, 0), (-1, 0))


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _fail(name: str, value, expected: str):
    raise ValidationError(f"PoissonHits.{name}: got {value!r}; expected {expected}")


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


def _mean_hits(d, L: float, I: float, dims: int) -> np.ndarray:
    d = np.asarray(d, dtype=np.float64)
    if dims == 2:
        from scipy.special import k0

        return I * k0(d / L) / math.log(2.0 * L)
    return I * 2.0 * L / (2.0 * L - 1.0) * np.exp(-d / L)


def _hit_probabilities(mu, n_hits: int) -> np.ndarray:
    """``Pr(h | mu)`` for ``h = 0..n_hits-1``, the last one lumping the tail: shape ``(*mu.shape, n_hits)``."""
    from scipy.special import pdtrc
    from scipy.stats import poisson

    mu = np.asarray(mu, dtype=np.float64)
    h = np.arange(n_hits - 1, dtype=np.float64)
    out = np.empty(mu.shape + (n_hits,))
    out[..., :-1] = poisson.pmf(h, mu[..., None])
    # Pr(H >= n_hits-1) = Pr(H > n_hits-2): the survival function, accurate even where it is tiny
    # (1 - sum of the others would cancel to rounding noise far from the source).
    out[..., -1] = pdtrc(n_hits - 2, mu)
    return out


def _radii(L: float) -> np.ndarray:
    return np.arange(1, int(1000 * L), dtype=np.float64)


# --------------------------------------------------------------------- compiled functions
# S = (sources (B, 2) float64, first_hit (B,) int64)

@njit(inline="always")
def reset_world(P, S, b, seed, episode, pos, base, n_agents):
    h0 = _kp.draw_first_hit(seed, episode, P.first_hit_cdf)
    S[1][b] = h0
    sx, sy = _kp.draw_source_after(seed, episode, P.likelihood, pos[base, 0], pos[base, 1], h0, P.height, P.width)
    S[0][b, 0] = sx
    S[0][b, 1] = sy


@njit(inline="always")
def source(P, S, b):
    return S[0][b, 0], S[0][b, 1]


@njit(inline="always")
def sample_cell(P, S, pw, ix, iy):
    dx = ix - int(S[0][pw, 0])
    dy = iy - int(S[0][pw, 1])
    return P.mean_hits[abs(dy), abs(dx)]


@njit(inline="always")
def sample_at(P, S, pw, x, y):
    """Mean hits at the nearest cell; 0 farther than half a cell off the grid (``grid_point``)."""
    inside, x, y = grid_point(x, y, P.width, P.height)
    if not inside:
        return np.float32(0.0)
    return sample_cell(P, S, pw, int(np.floor(x + 0.5)), int(np.floor(y + 0.5)))


# What sensors.Hits and sensors.Belief read.
@njit(inline="always")
def likelihood(P):
    return P.likelihood


@njit(inline="always")
def first_hit(P, S, b):
    return S[1][b]


@njit(inline="always")
def hit(P, S, b, t, n, seed, episode, cx, cy):
    """Hits of agent ``n`` (index in its world) at cell ``(cx, cy)`` at step ``t >= 1``: a draw
    from ``Pr(h | distance to the source)`` at counters ``(t, n)``; 0 on the source."""
    dx = int(S[0][b, 0]) - cx
    dy = int(S[0][b, 1]) - cy
    if dx == 0 and dy == 0:
        return 0
    key = _rng.stream_key(seed, episode, _kp.STREAM_HITS)
    return _kp.draw_hit(key, t, n, P.likelihood, dx, dy)


KERNELS = PlumeKernels(source=source, sample_cell=sample_cell, sample_at=sample_at, reset_world=reset_world)


@dataclass(frozen=True)
class PoissonHits(Plume):
    """Poisson-hit plume (frozen, validated; resolved ``n_hits`` and ``grid_size`` when not given).

    Args:
        lambda_over_dx: dispersion length ``L`` in cells, ``>= 1`` (and ``<= 50``).
        R_dt: emission rate times time step ``I``, ``> 0`` (and ``<= 1000``).
        dims: 1 or 2.
        norm: distance between cells, ``"euclidean"`` (default), ``"manhattan"`` or ``"chebyshev"``.
        n_hits: number of hit values ``0..n_hits-1``, 2..64; default
            ``ceil(mu(1) + sqrt(mu(1))) + 1``.
        grid_size: odd side ``N`` of the domain, ``>= 3``; default the smallest ``N`` such that,
            after any first hit, a source placed uniformly in an unbounded domain lies outside the
            ball of diameter ``N`` with probability ``< 1e-3``.
        source_motion: how the target moves, on cells (``moving.py``): ``sources.Static()``
            (default) or ``sources.RandomWalk(speed <= 1, persistence)``; ``sensors.Belief`` then
            predicts its motion at every step, so that infotaxis pursues it.

    Example:
        >>> PoissonHits(lambda_over_dx=1.0, R_dt=2.0).grid_size
        19
    """

    lambda_over_dx: float
    R_dt: float
    dims: int = 2
    norm: str = "euclidean"
    n_hits: int | None = None
    grid_size: int | None = None
    source_motion: object = None

    def __post_init__(self):
        if not _is_int(self.dims) or self.dims not in (1, 2):
            _fail("dims", self.dims, "1 or 2")
        for name, low, high in (("lambda_over_dx", 1.0, 50.0), ("R_dt", 0.0, 1000.0)):
            v = getattr(self, name)
            ok = _is_real(v) and math.isfinite(float(v)) and low <= float(v) <= high
            if not ok or (name == "R_dt" and float(v) <= 0.0):
                bracket = "[1, 50]" if name == "lambda_over_dx" else "(0, 1000]"
                _fail(name, v, f"a finite number in {bracket}")
            object.__setattr__(self, name, float(v))
        if not isinstance(self.norm, str) or self.norm.lower() not in NORMS:
            _fail("norm", self.norm, f"one of {list(NORMS)}")
        object.__setattr__(self, "norm", self.norm.lower())
        object.__setattr__(self, "dims", int(self.dims))
        if self.n_hits is None:
            mu1 = float(self.mean_hits(1.0))
            n = int(math.ceil(mu1 + math.sqrt(mu1))) + 1
            if n > MAX_N_HITS:
                _fail("R_dt", self.R_dt, f"a rate giving at most {MAX_N_HITS} hit values (default n_hits = {n})")
            object.__setattr__(self, "n_hits", n)
        elif not _is_int(self.n_hits) or not 2 <= self.n_hits <= MAX_N_HITS:
            _fail("n_hits", self.n_hits, f"an integer in 2..{MAX_N_HITS} or None")
        object.__setattr__(self, "n_hits", int(self.n_hits))
        side_max = MAX_GRID_SIDE_2D if self.dims == 2 else MAX_GRID_SIDE_1D
        if self.grid_size is None:
            n = self._auto_grid_size()
            if n > side_max:
                _fail("lambda_over_dx", self.lambda_over_dx,
                      f"a dispersion length whose automatic grid fits in {side_max} cells (needs {n})")
            object.__setattr__(self, "grid_size", n)
        elif not _is_int(self.grid_size) or not 3 <= self.grid_size <= side_max or self.grid_size % 2 == 0:
            _fail("grid_size", self.grid_size, f"an odd integer in 3..{side_max} or None")
        object.__setattr__(self, "grid_size", int(self.grid_size))
        from ...sources.source_set import motion_of

        motion = motion_of("PoissonHits", self.source_motion, lattice=True)
        if motion.moves and motion.speed > 1.0:
            _fail("source_motion", motion, "a RandomWalk with speed <= 1 (on cells: the probability of a move)")
        object.__setattr__(self, "source_motion", motion)

    @property
    def kernels(self):
        if self.source_motion.moves:
            from .moving import KERNELS as MOVING

            return MOVING
        return KERNELS

    # -- the model's formulas ---------------------------------------------------------------
    def mean_hits(self, d) -> np.ndarray:
        """Mean number of hits per step at distance ``d`` (cells, float or array, each ``>= 1``)."""
        d = np.asarray(d, dtype=np.float64)
        if not np.all(np.isfinite(d)) or np.any(d < 1.0):
            raise ValidationError(f"PoissonHits.mean_hits: got d={d!r}; expected finite distances >= 1 cell")
        return _mean_hits(d, self.lambda_over_dx, self.R_dt, self.dims)

    def hit_probabilities(self, d) -> np.ndarray:
        """``Pr(h | d)``, shape ``(*d.shape, n_hits)``, for distances ``d >= 1`` cells."""
        return _hit_probabilities(self.mean_hits(d), self.n_hits)

    def _shell_weights(self, r: np.ndarray) -> np.ndarray:
        # Volume of the shell between r - 1/2 and r + 1/2, up to a constant factor that cancels
        # after normalization: 2 r (2-D, for every norm) or 1 (1-D).
        return 2.0 * r if self.dims == 2 else np.ones_like(r)

    def _auto_grid_size(self) -> int:
        r = _radii(self.lambda_over_dx)
        p = self.hit_probabilities(r) * self._shell_weights(r)[:, None]  # (R, n_hits)
        size = 0
        for h in range(1, self.n_hits):
            ball = np.cumsum(p[:, h])
            ball /= ball[-1]  # Pr(source within radius r | first hit h)
            where = int(np.argmax(1.0 - ball < P_SOURCE_OUT))
            size = max(size, 2 * (where + 1) + 1)
        return size

    @cached_property
    def first_hit_probabilities(self) -> np.ndarray:
        """``P(h0)``, shape ``(n_hits,)`` float64, 0 at ``h0 = 0``: the source uniform in an unbounded
        domain, conditioned on ``h0 >= 1``: ``P(h0) ∝ sum_{r>=1} Pr(h0 | r) * shell(r)``."""
        r = _radii(self.lambda_over_dx)
        w = (self.hit_probabilities(r) * self._shell_weights(r)[:, None]).sum(axis=0)
        w[0] = 0.0
        return _readonly(w / w.sum())

    @cached_property
    def first_hit_cdf(self) -> np.ndarray:
        """Cumulative ``first_hit_probabilities``, shape ``(n_hits,)``, last entry exactly 1."""
        c = np.cumsum(self.first_hit_probabilities)
        c[-1] = 1.0
        return _readonly(c)

    # -- grid, moves and tables ---------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, int]:
        """``(H, W)`` of a belief: ``(N, N)`` in 2-D, ``(1, N)`` in 1-D."""
        return (self.grid_size, self.grid_size) if self.dims == 2 else (1, self.grid_size)

    @property
    def start(self) -> tuple[int, int]:
        """The start cell ``(x, y)``: the centre."""
        h, w = self.shape
        return (w // 2, h // 2)

    @property
    def n_actions(self) -> int:
        return 2 * self.dims

    @cached_property
    def moves(self) -> np.ndarray:
        """``(n_actions, 2)`` int32 ``(dx, dy)`` of each action (2-D: UP, RIGHT, DOWN, LEFT)."""
        return _readonly(np.array(MOVES_2D if self.dims == 2 else MOVES_1D, dtype=np.int32))

    def distance(self, dx, dy) -> np.ndarray:
        """Distance (cells) of the offset ``(dx, dy)`` in this model's norm."""
        dx = np.abs(np.asarray(dx, dtype=np.float64))
        dy = np.abs(np.asarray(dy, dtype=np.float64))
        if self.norm == "euclidean":
            return np.sqrt(dx * dx + dy * dy)
        if self.norm == "manhattan":
            return dx + dy
        return np.maximum(dx, dy)

    @cached_property
    def likelihood(self) -> np.ndarray:
        """``Pr(h | |dy|, |dx|)``: ``(n_hits, H, W)`` float64, 0 at ``[:, 0, 0]`` (on the source)."""
        h, w = self.shape
        dy, dx = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
        d = self.distance(dx, dy)
        table = np.zeros((self.n_hits, h, w))
        off = d > 0
        table[:, off] = self.hit_probabilities(d[off]).T
        return _readonly(table)

    @cached_property
    def log_likelihood(self) -> np.ndarray:
        """``log(likelihood)`` where it is positive, else 0 (those terms are multiplied by 0)."""
        t = self.likelihood
        out = np.zeros_like(t)
        np.log(t, out=out, where=t > 0)
        return _readonly(out)

    @staticmethod
    def _centre(table: np.ndarray) -> np.ndarray:
        # [..., k] for k = 0..2n-2 holds the entry at |k - (n - 1)|: mirror the last two axes.
        t = np.concatenate([table[..., :0:-1], table], axis=-1)
        return np.concatenate([t[..., :0:-1, :], t], axis=-2)

    @cached_property
    def centred_likelihood(self) -> np.ndarray:
        """``likelihood`` centred: ``(n_hits, 2H-1, 2W-1)``, entry ``[h, dy + H-1, dx + W-1]``."""
        return _readonly(self._centre(self.likelihood))

    @cached_property
    def centred_log_likelihood(self) -> np.ndarray:
        """``log_likelihood`` centred as ``centred_likelihood``."""
        return _readonly(self._centre(self.log_likelihood))

    @cached_property
    def centred_likelihood_log(self) -> np.ndarray:
        """``L log L`` centred as ``centred_likelihood`` (0 where ``L = 0``): the kernels' table."""
        return _readonly(self.centred_likelihood * self.centred_log_likelihood)

    @cached_property
    def centred_manhattan(self) -> np.ndarray:
        """``|dy| + |dx|`` as float64 ``(2H-1, 2W-1)``, centred (space-aware infotaxis)."""
        h, w = self.shape
        dy, dx = np.meshgrid(np.arange(1 - h, h), np.arange(1 - w, w), indexing="ij")
        return _readonly((np.abs(dy) + np.abs(dx)).astype(np.float64))

    def initial_belief(self, first_hit: int) -> np.ndarray:
        """The belief after the first hit at the start cell: ``(H, W)`` float64, sums to 1."""
        if not _is_int(first_hit) or not 1 <= first_hit < self.n_hits:
            raise ValidationError(
                f"PoissonHits.initial_belief: got first_hit={first_hit!r}; expected an integer in 1..{self.n_hits - 1}")
        h, w = self.shape
        x0, y0 = self.start
        p = self.centred_likelihood[first_hit, h - 1 - y0:2 * h - 1 - y0, w - 1 - x0:2 * w - 1 - x0].copy()
        return p / p.sum()

# ---------------------------------------------------------------- engine interface (methods)
    @property
    def random_source(self) -> bool:
        return True  # each world draws its source at every reset (from the first hit)

    def natural_grid_size(self) -> tuple:
        """``(width, height)`` of the domain: ``(N, N)``, or ``(N, 1)`` in 1-D."""
        h, w = self.shape
        return (w, h)

    def bind(self, grid_size) -> "PoissonHits":
        if tuple(grid_size) != self.natural_grid_size():
            fail("PoissonHits", "grid_size", self.grid_size,
                 f"a domain matching the scenario's grid {tuple(grid_size)}")
        return self

    def fixed_source(self):
        return None

    def concentration_bounds(self) -> tuple:
        """What ``sensors.Concentration`` reads: the mean number of hits per step, 0..mu(1)."""
        return 0.0, float(self.mean_hits(1.0))

    def field(self, grid_size):
        return None

    @cached_property
    def _mean_table(self) -> np.ndarray:
        """``(H, W)`` float32 mean hits by ``(|dy|, |dx|)``; at the source, ``mu(1)``."""
        h, w = self.shape
        dy, dx = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
        d = np.maximum(self.distance(dx, dy), 1.0)
        return _readonly(self.mean_hits(d).astype(np.float32))

    def params(self, scenario) -> tuple:
        h, w = self.shape
        record = PoissonHitsParams
        if self.source_motion.moves:
            from .moving import MovingPoissonHitsParams as record
        return record(np.ascontiguousarray(self.centred_likelihood), np.ascontiguousarray(self.first_hit_cdf),
                      self._mean_table, int(w), int(h), self.source_motion.record())

    def state_spec(self, scenario) -> dict:
        h, w = self.shape
        spec = {"source": StateArray(np.float64, "world", (2,), 0.0, float(max(w, h) - 1)),
                "first_hit": StateArray(np.int64, "world", (), 0, self.n_hits - 1)}
        if self.source_motion.moves:
            spec["motion"] = StateArray(np.float64, "world", (1, self.source_motion.state_width()))
        return spec

    def state_tuple(self, arrays: dict) -> tuple:
        if self.source_motion.moves:
            return (arrays["source"], arrays["first_hit"], arrays["motion"])
        return (arrays["source"], arrays["first_hit"])

    def metadata(self) -> dict:
        out = super().metadata()
        if not self.source_motion.moves:  # as before motions existed
            del out["source_motion"]
        return out

    def image(self, params, state, b: int, t: int) -> np.ndarray:
        """``(H, W)`` float32 mean hits per step around world ``b``'s source, for pictures."""
        h, w = self.shape
        sx, sy = (int(v) for v in state[0][b])
        ys, xs = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
        return np.ascontiguousarray(params.mean_hits[np.abs(ys - sy), np.abs(xs - sx)])

    def sources(self, params, state, num_worlds: int) -> np.ndarray:
        return state[0].copy()
