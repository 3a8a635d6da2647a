"""``Threshold``: what makes a sample part of a whiff."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..checks import check_choice, check_real, fail

__all__ = ["Threshold", "RELATIVE_TO", "SCOPES"]

RELATIVE_TO = ("mean", "median", "max")
SCOPES = ("probe", "all")


@dataclass(frozen=True)
class Threshold:
    """A sample is in a whiff when the signal is strictly above the threshold, in a blank otherwise.

    Args:
        value: with ``relative_to=None`` the threshold itself (the signal's unit: concentration,
            or hits for ``PoissonHits``); otherwise the factor applied to the statistic.
        relative_to: ``None`` (absolute), ``"mean"``, ``"median"`` or ``"max"``: the threshold is
            ``value`` times that statistic of the signal.
        scope: ``"probe"``: the statistic of each probe's own samples (all its worlds and steps);
            ``"all"``: of every probe's samples together (one threshold for the whole plume, as a
            fixed detection threshold or a fraction of the concentration near the source).

    ``Threshold(0.0)`` counts every nonzero sample (hits, or a clipped recording): the fraction of
    time with odour, the classical intermittency factor. A float given where a ``Threshold`` is
    expected means ``Threshold(value)``.
    """

    value: float
    relative_to: Optional[str] = None
    scope: str = "probe"

    def __post_init__(self):
        low = -np.inf if self.relative_to is None else 0.0
        object.__setattr__(self, "value", check_real("Threshold", "value", self.value, low))
        if self.relative_to is not None:
            check_choice("Threshold", "relative_to", self.relative_to, RELATIVE_TO)
        check_choice("Threshold", "scope", self.scope, SCOPES)

    @classmethod
    def of(cls, threshold) -> "Threshold":
        """``threshold`` as a ``Threshold`` (a number is an absolute threshold)."""
        if isinstance(threshold, Threshold):
            return threshold
        if isinstance(threshold, (int, float, np.floating, np.integer)) and not isinstance(threshold, (bool, np.bool_)):
            return cls(float(threshold))
        fail("statistics", "threshold", threshold, "a number (absolute threshold) or a stats.Threshold")

    def describe(self) -> str:
        """Words for a table or a figure: ``"> 0.5"`` or ``"> 0.1 x max (all probes)"``."""
        if self.relative_to is None:
            return f"> {self.value:g}"
        where = "each probe" if self.scope == "probe" else "all probes"
        return f"> {self.value:g} x {self.relative_to} ({where})"

    def values(self, signals: np.ndarray, valid: np.ndarray) -> np.ndarray:
        """The threshold of each probe, ``(P,)`` float64, for ``signals`` ``(W, P, T)`` of which the
        series where ``valid`` ``(W, P)`` count (a probe without one gets NaN under ``scope="probe"``)."""
        P = signals.shape[1]
        if self.relative_to is None:
            return np.full(P, self.value)
        if self.scope == "all":
            return np.full(P, self.value * _statistic(signals[valid].reshape(1, -1), self.relative_to)[0])
        # every probe at once: (P, W * T), the samples of invalid series as NaN
        per_probe = np.where(valid[:, :, None], signals, np.nan).transpose(1, 0, 2).reshape(P, -1)
        return self.value * _statistic(per_probe, self.relative_to)


_STATISTICS = {"mean": np.nanmean, "median": np.nanmedian, "max": np.nanmax}


def _statistic(x: np.ndarray, name: str) -> np.ndarray:
    """``(R,)`` the statistic of each row of ``x`` ``(R, n)`` over its non-NaN entries (NaN without any)."""
    x = np.asarray(x, dtype=np.float64)
    if x.shape[1] == 0:
        return np.full(x.shape[0], np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a row of NaN (a probe without series): NaN
        return _STATISTICS[name](x, axis=1)
