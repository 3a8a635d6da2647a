"""A plain, obviously-correct reference of plume_multi.stats: Python loops over each series and
each sample, written from the definitions in plume_multi/stats/statistics.py's docstring.

Also the synthetic signals with closed forms the tests use: a periodic square wave and a
two-state Markov (telegraph) signal.
"""

from __future__ import annotations

import math

import numpy as np


def naive_runs(series) -> list:
    """``[(start, length, above, censored), ...]`` of one boolean series, in time order."""
    out = []
    T = len(series)
    start = 0
    for k in range(1, T + 1):
        if k == T or bool(series[k]) != bool(series[start]):
            out.append((start, k - start, bool(series[start]), start == 0 or k == T))
            start = k
    return out


def naive_statistics(series_list, threshold: float, censored: str = "drop", dt: float = 1.0) -> dict:
    """The statistics of one probe whose series (each a list of numbers) are ``series_list``."""
    whiffs, blanks = [], []
    above_n = samples = onsets = transitions = 0
    cens_w = cens_b = 0
    total = 0.0
    above_sum = 0.0
    values = []
    for series in series_list:
        above = [x > threshold for x in series]
        for start, length, is_whiff, cut in naive_runs(above):
            if cut:
                if is_whiff:
                    cens_w += 1
                else:
                    cens_b += 1
            if cut and censored == "drop":
                continue
            (whiffs if is_whiff else blanks).append(length * dt)
        for k, x in enumerate(series):
            samples += 1
            total += x
            values.append(x)
            if above[k]:
                above_n += 1
                above_sum += x
            if k > 0:
                transitions += 1
                if above[k] and not above[k - 1]:
                    onsets += 1
    mean = total / samples
    var = sum((x - mean) ** 2 for x in values) / samples
    return {
        "intermittency": above_n / samples,
        "whiff_frequency": onsets / (transitions * dt),
        "whiff_durations": sorted(whiffs),
        "blank_durations": sorted(blanks),
        "censored_whiffs": cens_w,
        "censored_blanks": cens_b,
        "mean": mean,
        "std": math.sqrt(var),
        "conditional_mean": above_sum / above_n if above_n else math.nan,
        "peak": max(values),
    }


# ------------------------------------------------------------------------------ synthetic signals
def square_wave(period: int, on: int, samples: int, phase: int = 0, rows: int = 1) -> np.ndarray:
    """``(rows, samples)`` float64: 1 for the first ``on`` samples of every period, else 0,
    shifted by ``phase`` samples."""
    k = (np.arange(samples) + phase) % period
    return np.tile((k < on).astype(np.float64), (rows, 1))


def telegraph(p_on: float, p_off: float, rows: int, samples: int, seed: int = 0) -> np.ndarray:
    """``(rows, samples)`` bool: a two-state Markov chain started in its stationary law; per step
    a blank turns into a whiff with probability ``p_on``, a whiff into a blank with ``p_off``.

    Closed forms: whiff durations geometric with mean ``1 / p_off`` steps, blanks with mean
    ``1 / p_on``; intermittency ``p_on / (p_on + p_off)``; whiff onsets per step
    ``p_on p_off / (p_on + p_off)``."""
    rng = np.random.default_rng(seed)
    u = rng.random((rows, samples))
    out = np.empty((rows, samples), dtype=np.bool_)
    out[:, 0] = u[:, 0] < p_on / (p_on + p_off)
    for t in range(1, samples):
        prev = out[:, t - 1]
        out[:, t] = np.where(prev, u[:, t] >= p_off, u[:, t] < p_on)
    return out
