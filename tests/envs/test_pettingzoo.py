"""PettingZoo conformance of ``plume_multi.envs.pettingzoo``: PettingZoo's own test utilities on
N = 1, N = 7 (non-square grid) and N = 64 (plus a team configuration), and the API surface
(metadata, names, spaces, registry, pickling, lazy package names).

The utilities only warn about many problems, so every call here also fails on any warning.
Action spaces are seeded before each utility runs, so a failure replays exactly.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import io
import math
import pickle
import types
import warnings

import matplotlib

matplotlib.use("Agg")  # render_test opens the human window: never a real display in tests

import numpy as np
import pettingzoo
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import data_equivalence
from pettingzoo.test import (
    api_test,
    max_cycles_test,
    parallel_api_test,
    parallel_seed_test,
    render_test,
    seed_test,
    state_test,
)

import plume_multi
from plume_multi import StateError, ValidationError
from plume_multi.envs import pettingzoo as pz

CONFIGS = {
    "n1": dict(n_agents=1),
    # Non-square, off-centre source, large goal radius (agents do finish and leave), Moore moves.
    "n7": dict(n_agents=7, grid_size=(40, 24), source_location=(29, 7), goal_radius=4.0,
               max_cycles=80, n_neighbours=2, action_model="moore"),
    "n64": dict(n_agents=64, grid_size=(64, 48), goal_radius=3.0, max_cycles=60, n_neighbours=3),
    "team16": dict(n_agents=16, grid_size=(30, 20), goal_radius=3.0, max_cycles=80, team=True, n_neighbours=1),
}
SIZES = ["n1", "n7", "n64"]


def seed_spaces(e, offset: int = 0):
    """Seed every agent's action space (AEC or parallel), so sampled actions replay."""
    for i, agent in enumerate(e.possible_agents):
        e.action_space(agent).seed(offset + i)
    return e


def seeded_factory(factory, cfg):
    def make(**kwargs):
        return seed_spaces(factory(**{**cfg, **kwargs}))
    return make


def run_quietly(fn, *args, **kwargs):
    """Run a PettingZoo test utility; fail on any warning it (or the env) emits."""
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("always")
        fn(*args, **kwargs)
    messages = [f"{w.category.__name__}: {w.message}" for w in caught]
    assert not messages, f"{fn.__name__} warned: {messages}"


def far_starts(cfg, margin: int = 6):
    """``n_agents`` start cells farther than goal_radius + margin from the source."""
    sc = pz.raw_env(**cfg).scenario
    sx, sy = sc.source_location
    cells = [(x, y) for y in range(sc.height) for x in range(sc.width)
             if math.hypot(x - sx, y - sy) > sc.goal_radius + margin]
    return tuple(cells[:sc.n_agents])


# ---------------------------------------------------------------------------- PettingZoo utilities
@pytest.mark.parametrize("name", [*SIZES, "team16"])
def test_api_test(name):
    run_quietly(api_test, seed_spaces(pz.env(**CONFIGS[name])), num_cycles=60)


@pytest.mark.parametrize("name", [*SIZES, "team16"])
def test_parallel_api_test(name):
    run_quietly(parallel_api_test, seed_spaces(pz.parallel_env(**CONFIGS[name])), num_cycles=200)


@pytest.mark.parametrize("name", SIZES)
def test_seed_test(name):
    run_quietly(seed_test, functools.partial(pz.env, **CONFIGS[name]), num_cycles=30)


@pytest.mark.parametrize("name", SIZES)
def test_parallel_seed_test(name):
    run_quietly(parallel_seed_test, functools.partial(pz.parallel_env, **CONFIGS[name]), num_cycles=30)


def test_max_cycles_test_on_the_module():
    # The module with its defaults (8 agents, 128 x 128, only the source cell counts): five agents
    # reaching the source within 4 steps would be needed to fail.
    run_quietly(max_cycles_test, pz)


@pytest.mark.parametrize("name", SIZES)
def test_max_cycles_test(name):
    # Start cells out of reach in 4 steps, so the utility's "most agents live 4 steps" holds
    # for any sampled actions.
    cfg = {**CONFIGS[name], "start_positions": far_starts(CONFIGS[name])}
    module = types.SimpleNamespace(parallel_env=seeded_factory(pz.parallel_env, cfg),
                                   env=seeded_factory(pz.env, cfg), raw_env=pz.raw_env)
    run_quietly(max_cycles_test, module)


