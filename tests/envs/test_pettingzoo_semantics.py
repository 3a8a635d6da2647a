"""What the PettingZoo env means: full-episode determinism, equality with the Simulator it wraps,
start cells, observation contents (non-square grids, neighbours), team and individual rewards,
termination and truncation, fresh memory, global state and rendering."""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg")  # the human-mode test opens a window: never a real display in tests

import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence

from plume_multi import Scenario, Simulator, StateError, ValidationError
from plume_multi.envs import pettingzoo as pz
from plume_multi.viz.render import render_frame

# Non-square, off-centre source, agents finish during an episode.
EPISODE_CFG = dict(n_agents=12, grid_size=(36, 20), source_location=(25, 6), goal_radius=3.0,
                   max_cycles=150, n_neighbours=2)


def random_actions(e, rng):
    n_actions = e.action_space(e.possible_agents[0]).n
    return dict(zip(e.agents, rng.integers(0, n_actions, len(e.agents)).tolist()))


def play_episode(e, seed, action_seed):
    """Every return of one whole episode (reset, each step, then the final state) as a list."""
    rng = np.random.default_rng(action_seed)
    trace = [e.reset(seed=seed), e.state()]
    while e.agents:
        trace.append(e.step(random_actions(e, rng)))
        trace.append(e.state())
    return trace


# ---------------------------------------------------------------------------- determinism
def test_full_episode_is_deterministic():
    first = play_episode(pz.parallel_env(**EPISODE_CFG), seed=5, action_seed=1)
    second = play_episode(pz.parallel_env(**EPISODE_CFG), seed=5, action_seed=1)
    assert data_equivalence(first, second)
    # it was a real episode: agents left at different times, the rest were truncated at the end
    steps = [t for t in first if isinstance(t, tuple) and len(t) == 5]
    assert len(steps) == EPISODE_CFG["max_cycles"]
    assert any(any(step[2].values()) and not any(step[3].values()) for step in steps)
    assert all(steps[-1][3].values())
    # the same env replays the episode after a reseed; another seed gives another episode
    e = pz.parallel_env(**EPISODE_CFG)
    play_episode(e, seed=9, action_seed=2)
    assert data_equivalence(play_episode(e, seed=5, action_seed=1), first)
    assert not data_equivalence(play_episode(e, seed=6, action_seed=1), first)


def test_unseeded_resets_continue_the_seeded_stream():
    a, b = pz.parallel_env(n_agents=3), pz.parallel_env(n_agents=3)
    first_a, _ = a.reset(seed=3)
    b.reset(seed=3)
    next_a, _ = a.reset()
    next_b, _ = b.reset()
    assert data_equivalence(next_a, next_b)
    assert not data_equivalence(next_a, first_a)


def test_env_is_the_simulator_seen_through_dicts():
    """Step for step, the dicts hold the Simulator's rows for the agents live before the step;
    an agent leaves `agents` exactly when the Simulator terminates or truncates it."""
    e = pz.parallel_env(**EPISODE_CFG)
    sim = Simulator(Scenario(grid_size=(36, 20), source_location=(25, 6), goal_radius=3.0, n_agents=12,
                             max_steps=150, n_neighbours=2), autoreset="disabled")
    obs, _ = e.reset(seed=21)
    sim_obs = sim.reset(seed=21)
    np.testing.assert_array_equal(np.stack([obs[a] for a in e.possible_agents]), sim_obs)
    rng = np.random.default_rng(4)
    while e.agents:
        live = [e.agent_name_mapping[a] for a in e.agents]
        actions = np.zeros(12, np.int64)  # finished agents' slots: ignored by the Simulator
        actions[live] = rng.integers(0, 4, len(live))
        before = list(e.agents)
        obs, rew, term, trunc, infos = e.step(dict(zip(before, actions[live].tolist())))
        s_obs, s_rew, s_term, s_trunc = sim.step(actions)
        assert list(obs) == list(rew) == list(term) == list(trunc) == list(infos) == before
        np.testing.assert_array_equal(np.stack(list(obs.values())), s_obs[live])
        assert list(rew.values()) == s_rew[live].tolist()
        assert list(term.values()) == s_term[live].tolist()
        assert list(trunc.values()) == s_trunc[live].tolist()
        assert all(info == {} for info in infos.values())
        assert e.agents == [a for a in before if not (term[a] or trunc[a])]
        np.testing.assert_array_equal(e.simulator.positions, sim.positions)


def test_seeded_start_cells_are_numpy_default_rng_draws():
    e = pz.parallel_env(n_agents=5, grid_size=(37, 11))
    obs, _ = e.reset(seed=42)
    rng = np.random.default_rng(42)
    expected = [(int(rng.integers(0, 37)), int(rng.integers(0, 11))) for _ in range(5)]
    assert [tuple(p) for p in e.simulator.positions.tolist()] == expected
    # the single-agent contract's documented example: seed 42 on 128 x 128 starts at (11, 99)
    one = pz.parallel_env(n_agents=3)
    one.reset(seed=42)
    assert tuple(one.simulator.positions[0]) == (11, 99)


