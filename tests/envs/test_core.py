"""The front-end core (``plume_multi.envs._core``): seeds folded into each front-end's range, a
Scenario built from a front-end's options with errors named from their attributes, and every
front-end as a mapping over it (seeds, copies)."""

from __future__ import annotations

import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from hypothesis import given, settings
from hypothesis import strategies as st

import plume_multi
from plume_multi import PlumeSearchEnv, ValidationError
from plume_multi.envs import _core
from plume_multi.envs._core import fold_seed, scenario_from
from plume_multi.envs.agent_tuple import AgentTupleEnv
from plume_multi.envs.single import compact_env
from plume_multi.integrations.puffer import SharedBufferEnv
from plume_multi.integrations.sb3 import SB3VecEnv
from plume_multi.simulator import MAX_SEED

SMALL = dict(grid_size=(9, 7), max_steps=12)
CONTRACT_SEEDS = 2**31  # the single-agent contract's range: [0, 2**31)


# ------------------------------------------------------------------ fold_seed
@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**70), num_worlds=st.integers(1, 5), top=st.sampled_from([2**31 - 1, MAX_SEED]))
def test_fold_seed_keeps_seeds_in_range_and_folds_the_others(seed, num_worlds, top):
    folded = fold_seed(seed, num_worlds=num_worlds, max_seed=top)
    assert type(folded) is int and 0 <= folded and folded + num_worlds - 1 <= top  # every world's seed is in range
    if seed + num_worlds - 1 <= top:
        assert folded == seed  # a seed in range is used as it is
    else:
        assert folded == seed % (top - num_worlds + 2)
    assert fold_seed(np.uint64(seed % 2**64), num_worlds=num_worlds, max_seed=top) == \
        fold_seed(seed % 2**64, num_worlds=num_worlds, max_seed=top)  # NumPy integers too


@pytest.mark.parametrize("seed", [True, np.bool_(False), 1.0, "5", -1, -2**70, [3], None.__class__])
def test_fold_seed_refuses_what_gymnasium_refuses(seed):
    with pytest.raises(ValidationError, match="seed: got") as info:
        fold_seed(seed)
    assert info.value.field == "seed" and info.value.expected == "None or a non-negative integer"
    assert fold_seed(None) is None


# ------------------------------------------------------------------ every front-end folds its seeds
def _trace(env, reset, step, actions) -> list:
    """Observations (and rewards) of a reset and a few steps, as plain float64 arrays."""
    out = [np.asarray(reset(), dtype=np.float64).ravel()]
    for a in actions:
        out.append(np.concatenate([np.asarray(x, dtype=np.float64).ravel() for x in step(a)]))
    return out


def _single(seed):
    env = PlumeSearchEnv(**SMALL)
    obs, info = env.reset(seed=seed)
    steps = [env.step(a)[:2] for a in (0, 1, 1, 2)]
    return [obs["agent_position"], *[np.r_[o["agent_position"], r] for o, r in steps]], info["seed"]


def test_the_single_env_takes_any_seed_and_behaves_as_with_the_folded_one():
    for big in (2**31, 2**31 + 42, 2**32 - 1, 2**64 + 5, 10**30):
        folded = big % CONTRACT_SEEDS
        trace, reported = _single(big)
        ref, _ = _single(folded)
        assert reported == folded  # info["seed"] stays in the contract's range (invariant I9)
        for a, b in zip(trace, ref):
            np.testing.assert_array_equal(a, b)
    env = compact_env(**SMALL)
    np.testing.assert_array_equal(env.reset(seed=2**31 + 7)[0], compact_env(**SMALL).reset(seed=7)[0])
    assert env.episode_seed == 7


def _vector_trace(seed):
    env = plume_multi.vector_env(3, **SMALL)
    return _trace(env, lambda: env.reset(seed=seed)[0], lambda a: env.step(a)[:2], [np.full(3, k) for k in (0, 1, 3)])


def _multi_trace(seed):
    env = plume_multi.multi_agent_vector_env(2, 3, **SMALL)
    return _trace(env, lambda: env.reset(seed=seed)[0], lambda a: env.step(a)[:2], [np.full(6, k) for k in (0, 1, 3)])


def _parallel_trace(seed):
    env = plume_multi.parallel_env(n_agents=3, grid_size=(9, 7), max_cycles=12)
    obs, _ = env.reset(seed=seed)
    out = [np.stack(list(obs.values())).astype(np.float64).ravel()]
    for k in (0, 1, 3):
        obs, rew, *_ = env.step({a: k for a in env.agents})
        out.append(np.r_[np.ravel(list(obs.values())), list(rew.values())])
    return out


def _aec_trace(seed):
    env = plume_multi.env(n_agents=3, grid_size=(9, 7), max_cycles=12)
    env.reset(seed=seed)
    return [np.asarray(env.observe(a), dtype=np.float64) for a in env.agents]


def _tuple_trace(seed):
    env = AgentTupleEnv(3, **SMALL)
    return _trace(env, lambda: np.stack(env.reset(seed=seed)[0]), lambda a: env.step(a)[:2], [[0, 1, 2], [3, 3, 3]])


