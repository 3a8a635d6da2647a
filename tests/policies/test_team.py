"""policies.Team: mixed teams on one shared belief against the NumPy reference, and a Team in
every front-end (Simulator, evaluate, parallel_env, multi_agent_vector_env).

The engine runs the Poisson search combination of tests/models/plumes/test_poisson_hits_engine.py
(PoissonHits + Cardinal + Hits + Belief, several agents): grid sizes are numbers, not compiled. In 3-D
the teams decide on arrays (the beliefs of PoissonHits(dims=3)), and the 3-D engine runs the
scenario of tests/models/plumes/test_poisson_hits_3d.py, which compiles it (alone, and as a team
of two on one belief: a run-time flag).
"""

from __future__ import annotations

import numba
import numpy as np
import pytest

import policies_reference as ref
from plume_multi import Simulator, StateError, ValidationError, evaluate
from plume_multi.models.plumes.poisson_hits import PoissonHits
from plume_multi.policies import GradientClimber, Greedy, Infotaxis, Team
from plume_multi.policies.infotaxis import run_search
from plume_multi.policies import team_kernels as tk
from plume_multi.policies.team_decide import decide_kinds
from plume_multi.scenarios import poisson_search

KINDS = {"infotaxis": tk.KIND_INFOTAXIS, "space_aware": tk.KIND_SPACE_AWARE, "greedy": tk.KIND_GREEDY,
         "given": tk.KIND_GIVEN}
POLICIES = {"infotaxis": Infotaxis, "space_aware": lambda: Infotaxis(space_aware=True), "greedy": Greedy}


def _like(m):
    if len(m.shape) == 3:
        return ref.r3.Likelihood3(m.shape, m.lambda_over_dx, m.R_dt, m.n_hits)
    return ref.nv.Likelihood(m.shape, m.lambda_over_dx, m.R_dt, m.dims, m.n_hits, m.norm)


def _moves(m):
    return [tuple(int(v) for v in row) for row in m.moves]


def _random_belief(rng, shape):
    p = rng.random(shape) ** 4
    p[rng.random(shape) < 0.2] = 0.0
    return p / p.sum()


def _mixed_teams(dims):
    """``(plume, [(belief, positions, kinds)], given)``: three teams of four on one belief each,
    the first at the start cell, with given moves (one off the grid, clamped for the believers'
    update) and every kind; in 3-D on volumes ``(D, H, W)`` with the six moves of ``Cardinal``."""
    if dims == 2:
        m, rng = PoissonHits(1.0, 2.0, grid_size=11), np.random.default_rng(7)
        rest = [([(2, 3), (2, 3), (9, 10), (0, 0)], ["infotaxis", "given", "greedy", "greedy"]),
                ([(5, 5), (4, 5), (10, 0), (5, 6)], ["space_aware", "greedy", "given", "infotaxis"])]
        given = [0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 2, 0]  # LEFT from (2, 3); DOWN off the grid at (10, 0)
    else:
        m, rng = PoissonHits(1.0, 2.0, dims=3, grid_size=7, n_hits=3), np.random.default_rng(8)
        rest = [([(1, 2, 3), (1, 2, 3), (6, 0, 6), (0, 0, 0)], ["infotaxis", "given", "greedy", "greedy"]),
                ([(3, 3, 3), (2, 3, 3), (6, 0, 0), (3, 4, 2)], ["space_aware", "greedy", "given", "infotaxis"])]
        given = [0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 5, 0]  # -x from (1, 2, 3); -z off the grid at (6, 0, 0)
    teams = [(m.initial_belief(1), [m.start] * 4, ["greedy", "infotaxis", "space_aware", "greedy"])]
    teams += [(_random_belief(rng, m.shape), pos, kinds) for pos, kinds in rest]
    return m, teams, np.array(given)


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("rule", ["believer", "independent"])
def test_mixed_teams_match_the_sequential_reference(rule, dims):
    """Each agent in turn decides with its own policy on the belief updated with the earlier
    agents' moves and most likely hits (believer), or on the shared belief alone; in 2-D and 3-D."""
    m, teams, given = _mixed_teams(dims)
    like, moves = _like(m), _moves(m)
    beliefs = np.stack([t[0] for t in teams])
    positions = np.array([p for t in teams for p in t[1]])
    kinds = np.array([KINDS[k] for t in teams for k in t[2]])
    got, scores = decide_kinds("test", m, beliefs, positions, kinds, rule, groups=4, given=given)
    want = []
    for g, (belief, pos, kind) in enumerate(teams):
        want += ref.mixed_team_decide(belief, pos, kind, moves, like, given=given[4 * g:4 * g + 4], rule=rule)
    assert got.tolist() == want
    assert np.isnan(scores[kinds == tk.KIND_GIVEN]).all() and np.isfinite(scores[kinds == tk.KIND_GREEDY]).any()
    if rule == "believer":  # four agents at one cell spread out
        assert len(set(got[:4].tolist())) > 1