def test_fixed_start_positions_are_used_every_episode():
    starts = ((0, 0), (5, 2), (9, 4))
    e = pz.parallel_env(n_agents=3, grid_size=(10, 5), start_positions=starts)
    for seed in (0, 1, None):
        e.reset(seed=seed)
        assert [tuple(p) for p in e.simulator.positions.tolist()] == list(starts)


# ---------------------------------------------------------------------------- observations
def test_observation_is_concentration_then_normalized_x_y_on_a_non_square_grid():
    w, h = 40, 24
    e = pz.parallel_env(n_agents=6, grid_size=(w, h), source_location=(31, 5))
    obs, _ = e.reset(seed=8)
    field = e.simulator.field
    assert field.shape == (h, w)
    for step in range(3):
        for agent, row in obs.items():
            x, y = e.simulator.positions[e.agent_name_mapping[agent]]
            assert row.dtype == np.float32 and row.shape == (3,)
            assert row[0] == field[y, x]
            assert row[1] == pytest.approx(x / (w - 1), rel=1e-6)
            assert row[2] == pytest.approx(y / (h - 1), rel=1e-6)
            assert e.observation_space(agent).contains(row)
        obs, *_ = e.step({a: step % 4 for a in e.agents})


def test_moves_follow_the_action_table():
    e = pz.parallel_env(n_agents=1, grid_size=(10, 6), start_positions=((4, 3),), action_model="moore")
    e.reset()
    table = [(0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1), (0, 0)]
    for action, (dx, dy) in enumerate(table):
        before = tuple(e.simulator.positions[0])
        e.step({"searcher_0": action})
        assert tuple(e.simulator.positions[0]) == (before[0] + dx, before[1] + dy)


def naive_neighbours(pos, k, w, h):
    """(N, 2k) relative positions of each agent's k nearest others by (squared distance, index)."""
    n = len(pos)
    out = np.zeros((n, 2 * k), np.float32)
    sx, sy = np.float32(1 / (w - 1)), np.float32(1 / (h - 1))
    for i in range(n):
        others = sorted((int(((pos[j] - pos[i]) ** 2).sum()), j) for j in range(n) if j != i)
        for r, (_, j) in enumerate(others[:k]):
            out[i, 2 * r] = np.float32(pos[j, 0] - pos[i, 0]) * sx
            out[i, 2 * r + 1] = np.float32(pos[j, 1] - pos[i, 1]) * sy
    return out


def test_neighbour_sensing_gives_the_nearest_others_relative_positions():
    w, h = 20, 10
    starts = ((0, 0), (3, 0), (0, 2), (19, 9), (0, 3))
    e = pz.parallel_env(n_agents=5, grid_size=(w, h), n_neighbours=2, start_positions=starts)
    obs, _ = e.reset()
    # by hand for searcher_0 at (0, 0): searcher_2 (d2 = 4) first; then searcher_1 (3, 0) and
    # searcher_4 (0, 3) tie at d2 = 9 and the lower index wins
    np.testing.assert_allclose(obs["searcher_0"][3:], [0, 2 / 9, 3 / 19, 0], rtol=1e-6)
    rng = np.random.default_rng(0)
    for _ in range(20):
        pos = e.simulator.positions.astype(np.int64)
        expected = naive_neighbours(pos, 2, w, h)
        for agent, row in obs.items():
            np.testing.assert_allclose(row[3:], expected[e.agent_name_mapping[agent]], rtol=1e-6, atol=0)
            assert e.observation_space(agent).contains(row)
        obs, *_ = e.step(random_actions(e, rng))


def test_finished_agents_still_count_as_neighbours():
    # searcher_0 steps onto the source and stays there; searcher_1 keeps sensing it
    e = pz.parallel_env(n_agents=2, grid_size=(11, 7), source_location=(5, 3), n_neighbours=1,
                        start_positions=((4, 3), (0, 0)))
    e.reset()
    obs, *_ = e.step({"searcher_0": 1, "searcher_1": 0})  # RIGHT onto the source; UP
    assert e.agents == ["searcher_1"]
    obs, *_ = e.step({"searcher_1": 1})  # searcher_1 now at (1, 1)
    np.testing.assert_allclose(obs["searcher_1"][3:], [(5 - 1) / 10, (3 - 1) / 6], rtol=1e-6)


# ---------------------------------------------------------------------------- rewards and episode end
ONE_STEP_AWAY = dict(n_agents=3, grid_size=(15, 9), source_location=(7, 4),
                     start_positions=((0, 0), (6, 4), (14, 8)))


