"""Actions given to the PettingZoo env: every accepted form means the same thing, and every
invalid one is refused with a ValidationError that names the agent and what was expected,
before anything changes."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from hypothesis import given
from hypothesis import strategies as st

from plume_multi import ValidationError
from plume_multi.envs import pettingzoo as pz

# searcher_1 is one step (RIGHT) from the source; the others cannot reach it for a while.
CFG = dict(n_agents=4, grid_size=(15, 9), source_location=(7, 4),
           start_positions=((0, 0), (6, 4), (14, 8), (0, 8)))
NAMES = ["searcher_0", "searcher_1", "searcher_2", "searcher_3"]
EXPECTED = r"expected an integer in 0\.\.3 \(action model 'cardinal': 0 UP, 1 RIGHT, 2 DOWN, 3 LEFT\)"


def fresh(with_dead_agent: bool = False):
    e = pz.parallel_env(**CFG)
    e.reset()
    if with_dead_agent:
        e.step({"searcher_0": 0, "searcher_1": 1, "searcher_2": 2, "searcher_3": 3})
        assert e.agents == ["searcher_0", "searcher_2", "searcher_3"]
    return e


def snapshot(e):
    return (list(e.agents), e.simulator.positions.copy(), e.simulator.active.copy(),
            e.simulator.world_steps.copy(), e.state())


def assert_refused(e, actions, pattern):
    before = snapshot(e)
    with pytest.raises(ValidationError, match=pattern):
        e.step(actions)
    assert data_equivalence(snapshot(e), before), "a refused step changed the env"
    # and the env still works
    e.step({a: 0 for a in e.agents})


def valid(**changes):
    actions = dict.fromkeys(NAMES, 0)
    actions.update(changes)
    return actions


@pytest.mark.parametrize("value, pattern", [
    (4, r"actions\['searcher_2'\] = 4 is out of range; " + EXPECTED),
    (-1, r"actions\['searcher_2'\] = -1 is out of range"),
    (np.int64(7), r"actions\['searcher_2'\] = 7 is out of range"),
    (np.uint64(2**64 - 1), r"actions\['searcher_2'\] = 18446744073709551615 is out of range"),
    (2**70, r"actions\['searcher_2'\] = 1180591620717411303424 is out of range"),
    (np.array(9), r"actions\['searcher_2'\] = 9 is out of range"),
])
def test_out_of_range_action_is_refused(value, pattern):
    assert_refused(fresh(), valid(searcher_2=value), pattern)


@pytest.mark.parametrize("value", [1.0, np.float32(2), True, np.bool_(False), "1", None,
                                   np.array([1]), np.array(1.0), [1], 1 + 0j])
def test_non_integer_action_is_refused(value):
    assert_refused(fresh(), valid(searcher_3=value),
                   r"actions\['searcher_3'\]: got .*; " + EXPECTED + r": a Python int, NumPy integer "
                   r"or 0-d integer array \(booleans, floats and None are not actions\)")


def test_missing_agent_is_refused():
    actions = valid()
    del actions["searcher_2"]
    assert_refused(fresh(), actions, r"actions: no action for 1 live agent\(s\), first 'searcher_2'; "
                                     r"expected one action for each of the 4 agents in env.agents")
    assert_refused(fresh(), {}, r"no action for 4 live agent\(s\), first 'searcher_0'")


def test_actions_for_finished_agents_are_ignored_but_checked():
    """Trainers that batch over possible_agents (AgileRL) send actions for finished agents too."""
    e, twin = fresh(with_dead_agent=True), fresh(with_dead_agent=True)
    assert "searcher_1" not in e.agents
    got = e.step({"searcher_0": 0, "searcher_1": 1, "searcher_2": 0, "searcher_3": 0})
    want = twin.step({"searcher_0": 0, "searcher_2": 0, "searcher_3": 0})
    assert set(got[0]) == set(want[0]) == {"searcher_0", "searcher_2", "searcher_3"}
    for mine, theirs in zip(got, want):
        for agent in theirs:
            np.testing.assert_array_equal(mine[agent], theirs[agent])
    assert e.agents == twin.agents
    # a bad value is refused even for a finished agent, naming it
    assert_refused(fresh(with_dead_agent=True), {"searcher_0": 0, "searcher_1": 7, "searcher_2": 0, "searcher_3": 0},
                   r"actions\['searcher_1'\] = 7 is out of range")
    assert_refused(fresh(with_dead_agent=True), {"searcher_0": 0, "searcher_1": 0.5, "searcher_2": 0, "searcher_3": 0},
                   r"actions\['searcher_1'\]: got 0.5 \(float\)")


@pytest.mark.parametrize("key", ["searcher_4", "searcher_01", "player_0", 0, ("searcher_0",)])
def test_unknown_agent_is_refused(key):
    actions = valid()
    actions[key] = 0
    assert_refused(fresh(), actions, r"actions: unknown agent .*; expected names from env.agents "
                                     r"\('searcher_0' … 'searcher_3'\)")


@pytest.mark.parametrize("actions", [[0, 0, 0, 0], np.zeros(4, np.int64), 0, None])
def test_actions_that_are_not_a_dict_are_refused(actions):
    assert_refused(fresh(), actions, r"actions: got .+ \(\w+\); expected a dict \{agent: action\} for the 4 agents")


def test_range_is_checked_for_the_moore_model_too():
    e = pz.parallel_env(n_agents=2, action_model="moore")
    e.reset(seed=0)
    e.step({"searcher_0": 8, "searcher_1": 0})  # 8 = stay is valid here
    with pytest.raises(ValidationError, match=r"= 9 is out of range; expected an integer in 0\.\.8 "
                                              r"\(action model 'moore': 0 UP, .* 8 STAY\)"):
        e.step({"searcher_0": 9, "searcher_1": 0})


# Every accepted form of an action, and any key order, means the same as a plain int in order.
FORMS = [int, np.int64, np.int32, np.int8, np.uint8, np.uint16, np.uint64, np.intc,
         lambda v: np.array(v), lambda v: np.array(v, dtype=np.uint32)]


@given(
    steps=st.lists(
        st.tuples(st.lists(st.integers(0, 3), min_size=4, max_size=4),
                  st.lists(st.sampled_from(range(len(FORMS))), min_size=4, max_size=4),
                  st.permutations(range(4))),
        min_size=1, max_size=4),
    kill_first=st.booleans(),
)
def test_accepted_action_forms_and_key_orders_mean_the_same(steps, kill_first):
    plain, typed = fresh(kill_first), fresh(kill_first)
    for values, forms, order in steps:
        if not plain.agents:
            break
        live = plain.agents
        reference = {a: values[k] for k, a in enumerate(live)}
        given_actions = {}
        for k in order:
            if k < len(live):
                given_actions[live[k]] = FORMS[forms[k]](values[k])
        assert data_equivalence(typed.step(given_actions), plain.step(reference))
        assert typed.agents == plain.agents
