"""Front-end hardening: each test names the item of the hardening issue it covers.

3 failed calls change nothing, NumPy integer seeds; 7 messages show what the caller gave; 10 copy
and pickle; 13 SB3VecEnv takes a vector env in any autoreset mode; 14 the ``autoreset_mode``
attribute; 15 one id, one observation space; 16 finished agents' actions and ``black_death``.
(12 is in test_single_agent.py, 9 and 17 in test_cli.py and test_progress.py.)
"""

from __future__ import annotations

import copy
import pickle
import re
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import plume_multi
from plume_multi import PlumeSearchEnv, StateError, ValidationError
from plume_multi.envs.vector import PlumeVectorEnv
from plume_multi.integrations.sb3 import SB3VecEnv
from plume_multi.envs.components import CompactObservation

SMALL = dict(grid_size=(9, 7), max_steps=12)
PAR = dict(grid_size=(9, 7), max_cycles=12)


def snapshots_equal(a: dict, b: dict) -> bool:
    if a.keys() != b.keys():
        return False
    return all(np.array_equal(np.asarray(a[k]), np.asarray(b[k])) for k in a)


# ------------------------------------------------------------------ 3: NumPy seeds, nothing changes on failure
@pytest.mark.parametrize("seed", [5, np.int64(5), np.int32(5), np.uint8(5), np.uint64(5)])
def test_3_every_front_end_takes_numpy_integer_seeds(seed):
    venv = plume_multi.vector_env(4, **SMALL)
    obs, _ = venv.reset(seed=seed)
    np.testing.assert_array_equal(obs, plume_multi.vector_env(4, **SMALL).reset(seed=5)[0])
    assert venv.np_random_seed == 5
    env = PlumeSearchEnv(**SMALL)
    assert env.reset(seed=seed)[1]["seed"] == 5
    par = plume_multi.parallel_env(n_agents=3, **PAR)
    par.reset(seed=seed)
    assert par.simulator.seed == 5
    aec = plume_multi.env(n_agents=3, **PAR)
    aec.reset(seed=seed)
    sb3 = SB3VecEnv(plume_multi.vector_env(4, autoreset_mode=AutoresetMode.SAME_STEP, **SMALL))
    assert sb3.seed(seed) == [5, 6, 7, 8]
    np.testing.assert_array_equal(sb3.reset(), obs)


@pytest.mark.parametrize("seed", [True, np.bool_(False), 1.0, "5", -1, -2**64, None.__class__])
def test_3_bad_seeds_change_nothing(seed):
    venv = plume_multi.vector_env(4, **SMALL)
    venv.reset(seed=1)
    venv.step(np.zeros(4, np.int64))
    before = venv.simulator.snapshot()
    with pytest.raises(ValidationError, match="seed"):
        venv.reset(seed=seed)
    assert snapshots_equal(venv.simulator.snapshot(), before)
    venv.step(np.zeros(4, np.int64))  # the episode goes on


def test_3_parallel_env_checks_the_seed_before_rebuilding_for_max_cycles():
    par = plume_multi.parallel_env(n_agents=3, **PAR)
    par.reset(seed=3)
    par.step({a: 1 for a in par.agents})
    sim, before, agents = par.simulator, par.simulator.snapshot(), list(par.agents)
    par.max_cycles = 30
    with pytest.raises(ValidationError, match="seed"):
        par.reset(seed=-4)
    assert par.simulator is sim and snapshots_equal(sim.snapshot(), before) and par.agents == agents
    par.step({a: 1 for a in par.agents})  # the episode goes on
    par.reset(seed=3)
    assert par.scenario.max_steps == 30


def test_3_aec_env_refuses_a_bad_action_when_it_is_given_and_goes_on():
    aec = plume_multi.env(n_agents=3, **PAR)
    aec.reset(seed=0)
    first = aec.agent_selection
    before = aec.unwrapped.simulator.snapshot()
    for bad in (4, -1, 1.5, None, "up", np.array([1, 2])):
        with pytest.raises(ValidationError, match=rf"actions\['{first}'\]"):
            aec.step(bad)
        assert aec.agent_selection == first
    for _ in range(3):  # a whole cycle still works
        aec.step(0)
    after = aec.unwrapped.simulator.snapshot()
    assert int(after["world_t"][0]) == int(before["world_t"][0]) + 1