def test_individual_arrival_terminates_only_that_agent():
    e = pz.parallel_env(**ONE_STEP_AWAY)
    e.reset()
    obs, rew, term, trunc, _ = e.step({"searcher_0": 0, "searcher_1": 1, "searcher_2": 2})
    assert rew == {"searcher_0": 0.0, "searcher_1": 1.0, "searcher_2": 0.0}
    assert term == {"searcher_0": False, "searcher_1": True, "searcher_2": False}
    assert trunc == dict.fromkeys(e.possible_agents, False)
    assert all(type(v) is float for v in rew.values()) and all(type(v) is bool for v in term.values())
    assert "searcher_1" in obs  # its final observation is returned on the step it finishes
    assert obs["searcher_1"][0] == 1.0  # concentration at the source
    assert e.agents == ["searcher_0", "searcher_2"]
    obs, rew, term, trunc, _ = e.step({"searcher_0": 0, "searcher_2": 2})
    assert set(obs) == set(rew) == {"searcher_0", "searcher_2"}


def test_team_arrival_ends_the_episode_for_all_with_a_shared_reward():
    e = pz.parallel_env(**ONE_STEP_AWAY, team=True)
    e.reset()
    obs, rew, term, trunc, _ = e.step({"searcher_0": 0, "searcher_1": 1, "searcher_2": 2})
    assert rew == dict.fromkeys(e.possible_agents, 1.0)
    assert term == dict.fromkeys(e.possible_agents, True)
    assert trunc == dict.fromkeys(e.possible_agents, False)
    assert e.agents == []
    assert e.step({}) == ({}, {}, {}, {}, {})


def test_truncation_at_max_cycles_removes_every_agent():
    e = pz.parallel_env(**ONE_STEP_AWAY, max_cycles=3)
    e.reset()
    for t in range(1, 4):
        _, rew, term, trunc, _ = e.step({a: 0 for a in e.agents})  # UP: nobody reaches the source
        assert trunc == dict.fromkeys(["searcher_0", "searcher_1", "searcher_2"], t == 3)
        assert not any(term.values())
    assert e.agents == []
    assert e.step({}) == ({}, {}, {}, {}, {})  # what SuperSuit's black_death sends after the end
    # trainers batching over possible_agents send actions for finished agents: checked, ignored
    assert e.step({"searcher_0": 0}) == ({}, {}, {}, {}, {})
    with pytest.raises(ValidationError, match=r"actions\['searcher_0'\] = 4 is out of range"):
        e.step({"searcher_0": 4})


def test_arrival_on_the_last_step_is_terminated_and_truncated():
    e = pz.parallel_env(**ONE_STEP_AWAY, max_cycles=1)
    e.reset()
    _, rew, term, trunc, _ = e.step({"searcher_0": 0, "searcher_1": 1, "searcher_2": 2})
    assert rew["searcher_1"] == 1.0 and term["searcher_1"] and trunc["searcher_1"]
    assert trunc == dict.fromkeys(e.possible_agents, True)
    assert e.agents == []


def test_max_cycles_assignment_applies_from_the_next_reset():
    e = pz.parallel_env(n_agents=2, max_cycles=10, start_positions=((0, 0), (1, 0)))
    e.reset()
    e.max_cycles = 2
    for _ in range(3):
        _, _, _, trunc, _ = e.step({a: 0 for a in e.agents})
    assert not any(trunc.values()) and e.scenario.max_steps == 10  # this episode keeps 10
    e.reset()
    assert e.scenario.max_steps == 2
    e.step({a: 0 for a in e.agents})
    assert all(e.step({a: 0 for a in e.agents})[3].values()) and e.agents == []
    with pytest.raises(ValidationError, match=r"max_cycles: got -1"):
        e.max_cycles = -1
    assert e.max_cycles == 2


# ---------------------------------------------------------------------------- memory, state, render
def test_returned_arrays_never_share_memory():
    e = pz.parallel_env(**EPISODE_CFG, render_mode="rgb_array")
    obs, _ = e.reset(seed=1)
    returned = [*obs.values(), e.state(), e.render()]
    rng = np.random.default_rng(0)
    for _ in range(3):
        obs, *_ = e.step(random_actions(e, rng))
        new = [*obs.values(), e.state(), e.render()]
        for a in new:
            for b in returned:
                assert not np.shares_memory(a, b)
            for buffer in (e.simulator.state.obs, e.simulator.positions, e.simulator.field):
                assert not np.shares_memory(a, buffer)
        returned += new
    # the rows of one step are views of one copy made for that step
    rows = list(obs.values())
    assert rows[0].base is not None and all(r.base is rows[0].base for r in rows)
    # writing into what was returned changes nothing inside the env
    before = e.state()
    for row in obs.values():
        row[:] = -5.0
    np.testing.assert_array_equal(e.state(), before)


