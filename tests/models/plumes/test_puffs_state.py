"""The puff plume's state arrays have declared ranges: ``validate()`` checks them, ``restore``
refuses what it refuses, ``model_state`` cannot write them (issue 21, items 2 and 3, and its "done
when" for the model arrays). The scenario's combination is tests/models/plumes/test_puffs_engine.py's."""

import numpy as np
import pytest

from plume_multi import Scenario, Simulator, ValidationError
from plume_multi.models.plumes import Puffs

import corruptions

GRID = (100, 50)


def _scenario():
    plume = Puffs(source=(20, 25), puff_release_rate=40.0, spin_up_steps=30, max_num_puffs=200)
    return Scenario(grid_size=GRID, plume=plume, n_agents=6, max_steps=10_000, start_region=((22, 15), (60, 35)))


@pytest.fixture(scope="module")
def sim():
    sim = Simulator(_scenario(), num_worlds=3, parallel=False)
    sim.reset(seed=7)
    rng = np.random.default_rng(0)
    for _ in range(20):
        sim.step(rng.integers(0, 4, sim.total_agents))
    assert sim.validate() == []
    return sim


def test_puffs_restored_beyond_capacity_are_refused_and_nothing_changes(sim):
    """Item 2: ``n_live = 10**6`` (more live puffs than slots) was accepted, then ``step`` aborted."""
    snap = sim.snapshot()
    bad = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in snap.items()}
    bad["model:plume.n_live"][:] = 10**6
    with pytest.raises(ValidationError, match=r"plume\.n_live \(Puffs\.n_live\): 3 rows above 200"):
        sim.restore(bad)
    np.testing.assert_array_equal(sim.model_state("plume.n_live"), snap["model:plume.n_live"])
    bad["model:plume.n_live"][:] = snap["model:plume.n_live"] + 1  # within capacity, but one bin short
    with pytest.raises(ValidationError, match=r"plume\.bin_start \(Puffs\.bin_start\): .* do not end at n_live"):
        sim.restore(bad)
    sim.step(np.zeros(sim.total_agents, np.int64))
    assert sim.validate() == []


def test_model_state_is_read_only_and_validate_reports_corrupt_bins_without_reading_them(sim):
    """Item 3: ``model_state("plume.bin_dims")[:] = 10**6`` then ``validate()`` crashed (SIGSEGV)."""
    with pytest.raises(ValueError, match="read-only"):
        sim.model_state("plume.bin_dims")[:] = 10**6
    snap = sim.snapshot()
    try:
        sim.state.models["plume.bin_dims"][:] = 10**6  # behind the public interface's back
        problems = sim.validate()
        assert any(p.startswith("plume.bin_dims (Puffs.bin_dims): 3 rows above 32") for p in problems), problems
    finally:
        sim.restore(snap)


def test_every_array_of_the_puff_state_through_corruptions(sim, tmp_path):
    """Each corruption of each array of a puff snapshot is refused naming ``Puffs.<array>`` (or the
    core array it contradicts), or accepted and stepped on with finite observations."""
    results = corruptions.run_in_subprocess(_scenario(), tmp_path, num_worlds=3, steps=20)
    model_keys = {r["key"] for r in results if r["key"].startswith("model:")}
    assert len(model_keys) == 21  # every array of the puff state: scratch, sources, wind regime and walls included
    for r in results:
        if r["outcome"] == "refused":
            if r["key"].startswith("model:plume."):
                assert f"(Puffs.{r['key'].removeprefix('model:plume.')})" in r["message"], r
            else:
                assert corruptions.names_a_field(r), r
        else:
            assert r["finite"] and r["problems"] == [], r
    refused = {(r["key"], r["corruption"]) for r in results if r["outcome"] == "refused"}
    assert ("model:plume.n_live", "first = 1000000") in refused
    assert ("model:plume.bin_dims", "first = 1000000") in refused
    assert ("model:plume.wind", "first = 1e+30") in refused  # a wind no meander reaches
    assert ("model:plume.clock", f"first = {2**63 - 1}") in refused  # it would wrap at the next step
    accepted = {(r["key"], r["corruption"]) for r in results if r["outcome"] == "accepted"}
    assert ("model:plume.key", "garbage") in accepted  # any 64-bit stream key is a valid one


def test_a_turn_the_regime_never_makes_is_refused(sim):
    """A constant wind's kernels do not read the regime's turn (physics.py's flags): a snapshot
    with a turn, or a switch due, is refused rather than stepped on as if the wind were straight."""
    snap = sim.snapshot()
    for key, value, message in (("model:plume.turn", (30.0, 0.866, 0.5), r"plume\.turn \(Puffs\.turn\): 3 worlds with a turn"),
                                ("model:plume.next_switch", 5, r"plume\.next_switch \(Puffs\.next_switch\): 3 worlds")):
        bad = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in snap.items()}
        bad[key][:] = value
        with pytest.raises(ValidationError, match=message):
            sim.restore(bad)
    np.testing.assert_array_equal(sim.model_state("plume.turn"), snap["model:plume.turn"])
    assert sim.validate() == []
