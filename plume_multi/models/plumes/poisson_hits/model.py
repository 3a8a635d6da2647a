"""Turbulent plume as Poisson hits: the source-tracking POMDP of infotaxis.

An agent at distance ``d`` (cells, ``d >= 1``) from the source receives a random number of
odor *hits* per step, Poisson-distributed with mean

* 2-D: ``mu(d) = R_dt * K0(d / L) / ln(2 L)`` (``K0``: modified Bessel function of the second
  kind, order 0);
* 1-D: ``mu(d) = R_dt * 2L / (2L - 1) * exp(-d / L)``;
* 3-D: ``mu(d) = R_dt / (2 d) * exp(-d / L)`` (otto's ``L/d exp(1 - d/L) mu0``, ``mu0 = R_dt e^-1 / (2L)``);

with ``L = lambda_over_dx`` the dispersion length in cells. Hits are counted up to
``n_hits - 1``: the last value lumps the tail, ``Pr(n_hits-1 | d) = Pr(Poisson(mu) >= n_hits-1)``.
On the source (``d = 0``) the search ends and no hit is drawn; the likelihood tables hold 0 there,
so that multiplying a belief by them also removes the agent's cell.

Everything compiled code needs is precomputed here into read-only tables (``K0`` is evaluated by
SciPy once, never in a kernel): ``likelihood`` (indexed by ``[h, |dy|, |dx|]``, so no square root
per cell), the same table centred on the agent (``centred_likelihood``, indexed by
``[h, dy + H - 1, dx + W - 1]``: a contiguous window per position), its log, and the cumulative
distribution of the first hit, and ``L log L`` centred for the entropy sums (``plume.py``, shared
with ``WindyPoissonHits``). See ``kernels.py`` beside this file for the kernels that read them.

Grid: ``H x W`` cells with ``W = grid_size`` and ``H = grid_size`` (2-D) or ``1`` (1-D); the agent
starts at the centre ``(W // 2, H // 2)``. Beliefs are ``(H, W)`` float64 arrays indexed ``[y, x]``.
In 3-D the grid is ``N x N x N``, beliefs ``(D, H, W)`` indexed ``[z, y, x]``, cells ``(x, y, z)``,
tables ``(n_hits, 2D-1, 2H-1, 2W-1)`` (``kernels.py``, one function per role for both; the plume's
compiled functions are the same in every dimension, ``plume.py``).

In the engine (``scenarios.poisson_search``) each world draws, at every reset, its first hit and
then its source from the belief that hit gives (state ``source``, ``first_hit``); an agent's hits
are drawn at counters ``(t, agent index in its world)`` and read by ``sensors.Hits`` and
``sensors.Belief``; ``sensors.Concentration`` reads the mean number of hits at the cell.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np

from ....checks import check_real, fail, is_int
from ....errors import ValidationError
from .plume import (KERNELS, MOVES_1D, MOVES_2D, PoissonHitPlume, PoissonHitsParams, check_source, centre,  # noqa: F401
                    first_hit, hit, likelihood, log_where_positive, readonly)

__all__ = ["PoissonHits", "NORMS", "P_SOURCE_OUT", "MAX_GRID_SIDE_2D", "MAX_GRID_SIDE_1D", "MAX_N_HITS",
           "MIN_R_DT", "MAX_R_DT"]

NORMS = ("euclidean", "manhattan", "chebyshev")
P_SOURCE_OUT = 1e-3  # auto grid: the source lies outside with probability < this after any first hit
MAX_GRID_SIDE_2D = 401  # tables of (n_hits, 2N-1, 2N-1) float64 stay within tens of MB
MAX_GRID_SIDE_1D = 100001
MAX_GRID_SIDE_3D = 81  # (2N-1)^3 cells per hit value: 33 MB of float64 at 81
MAX_TABLE_BYTES = 2 ** 29  # one float64 table of n_hits x (2N-1)^dims entries
MAX_N_HITS = 64
# R_dt bounds: below MIN_R_DT the hit probabilities underflow towards a first hit that cannot be
# drawn (5e-324 gave NaN probabilities); above MAX_R_DT the hit values exceed MAX_N_HITS anyway
MIN_R_DT = 1e-6
MAX_R_DT = 1000.0


def _mean_hits(d, L: float, I: float, dims: int) -> np.ndarray:
    d = np.asarray(d, dtype=np.float64)
    if dims == 2:
        from scipy.special import k0

        return I * k0(d / L) / math.log(2.0 * L)
    if dims == 3:
        return I / (2.0 * d) * np.exp(-d / L)
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


@dataclass(frozen=True)
class PoissonHits(PoissonHitPlume):
    """Poisson-hit plume (frozen, validated; resolved ``n_hits`` and ``grid_size`` when not given).

    Args:
        lambda_over_dx: dispersion length ``L`` in cells, ``>= 1`` (and ``<= 50``).
        R_dt: emission rate times time step ``I``, in ``[1e-6, 1000]``.
        dims: 1, 2 or 3 (a 3-D scenario: ``Scenario(plume=PoissonHits(..., dims=3))``, or
            ``scenarios.poisson_search(..., dims=3)``).
        norm: distance between cells, ``"euclidean"`` (default), ``"manhattan"`` or ``"chebyshev"``.
        n_hits: number of hit values ``0..n_hits-1``, 2..64; default
            ``ceil(mu(1) + sqrt(mu(1))) + 1``.
        grid_size: odd side ``N`` of the domain, ``>= 3``; default the smallest ``N`` such that,
            after any first hit, a source placed uniformly in an unbounded domain lies outside the
            ball of diameter ``N`` with probability ``< 1e-3``.
        source: ``None`` (default: each world draws its source from the belief after its first
            hit, the protocol) or a fixed cell ``(x, y)``: every episode has its source there and
            the first hit is drawn from ``Pr(h | distance from the first agent, h >= 1)`` (the
            scenario needs fixed ``start_positions``, the first agent's at least one cell away).
            A fixed source may be among walls (``Scenario(walls=...)``): hits keep this law, walls
            only block motion and hold no source (``docs/walls.md``).
        source_motion: how the target moves, on cells (``moving.py``): ``sources.Static()``
            (default) or ``sources.RandomWalk(speed <= 1, persistence)``, in 1-D and 2-D with a
            drawn source; ``sensors.Belief`` then predicts its motion at every step, so that
            infotaxis pursues it.

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
    source: tuple | None = None
    source_motion: object = None

    dimensions: ClassVar[tuple] = (2, 3)  # dims=1 and 2 in 2-D scenarios, dims=3 in 3-D ones
    moving_sources: ClassVar = (2,)  # a target that moves on 1-D and 2-D domains (moving.py)

    def __post_init__(self):
        if not is_int(self.dims) or self.dims not in (1, 2, 3):
            fail("PoissonHits", "dims", self.dims, "1, 2 or 3")
        for name, low, high in (("lambda_over_dx", 1.0, 50.0), ("R_dt", MIN_R_DT, MAX_R_DT)):
            object.__setattr__(self, name, check_real("PoissonHits", name, getattr(self, name), low, high))
        if not isinstance(self.norm, str) or self.norm.lower() not in NORMS:
            fail("PoissonHits", "norm", self.norm, f"one of {list(NORMS)}")
        object.__setattr__(self, "norm", self.norm.lower())
        object.__setattr__(self, "dims", int(self.dims))
        if self.n_hits is None:
            mu1 = float(self.mean_hits(1.0))
            n = int(math.ceil(mu1 + math.sqrt(mu1))) + 1
            if n > MAX_N_HITS:
                fail("PoissonHits", "R_dt", self.R_dt, f"a rate giving at most {MAX_N_HITS} hit values (default n_hits = {n})")
            object.__setattr__(self, "n_hits", n)
        elif not is_int(self.n_hits) or not 2 <= self.n_hits <= MAX_N_HITS:
            fail("PoissonHits", "n_hits", self.n_hits, f"an integer in 2..{MAX_N_HITS} or None")
        object.__setattr__(self, "n_hits", int(self.n_hits))
        side_max = {1: MAX_GRID_SIDE_1D, 2: MAX_GRID_SIDE_2D, 3: MAX_GRID_SIDE_3D}[self.dims]
        if self.grid_size is None:
            n = self._auto_grid_size()
            if n > side_max:
                fail("PoissonHits", "lambda_over_dx", self.lambda_over_dx,
                      f"a dispersion length whose automatic grid fits in {side_max} cells (needs {n})")
            object.__setattr__(self, "grid_size", n)
        elif not is_int(self.grid_size) or not 3 <= self.grid_size <= side_max or self.grid_size % 2 == 0:
            fail("PoissonHits", "grid_size", self.grid_size, f"an odd integer in 3..{side_max} or None")
        object.__setattr__(self, "grid_size", int(self.grid_size))
        table_bytes = self.n_hits * (2 * self.grid_size - 1) ** max(self.dims, 1) * 8 // (1 if self.dims > 1 else
                                                                                         2 * self.grid_size - 1)
        if table_bytes > MAX_TABLE_BYTES:
            fail("PoissonHits", "grid_size", self.grid_size, f"a grid whose likelihood table of {self.n_hits} hit values "
                 f"fits in {MAX_TABLE_BYTES >> 20} MB (needs {table_bytes >> 20} MB)")
        object.__setattr__(self, "source", check_source("PoissonHits", self.source, self.shape))
        if self.source is not None and not self.first_hit_possible(*self.start):
            fail("PoissonHits", "source", self.source, f"a cell from which the start {self.start} can receive a first hit >= 1")
        from ...sources.source_set import motion_of

        motion = motion_of("PoissonHits", self.source_motion, lattice=True)
        if motion.moves:
            if motion.speed > 1.0:
                fail("PoissonHits", "source_motion", motion, "a RandomWalk with speed <= 1 (on cells: the probability "
                     "of a move)")
            if self.dims == 3 or self.source is not None:
                fail("PoissonHits", "source_motion", motion, f"sources.Static() with dims={self.dims} and source="
                     f"{self.source} (a target moves on 1-D and 2-D domains, from a source drawn at each reset)")
        object.__setattr__(self, "source_motion", motion)

    @property
    def kernels(self):
        """The compiled roles: a target that stays (``plume.py``) or moves (``moving.py``)."""
        if self.source_motion.moves:
            from .moving import KERNELS as MOVING

            return MOVING
        return KERNELS

    def metadata(self) -> dict:
        out = super().metadata()
        if not self.source_motion.moves:  # as before motions existed
            del out["source_motion"]
        return out

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
        # after normalization (for every norm): 1 (1-D), 2 r (2-D), 3 r^2 + 1/4 (3-D).
        if self.dims == 3:
            return 3.0 * r * r + 0.25
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
        return readonly(w / w.sum())

    # -- grid, moves and tables ---------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        """``(H, W)`` of a belief: ``(N, N)`` in 2-D, ``(1, N)`` in 1-D; ``(D, H, W) = (N, N, N)`` in 3-D."""
        n = self.grid_size
        return {1: (1, n), 2: (n, n), 3: (n, n, n)}[self.dims]

    @property
    def start(self) -> tuple:
        """The start cell ``(x, y)`` (``(x, y, z)`` in 3-D): the centre."""
        return tuple(side // 2 for side in self.shape[::-1])

    def distance(self, dx, dy, dz=0) -> np.ndarray:
        """Distance (cells) of the offset ``(dx, dy, dz)`` in this model's norm."""
        dx = np.abs(np.asarray(dx, dtype=np.float64))
        dy = np.abs(np.asarray(dy, dtype=np.float64))
        dz = np.abs(np.asarray(dz, dtype=np.float64))
        if self.norm == "euclidean":
            return np.sqrt(dx * dx + dy * dy + dz * dz)
        if self.norm == "manhattan":
            return dx + dy + dz
        return np.maximum(np.maximum(dx, dy), dz)

    def _offsets(self):
        """``(|dx|, |dy|[, |dz|])`` grids over the table of ``likelihood`` (shape ``self.shape``)."""
        grids = np.meshgrid(*[np.arange(n) for n in self.shape], indexing="ij")
        return grids[::-1]  # x first

    @cached_property
    def likelihood(self) -> np.ndarray:
        """``Pr(h | |dy|, |dx|)``: ``(n_hits, H, W)`` float64 (``(n_hits, D, H, W)`` by ``|dz|, |dy|,
        |dx|`` in 3-D), 0 at the origin (on the source)."""
        d = self.distance(*self._offsets())
        table = np.zeros((self.n_hits,) + self.shape)
        off = d > 0
        table[:, off] = self.hit_probabilities(d[off]).T
        return readonly(table)

    @cached_property
    def log_likelihood(self) -> np.ndarray:
        """``log(likelihood)`` where it is positive, else 0 (those terms are multiplied by 0)."""
        return log_where_positive(self.likelihood)

    def _centred_table(self) -> np.ndarray:
        return centre(self.likelihood)

    def _centred_mean(self) -> np.ndarray:
        """Mean hits by offset, centred on every axis of the domain; at the source ``mu(1)``."""
        return centre(self.mean_hits(np.maximum(self.distance(*self._offsets()), 1.0)), axes=max(self.dims, 2))
