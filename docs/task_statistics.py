"""The plume statistics of the benchmark's tasks: one figure and one table per task, sampled with
``plume_multi.stats``'s protocol on the task's own scenario, beside closed forms (Poisson hits, the
Gaussian) or what the literature reports (the puffs and the recording). docs/benchmark.md shows
each under its task's card.

    python docs/task_statistics.py                              # every task (minutes on two cores)
    python docs/task_statistics.py --tasks puffs/sparse-v0      # some of them
    python docs/task_statistics.py --tiny --out /tmp/stats      # a quick run at tiny sizes

Writes ``<out>/<family>__<name>-vN.png`` and ``.txt`` (Markdown: the card's block: figure, tables) for each
task, then rewrites the task list of docs/benchmark.md, as ``plume-multi benchmark list --markdown
--statistics docs/plume-statistics/tasks`` prints it (only with the default ``--out``). A task on
the same plume as an earlier one (the teams: otto's 53 x 53 plume) points to that one's figure.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # plume_statistics.py, this script's sibling
import plume_statistics as ps  # noqa: E402

from plume_multi import tasks  # noqa: E402
from plume_multi.models.plumes import Gaussian, Movie, PoissonHits, Puffs  # noqa: E402
from plume_multi.models.plumes.poisson_hits.windy import WindyPoissonHits  # noqa: E402
from plume_multi.models.sensors import Hits  # noqa: E402
from plume_multi.models.sources import Static  # noqa: E402
from plume_multi.stats import Probes, Threshold, odor_statistics, sample_signals  # noqa: E402
from plume_multi.tasks.cards import BEGIN, END, cards_markdown, statistics_blocks, task_slug  # noqa: E402

HERE = Path(__file__).resolve().parent
OUT = HERE / "plume-statistics" / "tasks"
PAGE = HERE / "benchmark.md"
FIGURE_DPI = 60  # the figures' files stay small (tens of kB); the page shows them at its width
STILL = ("; sampled with the target held still (it walks in the task: the hits a searcher receives at a "
         "distance from it are these)")
COLUMNS = ("downwind", "crosswind", "n_signals", "intermittency", "whiff_frequency", "mean_whiff", "mean_blank",
           "mean", "std")


@dataclass
class Sampling:
    """How a task's plume is sampled: probes, threshold of a whiff, steps and worlds (full and tiny)."""

    probes: Probes
    threshold: object
    steps: int
    worlds: int
    note: str
    sensors: tuple | None = None  # None: sample_signals' choice (the scenario's when they start with the signal)
    tiny_steps: int = 40
    tiny_worlds: int = 2


