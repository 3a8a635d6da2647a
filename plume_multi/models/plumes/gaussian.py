"""The static Gaussian plume: ``C(x, y) = exp(-((x - xs)^2 + (y - ys)^2) / (2 sigma^2))``.

Computed in float64, stored as float32, 1.0 at the source. With a fixed source the field is
computed once, ``(H, W)``, shared by every world. With ``source="random"`` each world draws its
source cell uniformly over the grid at every reset and the concentration is evaluated where
sensors read it (no field per world). An optional constant wind ``(u, v)`` (cells per step) is
what ``sensors.Wind`` reads.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...engine import rng
from ...engine.api import is_on, static_flag
from ...engine.jit import njit
from ..base import Plume, PlumeKernels, StateArray, check_real, fail, is_int

STREAM = 0x6A09E667  # this model's random stream

# field: the shared (H, W) float32 field ((1, 1) unused with a random source); random_source: a
# compile-time flag (static_flag), so the fixed-source path carries no branch
GaussianParams = namedtuple("GaussianParams", "field two_sigma2 source_x source_y wind_u wind_v width height random_source")


def gaussian_field(grid_size, source, sigma: float) -> np.ndarray:
    """``(H, W)`` float32 field of a source at cell ``source = (x, y)``, clipped to [0, 1]."""
    w, h = grid_size
    xs, ys = source
    x = np.arange(w, dtype=np.float64) - xs
    y = np.arange(h, dtype=np.float64) - ys
    d2 = y[:, None] ** 2 + x[None, :] ** 2
    field = np.exp(-d2 / (2.0 * float(sigma) ** 2))
    return np.ascontiguousarray(np.clip(field, 0.0, 1.0).astype(np.float32))


# --------------------------------------------------------------------- compiled functions
# S = (sources (B, 2) float64,)  (zero rows when the source is fixed)

@njit(inline="always")
def reset_world(P, S, b, seed, episode, pos, base, n_agents):
    if is_on(P.random_source):
        key = rng.stream_key(seed, episode, STREAM)
        S[0][b, 0] = np.floor(rng.uniform(key, 0, 0) * P.width)
        S[0][b, 1] = np.floor(rng.uniform(key, 0, 1) * P.height)


@njit(inline="always")
def source(P, S, b):
    if is_on(P.random_source):
        return S[0][b, 0], S[0][b, 1]
    return P.source_x, P.source_y


@njit(inline="always")
def _analytic(P, S, b, x, y):
    dx = x - S[0][b, 0]
    dy = y - S[0][b, 1]
    return np.float32(np.exp(-(dx * dx + dy * dy) / P.two_sigma2))


@njit(inline="always")
def sample_cell(P, S, pw, ix, iy):
    if is_on(P.random_source):
        return _analytic(P, S, pw, np.float64(ix), np.float64(iy))
    return P.field[iy, ix]


@njit(inline="always")
def sample_at(P, S, pw, x, y):
    """Concentration at a float position; 0 off the grid (x, y outside [0, W-1] x [0, H-1])."""
    if x < 0.0 or y < 0.0 or x > P.width - 1 or y > P.height - 1:
        return np.float32(0.0)
    if is_on(P.random_source):
        return _analytic(P, S, pw, x, y)
    return bilinear(P.field, x, y)


@njit(inline="always")
def wind_at(P, S, pw, x, y):
    return P.wind_u, P.wind_v


@njit(inline="always")
def bilinear_cells(h, w, x, y):
    """For ``(x, y)`` inside ``[0, w-1] x [0, h-1]``: the cell ``(x0, y0)`` at or below it, the next
    one ``(x1, y1)`` (the same at the last row or column) and the fractions ``(fx, fy)``."""
    x0 = min(int(x), w - 1)
    y0 = min(int(y), h - 1)
    return x0, y0, min(x0 + 1, w - 1), min(y0 + 1, h - 1), x - x0, y - y0


@njit(inline="always")
def bilinear(field, x, y):
    """Bilinear interpolation of a ``(H, W)`` field at ``(x, y)`` inside ``[0, W-1] x [0, H-1]``."""
    h, w = field.shape
    x0, y0, x1, y1, fx, fy = bilinear_cells(h, w, x, y)
    top = (1.0 - fx) * field[y0, x0] + fx * field[y0, x1]
    bottom = (1.0 - fx) * field[y1, x0] + fx * field[y1, x1]
    return np.float32((1.0 - fy) * top + fy * bottom)


KERNELS = PlumeKernels(source=source, sample_cell=sample_cell, sample_at=sample_at, reset_world=reset_world,
                       wind_at=wind_at)


@dataclass(frozen=True)
class Gaussian(Plume):
    """Static Gaussian plume.

    Args:
        source: ``(x, y)`` cell of the source (default: the grid's centre ``(W // 2, H // 2)``), or
            ``"random"``: each world draws its source uniformly over the grid at every reset.
        sigma: spread in cells, 0.1..100.
        wind: constant wind ``(u, v)`` in cells per step, read by ``sensors.Wind`` (default calm).
    """

    source: object = None
    sigma: float = 12.0
    wind: tuple = (0.0, 0.0)

    kernels: ClassVar = KERNELS

    def __post_init__(self):
        if self.source is not None and self.source != "random":
            try:
                x, y = self.source
            except (TypeError, ValueError):
                fail("Gaussian", "source", self.source, "None, 'random' or (x, y) integer cells")
            if not (is_int(x) and is_int(y)):
                fail("Gaussian", "source", self.source, "None, 'random' or (x, y) integer cells")
            self._set("source", (int(x), int(y)))
        self._set("sigma", check_real("Gaussian", "sigma", self.sigma, 0.1, 100.0))
        try:
            u, v = self.wind
        except (TypeError, ValueError):
            fail("Gaussian", "wind", self.wind, "(u, v), finite numbers in cells per step")
        self._set("wind", (check_real("Gaussian", "wind", u), check_real("Gaussian", "wind", v)))

    # ----------------------------------------------------------------- engine interface
    @property
    def random_source(self) -> bool:
        return self.source == "random"

    def bind(self, grid_size) -> "Gaussian":
        """This plume on a grid: the default source becomes the centre; a given one must fit."""
        w, h = grid_size
        if self.source is None:
            return Gaussian(source=(w // 2, h // 2), sigma=self.sigma, wind=self.wind)
        if not self.random_source and not (0 <= self.source[0] < w and 0 <= self.source[1] < h):
            fail("Gaussian", "source", self.source, f"a cell inside the {w}x{h} grid")
        return self

    def fixed_source(self):
        return None if self.random_source else self.source

    def concentration_bounds(self) -> tuple:
        return 0.0, 1.0

    def field(self, grid_size) -> np.ndarray | None:
        """The shared field, or None when each world has its own source."""
        if self.random_source:
            return None
        return gaussian_field(grid_size, self.source, self.sigma)

    def params(self, scenario) -> tuple:
        w, h = scenario.grid_size
        if self.random_source:
            field = np.zeros((1, 1), np.float32)
            field.flags.writeable = False  # the shared field's Numba type: one compiled driver for both
        else:
            field = scenario.field
        sx, sy = (0, 0) if self.random_source else self.source
        return GaussianParams(field, 2.0 * self.sigma ** 2, float(sx), float(sy), self.wind[0], self.wind[1], int(w), int(h),
                      static_flag(self.random_source))

    def state_spec(self, scenario) -> dict:
        if not self.random_source:
            return {}
        w, h = scenario.grid_size
        return {"source": StateArray(np.float64, "world", (2,), 0.0, float(max(w, h) - 1))}

    def state_tuple(self, arrays: dict) -> tuple:
        return (arrays["source"],) if self.random_source else (np.zeros((0, 2)),)

    def image(self, params, state, b: int, t: int) -> np.ndarray:
        """``(H, W)`` float32 concentration of world ``b``, for pictures."""
        if not self.random_source:
            return params.field
        w, h = params.width, params.height
        return gaussian_field((w, h), state[0][b], self.sigma)

    def sources(self, params, state, num_worlds: int) -> np.ndarray:
        if self.random_source:
            return state[0].copy()
        return np.tile(np.array([params.source_x, params.source_y]), (num_worlds, 1))
