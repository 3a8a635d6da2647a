"""Properties of the Simulator: bounds, determinism, independence, equivariance, input checks."""

import numba
import numpy as np
import pytest
from hypothesis import given, strategies as st

from plume_multi import Scenario, Simulator, StateError, ValidationError

from strategies import scenarios


def _actions(data, sim):
    return np.array(data.draw(st.lists(st.integers(0, sim.n_actions - 1), min_size=sim.total_agents,
                                       max_size=sim.total_agents)), np.int64)


@given(scenario=scenarios(), num_worlds=st.integers(1, 3), seed=st.integers(0, 2**31 - 1), data=st.data())
def test_agents_stay_in_bounds_and_field_in_unit_interval(scenario, num_worlds, seed, data):
    sim = Simulator(scenario, num_worlds)
    sim.reset(seed=seed)
    w, h = scenario.grid_size
    assert 0.0 <= sim.field.min() and sim.field.max() <= 1.0
    for _ in range(scenario.max_steps + 2):
        obs, *_ = sim.step(_actions(data, sim))
        assert (sim.positions[:, 0] >= 0).all() and (sim.positions[:, 0] < w).all()
        assert (sim.positions[:, 1] >= 0).all() and (sim.positions[:, 1] < h).all()
        assert ((obs[:, 0] >= 0) & (obs[:, 0] <= 1)).all()
        assert ((obs[:, 1:3] >= 0) & (obs[:, 1:3] <= 1)).all()


@given(scenario=scenarios(), seed=st.integers(0, 2**31 - 1), data=st.data())
def test_same_seed_and_actions_give_the_same_results(scenario, seed, data):
    a, b = Simulator(scenario, 3, autoreset="same_step"), Simulator(scenario, 3, autoreset="same_step")
    np.testing.assert_array_equal(a.reset(seed=seed), b.reset(seed=seed))
    for _ in range(2 * scenario.max_steps + 1):
        actions = _actions(data, a)
        for x, y in zip(a.step(actions), b.step(actions)):
            np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(a.final_obs, b.final_obs)


@given(scenario=scenarios(team=False, neighbours=False, fixed_starts=True), data=st.data())
def test_n_agents_in_one_call_equal_n_single_agent_worlds(scenario, data):
    many = Simulator(scenario, 1, autoreset="disabled")
    singles = [Simulator(scenario.replace(n_agents=1, start_positions=(p,)), 1, autoreset="disabled")
               for p in scenario.start_positions]
    many.reset(seed=0)
    for s in singles:
        s.reset(seed=0)
    for _ in range(scenario.max_steps + 2):
        actions = _actions(data, many)
        out = [x.copy() for x in many.step(actions)]
        for n, s in enumerate(singles):
            one = s.step(actions[n:n + 1])
            for x, y in zip(out, one):
                np.testing.assert_array_equal(x[n:n + 1], y)


@given(scenario=scenarios(team=None, neighbours=False, fixed_starts=True), data=st.data())
def test_permuting_agents_permutes_results(scenario, data):
    perm = np.array(data.draw(st.permutations(range(scenario.n_agents))))
    permuted = scenario.replace(start_positions=tuple(scenario.start_positions[p] for p in perm))
    a, b = Simulator(scenario, 1), Simulator(permuted, 1)
    a.reset(seed=0)
    b.reset(seed=0)
    for _ in range(scenario.max_steps + 2):
        actions = _actions(data, a)
        out_a = [x.copy() for x in a.step(actions)]
        out_b = b.step(actions[perm])
        for x, y in zip(out_a, out_b):
            np.testing.assert_array_equal(x[perm], y)


@given(scenario=scenarios(), seed=st.integers(0, 2**31 - 10), data=st.data())
def test_worlds_do_not_affect_each_other(scenario, seed, data):
    """World i of a batch seeded s runs exactly as a lone world seeded s + i, across autoresets."""
    B, N = 4, scenario.n_agents
    batch = Simulator(scenario, B, autoreset="next_step")
    alone = [Simulator(scenario, 1, autoreset="next_step") for _ in range(B)]
    obs = batch.reset(seed=seed)
    for i, s in enumerate(alone):
        np.testing.assert_array_equal(obs[i * N:(i + 1) * N], s.reset(seed=seed + i))
    for _ in range(2 * scenario.max_steps + 2):
        actions = _actions(data, batch)
        out = batch.step(actions)
        for i, s in enumerate(alone):
            one = s.step(actions[i * N:(i + 1) * N])
            for x, y in zip(out, one):
                np.testing.assert_array_equal(x[i * N:(i + 1) * N], y)


