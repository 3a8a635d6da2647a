"""The tasks' statistics on their cards: the blocks a folder holds end the cards they name, the
command line prints them, bad input is refused; docs/task_statistics.py samples each task's plume
as its family needs (nothing new compiles here: its one run is on the default scenario's plume)."""

import dataclasses
import math
import sys

import gymnasium
import numpy as np
import pytest

from plume_multi import Scenario, plumes, tasks
from plume_multi.cli import main
from plume_multi.errors import ValidationError
from plume_multi.models.sensors import Hits
from plume_multi.stats import odor_statistics
from plume_multi.stats.probes import _signal_sensor
from plume_multi.tasks import Protocol, Task, registry
from plume_multi.tasks.cards import cards_markdown, statistics_blocks, task_slug
from docs_scripts import load
from stats_reference import telegraph


def _script():
    return load("task_statistics")


def test_a_folder_of_blocks_ends_the_cards_it_names(tmp_path, capsys):
    (tmp_path / f"{task_slug('puffs/sparse-v0')}.txt").write_text("**Plume statistics**: sparse.\n")
    (tmp_path / "not-a-task.txt").write_text("ignored")
    blocks = statistics_blocks(tmp_path)
    assert blocks == {"puffs/sparse-v0": "**Plume statistics**: sparse."}
    text = cards_markdown(blocks)
    card = text[text.index("### `puffs/sparse-v0`"):text.index("### `walls/")]
    assert card.rstrip().endswith("**Plume statistics**: sparse.") and text.count("**Plume statistics**") == 1
    assert cards_markdown() == cards_markdown({})
    assert main(["benchmark", "list", "--markdown", "--statistics", str(tmp_path)]) == 0
    assert capsys.readouterr().out == text
    assert main(["benchmark", "list", "--statistics", str(tmp_path)]) == 2
    assert "--statistics: goes with --markdown" in capsys.readouterr().err
    with pytest.raises(ValidationError, match="statistics_blocks.folder"):
        statistics_blocks(tmp_path / "missing")
    with pytest.raises(ValidationError, match="cards_markdown.statistics"):
        cards_markdown(["not", "a", "mapping"])


def test_each_task_is_sampled_as_its_plume_needs():
    script = _script()
    kinds = {t: script.sampling_for(tasks.get(t).scenario()) for t in tasks.list() if not tasks.get(t).options}
    assert kinds["otto/isotropic-3d-v0"] is None  # the probes are 2-D
    for task_id, sampling in kinds.items():
        if task_id.startswith(("otto/isotropic-1", "otto/isotropic-5", "otto/windy", "teams/", "pursuit/")):
            assert sampling.sensors == (Hits(),) and sampling.threshold == 0.0, task_id  # no beliefs to carry
        if task_id.startswith("puffs/"):
            assert max(sampling.probes.downwind) >= 100  # past the searcher's starts, 50-100 cells downwind
    # the walls' source sits near the right edge: its probes look left, across the walls
    assert kinds["walls/gaussian-baffles-v0"].probes.direction == 180.0
    # a Poisson-hit plume's signal is its hits, a wind's too (not the mean the concentration reads)
    assert _signal_sensor(plumes.WindyPoissonHits())[1] == _signal_sensor(plumes.PoissonHits(1.0, 1.0))[1] == "hits"


def test_the_closed_forms_of_independent_hits_read_the_statistics():
    script = _script()
    signal = telegraph(0.3, 0.3, 2 * 20, 200, seed=2).astype(np.float32).reshape(20, 2, 200)
    stats = odor_statistics(signal, 0.5)
    stats = dataclasses.replace(stats, downwind=np.array([1.0, 4.0]), crosswind=np.zeros(2))
    plume = plumes.PoissonHits(lambda_over_dx=1.0, R_dt=1.0)
    rows = script.closed_form_poisson(stats, plume).splitlines()[4:]
    p0 = float(plume.hit_probabilities(4.0)[0])
    assert rows[1].startswith(f"| 4 | 0 | {stats.intermittency[1]:.4f} | {1 - p0:.4f} | ")
    windy = plumes.WindyPoissonHits()
    rows = script.closed_form_poisson(stats, windy).splitlines()[4:]
    assert f"| {1 - math.exp(-float(windy.mean_hits(1.0, 0.0))):.4f} |" in rows[0]


def test_a_tiny_run_writes_a_tasks_figure_and_block(tmp_path):
    script = _script()
    mine = Task(id="mylab/stats-v0", scenario_factory=lambda: Scenario(grid_size=(24, 16), sigma=6.0),
                protocol=Protocol(episodes=10, max_steps=20), card="A Gaussian for the statistics test.")
    tasks.register(mine)
    try:
        assert script.main(["--tiny", "--tasks", mine.id, "--out", str(tmp_path)]) == 0
    finally:  # the other tests see the package's tasks only
        registry._TASKS.pop(mine.id, None)
        gymnasium.registry.pop(mine.id, None)
    text = (tmp_path / "mylab__stats-v0.txt").read_text()
    assert text.startswith("**Plume statistics**") and "(plume-statistics/tasks/mylab__stats-v0.png)" in text
    assert (tmp_path / "mylab__stats-v0.png").read_bytes()[:4] == b"\x89PNG"
    rows = [line.split("|")[1:-1] for line in text.splitlines() if line.startswith("| ") and line.count("|") == 7]
    assert [float(r[3]) for r in rows[1:]] == [float(r[4]) for r in rows[1:]]  # the mean is the closed form
