"""plumes.Puffs inside the engine: what the agents sense is what the standalone model computes."""

import math

import numba
import numpy as np
import pytest

from plume_multi import Scenario, Simulator, ValidationError
from plume_multi.models.plumes import PuffPlume, Puffs, Wind

GRID = (100, 50)  # cells of 0.5 over pompy's default region


def _scenario(**plume_kwargs):
    plume = Puffs(source=(20, 25), puff_release_rate=40.0, spin_up_steps=300, **plume_kwargs)
    return Scenario(grid_size=GRID, plume=plume, n_agents=6, max_steps=10_000, start_region=((22, 15), (60, 35)))


def _run(sim, steps, seed=3):
    obs = [sim.reset(seed=seed).copy()]
    rng = np.random.default_rng(0)
    for _ in range(steps):
        obs.append(sim.step(rng.integers(0, 4, sim.total_agents))[0].copy())
    return np.array(obs)


def test_agents_sense_the_standalone_plume_at_their_cells():
    """Observation column 0 equals ``PuffPlume`` (same seeds, same steps) read at the agents'
    cells, step after step: the engine advances each world once per step and samples after."""
    sc = _scenario()
    sim = Simulator(sc, num_worlds=3, parallel=False)
    ref = PuffPlume(sc.plume, GRID, num_worlds=3)
    obs = sim.reset(seed=7)
    ref.reset(seed=7)
    rng = np.random.default_rng(1)
    seen = 0.0
    for step in range(120):
        cells = sim.state.pos.reshape(3, 6, 2).astype(np.float64)
        conc, _ = ref.sample(cells)
        np.testing.assert_array_equal(obs[:, 0], conc.astype(np.float32).ravel(), err_msg=f"step {step}")
        seen += conc.sum()
        obs, *_ = sim.step(rng.integers(0, 4, sim.total_agents))
        ref.step()
    assert seen > 0  # the agents were in the plume


def test_a_team_moves_senses_and_ends_at_the_first_arrival_as_the_reference():
    """The same compiled step with ``team=True`` (a run-time flag), one agent next to the source:
    cells move by the body's table (clamped), column 0 is the standalone plume at the cells, and
    the first arrival stops every agent of the world with the goal's reward, step by step."""
    starts = ((21, 25), (40, 30), (50, 20), (30, 35), (60, 15), (45, 25))
    sc = _scenario().replace(team=True, start_region=None, start_positions=starts)
    sim = Simulator(sc, num_worlds=1, autoreset="disabled", parallel=False)
    ref = PuffPlume(sc.plume, GRID, num_worlds=1)
    obs = sim.reset(seed=4)
    ref.reset(seed=4)
    pos = [list(c) for c in starts]
    moves, (w, h), (sx, sy) = sc.moves(), GRID, sc.source_location
    rng = np.random.default_rng(2)
    for step in range(1, 200):
        actions = rng.integers(0, 4, 6)
        obs, reward, terminated, _ = sim.step(actions)
        ref.step()
        arrived = False
        for n, a in enumerate(actions):
            pos[n] = [min(max(pos[n][0] + moves[a][0], 0), w - 1), min(max(pos[n][1] + moves[a][1], 0), h - 1)]
            arrived = arrived or math.sqrt((pos[n][0] - sx) ** 2 + (pos[n][1] - sy) ** 2) <= sc.goal_radius
        np.testing.assert_array_equal(sim.positions, pos, err_msg=f"step {step}")
        conc, _ = ref.sample(np.array(pos, np.float64).reshape(1, 6, 2))
        np.testing.assert_array_equal(obs[:, 0], conc.astype(np.float32).ravel(), err_msg=f"step {step}")
        assert reward.tolist() == [1.0 if arrived else 0.0] * 6 and terminated.tolist() == [arrived] * 6, step
        if arrived:
            break
    assert arrived and not sim.active.any()


def test_parallel_engine_equals_serial_whatever_the_thread_count():
    sc = _scenario()
    serial = _run(Simulator(sc, num_worlds=5, parallel=False), 80)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = _run(Simulator(sc, num_worlds=5, parallel=True), 80)
    finally:
        numba.set_num_threads(before)
    many = _run(Simulator(sc, num_worlds=5, parallel=True), 80)
    np.testing.assert_array_equal(serial, one)
    np.testing.assert_array_equal(serial, many)


