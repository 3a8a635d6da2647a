"""The kernels against the plain reference in tests/simulator_reference.py, over random scenarios."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from plume_multi import Scenario, Simulator
from plume_multi.models.plumes.gaussian import gaussian_field
from plume_multi.engine.rng import counter_starts, pcg64_starts

from simulator_reference import NaiveWorld, counter_starts as naive_counter_starts, gaussian, numpy_starts
from strategies import scenarios


def test_seed_42_starts_at_11_99():
    sim = Simulator(Scenario())
    sim.reset(seed=42)
    assert tuple(sim.positions[0]) == (11, 99)


@given(seed=st.integers(0, 2**63 - 1), n=st.integers(1, 8), w=st.integers(1, 2048), h=st.integers(1, 2048))
def test_pcg64_starts_equal_numpy_default_rng(seed, n, w, h):
    out = np.zeros((n, 2), np.int32)
    pcg64_starts(seed, n, w, h, out, 0)
    assert [tuple(map(int, row)) for row in out] == numpy_starts(seed, n, w, h)


@given(seed=st.integers(0, 2**62), episode=st.integers(1, 1000), n=st.integers(1, 8),
       w=st.integers(1, 2048), h=st.integers(1, 2048))
def test_counter_starts_equal_reference(seed, episode, n, w, h):
    out = np.zeros((n, 2), np.int32)
    counter_starts(seed, episode, n, w, h, out, 0)
    assert [tuple(map(int, row)) for row in out] == naive_counter_starts(seed, episode, n, w, h)


def test_counter_starts_are_uniform_enough():
    # 20000 draws over a 5x3 grid: every cell about 1/15 of the time
    out = np.zeros((20000, 2), np.int32)
    counter_starts(7, 3, 20000, 5, 3, out, 0)
    counts = np.zeros((3, 5))
    np.add.at(counts, (out[:, 1], out[:, 0]), 1)
    assert counts.min() > 20000 / 15 * 0.85 and counts.max() < 20000 / 15 * 1.15


@given(w=st.integers(1, 30), h=st.integers(1, 30), sigma=st.floats(0.1, 100))
def test_gaussian_field_matches_reference(w, h, sigma):
    src = (w // 3, h // 2)
    f = gaussian_field((w, h), src, sigma)
    assert f.dtype == np.float32 and f.shape == (h, w) and f.flags.c_contiguous
    np.testing.assert_array_equal(f, gaussian((w, h), src, sigma))
    assert f[src[1], src[0]] == 1.0 and f.min() >= 0.0 and f.max() <= 1.0


def _run_against_naive(scenario, num_worlds, autoreset, seed, steps, data):
    sim = Simulator(scenario, num_worlds, autoreset=autoreset)
    worlds = [NaiveWorld(scenario, sim.field, autoreset) for _ in range(num_worlds)]
    obs = sim.reset(seed=seed)
    for b, world in enumerate(worlds):
        world.reset(seed + b)
    N = scenario.n_agents

    def compare(where):
        for b, world in enumerate(worlds):
            rows = slice(b * N, (b + 1) * N)
            np.testing.assert_array_equal(sim.positions[rows], np.array(world.pos, np.int32), err_msg=where)
            np.testing.assert_array_equal(sim.state.obs[rows], world.obs, err_msg=where)
            np.testing.assert_array_equal(sim.state.reward[rows], np.array(world.reward, np.float32), err_msg=where)
            np.testing.assert_array_equal(sim.state.terminated[rows], world.terminated, err_msg=where)
            np.testing.assert_array_equal(sim.state.truncated[rows], world.truncated, err_msg=where)
            np.testing.assert_array_equal(sim.active[rows], world.active, err_msg=where)
            np.testing.assert_array_equal(sim.episode_length[rows], world.length, err_msg=where)
            assert sim.world_steps[b] == world.t and sim.state.world_done[b] == world.done, where
            if autoreset == "same_step":
                assert sim.final_mask[b] == (world.final is not None), where
                if world.final is not None:
                    np.testing.assert_array_equal(sim.final_obs[rows], world.final[0], err_msg=where)
                    np.testing.assert_array_equal(sim.final_length[rows], world.final[1], err_msg=where)

    compare("after reset")
    for t in range(steps):
        actions = np.array(data.draw(st.lists(st.integers(0, scenario.n_actions - 1),
                                              min_size=sim.total_agents, max_size=sim.total_agents)), np.int64)
        sim.step(actions)
        for b, world in enumerate(worlds):
            world.step(actions[b * N:(b + 1) * N])
        compare(f"after step {t + 1}")
        assert sim.validate() == []


@pytest.mark.parametrize("autoreset", ["disabled", "next_step", "same_step"])
@given(scenario=scenarios(), num_worlds=st.integers(1, 4), seed=st.integers(0, 2**31 - 1), data=st.data())
def test_step_matches_reference(autoreset, scenario, num_worlds, seed, data):
    _run_against_naive(scenario, num_worlds, autoreset, seed, steps=2 * scenario.max_steps + 3, data=data)


# One table body: Cardinal and Moore run the same compiled functions (models/bodies/table.py) with
# another moves table, but each compiles a threaded step of its own. The draws still cover one
# agent per world, several, and the neighbour sensor's per-world pass.
@given(scenario=scenarios(max_agents=4, action_models=("cardinal",)), seed=st.integers(0, 2**31 - 1), data=st.data())
def test_parallel_kernel_equals_serial(scenario, seed, data):
    a = Simulator(scenario, 9, autoreset="next_step", parallel=False)
    b = Simulator(scenario, 9, autoreset="next_step", parallel=True)
    a.reset(seed=seed)
    b.reset(seed=seed)
    for _ in range(2 * scenario.max_steps + 2):
        actions = np.array(data.draw(st.lists(st.integers(0, scenario.n_actions - 1),
                                              min_size=a.total_agents, max_size=a.total_agents)), np.int64)
        out_a, out_b = a.step(actions), b.step(actions)
        for x, y in zip(out_a, out_b):
            np.testing.assert_array_equal(x, y)
    for key, value in a.snapshot().items():
        np.testing.assert_array_equal(value, b.snapshot()[key])


@given(data=st.data())
def test_neighbour_sensing_is_exact_on_the_largest_grid(data):
    """Squared distances up to 2 * 2047**2 pass through float32 slots while neighbours are
    selected; they must stay exact, so the choice matches the reference's integer sort."""
    n = data.draw(st.integers(2, 40))
    corner = st.sampled_from([0, 1, 2046, 2047])
    starts = tuple((data.draw(corner | st.integers(0, 2047)), data.draw(corner | st.integers(0, 2047)))
                   for _ in range(n))
    sc = Scenario(grid_size=(2048, 2048), n_agents=n, n_neighbours=data.draw(st.integers(1, n - 1)),
                  start_positions=starts)
    sim = Simulator(sc, 1)
    world = NaiveWorld(sc, sim.field, "next_step")
    world.reset(0)
    np.testing.assert_array_equal(sim.reset(seed=0), world.obs)