# ------------------------------------------------------------------ 7: messages show what was given
@pytest.mark.parametrize("action", [7, np.int64(-3), np.uint64(2**64 - 1), 2.5, None])
def test_7_plume_search_env_message_shows_the_action_given(action):
    shown = f"action: got {action!r} ({type(action).__name__}); expected an integer in 0..3"
    assert "-1" not in shown and ("18446744073709551615" in shown or not isinstance(action, np.uint64))
    for env in (PlumeSearchEnv(**SMALL), PlumeSearchEnv(observation_model=CompactObservation(), **SMALL)):
        env.reset(seed=0)
        with pytest.raises(ValidationError, match=re.escape(shown)):
            env.step(action)


def test_7_vector_env_message_shows_the_uint64_value_given():
    venv = plume_multi.vector_env(3, **SMALL)
    venv.reset(seed=0)
    actions = np.array([0, 2**64 - 1, 1], dtype=np.uint64)
    with pytest.raises(ValidationError, match=r"actions\[1\] = 18446744073709551615 is out of range"):
        venv.step(actions)
    with pytest.raises(ValidationError, match=r"actions\[2\] = -2 is out of range"):
        venv.step(np.array([0, 1, -2], dtype=np.int8))


def test_7_sb3_step_none_names_the_actions():
    sb3 = SB3VecEnv(plume_multi.vector_env(3, autoreset_mode=AutoresetMode.SAME_STEP, **SMALL))
    sb3.reset()
    with pytest.raises(ValidationError, match=r"actions: got None \(NoneType\)"):
        sb3.step(None)
    sb3.step(np.zeros(3, np.int64))  # still works
    with pytest.raises(StateError, match="step_async"):
        sb3.step_wait()


# ------------------------------------------------------------------ 10: copies continue exactly as the original
def _actions(rng, kind, env):
    if kind == "single":
        return int(rng.integers(0, 4))
    if kind in ("vector", "sb3"):
        return rng.integers(0, 4, env.num_envs)
    return {a: int(rng.integers(0, 4)) for a in env.agents}


def _front_ends():
    return {
        "single": lambda: PlumeSearchEnv(**SMALL),
        "single_compact": lambda: PlumeSearchEnv(observation_model=CompactObservation(), **SMALL),
        "vector": lambda: plume_multi.vector_env(5, **SMALL),
        "vector_dict_same_step": lambda: plume_multi.vector_env(3, obs_type="dict",
                                                                autoreset_mode=AutoresetMode.SAME_STEP, **SMALL),
        "sb3": lambda: SB3VecEnv(plume_multi.vector_env(5, **SMALL)),
        "parallel": lambda: plume_multi.parallel_env(n_agents=4, **PAR),
        "parallel_black_death": lambda: plume_multi.parallel_env(n_agents=4, black_death=True, **PAR),
    }


def _flat(value):
    """Every array and scalar of a nested result, in order."""
    if isinstance(value, dict):
        return [x for k in sorted(value, key=str) for x in [k, *_flat(value[k])]]
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flat(v)]
    return [np.asarray(value)]