def test_returned_dicts_are_new_objects_the_caller_may_change():
    # SuperSuit's vector env writes "terminal_observation" into each agent's info dict: one
    # shared dict would hand every agent the last agent's observation.
    e = pz.parallel_env(n_agents=4)
    _, reset_infos = e.reset(seed=0)
    first = e.step({a: 0 for a in e.agents})
    second = e.step({a: 0 for a in e.agents})
    for infos in (reset_infos, first[4], second[4]):
        assert len({id(info) for info in infos.values()}) == 4
    infos = first[4]
    infos["searcher_0"]["terminal_observation"] = 1
    assert infos["searcher_1"] == {} and second[4]["searcher_0"] == {}
    for a, b in zip(first, second):
        assert a is not b
    first[1]["searcher_0"] = 99.0  # changing a returned dict changes nothing later
    assert e.step({a: 0 for a in e.agents})[1]["searcher_0"] == 0.0


def test_state_is_per_agent_observation_columns_active_flag_and_elapsed_fraction():
    e = pz.parallel_env(**ONE_STEP_AWAY, max_cycles=4)
    obs, _ = e.reset()
    state = e.state()
    assert state.shape == (13,) and state.dtype == np.float32 and e.state_space.contains(state)
    per_agent = state[:-1].reshape(3, 4)
    np.testing.assert_array_equal(per_agent[:, :3], np.stack([obs[a] for a in e.possible_agents]))
    np.testing.assert_array_equal(per_agent[:, 3], [1, 1, 1])
    assert state[-1] == 0.0
    e.step({"searcher_0": 0, "searcher_1": 1, "searcher_2": 2})
    state = e.state()
    np.testing.assert_array_equal(state[:-1].reshape(3, 4)[:, 3], [1, 0, 1])
    assert state[-1] == pytest.approx(0.25)
    while e.agents:
        e.step({a: 0 for a in e.agents})
    assert e.state()[-1] == 1.0 and e.state_space.contains(e.state())


def test_rgb_frame_shows_the_field_source_and_every_agent():
    w, h = 48, 30
    e = pz.parallel_env(**{**ONE_STEP_AWAY, "grid_size": (w, h), "source_location": (7, 4),
                           "start_positions": ((0, 0), (6, 4), (40, 25))}, render_mode="rgb_array")
    e.reset()
    e.step({"searcher_0": 1, "searcher_1": 1, "searcher_2": 3})  # searcher_1 finishes
    frame = e.render()
    s = 9  # display_scale(48, 30): the smallest integer scale giving >= 256 pixels on the short side
    assert frame.shape == (h * s, w * s, 3) and frame.dtype == np.uint8 and min(frame.shape[:2]) >= 256
    sim = e.simulator
    expected = render_frame(sim.field, sim.positions, source=(7, 4), active=sim.active, scale=s)
    np.testing.assert_array_equal(frame, expected)
    bare = render_frame(sim.field, None, source=(7, 4), scale=s)
    for x, y in sim.positions.tolist():
        row, col = (h - 1 - y) * s + s // 2, x * s + s // 2  # y upward: cell row h-1-y
        assert (frame[row, col] != bare[row, col]).any()
    assert (frame[(h - 1 - 4) * s + s // 2, 7 * s + s // 2] == 255).all()  # the finished agent, white, on the source


def test_human_mode_draws_into_one_window_and_close_is_idempotent():
    import matplotlib.pyplot as plt

    plt.close("all")
    e = pz.parallel_env(n_agents=3, grid_size=(20, 12), render_mode="human")
    e.reset(seed=0)  # human mode draws on reset and on every step
    assert len(plt.get_fignums()) == 1
    e.step({a: 0 for a in e.agents})
    assert e.render() is None
    assert len(plt.get_fignums()) == 1
    image = plt.figure(plt.get_fignums()[0]).axes[0].images[0].get_array()
    np.testing.assert_array_equal(image, render_frame(e.simulator.field, e.simulator.positions,
                                                      source=e.scenario.source_location,
                                                      active=e.simulator.active, scale=22))  # 12 rows -> 264 px
    e.close()
    e.close()
    assert plt.get_fignums() == []


def test_render_without_a_mode_warns_and_returns_none():
    e = pz.parallel_env(n_agents=2)
    e.reset(seed=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert e.render() is None
    assert any("render_mode" in str(w.message) for w in caught)


@pytest.mark.parametrize("call", ["step", "state", "render"])
def test_calls_before_reset_raise_state_error(call):
    e = pz.parallel_env(n_agents=2, render_mode="rgb_array")
    with pytest.raises(StateError, match=r"before reset\(\): call reset\(\) first"):
        if call == "step":
            e.step({"searcher_0": 0, "searcher_1": 0})
        else:
            getattr(e, call)()
    with pytest.raises(StateError, match="Cannot step before reset"):
        e.step({})
