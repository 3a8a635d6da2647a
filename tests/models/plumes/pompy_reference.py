"""pompy (Graham's implementation of Farrell et al. 2002) as the reference for the puff plume.

pompy 0.1.1 runs unchanged on current NumPy but for one line: ``WindModel.velocity_at_pos`` calls
``float()`` on the ``(1, 1)`` array a ``RectBivariateSpline`` returns, which NumPy 2 refuses;
``patched_velocity_at_pos`` takes the one element instead.

``InjectedRNG`` stands in for pompy's ``rng`` argument and hands pompy the draws our kernels make
(the same counters), so that a run can be compared step by step, not only statistically.
"""

from __future__ import annotations

import numpy as np
import pompy.models as pm
import pompy.processors as pp

from plume_multi.models.plumes.puffs import physics as K
from plume_multi.engine import rng


def patched_velocity_at_pos(self, x, y):
    if not self._interp_set:
        self._set_interpolators()
    return np.array([self._interp_u(x, y).item(), self._interp_v(x, y).item()])


pm.WindModel.velocity_at_pos = patched_velocity_at_pos


class InjectedRNG:
    """pompy's ``rng`` for world seed ``seed``: ``poisson`` and ``normal`` return the draws the
    kernels make at the same counters. pompy's call order per step is: the wind's
    ``normal(size=(1, 8))``, ``poisson(mean)``, then one ``normal(size=3)`` per puff in order."""

    def __init__(self, seed: int, episode: int = 0, model_z: bool = True):
        self.key = np.uint64(rng.stream_key(seed, episode, K.STREAM_PUFFS))
        self.step = -1  # advanced by the wind's draw, which comes first in every step
        self.puff = 0
        self.dim = 3 if model_z else 2

    def normal(self, size=None):
        if size == (1, 8):
            self.step += 1
            self.puff = 0
            return np.array([[K.std_normal(self.key, self.step, k) for k in range(8)]])
        i = self.puff
        self.puff += 1
        return np.array([K.std_normal(self.key, self.step, 32 + 3 * i + c) for c in range(size)])

    def poisson(self, mean):
        return int(rng.poisson(self.key, self.step, 16, mean))


def pompy_models(config, grid_size, seed=None):
    """pompy's ``(WindModel, PlumeModel)`` for a ``plumes.Puffs`` with a ``plumes.Wind`` on a grid
    of ``grid_size`` cells; with ``seed`` they draw through ``InjectedRNG``, else from
    ``numpy.random.RandomState(...)`` given as ``seed=('numpy', s)``."""
    if isinstance(seed, tuple):
        generator = np.random.RandomState(seed[1])
    else:
        generator = InjectedRNG(seed, model_z=config.model_z_disp)
    (x0, x1), (y0, y1) = config.region
    region = pm.Rectangle(x0, x1, y0, y1)
    w = config.wind
    wind = pm.WindModel(region, w.grid[0], w.grid[1], w.u, w.v, w.k_x, w.k_y, w.noise_gain,
                        w.noise_damp, w.noise_bandwidth, rng=generator)
    cell = config.resolved_cell_size(grid_size)
    sx, sy = config.source_position(cell)
    scale = config.centre_rel_diff_scale
    plume = pm.PlumeModel(region, (sx, sy, 0.0), wind, config.model_z_disp,
                          np.asarray(scale) if isinstance(scale, tuple) else scale,
                          config.puff_init_rad, config.puff_spread_rate, config.puff_release_rate,
                          config.init_num_puffs, config.max_num_puffs, rng=generator)
    return wind, plume


def pompy_step(wind, plume, dt):
    """One step as pompy's demos run it: the wind, then the plume."""
    wind.update(dt)
    plume.update(dt)


def pompy_concentration(plume, xs, ys, amount=1.0):
    """pompy's concentration at points ``(xs, ys)`` at height 0 (all puffs summed)."""
    arr = plume.puff_array
    if arr.size == 0:
        return np.zeros(len(xs))
    return pp.ConcentrationValueCalculator(amount).calc_conc_list(arr, np.asarray(xs, float), np.asarray(ys, float), 0.0)
