"""The registry and the records: ids, versions, protocols, options, refusals (nothing compiles here)."""

import dataclasses
import re

import gymnasium
import pytest

from plume_multi import Scenario, tasks
from plume_multi.errors import ValidationError
from plume_multi.tasks import Protocol, Task, registry
from plume_multi.tasks.task import TASK_ID, TRAIN_SEED_BASE


def test_every_task_is_a_versioned_frozen_record_with_a_card_and_a_gymnasium_id():
    ids = tasks.list()
    assert len(ids) >= 10 and len(set(ids)) == len(ids)
    for task_id in ids:
        task = tasks.make(task_id)
        assert TASK_ID.match(task_id) and task.id == task_id and task.version >= 0
        assert task_id.startswith(task.family + "/") and task.name in task_id
        assert len(task.card) > 200 and task.references and task.baselines
        p = task.protocol
        assert p.eval_seed + p.episodes <= p.train_seed_low == TRAIN_SEED_BASE  # held-out episodes only
        assert gymnasium.spec(task_id).kwargs == {"task_id": task_id}
        with pytest.raises(dataclasses.FrozenInstanceError):
            task.card = "changed"


def test_families_filter_the_list_and_unknown_ones_are_refused():
    assert tasks.list("teams") == [f"teams/{kind}-{n}-v0" for kind in ("uniform", "mixed") for n in (2, 4, 8)]
    with pytest.raises(ValidationError, match="family: got 'nope'; expected one of"):
        tasks.list("nope")


@pytest.mark.parametrize("task_id, message", [
    ("teams/uniform-3-v0", "expected a registered task"),
    ("teams/uniform-2-v9", r"versions of it: \['teams/uniform-2-v0'\]"),
    ("teams/uniform-2", "expected 'family/name-vN'"),
    (3, "expected 'family/name-vN'"),
])
def test_unknown_or_malformed_ids_are_refused(task_id, message):
    with pytest.raises(ValidationError, match=message):
        tasks.make(task_id)


def test_the_scenario_takes_the_protocols_step_cap_and_a_lower_one_for_a_reduced_run():
    task = tasks.make("teams/mixed-4-v0")
    assert task.scenario().max_steps == task.protocol.max_steps == 1000
    assert task.scenario(max_steps=20).max_steps == 20
    assert task.scenario().n_agents == 4 and task.scenario().team
    assert task.partner_map == {1: "greedy", 3: "greedy"}
    with pytest.raises(ValidationError, match="teams/mixed-4-v0.max_steps: got 1001"):
        task.scenario(max_steps=1001)


def test_a_task_on_the_users_file_needs_its_path_and_refuses_other_options():
    task = tasks.make("recorded/file-v0")
    with pytest.raises(ValidationError, match=r"needs the option\(s\) \['path'\]"):
        task.scenario()
    with pytest.raises(ValidationError, match=r"got option\(s\) \['frames'\]; expected \['path'\]"):
        tasks.make("recorded/file-v0", frames="x.h5")
    with pytest.raises(ValidationError, match=r"got option\(s\) \['path'\]; expected none"):
        tasks.make("teams/uniform-2-v0", path="x.h5")
    assert dict(tasks.make("recorded/file-v0", path="x.h5").bound) == {"path": "x.h5"}


def test_evaluation_seeds_that_reach_the_training_seeds_are_refused_before_anything_runs():
    with pytest.raises(ValidationError, match="expected evaluation seeds below 1099511627776"):
        tasks.evaluate("teams/uniform-2-v0", "random", episodes=10, seed=TRAIN_SEED_BASE - 5)
    with pytest.raises(ValidationError, match="Protocol.episodes: got 0"):
        Protocol(episodes=0)
    with pytest.raises(ValidationError, match="expected evaluation seeds below 100"):
        Protocol(episodes=10, eval_seed=95, train_seed_low=100)


def test_a_policy_that_cannot_act_in_the_task_is_refused_by_name_before_compiling():
    with pytest.raises(ValidationError, match="SurgeCast: the scenario has no sensors.Wind to tell upwind"):
        tasks.evaluate("following/gaussian-random-source-v0", "surge-cast", episodes=2)
    with pytest.raises(ValidationError, match="policy: got 'clever'; expected a policy object or one of"):
        tasks.evaluate("following/gaussian-random-source-v0", "clever", episodes=2)


def test_register_adds_a_users_task_and_refuses_a_taken_id():
    mine = Task(id="mine/tiny-gaussian-v0", scenario_factory=lambda: Scenario(grid_size=(8, 6)),
                protocol=Protocol(episodes=4, max_steps=10), card="A tiny static Gaussian search of my own. " * 6,
                references=("my notes",))
    try:
        assert tasks.register(mine) is mine
        assert "mine/tiny-gaussian-v0" in tasks.list() and gymnasium.spec("mine/tiny-gaussian-v0")
        clash = dataclasses.replace(mine, card="Another task under the same id, which must be refused. " * 4)
        with pytest.raises(ValidationError, match="the id 'mine/tiny-gaussian-v0' is taken"):
            tasks.register(clash)
    finally:  # the other tests see the package's tasks only
        registry._TASKS.pop(mine.id, None)
        gymnasium.registry.pop(mine.id, None)
    with pytest.raises(ValidationError, match="Task.card"):
        Task(id="mine/x-v0", scenario_factory=Scenario, protocol=Protocol(), card="")


def test_the_docs_page_lists_every_task_with_its_card_and_its_statistics_as_the_registry_writes_them():
    from pathlib import Path

    from plume_multi.tasks.cards import BEGIN, END, cards_markdown, statistics_blocks, task_slug

    docs = Path(__file__).resolve().parents[2] / "docs"
    page = (docs / "benchmark.md").read_text()
    section = page[page.index(BEGIN):page.index(END) + len(END)] + "\n"
    blocks = statistics_blocks(docs / "plume-statistics" / "tasks")
    assert section == cards_markdown(blocks), "regenerate it: python docs/task_statistics.py"
    for task_id in tasks.list():
        assert f"### `{task_id}`" in section and tasks.get(task_id).card in section
    # every task but the one on the user's file has its statistics, and the figures they show exist
    assert sorted(blocks) == sorted(t for t in tasks.list() if not tasks.get(t).options)
    for task_id, text in blocks.items():
        assert text.startswith("**Plume statistics**")
        for name in re.findall(r"\(plume-statistics/tasks/([^)]+\.png)\)", text):
            assert (docs / "plume-statistics" / "tasks" / name).read_bytes()[:4] == b"\x89PNG", (task_id, name)
    assert (docs / "plume-statistics" / "tasks" / f"{task_slug('puffs/sparse-v0')}.png").is_file()


def test_otto_step_caps_are_the_cases_stop_t():
    """The otto tasks' caps are written out (the registry builds no plume); they are the caps
    otto-benchmark's rules give each case's plume."""
    from plume_multi.scenarios import OTTO_BENCHMARK_CASES, otto_benchmark_max_steps, otto_benchmark_plume
    from plume_multi.tasks.families.otto import STOP_T

    assert list(STOP_T) == list(OTTO_BENCHMARK_CASES)
    for case in OTTO_BENCHMARK_CASES:
        assert STOP_T[case] == otto_benchmark_max_steps(otto_benchmark_plume(case)), case
        assert tasks.make(f"otto/{case}-v0").protocol.max_steps == STOP_T[case]