@pytest.mark.parametrize("name", SIZES)
def test_render_test(name):
    run_quietly(render_test, seeded_factory(pz.env, CONFIGS[name]))
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.mark.parametrize("name", SIZES)
def test_state_test(name):
    cfg = CONFIGS[name]
    run_quietly(state_test, seed_spaces(pz.env(**cfg)), seed_spaces(pz.parallel_env(**cfg)), num_cycles=20)


@pytest.mark.parametrize("name", ["n7", "n64", "team16"])
def test_configs_make_agents_leave_before_truncation(name):
    """The configurations above do exercise agent removal (not only end-of-episode truncation)."""
    e = seed_spaces(pz.parallel_env(**CONFIGS[name]))
    e.reset(seed=0)
    left_early = 0
    while e.agents:
        _, _, terminations, truncations, _ = e.step({a: e.action_space(a).sample() for a in e.agents})
        left_early += sum(t and not truncations[a] for a, t in terminations.items())
    assert left_early > 0


# ---------------------------------------------------------------------------- API surface
def test_metadata_and_names():
    e = pz.parallel_env(n_agents=3)
    assert e.metadata["name"] == "plume_search_v0"
    assert e.metadata["is_parallelizable"] is True
    assert e.metadata["render_modes"] == ["rgb_array", "human"]
    assert e.metadata["render_fps"] == 30
    assert str(e) == "plume_search_v0"
    assert e.possible_agents == ["searcher_0", "searcher_1", "searcher_2"]
    assert e.agent_name_mapping == {"searcher_0": 0, "searcher_1": 1, "searcher_2": 2}
    assert e.agents == [] and e.max_num_agents == 3
    e.reset(seed=0)
    assert e.agents == e.possible_agents and e.agents is not e.possible_agents
    assert e.num_agents == 3


def test_defaults_follow_the_scenario_with_eight_agents():
    sc = pz.parallel_env().scenario
    assert sc == plume_multi.Scenario(n_agents=8, max_steps=1000)


def test_aec_form_is_order_enforced_over_the_parallel_env():
    from pettingzoo.utils.conversions import parallel_to_aec_wrapper
    from pettingzoo.utils.wrappers import OrderEnforcingWrapper

    a = pz.env(n_agents=2, render_mode="rgb_array")
    assert isinstance(a, OrderEnforcingWrapper) and isinstance(a.env, parallel_to_aec_wrapper)
    assert isinstance(a.unwrapped, pz.raw_env)
    assert a.state_space is a.unwrapped.state_space
    with pytest.raises(StateError, match="reset"):  # order enforced, with this package's error
        a.step(0)


def test_spaces_are_built_once_per_agent():
    e = pz.parallel_env(n_agents=4, grid_size=(20, 10), n_neighbours=2)
    for agent in e.possible_agents:
        assert e.observation_space(agent) is e.observation_space(agent)
        assert e.action_space(agent) is e.action_space(agent)
    # one object per agent, so seeding one agent's space leaves the others alone
    assert e.action_space("searcher_0") is not e.action_space("searcher_1")
    assert e.observation_spaces["searcher_2"] is e.observation_space("searcher_2")
    assert e.action_spaces["searcher_3"] is e.action_space("searcher_3")
    obs_space = e.observation_space("searcher_0")
    assert obs_space.shape == (7,) and obs_space.dtype == np.float32
    np.testing.assert_array_equal(obs_space.low, [0, 0, 0, -1, -1, -1, -1])
    np.testing.assert_array_equal(obs_space.high, np.ones(7))
    assert e.action_space("searcher_0") == spaces.Discrete(4)
    assert pz.parallel_env(n_agents=2, action_model="moore").action_space("searcher_1") == spaces.Discrete(9)
    assert e.state_space == spaces.Box(0.0, 1.0, (4 * 4 + 1,), np.float32)