def _task_trace(seed):
    env = gym.make("plume_multi:following/gaussian-random-source-v0")
    return _trace(env, lambda: env.reset(seed=seed)[0], lambda a: env.step(a)[:2], [0, 1, 2, 3])


def _puffer_trace(seed):
    env = SharedBufferEnv(2, 3, **SMALL)
    return _trace(env, lambda: env.reset(seed=seed)[0].copy(), lambda a: [x.copy() for x in env.step(a)[:2]],
                  [np.full(6, k) for k in (0, 2)])


def _sb3_trace(seed):
    env = SB3VecEnv(plume_multi.vector_env(3, autoreset_mode=AutoresetMode.SAME_STEP, **SMALL))
    env.seed(seed)
    return _trace(env, env.reset, lambda a: env.step(a)[:2], [np.full(3, k) for k in (0, 1)])


@pytest.mark.parametrize("trace, worlds", [(_vector_trace, 3), (_multi_trace, 2), (_parallel_trace, 1),
                                           (_aec_trace, 1), (_tuple_trace, 1), (_task_trace, 1),
                                           (_puffer_trace, 2), (_sb3_trace, 3)])
def test_every_front_end_takes_any_seed_and_behaves_as_with_the_folded_one(trace, worlds):
    for big in (MAX_SEED - worlds + 2, 2**64 + 3):  # the first seed beyond the range, and one far beyond
        folded = big % (MAX_SEED - worlds + 2)
        for a, b in zip(trace(big), trace(folded)):
            np.testing.assert_array_equal(a, b)
    top = MAX_SEED - worlds + 1  # the last seed in range is used as it is (world i: top + i)
    assert fold_seed(top, num_worlds=worlds) == top


# ------------------------------------------------------------------ a Scenario from options
def test_an_error_about_a_relabelled_field_names_it_as_the_user_gave_it():
    with pytest.raises(ValidationError) as info:
        PlumeSearchEnv(plume_params={"sigma": 500.0})
    err = info.value
    assert (err.owner, err.field) == ("PlumeSearchEnv", "plume_params['sigma']")
    assert str(err) == f"PlumeSearchEnv plume_params['sigma']: got 500.0; expected {err.expected}"
    with pytest.raises(ValidationError) as info:
        plume_multi.vector_env(2, plume_params={"sigma": 500.0})
    assert str(info.value) == f"plume_params['sigma']: got 500.0; expected {err.expected}"
    with pytest.raises(ValidationError) as info:
        plume_multi.vector_env(2, sigma=500.0)  # given as sigma: the Scenario's name stays
    assert str(info.value).startswith("Scenario.sigma: got 500.0;") and info.value.owner == "Scenario"


def test_relabelling_reads_the_attributes_not_the_text(monkeypatch):
    """An error that only looks like one about Scenario.sigma passes through unchanged."""
    def fake(**options):
        raise ValidationError("Scenario.sigma: got 1; expected 2")

    monkeypatch.setattr(_core, "Scenario", fake)
    with pytest.raises(ValidationError) as info:
        scenario_from({}, owner="X", labels={"sigma": "plume_params['sigma']"})
    assert str(info.value) == "Scenario.sigma: got 1; expected 2"

    def real(**options):
        raise ValidationError("anything", owner="Scenario", field="sigma", got="1", expected="2")

    monkeypatch.setattr(_core, "Scenario", real)
    with pytest.raises(ValidationError) as info:
        scenario_from({}, owner="X", labels={"sigma": "plume_params['sigma']"}, prefix="X ")
    assert str(info.value) == "X plume_params['sigma']: got 1; expected 2"
    assert (info.value.owner, info.value.field) == ("X", "plume_params['sigma']")


def test_a_continuous_body_is_refused_before_anything_compiles(monkeypatch):
    def no_simulator(*args, **kwargs):
        raise AssertionError("a Simulator was built")

    monkeypatch.setattr(_core, "Simulator", no_simulator)
    body = plume_multi.bodies.Continuous()
    for make in (lambda: plume_multi.multi_agent_vector_env(2, 2, action_model=body),
                 lambda: plume_multi.parallel_env(n_agents=2, action_model=body),
                 lambda: AgentTupleEnv(2, action_model=body)):
        with pytest.raises(ValidationError, match="takes grid bodies"):
            make()


# ------------------------------------------------------------------ copies continue exactly
@pytest.mark.parametrize("make, actions", [
    (lambda: plume_multi.multi_agent_vector_env(2, 3, **SMALL), np.array([0, 1, 2, 3, 1, 0])),
    (lambda: AgentTupleEnv(3, **SMALL), [0, 1, 2]),
    (lambda: gym.make("plume_multi:following/gaussian-random-source-v0").unwrapped, 1),
])
def test_copies_of_the_other_front_ends_continue_exactly(make, actions):
    env = make()
    env.reset(seed=5)
    env.step(actions)
    clones = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
    for _ in range(3):
        want = env.step(actions)
        for clone in clones:
            got = clone.step(actions)
            for x, y in zip(want[:2], got[:2]):
                np.testing.assert_array_equal(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
    assert all(clone._core.sim is not env._core.sim for clone in clones)
