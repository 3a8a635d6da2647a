"""The built-in policy "perseus" (policies.perseus_named): one solve per process and per budget, the
disk cache (hit, key, corrupt file), refusals up front, the vectors completed for every move, and a
task scored by name. Tiny budgets on the 9x9 Poisson search that test_perseus.py compiles."""

from __future__ import annotations

import numpy as np
import pytest

from plume_multi import tasks
from plume_multi.errors import ValidationError
from plume_multi.policies import Perseus
from plume_multi.policies import perseus_named as pn
from plume_multi.policies.named import NAMED
from plume_multi.scenarios import poisson_search

TINY = {"beliefs": 30, "iterations": 4, "seed": 0}


@pytest.fixture
def counted(monkeypatch, tmp_path):
    """A tiny budget, an empty memo, a cache folder of its own, and the solves counted."""
    monkeypatch.setattr(pn, "BUDGET", dict(TINY))
    monkeypatch.setattr(pn, "_solved", {})
    monkeypatch.setattr(pn.jit, "CACHE_DIR", tmp_path)
    calls = []
    solve = Perseus.solve.__func__

    def counting(cls, scenario, **kwargs):
        calls.append(kwargs)
        return solve(cls, scenario, **kwargs)

    monkeypatch.setattr(Perseus, "solve", classmethod(counting))
    return calls


def _scenario():
    return poisson_search(1.0, 1.0, grid_size=9, max_steps=60)


def test_the_named_policy_solves_once_per_process_whatever_the_chunk(counted):
    sc = _scenario()
    first = NAMED["perseus"](sc, 0)
    assert len(counted) == 1 and counted[0]["iterations"] == TINY["iterations"] and counted[0]["seed"] == 0
    # another chunk's seed, the scenario as evaluate hands it (with the policy's Belief), a team of it
    again = NAMED["perseus"](NAMED["perseus"].scenario_for(sc), 7)
    team = NAMED["perseus"](poisson_search(1.0, 1.0, grid_size=9, max_steps=60, n_agents=2, team=True), 3)
    assert len(counted) == 1
    assert again.alphas.tobytes() == first.alphas.tobytes() == team.alphas.tobytes()
    assert again is not first and again._table is first._table  # copies that share the vectors


def test_the_disk_cache_is_read_back_keyed_on_the_budget_and_a_corrupt_file_is_solved_again(counted, monkeypatch):
    sc = _scenario()
    first = pn.solved(sc)
    path = pn.cache_path(pn.cache_key(pn.one_searcher(sc), TINY))
    assert path.is_file() and len(counted) == 1
    monkeypatch.setattr(pn, "_solved", {})  # a new process
    hit = pn.solved(sc)
    assert len(counted) == 1 and hit.alphas.tobytes() == first.alphas.tobytes()
    assert hit.actions.tolist() == first.actions.tolist()
    for change in ({"seed": 1}, {"iterations": 3}, {"beliefs": 20}):  # another budget: another key, solved
        budget = {**TINY, **change}
        monkeypatch.setattr(pn, "BUDGET", budget)
        assert pn.cache_key(pn.one_searcher(sc), budget) != pn.cache_key(pn.one_searcher(sc), TINY)
        pn.solved(sc)
    assert len(counted) == 4
    monkeypatch.setattr(pn, "BUDGET", dict(TINY))
    monkeypatch.setattr(pn, "_solved", {})
    path.write_bytes(path.read_bytes()[:200])  # truncated
    with pytest.warns(RuntimeWarning, match="cannot be used .*solving again"):
        again = pn.solved(sc)
    assert len(counted) == 5 and again.alphas.tobytes() == first.alphas.tobytes()  # the same solve, bit for bit
    assert Perseus.load(path).alphas.tobytes() == first.alphas.tobytes()  # written anew


def test_a_task_it_cannot_act_in_is_refused_before_anything_is_solved(counted):
    walls = tasks.get("walls/gaussian-baffles-v0").scenario()
    with pytest.raises(ValidationError, match="walls"):
        NAMED["perseus"](walls, 0)
    with pytest.raises(ValidationError, match="walls"):
        tasks.evaluate("walls/gaussian-baffles-v0", "perseus", episodes=2)
    with pytest.raises(ValidationError, match="goal_radius"):
        NAMED["perseus"](tasks.get("puffs/constant-v0").scenario(), 0)
    assert counted == []


def test_every_move_gets_a_vector_and_the_others_decide_as_before():
    from plume_multi.policies.perseus_solve import every_move

    sc = _scenario()
    full = Perseus.solve(sc, beliefs=30, iterations=4, seed=0)
    assert sorted(set(full.actions.tolist())) == list(range(len(full.moves)))  # solve completes its set
    keep = full.actions == full.actions[0]  # the vectors of one move only
    part = Perseus(full.alphas[keep], full.actions[keep], full.scenario, discount=full.discount)
    move = part.moves[full.actions[0]]
    corner = np.array([[8 if move[0] > 0 else 0, 8 if move[1] > 0 else 0]])  # that move leaves the grid there
    belief = np.full((1, 9, 9), 1.0 / 80)
    belief[0, corner[0, 1], corner[0, 0]] = 0.0
    with pytest.raises(ValidationError, match="has no alpha vector whose move stays inside the grid"):
        part.decide(belief, corner)
    done = every_move(part)
    assert done.n_alphas == part.n_alphas + 3 and sorted(done.actions.tolist()[-3:]) == sorted(
        set(range(4)) - {int(full.actions[0])})
    assert done.decide(belief, corner)[0] != full.actions[0]
    inner = np.array([[4, 4]])
    belief[0] = 1.0 / 80
    belief[0, 4, 4] = 0.0
    assert done.decide(belief, inner).tolist() == part.decide(belief, inner).tolist()
    assert every_move(done) is done


@pytest.mark.parametrize("progress", [False, True])
def test_a_task_is_scored_by_name(counted, progress, capsys):
    got = tasks.evaluate("otto/isotropic-19x19-v0", "perseus", episodes=3, max_steps=40, progress=progress)
    assert got.policy == "perseus" and got.summary()["episodes"] == 3 and len(counted) == 1
    # the solve's bar follows evaluate's (plume-multi benchmark run --quiet passes progress=False)
    assert counted[0]["progress"] is progress
    assert ("Perseus" in capsys.readouterr().err) is progress
    assert "perseus" in tasks.get("otto/isotropic-19x19-v0").baselines
    assert "perseus" not in tasks.get("walls/gaussian-baffles-v0").baselines