def _drive(env, kind, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(15):
        if kind.startswith("parallel") and not env.agents:
            out.append(env.reset())
            continue
        k = "single" if kind.startswith("single") else ("vector" if kind.startswith("vector") else kind.split("_")[0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # over-running an ended single-agent episode warns
            result = env.step(_actions(rng, k, env))
        if kind.startswith("vector"):
            result = (*result[:4], result[4]["action_mask"])
        if kind.startswith("vector") or kind == "sb3":
            result = (*result, env.action_masks())  # stale in copies before the fix
        out.append(result)
    return _flat(out)


@pytest.mark.parametrize("copier", ["deepcopy", "pickle"])
@pytest.mark.parametrize("kind", list(_front_ends()))
def test_10_a_copy_continues_exactly_as_the_original(kind, copier):
    env = _front_ends()[kind]()
    if kind == "sb3":
        env.seed(2)
        env.reset()
    else:
        env.reset(seed=2)
    _drive(env, kind, seed=0)  # somewhere into the run, past some endings
    twin = copy.deepcopy(env) if copier == "deepcopy" else pickle.loads(pickle.dumps(env))
    mine, theirs = _drive(env, kind, seed=1), _drive(twin, kind, seed=1)
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("copier", [copy.deepcopy, lambda e: pickle.loads(pickle.dumps(e))])
def test_10_aec_copy_continues_mid_cycle(copier):
    env = plume_multi.env(n_agents=3, **PAR)
    env.reset(seed=4)
    env.step(0)  # mid-cycle: one action stored
    twin = copier(env)
    for e in (env, twin):
        for k in range(7):
            e.step(None if (e.terminations[e.agent_selection] or e.truncations[e.agent_selection]) else k % 4)
    assert twin.agent_selection == env.agent_selection and twin.agents == env.agents
    assert snapshots_equal(env.unwrapped.simulator.snapshot(), twin.unwrapped.simulator.snapshot())
    for agent in env.agents:
        np.testing.assert_array_equal(env.observe(agent), twin.observe(agent))


def test_10_copies_do_not_share_state_with_the_original():
    env = PlumeSearchEnv(**SMALL)
    env.reset(seed=0)
    twin = copy.deepcopy(env)
    env.step(1)
    assert (env.step_count, twin.step_count) == (1, 0)
    assert twin._sim is not env._sim
    assert twin._pos_row.base is twin._sim.state.pos  # the view is of its own simulator
    venv = plume_multi.vector_env(2, **SMALL)
    copy.deepcopy(venv).reset(seed=0)  # a copy of an env never reset can be reset


# ------------------------------------------------------------------ 13: SB3VecEnv takes any autoreset mode
@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
def test_13_sb3_vec_env_takes_every_autoreset_mode(mode):
    given = plume_multi.vector_env(6, autoreset_mode=mode, **SMALL)
    venv = SB3VecEnv(given)
    assert venv.venv.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert given.metadata["autoreset_mode"] is mode  # the env given is left as it was
    ref = plume_multi.vector_env(6, autoreset_mode=AutoresetMode.SAME_STEP, **SMALL)
    venv.seed(9)
    np.testing.assert_array_equal(venv.reset(), ref.reset(seed=9)[0])
    rng = np.random.default_rng(0)
    for _ in range(30):
        a = rng.integers(0, 4, 6)
        obs, _, dones, infos = venv.step(a)
        r_obs, _, r_term, r_trunc, r_info = ref.step(a)
        np.testing.assert_array_equal(obs, r_obs)
        np.testing.assert_array_equal(dones, r_term | r_trunc)


@pytest.mark.parametrize("algo", ["PPO", "MaskablePPO"])
def test_13_ppo_and_maskable_ppo_train_on_the_default_vector_env(algo):
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO

    cls = PPO if algo == "PPO" else MaskablePPO
    venv = SB3VecEnv(plume_multi.vector_env(16, grid_size=(8, 8), max_steps=20))  # NEXT_STEP, as written first
    model = cls("MlpPolicy", venv, seed=0, n_steps=8, batch_size=64, n_epochs=1, device="cpu")
    model.learn(256)
    assert model.num_timesteps == 256


# ------------------------------------------------------------------ 14: the autoreset_mode attribute
@pytest.mark.parametrize("mode", list(AutoresetMode))
def test_14_vector_env_has_the_autoreset_mode_attribute(mode):
    venv = plume_multi.vector_env(8, autoreset_mode=mode)
    assert venv.autoreset_mode is mode is venv.metadata["autoreset_mode"]
    assert plume_multi.vector_env(8).autoreset_mode is AutoresetMode.NEXT_STEP


# ------------------------------------------------------------------ 15: one id, one observation space
@pytest.mark.parametrize("env_id, expected", [
    ("PlumeSearch-v0", gym.spaces.Dict), ("PlumeNav-StaticGaussian-v0", gym.spaces.Dict),
    ("PlumeSearchCompact-v0", gym.spaces.Box)])
def test_15_one_id_means_one_observation_space_in_every_mode(env_id, expected):
    spaces = {}
    for mode in ("vector_entry_point", "sync", "async"):
        envs = gym.make_vec(env_id, num_envs=2, vectorization_mode=mode, grid_size=(6, 5), max_steps=4)
        spaces[mode] = (envs.single_observation_space, envs.observation_space)
        obs, _ = envs.reset(seed=0)
        assert envs.observation_space.contains(obs), mode
        envs.close()
    single = gym.make(env_id, grid_size=(6, 5)).observation_space
    assert isinstance(single, expected)
    for mode, (one, batched) in spaces.items():
        assert one == single, mode
        assert batched == spaces["sync"][1], mode
    native = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point")
    assert isinstance(native, PlumeVectorEnv)


def test_15_an_id_refuses_the_other_observation():
    with pytest.raises(ValidationError, match=r"obs_type: got 'compact'; PlumeSearch-v0 always has obs_type='dict'"):
        gym.make_vec("PlumeSearch-v0", num_envs=2, vectorization_mode="vector_entry_point", obs_type="compact")
    with pytest.raises(ValidationError, match="PlumeSearchCompact-v0 always has obs_type='compact'"):
        gym.make_vec("PlumeSearchCompact-v0", num_envs=2, vectorization_mode="vector_entry_point", obs_type="dict")


def test_15_compact_id_resolves_in_a_fresh_process():
    code = ("import gymnasium; e = gymnasium.make('plume_multi:PlumeSearchCompact-v0', grid_size=(8, 6)); "
            "o, i = e.reset(seed=42); print(e.observation_space, o.shape, o.dtype)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["Box(0.0,", "1.0,", "(3,),", "float32)", "(3,)", "float32"]


# ------------------------------------------------------------------ 16: finished agents, black_death
ONE_AWAY = dict(n_agents=3, grid_size=(6, 6), source_location=(3, 3), start_positions=((3, 2), (0, 0), (5, 5)),
                max_cycles=6)


def test_16_actions_for_every_possible_agent_are_accepted_after_an_arrival():
    env = plume_multi.parallel_env(**ONE_AWAY)
    env.reset(seed=0)
    env.step({a: 0 for a in env.possible_agents})  # searcher_0 moves UP onto the source
    assert env.agents == ["searcher_1", "searcher_2"]
    steps = 1
    while env.agents:  # an AgileRL-style loop: an action for every possible agent, every step
        obs, rewards, *_ = env.step({a: 1 for a in env.possible_agents})
        assert set(obs) <= {"searcher_1", "searcher_2"}
        steps += 1
    assert steps == ONE_AWAY["max_cycles"]
    with pytest.raises(ValidationError, match="unknown agent 'searcher_3'"):
        env.reset(seed=0)
        env.step({**{a: 0 for a in env.possible_agents}, "searcher_3": 0})


def test_16_black_death_keeps_finished_agents_with_zero_observations():
    env = plume_multi.parallel_env(black_death=True, **ONE_AWAY)
    obs, _ = env.reset(seed=0)
    obs, rew, term, trunc, _ = env.step({a: 0 for a in env.possible_agents})
    assert rew["searcher_0"] == 1.0 and obs["searcher_0"][0] == 1.0  # its real last observation
    assert env.agents == env.possible_agents and not any(term.values()) and not any(trunc.values())
    for t in range(2, ONE_AWAY["max_cycles"] + 1):
        obs, rew, term, trunc, _ = env.step({a: 3 for a in env.possible_agents})
        np.testing.assert_array_equal(obs["searcher_0"], np.zeros(3, np.float32))
        assert rew["searcher_0"] == 0.0 and set(obs) == set(env.possible_agents)
        assert env.observation_space("searcher_0").contains(obs["searcher_0"])
        if t < ONE_AWAY["max_cycles"]:
            assert env.agents == env.possible_agents and not any(term.values()) and not any(trunc.values())
    assert env.agents == []
    assert term == {"searcher_0": True, "searcher_1": False, "searcher_2": False}
    assert trunc == dict.fromkeys(env.possible_agents, True)


def test_16_black_death_episode_ends_when_every_agent_has_arrived():
    env = plume_multi.parallel_env(black_death=True, n_agents=2, grid_size=(5, 5), source_location=(2, 2),
                                   start_positions=((2, 1), (2, 0)), max_cycles=50)
    env.reset(seed=0)
    env.step({"searcher_0": 0, "searcher_1": 0})  # searcher_0 arrives
    _, rew, term, trunc, _ = env.step({"searcher_1": 0})  # a finished agent may be left out
    assert env.agents == [] and term == {"searcher_0": True, "searcher_1": True}
    assert rew == {"searcher_0": 0.0, "searcher_1": 1.0} and not any(trunc.values())


# api_test warns about all-zero observations: that is what finished agents observe under black death.
@pytest.mark.filterwarnings("ignore:Observation numpy array is all zeros")
def test_16_black_death_passes_pettingzoo_api_tests():
    from pettingzoo.test import api_test, parallel_api_test

    parallel_api_test(plume_multi.parallel_env(black_death=True, **ONE_AWAY), num_cycles=30)
    api_test(plume_multi.env(black_death=True, **ONE_AWAY), num_cycles=30)
    with pytest.raises(ValidationError, match="black_death: got 'yes'"):
        plume_multi.parallel_env(black_death="yes")
