"""One figure of ``OdorStatistics``: against distance downwind, the duration distributions, the
densities of the signal (needs matplotlib: the ``viz`` extra)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

# matplotlib on the Agg backend (or RenderingError naming the extra); a path with its suffix checked
from ..checks import check_int
from .. import files
from ..evaluation import out_path, pyplot
from .runs import log_binned_density

__all__ = ["plot_statistics"]


def plot_statistics(stats, path, title: str | None = None, dpi: int = 90) -> Path:
    """Write a PNG of ``stats`` (``OdorStatistics``) to ``path`` (14 x 8 inches at ``dpi``).

    Six panels: the mean signal, the intermittency factor and the whiff frequency against
    distance downwind (one line per crosswind offset; the probe index when the signals came
    without probes); the whiff and the blank duration densities on logarithmic bins for the
    probes on the wind's axis (crosswind 0, or every probe), with a ``t^-3/2`` guide (Celani,
    Villermaux & Vergassola 2014); the density of the signal at those probes.
    """
    path = out_path(path, ".png")
    dpi = check_int("plot_statistics", "dpi", dpi, 10, 1000)
    plt = pyplot()
    x = stats.downwind if np.isfinite(stats.downwind).all() else np.arange(stats.n_probes, dtype=np.float64)
    across = stats.crosswind if np.isfinite(stats.crosswind).all() else np.zeros(stats.n_probes)
    xlabel = "distance downwind (cells)" if np.isfinite(stats.downwind).all() else "probe"
    offsets = np.unique(across)
    axis = np.flatnonzero(across == (0.0 if 0.0 in offsets else offsets[0]))
    unit = stats.time_unit

    fig, axes = plt.subplots(2, 3, figsize=(14, 8))
    for (ax, values, label) in ((axes[0, 0], stats.mean, f"mean {stats.signal}"),
                                (axes[0, 1], stats.intermittency, "intermittency factor"),
                                (axes[0, 2], stats.whiff_frequency, f"whiff frequency (1/{unit})")):
        for c in offsets:
            k = np.flatnonzero(across == c)
            k = k[np.argsort(x[k])]
            ax.plot(x[k], values[k], "o-", label=f"crosswind {c:g}")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(label)
    axes[0, 0].legend(fontsize="small")
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, durations, what in ((axes[1, 0], stats.whiff_durations, "whiff"),
                                (axes[1, 1], stats.blank_durations, "blank")):
        drawn = []
        for n, p in enumerate(axis):
            t, density, _ = log_binned_density(durations[p], dt=stats.dt)
            if t.size:
                ax.loglog(t, density, "o-", ms=3, color=colours[n % len(colours)], label=f"{x[p]:g}")
                drawn.append((t, density))
        if drawn:
            t0, d0 = drawn[0]
            guide = np.array([t0.min(), t0.max()]) if t0.size > 1 else np.array([t0[0], 10 * t0[0]])
            ax.loglog(guide, d0[0] * (guide / guide[0]) ** -1.5, "k--", lw=1, label="t^-3/2")
            ax.legend(fontsize="small", title=xlabel.split(" (")[0])
        ax.xaxis.set_minor_formatter(plt.NullFormatter())  # log axes over less than a decade label every tick
        ax.set_xlabel(f"{what} duration ({unit})")
        ax.set_ylabel("probability density")
    ax = axes[1, 2]
    centres = 0.5 * (stats.pdf_edges[1:] + stats.pdf_edges[:-1])
    for n, p in enumerate(axis):
        positive = stats.pdf[p] > 0
        if positive.any():
            ax.semilogy(centres[positive], stats.pdf[p][positive], "-", color=colours[n % len(colours)],
                        label=f"{x[p]:g}")
    ax.set_xlabel(stats.signal)
    ax.set_ylabel("probability density")
    fig.suptitle(title or f"{stats.source or 'signals'}; whiff: {stats.signal} {stats.rule.describe()}, "
                 f"censored runs: {stats.censored}", fontsize="medium")
    # fixed margins: tight_layout would draw the figure twice (half the cost of a plot)
    fig.subplots_adjust(left=0.06, right=0.985, bottom=0.07, top=0.93, wspace=0.22, hspace=0.25)
    with files.writing(path, "plot_statistics", "a .png file name", text=False) as f:  # whole or not at all
        fig.savefig(f, dpi=dpi, format="png")
    plt.close(fig)
    return path