@pytest.mark.parametrize("kind", ["infotaxis", "space_aware"])
def test_3d_uniform_infotaxis_teams_are_infotaxis_for_any_thread_count(kind):
    """A team of one infotaxis kind decides in 3-D exactly as Infotaxis (actions and scores bit
    for bit), under both rules; a mixed team's decisions do not depend on the thread count."""
    m = PoissonHits(1.0, 2.0, dims=3, grid_size=7, n_hits=3)
    rng = np.random.default_rng(9)
    beliefs = np.stack([m.initial_belief(2)] + [_random_belief(rng, m.shape) for _ in range(4)])
    positions = np.concatenate([np.array([m.start] * 3), rng.integers(0, 7, (12, 3))])
    active = np.ones(15, dtype=np.bool_)
    active[6:9] = False  # a group without an active agent is skipped
    for rule in ("believer", "independent"):
        alone = Infotaxis(space_aware=kind == "space_aware", plume=m, team_rule=rule)
        want = alone.decide(beliefs, positions, groups=3, active=active)
        got, scores = decide_kinds("test", m, beliefs, positions, KINDS[kind], rule, groups=3, active=active)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(scores, alone.scores)
    mixed = np.array([KINDS[k] for k in ["greedy", "infotaxis", "space_aware", "given", "infotaxis"] * 3])
    given = rng.integers(0, 6, 15)
    runs = []
    for threads in (1, 2):
        numba.set_num_threads(threads)
        try:
            runs.append(decide_kinds("test", m, beliefs, positions, mixed, "believer", groups=3, given=given))
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])


def test_3d_teams_act_on_a_simulator_and_check_their_inputs():
    """The 3-D engine's one-agent Poisson search (one belief per agent): a team of one decides as
    its policy, greedy as the reference; arrays of the wrong shape are refused."""
    sc = poisson_search(1.0, 2.0, dims=3, grid_size=7, n_hits=3, max_steps=100, team=False)
    sim = Simulator(sc, num_worlds=12, autoreset="disabled")
    sim.reset(seed=3)
    moves = _moves(sc.plume)
    for _ in range(3):
        greedy = Team([Greedy()]).act(sim)
        np.testing.assert_array_equal(greedy, Greedy().act(sim))
        beliefs = sim.state.models["sensor1.belief"]
        assert greedy.tolist() == [ref.greedy_decide(beliefs[b], sim.positions[b], moves)[0] for b in range(12)]
        np.testing.assert_array_equal(Team([Infotaxis()]).act(sim), Infotaxis().act(sim))
        sim.step(greedy)
    m = sc.plume
    with pytest.raises(ValidationError, match=r"Team.act: beliefs has shape \(2, 7, 7\); expected \(G, 7, 7, 7\)"):
        decide_kinds("Team.act", m, np.ones((2, 7, 7)) / 49, [[3, 3, 3], [3, 3, 3]], tk.KIND_GREEDY, "believer")
    with pytest.raises(ValidationError, match=r"positions has shape \(2, 2\).*expected \(M, 3\)"):
        decide_kinds("Team.act", m, np.stack([m.initial_belief(1)] * 2), [[3, 3], [3, 3]], tk.KIND_GREEDY, "believer")


