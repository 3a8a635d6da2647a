"""Policies' own arguments (issue 32, items 3 and 12): every bad one is our ``ValidationError`` naming
the argument, what was given and what was expected, raised before anything is drawn, allocated or
compiled; NumPy's, Python's or a ``MemoryError`` never reach the caller, and nothing is cast in
silence (``n_actions=2.7`` was 2 actions, a NaN concentration a turn)."""

import numpy as np
import pytest

from plume_multi import plumes
from plume_multi.errors import ValidationError
from plume_multi.policies import GradientClimber, Infotaxis, RandomBoxPolicy, RandomPolicy
from plume_multi.policies.infotaxis import run_search

PLUME = plumes.PoissonHits(lambda_over_dx=1.0, R_dt=1.0)
H, W = PLUME.shape


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_actions=2.7), r"RandomPolicy\.n_actions: got 2\.7; expected an integer in 1\.\."),
    (dict(n_actions=0), r"RandomPolicy\.n_actions: got 0; expected an integer in 1\.\."),
    (dict(n_actions=-1), r"RandomPolicy\.n_actions: got -1"),
    (dict(n_actions="a"), r"RandomPolicy\.n_actions: got 'a'"),
    (dict(n_actions=True), r"RandomPolicy\.n_actions: got True"),
    (dict(seed=-1), r"RandomPolicy\.seed: got -1; expected None or an integer"),
    (dict(seed="x"), r"RandomPolicy\.seed: got 'x' \(str\)"),
    (dict(seed=1.5), r"RandomPolicy\.seed: got 1\.5 \(float\)"),
])
def test_random_policy_refuses_its_bad_arguments(kwargs, match):
    with pytest.raises(ValidationError, match=match):
        RandomPolicy(**kwargs)


@pytest.mark.parametrize("low, high, match", [
    ((1.0,), (0.0,), r"RandomBoxPolicy\.high: got \(0\.0,\); expected numbers >= low"),
    ((0.0,), (np.inf,), r"RandomBoxPolicy\.high: got \(inf,\); expected a 1-D sequence of finite numbers"),
    ((np.nan,), (1.0,), r"RandomBoxPolicy\.low: got \(nan,\)"),
    (np.zeros((2, 2)), np.ones((2, 2)), r"RandomBoxPolicy\.low: got array"),
    ((0.0, 0.0), (1.0,), r"RandomBoxPolicy\.high: got \(1\.0,\); expected 2 numbers, as many as low"),
    ((), (), r"RandomBoxPolicy\.low: got \(\)"),
    (("a",), ("b",), r"RandomBoxPolicy\.low: got \('a',\)"),
    ((-1e308,), (1e308,), r"RandomBoxPolicy\.low: got \(-1e\+308,\)"),  # high - low overflows
])
def test_random_box_policy_refuses_boxes_it_cannot_draw_from(low, high, match):
    with pytest.raises(ValidationError, match=match):
        RandomBoxPolicy(low, high)


def test_the_random_policies_draw_as_before_for_good_arguments():
    obs = np.zeros((5, 3), np.float32)
    assert np.array_equal(RandomPolicy(4, seed=3)(obs), np.random.default_rng(3).integers(0, 4, 5, dtype=np.int64))
    box = RandomBoxPolicy([0, -30], [0.2, 30], seed=1)(obs)
    assert box.shape == (5, 2) and (box[:, 0] <= 0.2).all() and (np.abs(box[:, 1]) <= 30).all()
    for policy in (RandomPolicy(4), RandomBoxPolicy([0.0], [1.0])):
        with pytest.raises(ValidationError, match=r"obs: got an array of shape \(5,\)"):
            policy(np.zeros(5, np.float32))


def test_gradient_climber_refuses_what_it_cannot_climb():
    climber = GradientClimber(seed=0)
    obs = np.zeros((3, 2), np.float32)
    obs[1, 0] = np.nan
    with pytest.raises(ValidationError, match=r"GradientClimber: obs\[1, 0\]: got nan; expected a finite"):
        climber(obs)
    with pytest.raises(ValidationError, match=r"GradientClimber: obs: got an array of shape \(3,\)"):
        climber(np.zeros(3, np.float32))
    with pytest.raises(ValidationError, match=r"GradientClimber: obs: got an array of shape \(3, 2\) dtype <U1"):
        climber(np.full((3, 2), "a"))
    with pytest.raises(ValidationError, match=r"GradientClimber\.seed: got -1"):
        GradientClimber(seed=-1)
    assert climber(np.ones((3, 2), np.float32)).shape == (3,)  # a finite one acts, memory untouched by the refusals