def test_world_i_of_seed_s_is_world_0_of_seed_s_plus_i():
    sc = _scenario()
    batch = Simulator(sc, num_worlds=3)
    single = Simulator(sc, num_worlds=1)
    batch.reset(seed=10)
    single.reset(seed=12)
    for _ in range(40):
        batch.step(np.zeros(18, dtype=np.int64))
        single.step(np.zeros(6, dtype=np.int64))
    np.testing.assert_array_equal(batch.plume_image(2), single.plume_image(0))
    assert not np.array_equal(batch.plume_image(0), batch.plume_image(1))


def test_snapshot_restore_continues_bit_for_bit_and_validate_is_clean():
    sim = Simulator(_scenario(wind=Wind(interpolation="spline")), num_worlds=2)
    _run(sim, 30)
    assert sim.validate() == []
    snap = sim.snapshot()
    actions = np.ones(12, dtype=np.int64)
    first = [sim.step(actions)[0].copy() for _ in range(20)]
    sim.restore(snap)
    again = [sim.step(actions)[0].copy() for _ in range(20)]
    np.testing.assert_array_equal(np.array(first), np.array(again))


def test_plume_image_and_sources():
    sim = Simulator(_scenario(), num_worlds=2)
    sim.reset(seed=0)
    img = sim.plume_image(1)
    assert img.shape == (50, 100) and img.dtype == np.float32 and img.max() > 0
    ref = PuffPlume(sim.scenario.plume, GRID, num_worlds=2)
    ref.reset(seed=0)
    np.testing.assert_array_equal(img, ref.field_image(1).astype(np.float32))
    np.testing.assert_array_equal(sim.sources, [[20.0, 25.0], [20.0, 25.0]])


def test_an_agent_at_the_source_finds_it():
    plume = Puffs(source=(20, 25), spin_up_steps=10)
    # two agents (the several-agent driver the other tests compile; one agent would compile its own)
    sc = Scenario(grid_size=GRID, plume=plume, n_agents=2, start_positions=((19, 25), (40, 30)), max_steps=50)
    sim = Simulator(sc)
    sim.reset(seed=0)
    _, reward, terminated, _ = sim.step(np.array([1, 0]))  # RIGHT, onto the source; the other, far off, UP
    assert terminated[0] and reward[0] == 1.0
    assert not terminated[1] and reward[1] == 0.0


def test_engine_interface_functions_match_the_standalone_sampling():
    sc = _scenario()
    sim = Simulator(sc, num_worlds=2)
    sim.reset(seed=0)
    P = sim._params["plume"]
    S = sim._model_state(sim.state, "plume")
    ref = PuffPlume(sc.plume, GRID, num_worlds=2)
    ref.reset(seed=0)
    cells = np.array([[30.25, 24.5], [45.0, 26.0], [0.0, 0.0]])
    conc, wind = ref.sample(cells)
    K = Puffs.kernels  # the compiled functions the step driver calls
    for m, (x, y) in enumerate(cells):
        assert K.sample_at(P, S, 1, (x, y)) == np.float32(conc[1, m])
        np.testing.assert_array_equal(K.wind_at(P, S, 1, (x, y)), wind[1, m])
    assert K.sample_cell(P, S, 1, (30, 24)) == np.float32(ref.sample(np.array([[30.0, 24.0]]))[0][1, 0])
    assert K.sample_at(P, S, 1, (-0.5, 3.0)) == 0.0 and K.sample_at(P, S, 1, (3.0, 49.5)) == 0.0  # off the grid


def test_scenario_checks_that_the_grid_fits_the_region():
    with pytest.raises(ValidationError, match="cell_size"):
        Scenario(grid_size=(120, 50), plume=Puffs(source=(10, 10), cell_size=0.5))
    with pytest.raises(ValidationError, match="Puffs.source"):
        Scenario(grid_size=(100, 50), plume=Puffs(source=(10, 60)))
    sc = Scenario(grid_size=(100, 40), plume=Puffs(source=(10, 20)))
    assert sc.plume.cell_size == 0.5 and sc.source_location == (10, 20)
