"""The odour statistics of sampled signals: intermittency, whiffs and blanks, frequency, moments.

Definitions (the signal ``c`` of one probe in one world, samples ``k = 0..T-1`` a time ``dt``
apart, threshold ``c_thr``; after Celani, Villermaux & Vergassola 2014 for whiffs and blanks):

* a sample is *above* when ``c > c_thr``; a **whiff** is a maximal run of samples above, a
  **blank** a maximal run of samples not above; a duration is the run's length times ``dt``;
* **censoring**: the first and the last run of a window are cut by its edges (their true
  durations are unknown). ``censored="drop"`` (the default, as records of finite length are
  usually analysed) leaves them out of the durations and their means; ``"keep"`` counts them at
  the length seen. Their numbers are reported either way (``censored_whiffs``, ``censored_blanks``);
* **intermittency factor**: the fraction of samples above, over every world and step;
* **whiff frequency**: whiff onsets (a blank sample followed by one above) per unit time,
  ``onsets / (n_signals (T - 1) dt)``: a window of ``T`` samples holds ``T - 1`` transitions, so a
  stationary signal gives its rate without bias, and a periodic one its exact frequency when
  ``T - 1`` spans whole periods;
* **moments** of the signal over all samples (mean, standard deviation, skewness, kurtosis), the
  conditional mean over the samples above, the peak, and the probability density on ``bins`` bins.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import files
from ..checks import check_choice, check_int, check_real, fail
from ..errors import ValidationError
from ..evaluation import out_path  # the path's suffix checked, its folder made
from .runs import runs
from .threshold import Threshold

__all__ = ["OdorStatistics", "odor_statistics", "CENSORED", "COLUMNS"]

CENSORED = ("drop", "keep")
# what OdorStatistics.status says of each probe: its statistics are those of a signal; those of a
# signal that stayed at 0 (the odour never reached it); it has none, its cell being solid in the
# walls of every world where it was on the grid; it has none for another reason (off the grid or on
# the source in every world, stopped, or left out by ``valid``)
STATUSES = ("sampled", "never reached", "in a wall", "not sampled")
# the scalar columns of OdorStatistics.rows(), in order
COLUMNS = ("probe", "downwind", "crosswind", "status", "n_signals", "threshold", "intermittency", "whiff_frequency",
           "mean_whiff", "mean_blank", "whiffs", "blanks", "censored_whiffs", "censored_blanks", "mean", "std",
           "skewness", "kurtosis", "conditional_mean", "peak")
_CHUNK = 1 << 22  # samples per pass: bounds the temporaries' memory whatever the number of worlds


@dataclass(frozen=True, eq=False)
class OdorStatistics:
    """Per-probe odour statistics of sampled signals (``odor_statistics``). ``P`` probes; every
    per-probe array has ``P`` entries; times in ``time_unit`` (``dt`` per sample).

    Attributes:
        downwind, crosswind: ``(P,)`` float64, the probes' nominal offsets from the source in
            cells (along the wind and to its left), NaN when the signals came without probes.
        n_signals: ``(P,)`` int64, the series (worlds) each probe pooled.
        samples: ``T``, samples per series.
        threshold: ``(P,)`` float64, the threshold used at each probe (the signal's unit).
        intermittency: ``(P,)`` the fraction of samples above the threshold.
        whiff_frequency: ``(P,)`` whiff onsets per time unit.
        whiff_durations, blank_durations: ``P`` arrays of float64 durations (time units), the
            whiffs and blanks of every series of the probe (censored ones as ``censored`` says).
        mean_whiff, mean_blank: ``(P,)`` their means (NaN without any).
        censored_whiffs, censored_blanks: ``(P,)`` int64, runs cut by the window's edges.
        mean, std, skewness, kurtosis: ``(P,)`` moments of the signal (kurtosis 3 for a normal
            variable; NaN for a constant signal).
        conditional_mean: ``(P,)`` the mean over the samples above the threshold.
        peak: ``(P,)`` the largest sample.
        pdf_edges: ``(K + 1,)`` the bins of ``pdf``, shared by the probes.
        pdf: ``(P, K)`` float64, the probability density of the signal at each probe.
        dt, time_unit: time of one sample, and its unit.
        censored: ``"drop"`` or ``"keep"``.
        rule: the threshold rule, a ``Threshold``.
        signal: what was sampled (``"concentration"``, ``"hits"``, ``"signal"``).
        source: where the signals came from (a plume's name and the protocol), for captions.
        status: ``P`` strings, one of ``STATUSES`` per probe: ``"sampled"``; ``"never reached"``
            (every sample 0: the odour never came; its whiff and shape statistics are NaN);
            ``"in a wall"`` (its cell is solid in every world where it was on the grid: no series,
            every statistic NaN); ``"not sampled"`` (no series for another reason: off the grid or
            on the source everywhere, stopped, or left out by ``valid``; every statistic NaN).
            ``rows()`` and ``to_markdown()`` show it; a NaN is never a statistic without it.
    """

    downwind: np.ndarray
    crosswind: np.ndarray
    n_signals: np.ndarray
    samples: int
    threshold: np.ndarray
    intermittency: np.ndarray
    whiff_frequency: np.ndarray
    whiff_durations: tuple
    blank_durations: tuple
    mean_whiff: np.ndarray
    mean_blank: np.ndarray
    censored_whiffs: np.ndarray
    censored_blanks: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    skewness: np.ndarray
    kurtosis: np.ndarray
    conditional_mean: np.ndarray
    peak: np.ndarray
    pdf_edges: np.ndarray
    pdf: np.ndarray
    dt: float
    time_unit: str
    censored: str
    rule: Threshold
    signal: str = "signal"
    source: str = ""
    extra: dict = field(default_factory=dict)
    status: tuple = ()

    @property
    def n_probes(self) -> int:
        return int(self.threshold.shape[0])

    # ---------------------------------------------------------------- tables
    def rows(self) -> list:
        """A tidy table: one dict per probe with the scalar statistics (``COLUMNS``), plain
        Python numbers (NaN where a statistic has no value)."""
        out = []
        for p in range(self.n_probes):
            row = {"probe": p}
            for name in COLUMNS[1:]:
                if name == "status":
                    value = self.status[p] if self.status else "sampled"
                elif name == "whiffs":
                    value = int(self.whiff_durations[p].size)
                elif name == "blanks":
                    value = int(self.blank_durations[p].size)
                else:
                    value = getattr(self, name)[p].item()
                row[name] = value
            out.append(row)
        return out

    def to_csv(self, path) -> Path:
        """The table of ``rows()`` as CSV (one line per probe)."""
        path = out_path(path, ".csv", "OdorStatistics.to_csv")
        with files.writing(path, "OdorStatistics.to_csv", "a .csv file name", newline="") as f:  # whole or not at all
            writer = csv.DictWriter(f, fieldnames=list(COLUMNS))
            writer.writeheader()
            writer.writerows(self.rows())
        return path

    def to_frame(self):
        """The table of ``rows()`` as a pandas ``DataFrame`` (needs pandas, which this package
        does not require)."""
        try:
            import pandas as pd
        except ImportError as exc:
            raise ValidationError("to_frame: needs pandas (pip install pandas); rows() gives the same table "
                                  "as dicts") from exc
        return pd.DataFrame(self.rows(), columns=list(COLUMNS))

    def to_markdown(self, columns=("downwind", "crosswind", "intermittency", "whiff_frequency", "mean_whiff",
                                   "mean_blank", "mean", "std")) -> str:
        """A Markdown table of the chosen columns of ``rows()``, 3 significant digits."""
        for name in columns:
            if name not in COLUMNS:
                fail("to_markdown", "columns", name, f"names from {list(COLUMNS)}")
        lines = ["| " + " | ".join(columns) + " |", "|" + "---:|" * len(columns)]
        for row in self.rows():
            # a probe without a statistic says why in its place (in a wall, never reached, ...)
            empty = "-" if row["status"] == "sampled" else row["status"]
            lines.append("| " + " | ".join(_cell(row[name], empty) for name in columns) + " |")
        return "\n".join(lines)

    def plot(self, path, title: str | None = None, dpi: int = 90):
        """A PNG of the statistics against distance downwind, the whiff and blank duration
        distributions and the concentration densities (``plume_multi.stats.plot``; needs matplotlib;
        14 x 8 inches at ``dpi``)."""
        from .plot import plot_statistics

        return plot_statistics(self, path, title=title, dpi=dpi)


def _cell(value, empty: str = "-") -> str:
    if isinstance(value, float):
        return empty if math.isnan(value) else f"{value:.3g}"
    return str(value)


# ----------------------------------------------------------------------------------------- computing
def _as_series(signals):
    """``(values (W, P, T), valid (W, P), dt, time_unit, downwind (P,), crosswind (P,), name, source,
    in_wall (W, P) or None)``."""
    from .probes import ProbeSignals

    if isinstance(signals, ProbeSignals):
        return (signals.values, signals.valid, signals.dt, signals.time_unit, signals.probes.downwind_offsets,
                signals.probes.crosswind_offsets, signals.signal, signals.describe(), signals.in_wall)
    try:
        values = np.asarray(signals)
    except (TypeError, ValueError):
        values = None
    if values is None or values.dtype.kind not in "biuf" or values.ndim not in (1, 2, 3):
        fail("odor_statistics", "signals", signals, "a stats.ProbeSignals or a real array (T,), (S, T) or (W, P, T)")
    if values.ndim == 1:
        values = values[None, None, :]   # one series
    elif values.ndim == 2:
        values = values[:, None, :]      # S series of one probe
    if values.shape[2] < 2 or values.shape[0] < 1 or values.shape[1] < 1:
        fail("odor_statistics", "signals", f"an array of shape {np.shape(signals)}",
             "at least one series of at least 2 samples")
    if values.dtype.kind == "f" and not np.isfinite(values).all():
        fail("odor_statistics", "signals", "an array with NaN or infinite values", "finite values")
    P = values.shape[1]
    nan = np.full(P, np.nan)
    return values, np.ones(values.shape[:2], np.bool_), 1.0, "steps", nan, nan, "signal", "", None


def odor_statistics(signals, threshold, *, valid=None, censored: str = "drop", dt=None, time_unit=None,
                    bins: int = 50, pdf_range=None) -> OdorStatistics:
    """Whiffs, blanks, intermittency, whiff frequency and moments of sampled signals, per probe.

    Args:
        signals: a ``ProbeSignals`` (``sample_signals``), or an array of samples: ``(T,)`` one
            series, ``(S, T)`` ``S`` series of one probe, ``(W, P, T)`` ``W`` worlds of ``P``
            probes. Each probe pools its series (worlds are realisations of the same plume).
        threshold: a number (an absolute threshold) or a ``Threshold`` (relative to the mean, the
            median or the maximum of each probe's signal, or of all of them).
        valid: ``None`` or a ``(W, P)`` bool array of the series to use (with the signals' own
            ``valid``, both must hold): a probe missing in some worlds or recordings.
        censored: ``"drop"`` or ``"keep"`` the runs cut by the window's edges (module docstring).
        dt, time_unit: time of one sample and its unit (default: the signals', else 1 "steps";
            a ``dt`` without a unit is in "time units").
        bins: bins of the density ``pdf``, 1..10000.
        pdf_range: ``(low, high)`` of those bins (default: the smallest and largest sample).

    Returns:
        ``OdorStatistics``.

    Example:
        >>> square = np.tile([1.0, 1.0, 0.0, 0.0, 0.0], 41)[:201]   # period 5: whiffs 2, blanks 3
        >>> s = odor_statistics(square, threshold=0.5)
        >>> s.intermittency[0], s.whiff_frequency[0], s.mean_whiff[0], s.mean_blank[0]
        (0.40298507462686567, 0.2, 2.0, 3.0)
    """
    values, mask, dt0, unit, downwind, crosswind, name, source, in_wall = _as_series(signals)
    if valid is not None:
        given = np.asarray(valid)
        if given.dtype != np.bool_ or given.shape != mask.shape:
            fail("odor_statistics", "valid", f"{given.dtype} array of shape {given.shape}",
                 f"None or a bool array of shape (W, P) = {mask.shape}")
        mask = mask & given
    valid = mask
    rule = Threshold.of(threshold)
    check_choice("odor_statistics", "censored", censored, CENSORED)
    bins = check_int("odor_statistics", "bins", bins, 1, 10_000)
    if dt is None:
        dt = dt0
    else:
        dt = check_real("odor_statistics", "dt", dt, 0.0, low_open=True)
        unit = "time units"
    if time_unit is not None:
        if not isinstance(time_unit, str) or not time_unit:
            fail("odor_statistics", "time_unit", time_unit, "a non-empty string, e.g. 's'")
        unit = time_unit
    W, P, T = values.shape
    thr = rule.values(values, valid)
    n_signals = valid.sum(axis=0).astype(np.int64)
    count = n_signals * T

    # pass 1: sums and extremes (the mean centres the moments of pass 2; the extremes give the bins)
    total = np.zeros(P)
    peak = np.full(P, -np.inf)
    floor = np.full(P, np.inf)
    for x, probe in _chunks(values, valid):
        total += np.bincount(probe, weights=x.sum(axis=1, dtype=np.float64), minlength=P)
        np.maximum.at(peak, probe, x.max(axis=1))
        np.minimum.at(floor, probe, x.min(axis=1))
    low = float(floor.min())
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / count
    peak[n_signals == 0] = np.nan
    if pdf_range is None:
        high = float(np.nanmax(peak)) if np.isfinite(peak).any() else 1.0
        low = low if math.isfinite(low) else 0.0
        lo, hi = (low, high) if high > low else (low - 0.5, low + 0.5)
    else:
        try:
            lo, hi = (float(v) for v in pdf_range)
        except (TypeError, ValueError):
            lo = hi = float("nan")
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            fail("odor_statistics", "pdf_range", pdf_range, "(low, high), two finite numbers with low < high")
    edges = np.linspace(lo, hi, bins + 1)

    # pass 2: runs, centred moments, densities
    m2 = np.zeros(P)
    m3 = np.zeros(P)
    m4 = np.zeros(P)
    above_n = np.zeros(P)
    above_sum = np.zeros(P)
    onsets = np.zeros(P)
    hist = np.zeros(P * bins)
    cens = np.zeros((2, P), np.int64)
    kept = {True: [], False: []}
    for x, probe in _chunks(values, valid):
        x = x.astype(np.float64)
        above = x > thr[probe][:, None]
        above_n += np.bincount(probe, weights=above.sum(axis=1), minlength=P)
        above_sum += np.bincount(probe, weights=np.where(above, x, 0.0).sum(axis=1), minlength=P)
        d = x - mean[probe][:, None]
        d2 = d * d
        m2 += np.bincount(probe, weights=d2.sum(axis=1), minlength=P)
        m3 += np.bincount(probe, weights=(d2 * d).sum(axis=1), minlength=P)
        m4 += np.bincount(probe, weights=(d2 * d2).sum(axis=1), minlength=P)
        k = np.clip(((x - lo) / (hi - lo) * bins).astype(np.int64), 0, bins - 1)
        inside = (x >= lo) & (x <= hi)
        hist += np.bincount((probe[:, None] * bins + k)[inside], minlength=P * bins)
        r = runs(above)
        run_probe = probe[r.row]
        onsets += np.bincount(run_probe[r.onset], minlength=P)
        for whiff in (True, False):
            kind = r.above == whiff
            cens[0 if whiff else 1] += np.bincount(run_probe[kind & r.censored], minlength=P)
            take = kind if censored == "keep" else kind & ~r.censored
            kept[whiff].append((run_probe[take], r.length[take]))

    with np.errstate(invalid="ignore", divide="ignore"):
        # a constant signal has no spread: rounding in its mean must not invent one
        var = np.where(peak > floor, m2 / count, 0.0)
        std = np.sqrt(var)
        skewness = np.where(var > 0, (m3 / count) / var ** 1.5, np.nan)
        kurtosis = np.where(var > 0, (m4 / count) / var ** 2, np.nan)
        intermittency = above_n / count
        conditional_mean = above_sum / above_n
        whiff_frequency = onsets / (n_signals * (T - 1) * dt)
        pdf = hist.reshape(P, bins) / (count[:, None] * np.diff(edges)[None, :])
    durations = {}
    means = {}
    for whiff in (True, False):
        probe = np.concatenate([p for p, _ in kept[whiff]]) if kept[whiff] else np.zeros(0, np.int64)
        length = np.concatenate([n for _, n in kept[whiff]]) if kept[whiff] else np.zeros(0, np.int64)
        order = np.argsort(probe, kind="stable")
        split = np.searchsorted(probe[order], np.arange(1, P))
        durations[whiff] = tuple(part * dt for part in np.split(length[order].astype(np.float64), split))
        with np.errstate(invalid="ignore", divide="ignore"):
            means[whiff] = np.bincount(probe, weights=length, minlength=P) * dt / np.bincount(probe, minlength=P)
    return OdorStatistics(
        status=_status(n_signals, peak, floor, in_wall),
        downwind=np.asarray(downwind, np.float64), crosswind=np.asarray(crosswind, np.float64),
        n_signals=n_signals, samples=int(T), threshold=thr, intermittency=intermittency,
        whiff_frequency=whiff_frequency, whiff_durations=durations[True], blank_durations=durations[False],
        mean_whiff=means[True], mean_blank=means[False], censored_whiffs=cens[0], censored_blanks=cens[1],
        mean=mean, std=std, skewness=skewness, kurtosis=kurtosis, conditional_mean=conditional_mean, peak=peak,
        pdf_edges=edges, pdf=pdf, dt=float(dt), time_unit=unit, censored=censored, rule=rule, signal=name,
        source=source)


def _status(n_signals: np.ndarray, peak: np.ndarray, floor: np.ndarray, in_wall) -> tuple:
    """Each probe's entry of ``STATUSES`` (``OdorStatistics.status``)."""
    walled = np.zeros(n_signals.shape, np.bool_) if in_wall is None else np.asarray(in_wall).any(axis=0)
    out = []
    for p in range(n_signals.shape[0]):
        if n_signals[p] == 0:
            out.append("in a wall" if walled[p] else "not sampled")
        elif peak[p] == 0.0 and floor[p] == 0.0:
            out.append("never reached")
        else:
            out.append("sampled")
    return tuple(out)


def _chunks(values: np.ndarray, valid: np.ndarray):
    """``(x (S, T), probe (S,))`` for the valid series of a few worlds at a time."""
    W, P, T = values.shape
    per = max(1, _CHUNK // max(1, P * T))
    probes = np.tile(np.arange(P, dtype=np.int64), per)
    for w0 in range(0, W, per):
        w1 = min(W, w0 + per)
        keep = valid[w0:w1].ravel()
        x = values[w0:w1].reshape(-1, T)
        probe = probes[: (w1 - w0) * P]
        if not keep.all():
            x, probe = x[keep], probe[keep]
        if x.shape[0]:
            yield x, probe