@given(seed=st.integers(0, 2**31 - 100), num_worlds=st.integers(1, 50))
def test_world_i_starts_where_a_single_world_seeded_s_plus_i_starts(seed, num_worlds):
    sc = Scenario(grid_size=(37, 23), n_agents=3)
    batch = Simulator(sc, num_worlds)
    batch.reset(seed=seed)
    i = num_worlds - 1
    single = Simulator(sc, 1)
    single.reset(seed=seed + i)
    np.testing.assert_array_equal(batch.positions[3 * i:3 * i + 3], single.positions)


def test_results_do_not_depend_on_the_thread_count():
    sc = Scenario(grid_size=(40, 30), n_agents=2, max_steps=25)
    rng = np.random.default_rng(1)
    actions = rng.integers(0, 4, size=(60, 2 * 64))
    results = []
    before = numba.get_num_threads()
    try:
        for threads in sorted({1, numba.config.NUMBA_NUM_THREADS}):
            numba.set_num_threads(threads)
            sim = Simulator(sc, 64, parallel=True)
            sim.reset(seed=5)
            results.append([np.concatenate([x.ravel().view(np.uint8) for x in sim.step(a)]).copy() for a in actions])
    finally:
        numba.set_num_threads(before)
    serial = Simulator(sc, 64, parallel=False)
    serial.reset(seed=5)
    results.append([np.concatenate([x.ravel().view(np.uint8) for x in serial.step(a)]).copy() for a in actions])
    for other in results[1:]:
        for x, y in zip(results[0], other):
            np.testing.assert_array_equal(x, y)


def test_reset_without_seed_continues_each_worlds_stream():
    sc = Scenario(grid_size=(50, 40), n_agents=2)
    a, b = Simulator(sc, 3), Simulator(sc, 3)
    a.reset(seed=9)
    b.reset(seed=9)
    first = a.positions.copy()
    np.testing.assert_array_equal(a.reset(), b.reset())  # deterministic given the seed
    assert not np.array_equal(first, a.positions)  # a new episode, not a replay
    c = Simulator(sc, 3)
    c.reset()  # never seeded: a base seed is drawn and reported
    assert isinstance(c.seed, int) and 0 <= c.seed < 2**31
    d = Simulator(sc, 3)
    d.reset(seed=c.seed)
    np.testing.assert_array_equal(c.positions, d.positions)


def test_masked_reset_leaves_other_worlds_untouched():
    sc = Scenario(grid_size=(30, 20), n_agents=2, max_steps=50)
    sim = Simulator(sc, 4, autoreset="disabled")
    sim.reset(seed=1)
    for a in np.random.default_rng(0).integers(0, 4, (7, 8)):
        sim.step(a)
    before = sim.snapshot()
    mask = np.array([False, True, False, True])
    sim.reset(mask=mask)
    rows = np.repeat(mask, 2)
    np.testing.assert_array_equal(sim.positions[~rows], before["pos"][~rows])
    np.testing.assert_array_equal(sim.world_steps, np.where(mask, 0, before["world_t"]))
    sim.reset(seed=100, mask=mask)  # seeded: world 1 gets seed 101, world 3 seed 103
    lone = Simulator(sc, 1)
    lone.reset(seed=103)
    np.testing.assert_array_equal(sim.positions[6:8], lone.positions)


def test_finished_agents_stay_put_and_earn_nothing():
    sc = Scenario(grid_size=(5, 1), source_location=(2, 0), n_agents=2, start_positions=((1, 0), (4, 0)))
    sim = Simulator(sc, 1, autoreset="disabled")
    sim.reset(seed=0)
    obs, reward, term, trunc = sim.step(np.array([1, 3]))  # agent 0 RIGHT onto the source
    assert reward.tolist() == [1.0, 0.0] and term.tolist() == [True, False]
    obs, reward, term, trunc = sim.step(np.array([3, 3]))
    assert sim.positions[0].tolist() == [2, 0] and reward.tolist() == [0.0, 1.0] and term.tolist() == [True, True]
    assert sim.episode_length.tolist() == [1, 2]


def test_team_arrival_ends_the_episode_for_all_and_shares_the_reward():
    sc = Scenario(grid_size=(9, 1), source_location=(4, 0), n_agents=3, team=True,
                  start_positions=((3, 0), (0, 0), (8, 0)))
    sim = Simulator(sc, 1, autoreset="disabled")
    sim.reset(seed=0)
    _, reward, term, _ = sim.step(np.array([1, 1, 3]))
    assert reward.tolist() == [1.0, 1.0, 1.0] and term.all() and bool(sim.state.world_done[0])


