"""Poisson hits in a mean wind: the windy source-tracking POMDP of otto-benchmark.

Loisy & Heinonen 2023 (Eur. Phys. J. E 46, 17; code: auroreloisy/otto-benchmark,
``windy/classes/sourcetracking.py``). An agent at offset ``(x, y)`` from the source (cells, ``x``
along the wind, ``d = sqrt(x^2 + y^2) >= 1``) receives per step a Poisson number of hits of mean

    mu(x, d) = R_bar / d * exp(V_bar x / 2 - d / lambda_bar),
    lambda_bar = sqrt((tau_bar / V_bar^2) / (1 + tau_bar / 4)),

with ``R_bar`` the dimensionless emission rate, ``V_bar`` the dimensionless mean wind (blowing
towards ``+x``: an agent downwind, ``x > 0``, gets more hits) and ``tau_bar`` the particles'
dimensionless lifetime; ``lambda_bar`` is the length over which they spread. Hits are counted up
to ``n_hits - 1`` (2 values: no hit / at least one), the last value lumping the tail as
``1 - sum_{h < n_hits-1} Pr(h)``; on the source no hit is drawn.

otto-benchmark's setup, the defaults: an 81 x 41 domain (81 cells along the wind), the agent
starting at ``(65, 20)`` (16 cells from the downwind edge, on the axis), a first hit of 1, the prior
uniform over the other cells and updated with it. The likelihood table is computed with the very
operations of that code (``scipy.stats.poisson(mu).pmf``, the tail as one minus the sum), so it is
the same bit for bit, and so are the beliefs after the same hits (``kernels.update_belief``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ....checks import check_int, check_point, check_real, fail
from .plume import PoissonHitPlume, check_source, readonly

__all__ = ["WindyPoissonHits", "MAX_WINDY_SIDE", "WINDY_N_HITS_MAX"]

MAX_WINDY_SIDE = 401  # tables of (n_hits, 2H-1, 2W-1) float64 stay within tens of MB
WINDY_N_HITS_MAX = 64


def windy_length(V_bar: float, tau_bar: float) -> float:
    """``lambda_bar = sqrt((tau_bar / V_bar^2) / (1 + tau_bar / 4))``, as otto-benchmark computes it."""
    return float(np.sqrt((tau_bar / V_bar ** 2) / (1 + tau_bar / 4)))


def windy_mean_hits(x_position, distance, R_bar: float, V_bar: float, lambda_bar: float) -> np.ndarray:
    """``mu`` of agents at ``x_position = x_agent - x_source`` and ``distance`` (cells; 0 counts as
    1), in otto-benchmark's order of operations (``_mean_number_of_hits``)."""
    distance = np.array(distance, dtype=np.float64)
    distance[distance == 0] = 1.0
    x_position = np.array(x_position)
    return R_bar / distance * np.exp(0.5 * V_bar * x_position - distance / lambda_bar)


