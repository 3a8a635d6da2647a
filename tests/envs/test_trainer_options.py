"""What the front-ends offer trainers without importing any trainer: arrivals reported under black
death, ``terminate_on_arrival``, the AEC env ignoring actions for finished agents, the
single-agent env's ``action_masks()``, ``AgentTupleEnv`` (EPyMARL's convention) and the
PufferLib-style ``SharedBufferEnv``. The trainers themselves run in tests/integrations/test_trainers.py."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import plume_multi
from plume_multi import ValidationError
from plume_multi.envs.agent_tuple import AgentTupleEnv
from plume_multi.integrations.puffer import SharedBufferEnv

# searcher_0 is one step (UP) from the source; the others far away
ONE_AWAY = dict(n_agents=3, grid_size=(6, 6), source_location=(3, 3), start_positions=((3, 2), (0, 0), (5, 5)),
                max_cycles=6)


# ----------------------------------------------------------------------------------------- black death
def test_black_death_reports_each_arrival_in_the_infos_at_once():
    env = plume_multi.parallel_env(black_death=True, **ONE_AWAY)
    _, infos = env.reset(seed=0)
    assert infos == {a: {"arrived": False} for a in env.possible_agents}
    _, rew, term, _, infos = env.step({a: 0 for a in env.possible_agents})
    assert rew["searcher_0"] == 1.0 and not any(term.values())  # flags wait for the world's end...
    assert infos == {"searcher_0": {"arrived": True}, "searcher_1": {"arrived": False},
                     "searcher_2": {"arrived": False}}  # ...the info says it now
    _, _, _, _, infos = env.step({a: 1 for a in env.possible_agents})
    assert infos["searcher_0"] == {"arrived": True}


def test_terminate_on_arrival_keeps_the_agent_set_and_flags_each_searcher_honestly():
    env = plume_multi.parallel_env(black_death=True, terminate_on_arrival=True, **ONE_AWAY)
    env.reset(seed=0)
    obs, rew, term, trunc, infos = env.step({a: 0 for a in env.possible_agents})
    assert term == {"searcher_0": True, "searcher_1": False, "searcher_2": False}
    assert env.agents == env.possible_agents  # a fixed set: it stays, AgileRL-style trainers see no gap
    for _ in range(ONE_AWAY["max_cycles"] - 1):
        obs, rew, term, trunc, infos = env.step({a: 1 for a in env.possible_agents})
        assert term["searcher_0"] and rew["searcher_0"] == 0.0 and not obs["searcher_0"].any()
        assert all(np.isfinite(o).all() for o in obs.values())  # zeros, never NaN
    assert env.agents == [] and all(trunc.values())
    with pytest.raises(ValidationError, match="terminate_on_arrival=True needs black_death=True"):
        plume_multi.parallel_env(terminate_on_arrival=True)


def test_the_aec_env_checks_and_ignores_an_action_for_a_finished_agent():
    env = plume_multi.env(**ONE_AWAY)
    env.reset(seed=0)
    for agent in ("searcher_0", "searcher_1", "searcher_2"):
        env.step(0)  # searcher_0 reaches the source at the end of the cycle
    assert env.terminations["searcher_0"] and env.agent_selection == "searcher_0"
    env.step(2)  # an action instead of None (TorchRL sends one): ignored, as the parallel env does
    assert "searcher_0" not in env.agents
    assert env.agent_selection == "searcher_1"
    env.reset(seed=0)
    for agent in ("searcher_0", "searcher_1", "searcher_2"):
        env.step(0)
    with pytest.raises(ValidationError, match="searcher_0"):
        env.step(7)  # still checked: not an action of this env


# ----------------------------------------------------------------------------------------- single agent
def test_action_masks_of_the_single_agent_env_mask_the_walls_only():
    env = plume_multi.PlumeSearchEnv(grid_size=(3, 2), source_location=(2, 1))
    with pytest.raises(plume_multi.StateError, match="before reset"):
        env.action_masks()
    env.reset(seed=0)
    for _ in range(6):
        x, y = env.agent_state.position
        assert env.action_masks().tolist() == [y < 1, x < 2, y > 0, x > 0]  # UP RIGHT DOWN LEFT
        _, _, terminated, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        if terminated:
            assert env.action_masks().all()  # an ended episode allows everything
            break
    moore = plume_multi.PlumeSearchEnv(grid_size=(3, 3), action_processor=plume_multi.bodies.Moore())
    moore.reset(seed=0)
    assert moore.action_masks().shape == (9,) and not moore.action_masks()[8]  # STAY never moves


# ----------------------------------------------------------------------------------------- EPyMARL's gymma convention
def test_agent_tuple_env_replays_parallel_env_with_black_death():
    cfg = dict(n_agents=3, grid_size=(7, 5), sigma=2.0)
    tup = gym.make("PlumeSearchAgents-v0", max_steps=30, **cfg)
    par = plume_multi.parallel_env(black_death=True, max_cycles=30, **cfg)
    assert isinstance(tup.unwrapped, AgentTupleEnv) and tup.unwrapped.n_agents == 3
    assert len(tup.observation_space) == 3 and tup.action_space[0].n == 4
    obs, _ = tup.reset(seed=5)
    pobs, _ = par.reset(seed=5)
    np.testing.assert_array_equal(np.stack(obs), np.stack([pobs[a] for a in par.possible_agents]))
    rng = np.random.default_rng(0)
    while par.agents:
        actions = rng.integers(0, 4, 3)
        obs, rew, term, trunc, info = tup.step(list(actions))
        pobs, prew, pterm, ptrunc, pinfo = par.step(dict(zip(par.possible_agents, actions.tolist())))
        np.testing.assert_array_equal(np.stack(obs), np.stack([pobs[a] for a in par.possible_agents]))
        assert rew == [prew[a] for a in par.possible_agents]
        assert term == [pinfo[a]["arrived"] for a in par.possible_agents] and info["arrived"] == sum(term)
        assert trunc == any(ptrunc.values())
    assert all(term) or trunc
    with pytest.raises(ValidationError, match="expected 3 integers"):
        tup.step([0, 1])


# ----------------------------------------------------------------------------------------- PufferLib style
def test_shared_buffer_env_writes_multi_agent_vector_env_rows_into_the_given_buffers():
    from types import SimpleNamespace

    B, N, D = 4, 3, 3
    buf = SimpleNamespace(observations=np.zeros((B * N, D), np.float32), rewards=np.zeros(B * N, np.float32),
                          terminals=np.zeros(B * N, bool), truncations=np.zeros(B * N, bool),
                          masks=np.zeros(B * N, bool), actions=np.zeros(B * N, np.int32))
    env = SharedBufferEnv(B, N, buf=buf, grid_size=(6, 6), max_steps=10)
    ref = plume_multi.multi_agent_vector_env(B, N, grid_size=(6, 6), max_steps=10)
    obs, _ = env.reset(seed=0)
    ref_obs, ref_info = ref.reset(seed=0)
    assert obs is buf.observations and np.array_equal(obs, ref_obs) and np.array_equal(buf.masks, ref_info["active"])
    rng = np.random.default_rng(0)
    for _ in range(40):
        buf.actions[:] = rng.integers(0, 4, B * N)
        out = env.step()
        expected = ref.step(buf.actions.astype(np.int64))
        assert all(a is b for a, b in zip(out[:4], (buf.observations, buf.rewards, buf.terminals, buf.truncations)))
        for got, want in zip(out[:4], expected[:4]):
            np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(buf.masks, expected[4]["active"])
    bad = SimpleNamespace(**{**vars(buf), "rewards": np.zeros(B * N, np.float64)})
    with pytest.raises(ValidationError, match=r"buf.rewards: got shape \(12,\) dtype float64; expected"):
        SharedBufferEnv(B, N, buf=bad, grid_size=(6, 6))
    with pytest.raises(ValidationError, match="buffer: got shape"):
        plume_multi.Simulator(plume_multi.Scenario(n_agents=N), B).bind_observations(np.zeros((B * N, D), np.float64))