@pytest.mark.parametrize("rule", [["believer"], {}, None, 1])
def test_infotaxis_and_run_search_refuse_a_team_rule_that_is_not_a_name(rule):
    with pytest.raises(ValidationError, match=r"Infotaxis\.team_rule: got .*; expected one of \['believer', "
                                              r"'independent'\]"):
        Infotaxis(team_rule=rule)
    with pytest.raises(ValidationError, match=r"run_search\.team_rule: got"):
        run_search(PLUME, 1, team_rule=rule)


@pytest.mark.parametrize("kwargs, match", [
    (dict(max_steps=2**63), r"run_search\.max_steps: got 9223372036854775808; expected an integer in 1\.\.2147483647"),
    (dict(max_steps=2**31), r"run_search\.max_steps: got 2147483648"),
    (dict(n_episodes=10**10), r"run_search\.n_episodes: got 10000000000"),
    (dict(team_size=10**12), r"run_search\.team_size: got 1000000000000"),
    (dict(n_episodes=2.0), r"run_search\.n_episodes: got 2\.0"),
    (dict(seed=-1), r"run_search\.seed: got -1"),
    (dict(batch=0), r"run_search\.batch: got 0"),
])
def test_run_search_refuses_counts_before_allocating(kwargs, match):
    args = dict(n_episodes=1) | kwargs
    with pytest.raises(ValidationError, match=match):
        run_search(PLUME, **args)


def test_run_search_refuses_a_batch_that_does_not_fit_in_memory(monkeypatch):
    import plume_multi.checks as checks

    monkeypatch.setattr(checks, "available_memory", lambda: 64 * 2**20)  # 64 MiB left
    # 10**6 searchers' beliefs of 19 x 19 cells, each their own: 2.7 GiB, refused before np.empty
    with pytest.raises(ValidationError, match=r"run_search: 1 episodes of 1000000 searcher\(s\) in batches of 1 "
                                              r"needs 2\.\d GiB; 0\.1 GiB of memory is available"):
        run_search(PLUME, 1, team_size=10**6, shared=False)


def test_decide_refuses_beliefs_groups_it_cannot_read():
    policy = Infotaxis(plume=PLUME)
    uniform = np.full((1, H, W), 1.0 / (H * W))
    at = np.array([[W // 2, H // 2]])
    with pytest.raises(ValidationError, match=r"Infotaxis\.decide: beliefs: got an array of dtype <U3"):
        policy.decide(np.full((1, H, W), "0.5"), at)
    with pytest.raises(ValidationError, match=r"Infotaxis\.decide: beliefs: got an array of dtype bool"):
        policy.decide(np.ones((1, H, W), bool), at)
    with pytest.raises(ValidationError, match=r"Infotaxis\.decide: groups: got 'a' \(str\); expected None, a team "
                                              r"size"):
        policy.decide(uniform, at, groups="a")
    with pytest.raises(ValidationError, match=r"groups: got \[0\.0, 1\.0\] \(list\)"):
        policy.decide(uniform, at, groups=[0.0, 1.0])
    with pytest.raises(ValidationError, match=r"Infotaxis\.decide: beliefs\[0\] sums to 0\.0 .*expected each belief "
                                              r"to sum to 1"):
        policy.decide(np.zeros((1, H, W)), at)
    with pytest.raises(ValidationError, match=r"beliefs\[1\] sums to 2\.0"):
        policy.decide(np.concatenate([uniform, 2 * uniform]), np.repeat(at, 2, axis=0))
    # a group without an active agent is skipped: its belief (zeros once its source was found) is not read
    actions = policy.decide(np.concatenate([uniform, np.zeros((1, H, W))]), np.repeat(at, 2, axis=0),
                            active=np.array([True, False]))
    assert actions.shape == (2,) and 0 <= actions[0] < len(PLUME.moves)
