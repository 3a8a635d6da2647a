"""Runs of a thresholded signal: whiffs (above the threshold) and blanks (at or below it).

A run is a maximal stretch of consecutive samples on the same side of the threshold. The run-length
encoding here works on many signals at once (rows of a ``(S, T)`` array) without a loop over them:
run starts are the first sample of each row and every sample that differs from the one before it.

Censoring: the first and the last run of a row touch the edges of the observation window, so
their true lengths are unknown (only bounded below by what was seen). They are flagged
``censored``; what the statistics do with them is ``OdorStatistics``'s ``censored`` rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ValidationError

__all__ = ["Runs", "runs", "log_binned_density", "power_law_slope"]


@dataclass(frozen=True)
class Runs:
    """The runs of ``S`` boolean series of ``T`` samples, in row order, then time order.

    Attributes:
        row: ``(R,)`` int64, the series (row) each run belongs to.
        start: ``(R,)`` int64, its first sample (0..T-1).
        length: ``(R,)`` int64, its number of samples (1..T).
        above: ``(R,)`` bool, True for a whiff (samples above the threshold), False for a blank.
        censored: ``(R,)`` bool, the run touches the first or the last sample of its row.
        samples: ``T``, the length of every series.
    """

    row: np.ndarray
    start: np.ndarray
    length: np.ndarray
    above: np.ndarray
    censored: np.ndarray
    samples: int

    @property
    def onset(self) -> np.ndarray:
        """``(R,)`` bool: a whiff that began inside the window (a blank-to-whiff transition)."""
        return self.above & (self.start > 0)


def runs(above) -> Runs:
    """Run-length encoding of boolean series.

    Args:
        above: ``(T,)`` or ``(S, T)`` bool array (any array is read as ``!= 0``), ``T >= 1``: True
            where the signal is above the threshold.

    Returns:
        ``Runs``: one entry per run, rows in order, runs in time order within a row.

    Example:
        >>> r = runs(np.array([1, 1, 0, 0, 0, 1, 0, 1, 1], bool))
        >>> r.length.tolist(), r.above.tolist(), r.censored.tolist()
        ([2, 3, 1, 1, 2], [True, False, True, False, True], [True, False, False, False, True])
    """
    a = np.asarray(above)
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2 or a.shape[1] < 1:
        raise ValidationError(f"above: got shape {np.shape(above)}; expected (T,) or (S, T) with T >= 1")
    a = np.ascontiguousarray(a != 0)
    S, T = a.shape
    change = np.empty((S, T), dtype=np.bool_)
    change[:, 0] = True
    np.not_equal(a[:, 1:], a[:, :-1], out=change[:, 1:])
    first = np.flatnonzero(change)
    row, start = np.divmod(first, T)
    # a run ends where the next one starts, or at the end of its row
    end = np.empty_like(start)
    end[:-1] = start[1:]
    if end.size:
        end[-1] = T
        end[np.flatnonzero(row[1:] != row[:-1])] = T
    return Runs(row=row, start=start, length=end - start, above=a.ravel()[first],
                censored=(start == 0) | (end == T), samples=T)


def log_binned_density(durations, bins_per_decade: int = 5, *, low=None, high=None, dt=None):
    """The density of durations on logarithmic bins: ``(centres, density, counts)``, bins without a
    duration left out.

    Args:
        durations: 1-D durations (> 0; others are ignored).
        bins_per_decade: bins a decade, the first edge at ``low``.
        low, high: the range binned (default: the smallest and largest duration).
        dt: ``None`` for continuous durations; the lattice step when every duration is a whole
            number of ``dt`` (sampled signals): bin edges then fall between lattice points and
            each bin's width is its number of lattice points times ``dt``, so short durations,
            where a decade holds few points, are not biased.

    The density is per unit of duration, normalised over every duration given (also those
    outside ``[low, high]``).
    """
    d = np.asarray(durations, dtype=np.float64).ravel()
    d = d[d > 0]
    if not isinstance(bins_per_decade, int) or isinstance(bins_per_decade, bool) or bins_per_decade < 1:
        raise ValidationError(f"bins_per_decade: got {bins_per_decade!r}; expected an integer >= 1")
    empty = np.zeros(0), np.zeros(0), np.zeros(0, np.int64)
    if d.size == 0:
        return empty
    low = float(d.min()) if low is None else float(low)
    high = float(d.max()) if high is None else float(high)
    if not (np.isfinite(low) and np.isfinite(high) and 0 < low <= high):
        raise ValidationError(f"low, high: got {low!r}, {high!r}; expected 0 < low <= high")
    n = max(1, int(np.ceil(np.log10(high / low) * bins_per_decade - 1e-9)))
    edges = low * 10.0 ** (np.arange(n + 1) / bins_per_decade)
    if dt is None:
        edges[-1] = max(edges[-1], high)
        counts, _ = np.histogram(d, bins=edges)
        widths = np.diff(edges)
        centres = np.sqrt(edges[1:] * edges[:-1])
    else:
        if not (np.isfinite(dt) and dt > 0):
            raise ValidationError(f"dt: got {dt!r}; expected None or a number > 0")
        k = np.rint(d / dt).astype(np.int64)
        # integer edges: bin j holds the lattice points bounds[j] .. bounds[j + 1] - 1
        bounds = np.unique(np.ceil(edges / dt - 1e-9).astype(np.int64))
        bounds[-1] = max(bounds[-1], int(np.rint(high / dt)) + 1)
        if bounds.size < 2:
            bounds = np.array([bounds[0], bounds[0] + 1])
        counts = np.histogram(k, bins=bounds)[0]
        # np.histogram's last bin is closed: move a duration equal to its right edge back out
        counts[-1] -= int((k == bounds[-1]).sum())
        widths = np.diff(bounds) * dt
        centres = np.sqrt(bounds[:-1] * (bounds[1:] - 1).astype(np.float64)) * dt
    keep = counts > 0
    return centres[keep], (counts / (d.size * widths))[keep], counts[keep]


def power_law_slope(durations, low: float, high: float, bins_per_decade: int = 5, *, dt=None) -> float:
    """The slope of ``log p(t)`` against ``log t`` for durations between ``low`` and ``high``.

    ``p`` is ``log_binned_density(durations, bins_per_decade, low=low, high=high, dt=dt)``; the
    slope is the least-squares fit of its logarithm over the bins that hold a duration (at least
    two, else NaN). A density ``p(t) ~ t^a`` gives ``a``: Celani, Villermaux & Vergassola (2014)
    predict ``a = -3/2`` for the whiffs and blanks of a turbulent plume between its short and long
    cut-offs; a memoryless signal (Poisson hits, a telegraph process) gives an exponential instead.
    """
    if not (np.isfinite(low) and np.isfinite(high) and 0 < low < high):
        raise ValidationError(f"low, high: got {low!r}, {high!r}; expected 0 < low < high")
    d = np.asarray(durations, dtype=np.float64).ravel()
    d = d[(d >= low) & (d <= high)]
    centres, density, _ = log_binned_density(d, bins_per_decade, low=low, high=high, dt=dt)
    if centres.size < 2:
        return float("nan")
    slope, _ = np.polyfit(np.log(centres), np.log(density), 1)
    return float(slope)