def sampling_for(scenario) -> Sampling | None:
    """The sampling of a task's plume; ``None`` where the probes cannot go (3-D)."""
    plume, (w, h) = scenario.plume, scenario.grid_size[:2]
    if scenario.dims != 2:
        return None
    if isinstance(plume, Puffs):
        # the searcher starts 50-100 cells (12-25 m) downwind: probes from near the source to past it
        return Sampling(Probes(downwind=(5, 10, 20, 40, 80, 120), crosswind=(-10, 0, 10)), ps.PUFF_THRESHOLD,
                        steps=2000, worlds=16, note="a whiff: a concentration above 0.1 (one puff's amount per "
                        "m^3), pompy's plume as in [Plume statistics](plume-statistics.md#puffs-filaments-in-a-"
                        "meandering-wind); the probes lie along the mean wind (+x) whatever the regime turns it to")
    if isinstance(plume, Movie):
        return Sampling(Probes(downwind=(2, 4, 8, 16, 24, 32, 44), crosswind=(-6, 0, 6)),
                        Threshold(0.1, relative_to="max", scope="all"), steps=100, worlds=32,
                        note="one pass over the recording's frames per world, each world from a random frame; a "
                        "whiff: above a tenth of the recording's peak")
    hits = ("a whiff: at least one hit; hits are independent from step to step, so whiffs and blanks are "
            "geometric with the probability of no hit")
    if isinstance(plume, WindyPoissonHits):
        return Sampling(Probes(downwind=(1, 2, 4, 8, 16, 32), crosswind=(0, 4)), 0.0, steps=1000, worlds=32,
                        note=hits + ", exp(-mu)", sensors=(Hits(),))
    if isinstance(plume, PoissonHits):
        distances = tuple(d for d in (1, 2, 3, 4, 6, 8, 12, 16, 24) if d < w // 2)
        return Sampling(Probes(downwind=distances, crosswind=(0, max(1, distances[-1] // 4))), 0.0, steps=1000,
                        worlds=32, sensors=(Hits(),), note=hits)
    if isinstance(plume, Gaussian):
        sx = plume.source[0] if not isinstance(plume.source, str) else w / 2
        toward = 180.0 if sx > w / 2 else 0.0  # across the grid's longer side from the source
        reach = int(max(sx, w - sx)) - 1
        return Sampling(Probes(downwind=tuple(d for d in (1, 2, 4, 8, 12, 16, 24, 32) if d <= reach),
                               crosswind=(0, 4), direction=toward), 0.5, steps=4, worlds=64, tiny_steps=4,
                        note="a static field: every probe reads one value, no whiffs or blanks to time; a whiff: "
                        "above 0.5")
    return Sampling(Probes(), 0.0, steps=500, worlds=32, note="a whiff: above 0")


def closed_form_poisson(stats, plume) -> str:
    """Each probe's intermittency and mean durations beside the closed forms of independent hits."""
    lines = ["Against the closed forms of independent hits (the probability of no hit, Pr(0), at the probe):", "",
             "| downwind | crosswind | intermittency | 1 - Pr(0) | mean whiff | 1 / Pr(0) | mean blank "
             "| 1 / (1 - Pr(0)) |", "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for p in range(stats.n_probes):
        d, c = stats.downwind[p], stats.crosswind[p]
        if isinstance(plume, WindyPoissonHits):
            p0 = math.exp(-float(plume.mean_hits(d, c)))
        else:
            p0 = float(plume.hit_probabilities(max(1.0, math.hypot(d, c)))[0])
        lines.append(f"| {d:g} | {c:g} | {stats.intermittency[p]:.4f} | {1 - p0:.4f} | {stats.mean_whiff[p]:.3f} | "
                     f"{1 / p0:.3f} | {stats.mean_blank[p]:.2f} | {1 / (1 - p0):.2f} |")
    return "\n".join(lines)


def closed_form_gaussian(stats, plume, scenario) -> str:
    lines = [f"Mean concentration against the closed form exp(-d^2 / 2 sigma^2) (sigma = {plume.sigma:g} cells):",
             "", "| downwind | crosswind | worlds | mean | closed form | intermittency |", "|---:|---:|---:|---:|---:|---:|"]
    for p in range(stats.n_probes):
        d, c = stats.downwind[p], stats.crosswind[p]
        form = math.exp(-(d * d + c * c) / (2 * plume.sigma ** 2))
        if stats.n_signals[p] == 0:  # no series: its status in place of the numbers
            mean = intermittency = stats.status[p]
        else:
            mean, intermittency = f"{stats.mean[p]:.4f}", f"{stats.intermittency[p]:g}"
        lines.append(f"| {d:g} | {c:g} | {stats.n_signals[p]} | {mean} | {form:.4f} | {intermittency} |")
    if scenario.walls is not None:
        lines += ["", "A probe on a wall cell senses nothing (nothing is sensed inside a wall): it has no series, "
                  "marked in a wall; elsewhere the field is the closed form, as if the walls were not there."]
    return "\n".join(lines)


def beside_literature(stats, cell: float) -> str:
    """This task's statistics on the wind's axis beside what the literature reports (plume_statistics.py's
    ``LITERATURE``, the sources listed on the Plume statistics page)."""
    lines = ["Beside the literature ([sources](plume-statistics.md#beside-the-literature)):", "",
             "| statistic | literature | source | this task |", "|---|---|---|---|"]
    for (what, value, source), here in zip(ps.LITERATURE, ps.measured(stats, cell)):
        lines.append(f"| {what} | {value} | {source} | {here} |")
    return "\n".join(lines)


def save_small_png(stats, path: Path, title: str) -> Path:
    """The statistics figure at ``FIGURE_DPI``, quantized to 256 colours (a line plot loses nothing)."""
    from PIL import Image

    stats.plot(path, title=title, dpi=FIGURE_DPI)
    Image.open(path).convert("RGB").quantize(colors=256).save(path, optimize=True)
    return path


def block(task_id: str, tiny: bool, out: Path, seed: int) -> tuple:
    """The card's Markdown block of ``task_id`` and the plume key it was sampled for."""
    task = tasks.get(task_id)
    scenario = task.scenario()
    moving = not isinstance(getattr(scenario.plume, "source_motion", Static()), Static)
    if moving:  # probes that stay put would see a walking target come and go: hold it still
        scenario = scenario.replace(plume=dataclasses.replace(scenario.plume, source_motion=Static()))
    sampling = sampling_for(scenario)
    if sampling is None:
        return ("**Plume statistics**: the probes of `plume_multi.stats` are 2-D; the hits of this 3-D plume "
                "are independent from step to step, as those of `otto/isotropic-19x19-v0` above."), None
    start = time.perf_counter()
    signals = sample_signals(scenario, sampling.probes, sampling.tiny_steps if tiny else sampling.steps,
                             num_worlds=sampling.tiny_worlds if tiny else sampling.worlds, seed=seed,
                             sensors=sampling.sensors, progress=not tiny)
    stats = odor_statistics(signals, sampling.threshold)
    seconds = time.perf_counter() - start
    figure = out / f"{task_slug(task_id)}.png"
    save_small_png(stats, figure, f"{task_id}: {signals.describe()}")
    cell = signals.cell_size if signals.length_unit == "m" else 1.0
    plume = scenario.plume
    lines = [f"**Plume statistics** ([how they are measured](plume-statistics.md#the-sampling-protocol)): "
             f"{signals.describe()}; {sampling.note}{STILL if moving else ''}; times in {stats.time_unit}; sampled and analysed in "
             f"{seconds:.0f} s.", "", f"![Plume statistics of {task_id}](plume-statistics/tasks/{figure.name})", ""]
    if isinstance(plume, Gaussian):  # a static field: the closed form says it all
        lines.append(closed_form_gaussian(stats, plume, scenario))
        return "\n".join(lines).rstrip(), plume
    lines += [stats.to_markdown(COLUMNS), ""]
    if isinstance(plume, (Puffs, Movie)):
        lines.append(beside_literature(stats, cell))
    elif isinstance(plume, (PoissonHits, WindyPoissonHits)):
        lines.append(closed_form_poisson(stats, plume))
    return "\n".join(lines).rstrip(), plume


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=None, metavar="ID", help="task ids (default: every task)")
    parser.add_argument("--out", type=Path, default=OUT, help="folder of the figures and blocks")
    parser.add_argument("--tiny", action="store_true", help="tiny sizes (the tests)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    sampled = []  # (plume, task id) already drawn: a task on the same plume points there
    for task_id in args.tasks or tasks.list():
        task = tasks.get(task_id)
        if task.options:  # a task on the user's file: docs/plume_statistics.py --movie FILE samples it
            continue
        plume = task.scenario().plume
        same = next((first for p, first in sampled if p == plume), None)
        if same is not None:
            text = (f"**Plume statistics**: the plume of `{same}` (the same model and parameters): its figure "
                    f"and tables above.\n\n![Plume statistics of {same}](plume-statistics/tasks/{task_slug(same)}.png)")
        else:
            text, key = block(task_id, args.tiny, args.out, args.seed)
            if key is not None:
                sampled.append((key, task_id))
        (args.out / f"{task_slug(task_id)}.txt").write_text(text + "\n")
        print(f"### {task_id}\n\n{text}\n", flush=True)
    if args.out.resolve() == OUT.resolve():
        page = PAGE.read_text()
        section = cards_markdown(statistics_blocks(args.out))
        begin = page.index(BEGIN.split("`")[0])  # the list's first line, whatever command it names
        PAGE.write_text(page[:begin] + section.rstrip("\n") + page[page.index(END) + len(END):])
        print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
