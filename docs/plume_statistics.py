"""The figures and tables of docs/plume-statistics.md: the odour statistics of every plume model
under one sampling protocol (``plume_multi.stats``), beside closed forms or what the literature
reports for the plumes they imitate.

    python docs/plume_statistics.py                                  # every plume (minutes)
    python docs/plume_statistics.py --plumes puffs movie             # some of them
    python docs/plume_statistics.py --movie rec.npy --source 5 24 --fps 50 --plumes movie   # your recording

Writes ``<out>/<plume>.png`` (default out: docs/plume-statistics) and the Markdown tables of the
page, ``<out>/<plume>.txt`` (docs/plume-statistics.md includes them), and prints the tables.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from plume_multi import Scenario, plumes
from plume_multi.models.plumes import PuffPlume, Puffs, Wind
from plume_multi.stats import Probes, Threshold, odor_statistics, power_law_slope, sample_signals

PLUMES = ("gaussian", "puffs", "movie", "poisson_hits")
HERE = Path(__file__).resolve().parent


@dataclass
class Setup:
    scenario: Scenario
    probes: Probes
    threshold: object
    steps: int
    worlds: int
    warmup: int = 0
    cell_size: float = 1.0  # m, for the tables (1.0: unknown, lengths in cells)


# pompy's default plume (Farrell et al. 2002 as pompy codes it: a 50 m x 25 m region, a 1 m/s
# meandering wind, 10 puffs a second, dt = 0.01 s) on cells of 0.5 m, the source 5 m from the
# upwind edge; the spin-up lets the puffs fill the region (50 m at 1 m/s) before sampling.
PUFF_GRID = (100, 50)


def puff_config(tiny: bool) -> Puffs:
    return Puffs(source=(10, 25), wind=Wind(u=1.0), spin_up_steps=200 if tiny else 6000)


def setup_gaussian(tiny: bool, args) -> Setup:
    sc = Scenario(grid_size=(96, 48), plume=plumes.Gaussian(source=(16, 24), sigma=12.0, wind=(1.0, 0.0)))
    return Setup(sc, Probes(downwind=(2, 4, 8, 12, 16, 24, 32, 48, 64), crosswind=(0, 8, 16)), 0.5,
                 steps=4 if tiny else 20, worlds=2)


def setup_puffs(tiny: bool, args) -> Setup:
    sc = Scenario(grid_size=PUFF_GRID, plume=puff_config(tiny))
    return Setup(sc, PUFF_PROBES, PUFF_THRESHOLD, steps=100 if tiny else 4000, worlds=2 if tiny else 32)


# 2.5 to 40 m downwind, up to 5 m across; a whiff: a fixed detection threshold (Celani et al.'s
# definition), in the model's concentration units (pompy's: amount per m^3, one unit a puff)
PUFF_PROBES = Probes(downwind=(5, 10, 20, 40, 80), crosswind=(-10, -5, 0, 5, 10))
PUFF_THRESHOLD = 0.1


def synthetic_recording(tiny: bool, seed: int = 1000) -> tuple:
    """A recording of one world of the puff plume: ``(frames, scale)``, frames ``(T, H, W)``
    uint16 (one a step) holding the concentration over ``scale`` (its 99.99th percentile,
    clipped), as a movie file would."""
    plume = PuffPlume(puff_config(tiny), PUFF_GRID, num_worlds=1)
    plume.reset(seed=seed)
    frames = np.empty((300 if tiny else 8000, PUFF_GRID[1], PUFF_GRID[0]), np.float32)
    for k in range(frames.shape[0]):
        plume.step()
        frames[k] = plume.field_image(0)
    scale = float(np.percentile(frames, 99.99)) or 1.0
    return np.round(np.clip(frames / scale, 0.0, 1.0) * 65535).astype(np.uint16), scale


def setup_movie(tiny: bool, args) -> Setup:
    if args.movie is not None:
        movie = plumes.Movie(str(args.movie), source=tuple(args.source) if args.source else None, fps=args.fps)
        sc = Scenario(plume=movie)
        return Setup(sc, Probes(downwind=tuple(args.downwind), crosswind=(0,)), Threshold(0.01, "max", "all"),
                     steps=min(4000, movie.frames.shape[0] // 2), worlds=8)
    frames, scale = synthetic_recording(tiny)
    movie = plumes.Movie(frames, source=(10, 25), wind=(1.0, 0.0), fps=100.0)  # dt = 0.01 s, as the puffs'
    sc = Scenario(grid_size=PUFF_GRID, plume=movie)
    cell = Scenario(grid_size=PUFF_GRID, plume=puff_config(tiny)).plume.cell_size  # the recorded plume's cells
    return Setup(sc, PUFF_PROBES, PUFF_THRESHOLD / scale, steps=100 if tiny else 4000, worlds=2 if tiny else 32,
                 cell_size=cell)


def setup_poisson_hits(tiny: bool, args) -> Setup:
    plume = plumes.PoissonHits(lambda_over_dx=2.0, R_dt=2.0)  # a 37 x 37 domain
    return Setup(Scenario(plume=plume), Probes(downwind=(1, 2, 3, 4, 6, 8, 12), crosswind=(0, 4)), 0.0,
                 steps=100 if tiny else 4000, worlds=4 if tiny else 64)


SETUPS = {"gaussian": setup_gaussian, "puffs": setup_puffs, "movie": setup_movie, "poisson_hits": setup_poisson_hits}


# ------------------------------------------------------------------------------------ comparisons
def slopes(stats, low_steps=2, high_fraction=0.1) -> list:
    """The whiff and blank duration slopes on the wind's axis, per probe: between ``low_steps``
    steps and ``high_fraction`` of the window."""
    out = []
    low, high = low_steps * stats.dt, high_fraction * stats.samples * stats.dt
    for p in np.flatnonzero(stats.crosswind == 0):
        w = power_law_slope(stats.whiff_durations[p], low, high, dt=stats.dt)
        b = power_law_slope(stats.blank_durations[p], low, high, dt=stats.dt)
        out.append((stats.downwind[p], w, b, stats.whiff_durations[p].size, stats.blank_durations[p].size))
    return out


def crosswind_width(stats, d) -> float:
    """The width (cells) of the mean profile across the wind at ``d`` cells downwind: the
    standard deviation of the crosswind offsets weighted by the mean signal."""
    k = np.flatnonzero(stats.downwind == d)
    c, m = stats.crosswind[k], stats.mean[k]
    centre = (c * m).sum() / m.sum()
    return float(math.sqrt((m * (c - centre) ** 2).sum() / m.sum()))


def table_puffs(name, stats) -> str:
    low, high = 2 * stats.dt, 0.1 * stats.samples * stats.dt
    lines = [f"**{name}** on the wind's axis. Slopes: of log p(t) against log t for the whiff and blank "
             f"durations over [{low:g}, {high:g}] {stats.time_unit} (Celani et al. 2014 predict -3/2). "
             "Whiff and blank time per onset: I / f and (1 - I) / f, the mean durations of a stationary "
             "signal without the bias of runs cut by the window (long blanks). Intensity: std / mean of the "
             "concentration (a gamma distribution has skewness = 2 x intensity). Width: of the mean profile "
             "across the wind (cells).", "",
             f"| downwind (cells) | intermittency I | whiff frequency f (1/{stats.time_unit}) | whiffs | whiff slope "
             f"| I / f ({stats.time_unit}) | blanks | blank slope | (1 - I) / f ({stats.time_unit}) | intensity "
             "| skewness | width |", "|" + "---:|" * 12]
    for (d, w, b, nw, nb), p in zip(slopes(stats), np.flatnonzero(stats.crosswind == 0)):
        i, f = stats.intermittency[p], stats.whiff_frequency[p]
        with np.errstate(divide="ignore", invalid="ignore"):
            intensity = stats.std[p] / stats.mean[p]
            per_whiff, per_blank = np.divide(i, f), np.divide(1 - i, f)
        lines.append(f"| {d:g} | {i:.3f} | {f:.3g} | {nw} | {w:.2f} | {per_whiff:.3g} | {nb} | {b:.2f} | "
                     f"{per_blank:.3g} | {intensity:.2f} | {stats.skewness[p]:.1f} | {crosswind_width(stats, d):.1f} |")
    return "\n".join(lines)


def table_poisson(stats, plume) -> str:
    lines = ["**PoissonHits** against its closed forms (independent hits each step, Pr(h | d)):", "",
             "| downwind | crosswind | distance | intermittency | 1 - Pr(0 \\| d) | mean whiff | 1 / Pr(0 \\| d) "
             "| mean blank | 1 / (1 - Pr(0 \\| d)) |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for p in range(stats.n_probes):
        d = math.hypot(stats.downwind[p], stats.crosswind[p])
        p0 = float(plume.hit_probabilities(d)[0])
        lines.append(f"| {stats.downwind[p]:g} | {stats.crosswind[p]:g} | {d:.2f} | {stats.intermittency[p]:.4f} | "
                     f"{1 - p0:.4f} | {stats.mean_whiff[p]:.3f} | {1 / p0:.3f} | {stats.mean_blank[p]:.2f} | "
                     f"{1 / (1 - p0):.2f} |")
    return "\n".join(lines)


def table_gaussian(stats, sigma) -> str:
    lines = ["**Gaussian**: mean concentration on the axis against exp(-d^2 / 2 sigma^2):", "",
             "| downwind | mean | closed form | intermittency |", "|---:|---:|---:|---:|"]
    for p in np.flatnonzero(stats.crosswind == 0):
        d = stats.downwind[p]
        lines.append(f"| {d:g} | {stats.mean[p]:.4f} | {math.exp(-d * d / (2 * sigma * sigma)):.4f} | "
                     f"{stats.intermittency[p]:g} |")
    return "\n".join(lines)


# What the papers report for the plumes that Puffs and Movie imitate: (statistic, literature, source).
# Only numbers checked against the papers; "not reported here" where none was (the source has more).
LITERATURE = (
    ("whiff-duration density", "\\(p(t) \\propto t^{-3/2}\\) between a short and a long cut-off (theory, checked "
     "against simulations, laboratory and field data)", "Celani, Villermaux & Vergassola 2014"),
    ("blank-duration density", "\\(p(t) \\propto t^{-3/2}\\), same conditions", "Celani, Villermaux & Vergassola 2014"),
    ("intermittency factor against distance downwind", "not reported here",
     "Yee et al. 1993 (field, atmospheric surface layer); Connor, McHugh & Crimaldi 2018 (PLIF, airborne plumes)"),
    ("whiff frequency against distance downwind", "-", "-"),
    ("mean concentration against distance downwind", "not reported here",
     "Yee et al. 1993; Connor, McHugh & Crimaldi 2018"),
    ("information about the location in concentration samples", "not reported here",
     "Boie et al. 2018 (three PLIF-recorded plumes)"),
    ("simulated plumes under switching winds, for trained agents", "not reported here", "Singh et al. 2023"),
)


def _span(values, fmt="{:.2f}") -> str:
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return "-"
    return f"{fmt.format(values.min())} to {fmt.format(values.max())}".replace("-", "\u2212")


def measured(stats, cell: float) -> list:
    """What the protocol measured on the wind's axis, one cell per row of ``LITERATURE`` (``cell``:
    the length of a grid cell, m, or 1.0 when unknown)."""
    axis = np.flatnonzero(stats.crosswind == 0)
    axis = axis[np.argsort(stats.downwind[axis])]
    fitted = slopes(stats)
    unit = stats.time_unit
    near, far = stats.downwind[axis[0]], stats.downwind[axis[-1]]
    where = f"{near * cell:g} to {far * cell:g} m" if cell != 1.0 else f"{near:g} to {far:g} cells"
    mean = stats.mean[axis]
    return [f"slopes {_span([w for _, w, _, _, _ in fitted])} over {where}",
            f"slopes {_span([b for _, _, b, _, _ in fitted])}",
            f"{_span(stats.intermittency[axis], '{:.3f}')} ({stats.rule.describe()})",
            f"{_span(stats.whiff_frequency[axis], '{:.3g}')} whiffs/{unit}",
            f"falls {mean[0] / mean[-1]:.0f}-fold from {where}" if mean[-1] > 0 else "-",
            "not measured", "not measured"]


def table_literature(results: dict) -> str:
    names = [name for name in ("puffs", "movie") if name in results]
    lines = ["| statistic | literature | source | " + " | ".join(f"`{n.title()}` here" for n in names) + " |",
             "|---|---|---|" + "---|" * len(names)]
    columns = [measured(*results[name]) for name in names]
    for k, (what, value, source) in enumerate(LITERATURE):
        lines.append(f"| {what} | {value} | {source} | " + " | ".join(c[k] for c in columns) + " |")
    return "\n".join(lines)


def run(name: str, tiny: bool, args, out: Path):
    setup = SETUPS[name](tiny, args)
    start = time.perf_counter()
    signals = sample_signals(setup.scenario, setup.probes, setup.steps, num_worlds=setup.worlds, seed=args.seed,
                             warmup=setup.warmup, progress=not tiny)
    stats = odor_statistics(signals, setup.threshold)
    cell = signals.cell_size if signals.length_unit == "m" else setup.cell_size
    seconds = time.perf_counter() - start
    stats.plot(out / f"{name}.png")
    lines = [f"{signals.describe()}; whiff: {stats.signal} {stats.rule.describe()}; sampled and analysed in "
             f"{seconds:.1f} s; times in {stats.time_unit}, means over complete runs.", "",
             stats.to_markdown(("downwind", "crosswind", "n_signals", "intermittency", "whiff_frequency",
                                "mean_whiff", "mean_blank", "mean", "std")), ""]
    if name in ("puffs", "movie"):
        lines += [table_puffs(name, stats), ""]
    elif name == "poisson_hits":
        lines += [table_poisson(stats, setup.scenario.plume), ""]
    elif name == "gaussian":
        lines += [table_gaussian(stats, setup.scenario.plume.sigma), ""]
    return "\n".join(lines), (stats, cell)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plumes", nargs="+", choices=PLUMES, default=list(PLUMES))
    parser.add_argument("--out", type=Path, default=HERE / "plume-statistics", help="folder of the figures")
    parser.add_argument("--tiny", action="store_true", help="a quick run at tiny sizes (the tests)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--movie", type=Path, default=None, help="a recording (.npy, .npz, .h5, .zarr) for 'movie'")
    parser.add_argument("--source", type=float, nargs=2, default=None, metavar=("X", "Y"),
                        help="the recording's source, cells (else the file's source_location)")
    parser.add_argument("--fps", type=float, default=None, help="the recording's frames per second")
    parser.add_argument("--downwind", type=float, nargs="+", default=(5, 10, 20, 40),
                        help="the probes' distances downwind, cells (with --movie)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    results = {}
    for name in args.plumes:
        text, results[name] = run(name, args.tiny, args, args.out)
        (args.out / f"{name}.txt").write_text(text)
        print(f"### {name}\n\n{text}")
    if "puffs" in results and "movie" in results:  # the page's comparison needs both columns
        text = table_literature(results)
        (args.out / "literature.txt").write_text(text + "\n")
        print(f"### beside the literature\n\n{text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