@dataclass(frozen=True)
class WindyPoissonHits(PoissonHitPlume):
    """Poisson hits in a mean wind (frozen, validated): otto-benchmark's windy cases.

    Args:
        R_bar: dimensionless emission rate, in ``[1e-6, 1000]`` (otto-benchmark: 2.5 for
            ``windy-medium-detections``, 0.25 for ``windy-low-detections``).
        V_bar: dimensionless mean wind along ``+x``, in ``[0.01, 20]`` (2).
        tau_bar: dimensionless particle lifetime, in ``[1, 10000]`` (150).
        grid_size: ``(width, height)`` of the domain, width along the wind, each 3..401
            (``(81, 41)``).
        start: the protocol's start cell ``(x, y)`` (``(65, 20)``).
        n_hits: number of hit values ``0..n_hits-1``, 2..64 (2).
        source: ``None`` (default: drawn from the belief after the first hit) or a fixed cell
            ``(x, y)`` (the first hit is then 1 when ``n_hits = 2``, else drawn from
            ``Pr(h | offset, h >= 1)``).

    The first hit of the protocol is 1 (otto-benchmark's ``initial_hit``); every parameter
    combination must leave it possible near the start (a ``ValidationError`` otherwise).

    Example:
        >>> WindyPoissonHits(R_bar=2.5).shape
        (41, 81)
    """

    R_bar: float = 2.5
    V_bar: float = 2.0
    tau_bar: float = 150.0
    grid_size: tuple = (81, 41)
    start: tuple = (65, 20)
    n_hits: int = 2
    source: tuple | None = None

    dims = 2
    dimensions: ClassVar[tuple] = (2,)  # a mean wind in the plane: otto-benchmark's windy cases are 2-D

    def __post_init__(self):
        owner = "WindyPoissonHits"
        self._set("R_bar", check_real(owner, "R_bar", self.R_bar, 1e-6, 1000.0))
        self._set("V_bar", check_real(owner, "V_bar", self.V_bar, 0.01, 20.0))
        self._set("tau_bar", check_real(owner, "tau_bar", self.tau_bar, 1.0, 10000.0))
        rule = f"(width, height), integers in 3..{MAX_WINDY_SIDE}"
        w, h = check_point(owner, "grid_size", self.grid_size, integer=True, expected=rule)
        if not (3 <= w <= MAX_WINDY_SIDE and 3 <= h <= MAX_WINDY_SIDE):
            fail(owner, "grid_size", self.grid_size, rule)
        self._set("grid_size", (w, h))
        rule = f"(x, y) integer cells with 0 <= x < {w} and 0 <= y < {h}"
        x0, y0 = check_point(owner, "start", self.start, integer=True, expected=rule)
        if not (0 <= x0 < w and 0 <= y0 < h):
            fail(owner, "start", self.start, rule)
        self._set("start", (x0, y0))
        self._set("n_hits", check_int(owner, "n_hits", self.n_hits, 2, WINDY_N_HITS_MAX))
        self._set("source", check_source(owner, self.source, self.shape))
        if not self.first_hit_possible(*self.start):
            what = "source" if self.source is not None else "R_bar"
            fail(owner, what, getattr(self, what), "parameters for which a first hit of 1 is possible at the start "
                 f"{self.start} (the hit probabilities underflow to 0 there: raise R_bar or tau_bar, or lower V_bar)")

    # -- the model's formulas ---------------------------------------------------------------
    @property
    def lambda_bar(self) -> float:
        """The length (cells) over which particles spread before they die."""
        return windy_length(self.V_bar, self.tau_bar)

    @property
    def shape(self) -> tuple:
        """``(H, W)`` of a belief: ``(41, 81)`` by default."""
        w, h = self.grid_size
        return (h, w)

    def mean_hits(self, x, y) -> np.ndarray:
        """Mean hits per step of agents at offset ``(x, y)`` (cells) from the source; the offset
        ``(0, 0)`` counts as one cell (``x = 0``, ``d = 1``)."""
        x = np.asarray(x, dtype=np.float64)
        d = np.sqrt(x * x + np.asarray(y, dtype=np.float64) ** 2)
        return windy_mean_hits(x, d, self.R_bar, self.V_bar, self.lambda_bar)

    def _offsets(self):
        """``(x_position, distance)`` over the centred ``(2H-1, 2W-1)`` table: ``dx = source - agent``
        along axis 1, so ``x_position = x_agent - x_source = -dx``; distances as otto-benchmark's
        ``_distance`` accumulates them (``0 + dx^2 + dy^2``, then the root)."""
        h, w = self.shape
        dy, dx = np.meshgrid(np.arange(1 - h, h), np.arange(1 - w, w), indexing="ij")
        d = np.zeros(dx.shape)
        d += dx ** 2
        d += dy ** 2
        return -dx, np.sqrt(d)

    def _centred_table(self) -> np.ndarray:
        from scipy.stats import poisson

        h, w = self.shape
        x, d = self._offsets()
        mu = windy_mean_hits(x, d, self.R_bar, self.V_bar, self.lambda_bar)
        mu[h - 1, w - 1] = 0.0
        table = np.zeros((self.n_hits, 2 * h - 1, 2 * w - 1))
        for k in range(self.n_hits - 1):
            table[k] = poisson(mu).pmf(k)
        total = 0.0
        for k in range(self.n_hits - 1):
            total += poisson(mu).pmf(k)
        table[-1] = 1 - total  # otto-benchmark's tail: one minus the others
        table[:, h - 1, w - 1] = 0.0
        return table

    def _centred_mean(self) -> np.ndarray:
        """Mean hits by offset of the agent from the source (``[ay - sy + H-1, ax - sx + W-1]``)."""
        h, w = self.shape
        x, d = self._offsets()
        return windy_mean_hits(-x, d, self.R_bar, self.V_bar, self.lambda_bar)

    @property
    def first_hit_probabilities(self) -> np.ndarray:
        """The first hit is 1 (otto-benchmark's ``initial_hit``): ``(n_hits,)`` with 1 at index 1."""
        p = np.zeros(self.n_hits)
        p[1] = 1.0
        return readonly(p)


