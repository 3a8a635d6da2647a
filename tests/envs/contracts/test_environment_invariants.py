"""Seed 000's class invariants I1-I9, each checked after every call of random call sequences.

``lifecycle`` (tests/envs/single_agent_reference.py) runs the calls and, beside them, a plain model of
the transition table: it fails at once if a call's outcome or the next state disagrees.
"""

import pytest
from hypothesis import given, strategies as st

from plume_multi import StateError
from plume_multi.envs.components import AgentState
from plume_multi.envs.single import MAX_SEED, EnvironmentState

from single_agent_reference import call_lists, lifecycle

seeds = st.integers(0, MAX_SEED - 64)


@given(calls=call_lists, seed=seeds)
def test_state_always_valid(calls, seed):
    """I1: state is one of the five states (and the one the transition table predicts)."""
    for _, env in lifecycle(calls, seed):
        assert isinstance(env.state, EnvironmentState)
        assert env.state in set(EnvironmentState)


def test_state_is_read_only():
    for _, env in lifecycle([]):
        with pytest.raises(AttributeError):
            env.state = EnvironmentState.READY
        assert env.state is EnvironmentState.CREATED


@given(calls=call_lists, seed=seeds)
def test_agent_state_exists_when_ready(calls, seed):
    """I2: READY => an AgentState with 0 <= orientation < 360, inside the grid."""
    for _, env in lifecycle(calls, seed):
        if env.state is EnvironmentState.READY:
            agent = env.agent_state
            assert isinstance(agent, AgentState)
            assert 0 <= agent.orientation < 360
            w, h = env.scenario.grid_size
            assert 0 <= agent.position[0] < w and 0 <= agent.position[1] < h
        elif env.state is EnvironmentState.CREATED:
            assert env.agent_state is None  # C7: no episode before the first reset


@given(calls=call_lists, seed=seeds)
def test_closed_state_is_terminal(calls, seed):
    """I3: once CLOSED, every operation but close raises StateError; nothing leaves CLOSED."""
    for _, env in lifecycle(list(calls) + ["close"], seed):
        pass
    for operation in (lambda: env.reset(seed=0), lambda: env.reset(), lambda: env.step(0), env.render):
        with pytest.raises(StateError, match="closed"):
            operation()
        assert env.state is EnvironmentState.CLOSED
    env.close()
    assert env.state is EnvironmentState.CLOSED


@given(calls=call_lists, seed=seeds)
def test_episode_count_monotonic(calls, seed):
    """I4, I8: episode_count >= 0, never decreases, +1 exactly on each successful reset."""
    previous = 0
    for call, env in lifecycle(calls, seed):
        count = env.episode_count
        assert count >= 0
        started = call.startswith("reset") and env.state is EnvironmentState.READY
        assert count == previous + (1 if started else 0)
        previous = count


@given(calls=call_lists, seed=seeds)
def test_component_availability(calls, seed):
    """I5: the four components are always there."""
    for _, env in lifecycle(calls, seed):
        for component in (env.action_processor, env.observation_model, env.reward_fn, env.plume_model):
            assert component is not None


@given(calls=call_lists, seed=seeds)
def test_step_count_non_negative(calls, seed):
    """I6: step_count >= 0, and +1 on every step that runs."""
    previous = 0
    for call, env in lifecycle(calls, seed):
        assert env.step_count >= 0
        if call == "step" and env.state not in (EnvironmentState.CREATED, EnvironmentState.CLOSED):
            assert env.step_count == previous + 1
        previous = env.step_count


@given(calls=call_lists, seed=seeds)
def test_step_count_resets_with_episode(calls, seed):
    """I6: a reset sets step_count to 0."""
    for call, env in lifecycle(calls, seed):
        if call.startswith("reset") and env.state is EnvironmentState.READY:
            assert env.step_count == 0


@given(calls=call_lists, seed=seeds)
def test_step_count_bounded(calls, seed):
    """I7: READY => step_count <= max_steps."""
    for _, env in lifecycle(calls, seed):
        if env.state is EnvironmentState.READY:
            assert env.step_count <= env.scenario.max_steps


@given(calls=call_lists, seed=seeds)
def test_seed_validity(calls, seed):
    """I9: the episode seed is None (no episode yet) or 0 <= seed < 2**31."""
    for _, env in lifecycle(calls, seed):
        s = env.episode_seed
        assert s is None or (type(s) is int and 0 <= s < 2**31)
        if env.episode_count == 0:
            assert s is None