@pytest.mark.parametrize("agent", ["searcher_4", "searcher_-1", "player_0", 0, None, ["searcher_0"]])
def test_space_of_an_unknown_agent_is_refused(agent):
    e = pz.parallel_env(n_agents=4)
    with pytest.raises(ValidationError, match=r"agent: got .*expected one of possible_agents \('searcher_0' … 'searcher_3'\)"):
        e.observation_space(agent)
    with pytest.raises(ValidationError, match="possible_agents"):
        e.action_space(agent)


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(render_mode="rgb"), r"render_mode: got 'rgb'; expected None or one of \['rgb_array', 'human'\]"),
    (dict(max_cycles=0), r"max_cycles: got 0; expected an integer >= 1"),
    (dict(max_cycles=2.5), r"max_cycles: got 2.5"),
    (dict(max_cycles=True), r"max_cycles: got True"),
    (dict(n_agents=0), r"Scenario.n_agents: got 0"),
    (dict(n_agents=3, n_neighbours=3), r"Scenario.n_neighbours: got 3; expected an integer in 0..2"),
    (dict(grid_size=(0, 5)), r"Scenario.grid_size"),
    (dict(action_model="hex"), r"action_model: got 'hex'; expected one of \['cardinal', 'moore'\]"),
    (dict(team="yes"), r"Scenario.team: got 'yes'"),
    (dict(n_agents=2, start_positions=[(0, 0)]), r"Scenario.start_positions"),
])
def test_invalid_arguments_name_the_argument(kwargs, fragment):
    with pytest.raises(ValidationError, match=fragment):
        pz.parallel_env(**kwargs)


def test_unknown_argument_is_a_type_error():
    with pytest.raises(TypeError, match="num_agents"):
        pz.parallel_env(num_agents=3)


def test_package_exposes_the_factories_lazily():
    assert plume_multi.parallel_env is pz.parallel_env
    assert plume_multi.env is pz.env
    assert plume_multi.raw_env is pz.raw_env


@pytest.mark.parametrize("env_id", ["plume_multi/plume_search_v0", "plume_multi/plume_search-v0", "plume_multi/plume_search"])
def test_registered_in_pettingzoo_registry(env_id):
    assert pz.register_pettingzoo() is True  # idempotent
    par = pettingzoo.make("parallel", env_id, n_agents=3, max_cycles=5)
    assert isinstance(par, pz.raw_env) and par.possible_agents == ["searcher_0", "searcher_1", "searcher_2"]
    assert par.max_cycles == 5
    aec = pettingzoo.make("aec", env_id, n_agents=2)
    assert isinstance(aec, pettingzoo.AECEnv) and isinstance(aec.unwrapped, pz.raw_env)
    assert aec.unwrapped.max_cycles == 1000


def _first_steps(e, seed=11, steps=5):
    out = [e.reset(seed=seed)]
    rng = np.random.default_rng(0)
    for _ in range(steps):
        out.append(e.step(dict(zip(e.agents, rng.integers(0, 4, len(e.agents)).tolist()))))
    return out


def test_pickle_and_deepcopy_rebuild_from_the_arguments():
    cfg = dict(n_agents=5, grid_size=(30, 17), source_location=(3, 4), sigma=5.0, goal_radius=2.5,
               max_cycles=40, team=True, n_neighbours=2, render_mode="rgb_array")
    e = pz.parallel_env(**cfg)
    e.max_cycles = 7  # an assigned max_cycles travels with the copy
    for clone in (pickle.loads(pickle.dumps(e)), copy.deepcopy(e)):
        assert isinstance(clone, pz.raw_env) and clone is not e
        assert clone.max_cycles == 7 and clone.render_mode == "rgb_array"
        assert clone.scenario.replace(max_steps=7) == e.scenario.replace(max_steps=7)
        assert data_equivalence(_first_steps(clone), _first_steps(e))


def test_env_card_example_runs():
    import doctest

    result = doctest.testmod(pz, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 5 and result.failed == 0


def test_reset_accepts_any_options_and_checks_the_seed():
    e = pz.parallel_env(n_agents=2)
    e.reset(seed=0, options={"anything": 1})  # no options yet: accepted, ignored
    with pytest.raises(ValidationError, match=r"options: got 3; expected None or a dict"):
        e.reset(options=3)
    for seed in (-1, 1.5, "3", True):
        with pytest.raises(ValidationError, match=r"seed: got"):
            e.reset(seed=seed)


def test_importing_plume_multi_registers_in_pettingzoo():
    import subprocess
    import sys

    code = ("import sys, pettingzoo, plume_multi; "
            "env = pettingzoo.make('parallel', 'plume_multi/plume_search-v0', n_agents=2); "
            "print(type(env).__name__, 'plume_multi.envs.pettingzoo' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["raw_env", "True"]