def test_a_3d_team_plays_the_protocol_runner_s_episodes_and_decides_as_the_reference():
    """The 3-D engine's Poisson search with a team of two on one belief (``team=True``, the same
    compiled step as the one-agent search): infotaxis for both plays ``run_search``'s team
    episodes (arrival steps and sources), and a mixed team (greedy, infotaxis) decides on the
    shared belief as the sequential reference."""
    sc = poisson_search(1.0, 2.0, dims=3, grid_size=7, n_hits=3, n_agents=2, max_steps=40, team=True)
    sim = Simulator(sc, num_worlds=4, autoreset="disabled")
    sim.reset(seed=3)
    steps = np.full(4, 40)
    for t in range(1, 41):
        active = sim.active.reshape(4, 2).any(axis=1)
        _, reward, _, _ = sim.step(Infotaxis().act(sim))
        steps[(reward.reshape(4, 2) > 0).any(axis=1) & active] = t
        if not sim.active.any():
            break
    run = run_search(sc.plume, 4, team_size=2, shared=True, seed=3, max_steps=40)
    np.testing.assert_array_equal(steps, run.steps)
    np.testing.assert_array_equal(sim.sources, run.source)
    assert run.found.any()
    sim.reset(seed=5)
    like, moves, names = _like(sc.plume), _moves(sc.plume), ["greedy", "infotaxis"]
    compared = 0
    for _ in range(4):
        actions = Team([POLICIES[n]() for n in names]).act(sim)
        beliefs = sim.state.models["sensor1.belief"]
        for b in range(4):
            if sim.active[2 * b:2 * b + 2].all():
                want = ref.mixed_team_decide(beliefs[b], sim.positions[2 * b:2 * b + 2].tolist(), names, moves, like)
                assert actions[2 * b:2 * b + 2].tolist() == want
                compared += 1
        sim.step(actions)
    assert compared >= 8


@pytest.fixture(scope="module")
def poisson_sim():
    """Two worlds of the Poisson search with a team of three on one belief (11 x 11 domain)."""
    return Simulator(poisson_search(1.0, 2.0, n_agents=3, team=True, max_steps=60, grid_size=11), num_worlds=2,
                     autoreset="disabled")


def test_a_team_on_a_simulator_decides_as_the_reference_and_one_kind_as_that_policy(poisson_sim):
    sim = poisson_sim
    sim.reset(seed=3)
    m = sim.scenario.plume
    like, moves = _like(m), _moves(m)
    names = ["greedy", "infotaxis", "space_aware"]
    team = Team([POLICIES[n]() for n in names])
    compared = 0
    for _ in range(6):
        if not sim.active.any():
            break
        beliefs = sim.state.models["sensor1.belief"]
        actions = team.act(sim)
        for b in range(2):
            if sim.active[3 * b:3 * b + 3].any():
                want = ref.mixed_team_decide(beliefs[b], sim.positions[3 * b:3 * b + 3].tolist(), names, moves, like)
                assert actions[3 * b:3 * b + 3].tolist() == want
                compared += 1
        np.testing.assert_array_equal(Team([Infotaxis()] * 3).act(sim), Infotaxis().act(sim))
        np.testing.assert_array_equal(Team({0: Greedy(), 1: Greedy(), 2: Greedy()}).act(sim), Greedy().act(sim))
        sim.step(actions)
    assert compared >= 4


def test_evaluate_takes_one_policy_per_agent(poisson_sim):
    sc = poisson_sim.scenario
    mixed = [Infotaxis(), Greedy(), Infotaxis(space_aware=True)]
    a = evaluate(mixed, sc, episodes=12, seed=5, num_worlds=12, progress=False)
    b = evaluate({0: Infotaxis(), 1: Greedy(), 2: Infotaxis(space_aware=True)}, sc, episodes=12, seed=5,
                 num_worlds=5, progress=False)
    c = evaluate(Team(mixed), sc, episodes=12, seed=5, num_worlds=12, progress=False)
    np.testing.assert_array_equal(a.arrival_time, b.arrival_time)
    np.testing.assert_array_equal(a.arrival_time, c.arrival_time)
    assert a.success_rate > 0.5
    uniform = evaluate([Infotaxis()] * 3, sc, episodes=12, seed=5, progress=False)
    alone = evaluate(Infotaxis(), sc, episodes=12, seed=5, progress=False)
    np.testing.assert_array_equal(uniform.arrival_time, alone.arrival_time)
    with pytest.raises(ValidationError, match="got 2 policies .* for worlds of 3 agents"):
        evaluate([Infotaxis(), Greedy()], sc, episodes=2, progress=False)