def test_neighbour_sensing_reports_the_nearest_others():
    sc = Scenario(grid_size=(11, 11), n_agents=3, n_neighbours=2, start_positions=((0, 0), (10, 0), (0, 5)))
    sim = Simulator(sc, 1)
    obs = sim.reset(seed=0)
    # agent 0: nearest is agent 2 (0, +5), then agent 1 (+10, 0); normalized by 10
    np.testing.assert_allclose(obs[0, 3:], [0.0, 0.5, 1.0, 0.0])


def test_shared_field_is_never_copied():
    sim = Simulator(Scenario(n_agents=4), 8)
    field = sim.field
    sim.reset(seed=0)
    for _ in range(3):
        sim.step(np.zeros(32, np.int64))
    assert sim.field is field and not field.flags.writeable and not sim.state.models  # one shared field, no per-world copy


def test_state_bytes_per_agent_stay_small():
    for autoreset in ("next_step", "same_step", "disabled"):
        sim = Simulator(Scenario(n_agents=1), 1024, autoreset=autoreset)
        # same_step also keeps each agent's final observation and length (16 bytes)
        limit = 68 if autoreset == "same_step" else 64
        assert sim.state.nbytes_per_agent() <= limit, (autoreset, sim.state.nbytes_per_agent())


# ----------------------------------------------------------------- bad input, nothing lost
BAD_ACTIONS = [
    (np.array([0.0, 1.0, 2.0, 3.0]), "dtype float64"),
    (np.array([0, 1, np.nan, 3]), "dtype float64"),
    (np.array([True, False, True, False]), "dtype bool"),
    (np.array([0, 1, 2]), "shape (3,)"),
    (np.array([[0, 1, 2, 3]]), "shape (1, 4)"),
    (np.array([0, 1, 4, 3]), "actions[2] = 4 is out of range"),
    (np.array([0, -1, 2, 3]), "actions[1] = -1 is out of range"),
    (np.array([0, 1, 2, 2**40], dtype=np.uint64), "actions[3]"),
    ([0, 1, 2, "3"], "dtype <U"),
    ("UP", "dtype <U2"),
]


@pytest.mark.parametrize("actions,message", BAD_ACTIONS)
def test_bad_actions_raise_and_change_nothing(actions, message):
    sim = Simulator(Scenario(n_agents=2, grid_size=(9, 7)), 2)
    sim.reset(seed=3)
    sim.step(np.array([0, 1, 2, 3]))
    before = sim.snapshot()
    with pytest.raises(ValidationError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[").replace("]", r"\]")):
        sim.step(actions)
    after = sim.snapshot()
    for key in before:
        np.testing.assert_array_equal(before[key], after[key])


def test_actions_accept_lists_and_two_dimensional_arrays():
    a, b = Simulator(Scenario(n_agents=2), 2), Simulator(Scenario(n_agents=2), 2)
    a.reset(seed=1)
    b.reset(seed=1)
    out_a = [x.copy() for x in a.step([[0, 1], [2, 3]])]
    out_b = b.step(np.array([0, 1, 2, 3], dtype=np.int32))
    for x, y in zip(out_a, out_b):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("seed", [-1, 2**63, 1.5, "1", True, np.float64(3)])
def test_bad_seeds_raise(seed):
    sim = Simulator(Scenario(), 2)
    with pytest.raises(ValidationError, match="seed"):
        sim.reset(seed=seed)


def test_step_before_reset_raises_state_error():
    with pytest.raises(StateError, match="before reset"):
        Simulator().step(np.zeros(1, np.int64))


@pytest.mark.parametrize("kwargs,message", [
    ({"num_worlds": 0}, "num_worlds"),
    ({"autoreset": "sometimes"}, "autoreset"),
    ({"parallel": "yes"}, "parallel"),
    ({"field": np.ones((3, 3), np.float32)}, "field"),
    ({"field": np.full((128, 128), 2.0)}, "field"),
])
def test_bad_simulator_arguments_raise(kwargs, message):
    with pytest.raises(ValidationError, match=message):
        Simulator(Scenario(), **kwargs)


def test_custom_field_is_used():
    field = np.zeros((4, 6), np.float32)
    field[1, 2] = 0.5
    sim = Simulator(Scenario(grid_size=(6, 4), start_positions=((2, 1),)), 1, field=field)
    assert sim.reset(seed=0)[0, 0] == 0.5
