"""Odour statistics of a plume: what researchers compare against recordings.

``sample_signals(scenario, Probes(...), steps, num_worlds=...)`` samples any plume at probes placed
downwind of its source and across the wind, in many worlds, through the ``Simulator``;
``odor_statistics(signals, threshold)`` gives per probe the whiff and blank duration
distributions, the whiff frequency, the intermittency factor, the moments and density of the
signal; ``plume_statistics`` does both. Statistics of any array of samples (a recording's): pass
the array to ``odor_statistics``. Definitions: ``plume_multi.stats.statistics`` (the
statistics) and ``plume_multi.stats.probes`` (the protocol); docs/plume-statistics.md.
"""

from __future__ import annotations

from .probes import MAX_PROBES, Probes, ProbeSignals, plume_wind, sample_signals, time_step
from .runs import Runs, log_binned_density, power_law_slope, runs
from .statistics import CENSORED, COLUMNS, OdorStatistics, odor_statistics
from .threshold import Threshold

__all__ = ["Probes", "ProbeSignals", "Threshold", "OdorStatistics", "Runs", "sample_signals", "odor_statistics",
           "plume_statistics", "runs", "log_binned_density", "power_law_slope", "plume_wind", "time_step", "CENSORED", "COLUMNS",
           "MAX_PROBES"]


def plume_statistics(scenario, probes: Probes | None = None, threshold=0.0, steps: int = 1000, *,
                     num_worlds: int = 16, seed: int = 0, warmup: int = 0, sensors=None, censored: str = "drop",
                     bins: int = 50, progress: bool = True) -> OdorStatistics:
    """``odor_statistics(sample_signals(scenario, probes, steps, ...), threshold, ...)``: the odour
    statistics of a plume under the sampling protocol of ``sample_signals``.

    Example:
        >>> from plume_multi import Scenario
        >>> result = plume_statistics(Scenario(grid_size=(48, 32)), Probes(downwind=(2, 4, 8)), threshold=0.5,
        ...                           steps=10, num_worlds=2, progress=False)
        >>> result.intermittency.tolist()      # the static Gaussian: above 0.5 within 1.18 sigma only
        [1.0, 1.0, 0.0]
    """
    signals = sample_signals(scenario, probes, steps, num_worlds=num_worlds, seed=seed, warmup=warmup,
                             sensors=sensors, progress=progress)
    return odor_statistics(signals, threshold, censored=censored, bins=bins)