def test_front_ends_take_a_team_through_their_simulator(poisson_sim):
    from plume_multi import multi_agent_vector_env, parallel_env

    sc = poisson_sim.scenario
    fields = dict(plume=sc.plume, sensors=sc.sensors, start_positions=sc.start_positions, team=True)
    team = Team([Infotaxis(), Greedy(), Infotaxis(space_aware=True)])
    env = parallel_env(n_agents=3, max_cycles=60, **fields)
    env.reset(seed=4)
    sim = Simulator(sc, num_worlds=1, autoreset="disabled")
    sim.reset(seed=4)
    steps = 0
    while env.agents:
        actions = team.act(env)
        assert isinstance(actions, dict) and list(actions) == env.agents
        want = team.act(sim)
        assert [int(a) for a in actions.values()] == want.tolist()
        env.step(actions)
        sim.step(want)
        np.testing.assert_array_equal(env.simulator.positions, sim.positions)
        steps += 1
    assert 0 < steps < 60
    envs = multi_agent_vector_env(num_worlds=2, n_agents=3, max_steps=60, **fields)
    envs.reset(seed=4)
    actions = team.act(envs)
    assert actions.shape == (6,) and actions.tolist() == team.act(envs.simulator).tolist()
    envs.step(actions)


def test_members_that_read_observations_get_their_rows():
    class Constant:
        def __init__(self, action):
            self.action, self.seen = action, []

        def __call__(self, obs):
            self.seen.append(obs[:, 0].tolist())
            return np.full(len(obs), self.action)

    up, right = Constant(0), Constant(1)
    team = Team([up, right, up])
    obs = np.arange(12, dtype=np.float32).reshape(6, 2)  # two worlds of three agents
    assert team(obs).tolist() == [0, 1, 0, 0, 1, 0]
    assert up.seen == [[0.0, 4.0, 6.0, 10.0]] and right.seen == [[2.0, 8.0]]  # one call each, rows in order
    climbers = Team([GradientClimber(seed=0), GradientClimber(seed=1)])
    assert climbers(np.zeros((4, 3), np.float32)).shape == (4,)
    climbers.reset(np.array([True, False, False, True]))


def test_team_checks_its_members_and_its_use(poisson_sim):
    with pytest.raises(ValidationError, match="Team.members: got no policy"):
        Team([])
    with pytest.raises(ValidationError, match="every agent index 0..1 once"):
        Team({0: Greedy(), 2: Greedy()})
    with pytest.raises(ValidationError, match=r"Team.members\[1\]: got 3"):
        Team([Greedy(), 3])
    with pytest.raises(ValidationError, match="Team.members: got 'greedy'"):
        Team("greedy")
    with pytest.raises(ValidationError, match="Team.team_rule"):
        Team([Greedy()], team_rule="swarm")
    with pytest.raises(StateError, match="need the simulator"):
        Team([Greedy(), Infotaxis()])(np.zeros((2, 3), np.float32))
    with pytest.raises(ValidationError, match="the team has 2 policies for worlds of 3 agents"):
        Team([Greedy(), Infotaxis()]).act(poisson_sim)
    with pytest.raises(ValidationError, match="expected a plume_multi Simulator"):
        Team([Greedy()] * 3).act("sim")
    poisson_sim.reset(seed=0)
    with pytest.raises(ValidationError, match="gave actions in 7..7"):
        Team([Greedy(), lambda obs: np.full(len(obs), 7), Greedy()]).act(poisson_sim)
