"""WorldState: snapshot / restore / validate (the passive container)."""

import json

import numpy as np
import pytest

from plume_multi import Scenario, Simulator, ValidationError


def _run(sim, steps, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        sim.step(rng.integers(0, sim.n_actions, sim.total_agents))


@pytest.mark.parametrize("autoreset", ["next_step", "same_step", "disabled"])
def test_snapshot_restore_continues_bit_for_bit(autoreset, tmp_path):
    sc = Scenario(grid_size=(21, 13), n_agents=5, n_neighbours=2, max_steps=17)
    a = Simulator(sc, 6, autoreset=autoreset)
    a.reset(seed=11)
    _run(a, 23)
    snap = a.snapshot()
    np.savez(tmp_path / "snap.npz", **snap)
    b = Simulator(sc, 6, autoreset=autoreset)
    b.restore(dict(np.load(tmp_path / "snap.npz")))
    rng = np.random.default_rng(5)
    for _ in range(40):
        actions = rng.integers(0, 4, a.total_agents)
        for x, y in zip(a.step(actions), b.step(actions)):
            np.testing.assert_array_equal(x, y)
    assert a.seed == b.seed == 11


def test_snapshot_metadata_is_json_able():
    sim = Simulator(Scenario(), 2)
    sim.reset(seed=1)
    meta = {k: v for k, v in sim.snapshot().items() if not isinstance(v, np.ndarray)}
    assert json.loads(json.dumps(meta))["num_worlds"] == 2


def test_restore_refuses_a_different_simulator_and_changes_nothing():
    a = Simulator(Scenario(n_agents=2), 3)
    a.reset(seed=1)
    snap = a.snapshot()
    b = Simulator(Scenario(n_agents=2, sigma=5.0), 3)
    b.reset(seed=2)
    before = b.snapshot()
    with pytest.raises(ValidationError, match="scenario"):
        b.restore(snap)
    c = Simulator(Scenario(n_agents=2), 4)
    with pytest.raises(ValidationError):
        c.restore(snap)
    broken = dict(snap, pos=snap["pos"][:, :1])
    with pytest.raises(ValidationError, match="pos"):
        a.restore(broken)
    for key, value in before.items():
        np.testing.assert_array_equal(value, b.snapshot()[key])


CORRUPTIONS = {
    "position outside the grid": (lambda s: s.pos.__setitem__((0, 0), 99), "pos"),
    "negative step count": (lambda s: s.world_t.__setitem__(0, -3), "world_t"),
    "NaN observation": (lambda s: s.obs.__setitem__((0, 0), np.nan), "obs"),
    "agent older than its world": (lambda s: s.ep_length.__setitem__(0, 1000), "ep_length"),
    "done flag inconsistent": (lambda s: s.world_done.__setitem__(1, True), "world_done"),
    "wrong dtype": (lambda s: setattr(s, "reward", s.reward.astype(np.float64)), "reward"),
}


@pytest.mark.parametrize("name", CORRUPTIONS)
def test_validate_reports_corrupted_state(name):
    corrupt, field = CORRUPTIONS[name]
    sim = Simulator(Scenario(grid_size=(20, 10), n_agents=2, max_steps=50), 3)
    sim.reset(seed=0)
    _run(sim, 5)
    assert sim.validate() == []
    corrupt(sim.state)
    problems = sim.validate()
    assert problems and any(p.startswith(field) for p in problems), problems


def test_a_given_field_is_copied_and_read_only():
    base = np.full((8, 8), 0.5)
    view = base[:, :]
    sim = Simulator(Scenario(grid_size=(8, 8)), 1, field=view)
    sim.reset(seed=0)
    base[:] = 0.9  # the caller's array and its base stay the caller's
    assert (sim.field == np.float32(0.5)).all() and not sim.field.flags.writeable
    with pytest.raises(ValueError):
        sim.field[0, 0] = 1.0
