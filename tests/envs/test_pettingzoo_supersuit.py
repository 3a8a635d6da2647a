"""SuperSuit on the PettingZoo env: ``black_death_v3`` + ``pettingzoo_env_to_vec_env_v1`` runs
whole episodes (agents finishing early, automatic resets), and ``concat_vec_envs_v1`` copies the
env into worker processes (EzPickle)."""

from __future__ import annotations

import numpy as np
import supersuit as ss

from plume_multi.envs import pettingzoo as pz

N = 6
CFG = dict(n_agents=N, grid_size=(24, 16), goal_radius=3.0, max_cycles=30)


def vec_env():
    return ss.pettingzoo_env_to_vec_env_v1(ss.black_death_v3(pz.parallel_env(**CFG)))


def test_black_death_vector_env_runs_episodes_with_early_finishers():
    vec = vec_env()
    assert vec.num_envs == N
    obs, infos = vec.reset(seed=0)
    assert obs.shape == (N, 3) and obs.dtype == np.float32 and len(infos) == N
    rng = np.random.default_rng(0)
    episodes = 0
    saw_black_death = False
    for _ in range(200):
        inner = vec.par_env.unwrapped
        was_live = {inner.agent_name_mapping[a] for a in inner.agents}
        obs, rewards, terms, truncs, infos = vec.step(rng.integers(0, 4, N))
        assert obs.shape == (N, 3) and rewards.shape == terms.shape == truncs.shape == (N,)
        assert vec.observation_space.contains(obs[0])
        if any("terminal_observation" in info for info in infos):
            episodes += 1
            continue
        dead = [i for i in range(N) if i not in was_live]
        if dead and len(dead) < N:
            saw_black_death = True
            # agents that finished earlier: zero observation, zero reward (black death)
            assert (obs[dead] == 0).all() and (rewards[dead] == 0).all()
    assert episodes >= 3  # the vector env reset the finished episodes by itself
    assert saw_black_death


def test_concat_vec_envs_copies_the_env_into_worker_processes():
    vec = ss.concat_vec_envs_v1(vec_env(), 2, num_cpus=2, base_class="gymnasium")
    try:
        assert type(vec).__name__ == "ProcConcatVec"  # real subprocesses, each with a pickled copy
        obs, _ = vec.reset(seed=3)
        assert obs.shape == (2 * N, 3)
        rng = np.random.default_rng(1)
        total_reward = 0.0
        for _ in range(120):
            obs, rewards, terms, truncs, _ = vec.step(rng.integers(0, 4, 2 * N))
            assert obs.shape == (2 * N, 3) and np.isfinite(obs).all()
            total_reward += float(rewards.sum())
        assert total_reward > 0  # agents in the workers do find the source
    finally:
        vec.close()


def test_built_in_black_death_matches_supersuits_wrapper_during_an_episode():
    theirs = ss.black_death_v3(pz.parallel_env(**CFG))
    ours = pz.parallel_env(black_death=True, **CFG)
    o1, _ = theirs.reset(seed=5)
    o2, _ = ours.reset(seed=5)
    rng = np.random.default_rng(5)
    finished = 0
    for _ in range(CFG["max_cycles"] - 1):  # up to the last step, where the two differ in flags only
        actions = {a: int(rng.integers(0, 4)) for a in ours.possible_agents}
        o1, r1, _, _, _ = theirs.step(actions)
        o2, r2, t2, _, _ = ours.step(actions)
        assert ours.agents == ours.possible_agents and not any(t2.values())
        assert r1 == r2 and o1.keys() == o2.keys()
        for agent in o2:
            np.testing.assert_array_equal(o1[agent], o2[agent])
        finished = int((~ours.simulator.active).sum())
        if finished == N:
            break
    assert 0 < finished  # some agents did finish early


def test_built_in_black_death_runs_under_supersuits_vector_conversion():
    vec = ss.pettingzoo_env_to_vec_env_v1(pz.parallel_env(black_death=True, **CFG))
    obs, _ = vec.reset(seed=0)
    rng = np.random.default_rng(0)
    episodes = 0
    for _ in range(120):
        obs, rewards, terms, truncs, infos = vec.step(rng.integers(0, 4, N))
        assert obs.shape == (N, 3) and vec.observation_space.contains(obs[0])
        episodes += any("terminal_observation" in info for info in infos)
    assert episodes >= 3
