"""Plain NumPy port of otto-benchmark's windy source-tracking POMDP.

Loisy & Heinonen 2023 (Eur. Phys. J. E 46, 17), ``windy/classes/sourcetracking.py`` of
auroreloisy/otto-benchmark, written again line for line in its own conventions: arrays indexed
``[x, y]`` (``x`` along the wind), tables of size ``2N + 1`` centred at ``N``, windows cut from them
with ``_extract_N_from_2N``, beliefs normalized by ``p / p.sum()``. Nothing here reads the
package's tables: ``tests/models/plumes/test_windy_poisson_hits.py`` compares them bit for bit.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import poisson as Poisson_distribution

EPSILON = 1e-10


class WindySearch:
    """The model pieces of otto-benchmark's ``SourceTracking`` (windy): its parameters, hit law,
    likelihood table, start, first hit and prior, and its Bayes update."""

    def __init__(self, R_bar=2.5, V_bar=2, tau_bar=150, shape=(81, 41), agent=(65, 20), Nhits=2):
        self.shape = tuple(shape)  # (Nx, Ny)
        self.Ndim = 2
        self.Nhits = Nhits
        self.R_bar = R_bar
        self.V_bar = V_bar
        self.tau_bar = tau_bar
        self.lambda_bar = np.sqrt((self.tau_bar / self.V_bar ** 2) / (1 + self.tau_bar / 4))
        self.initial_hit = 1
        self.agent = list(agent)
        self._compute_p_Poisson()
        self.p_source = np.ones(self.shape) / (np.prod(self.shape) - 1)
        self.p_source[tuple(self.agent)] = 0.0
        self.update(self.initial_hit)

    # __ hit law ___________________________________________________________________________
    def _mean_number_of_hits(self, distance, x_position):
        distance = np.array(distance)
        distance[distance == 0] = 1.0
        x_position = np.array(x_position)
        return self.R_bar / distance * np.exp(0.5 * self.V_bar * x_position - distance / self.lambda_bar)

    def _Poisson(self, mu, h):
        if h < self.Nhits - 1:
            return Poisson_distribution(mu).pmf(h)
        total = 0.0
        for k in range(h):
            total += Poisson_distribution(mu).pmf(k)
        return 1 - total

    def _distance(self, shape, origin):
        coord = np.mgrid[tuple([range(n) for n in shape])]
        for i in range(len(shape)):
            coord[i] -= origin[i]
        d = np.zeros(shape)
        for i in range(len(shape)):
            d += (coord[i]) ** 2
        return np.sqrt(d)

    def _x_position(self, shape, origin):
        coord = np.mgrid[tuple([range(n) for n in shape])]
        return origin[0] - coord[0]

    def _compute_p_Poisson(self):
        shape = [1 + 2 * n for n in self.shape]
        origin = list(self.shape)
        d = self._distance(shape, origin)
        x = self._x_position(shape, origin)
        mu = self._mean_number_of_hits(d, x)
        mu[tuple(origin)] = 0.0
        self.p_Poisson = np.zeros([self.Nhits] + list(shape))
        for h in range(self.Nhits):
            self.p_Poisson[h] = self._Poisson(mu, h)
        for h in range(self.Nhits):
            self.p_Poisson[tuple([h] + origin)] = 0.0

    def _extract_N_from_2N(self, table, origin):
        index = np.array(self.shape) - origin
        return table[..., index[0]:index[0] + self.shape[0], index[1]:index[1] + self.shape[1]]

    # __ belief ____________________________________________________________________________
    def evidence(self, hit, agent=None):
        """``Pr(hit | source at each cell)`` for an agent at ``agent`` (default its cell), ``[x, y]``."""
        return self._extract_N_from_2N(self.p_Poisson, self.agent if agent is None else agent)[hit]

    def update(self, hit):
        """``_update_p_source`` (not done): rule out the agent's cell, multiply by the evidence,
        normalize. (otto-benchmark leaves a belief whose total is at most ``EPSILON``
        unnormalized; the package normalizes any positive total, so the hits here keep it above.)"""
        self.p_source[tuple(self.agent)] = 0
        self.p_source *= self.evidence(hit)
        self.p_source[(self.p_source < 0.0) & (self.p_source > -1e-15)] = 0.0
        total = np.sum(self.p_source)
        if total > 0:
            self.p_source /= total

    def centred_table(self):
        """``p_Poisson`` cut to the offsets ``-(N-1) .. N-1`` and put in the package's layout
        ``[h, dy + H-1, dx + W-1]`` (``dx = source - agent``): ``(Nhits, 2Ny - 1, 2Nx - 1)``."""
        return self.p_Poisson[:, 1:-1, 1:-1].transpose(0, 2, 1)
