"""PoissonHits, sensors.Hits and sensors.Belief in the engine: the same episodes as run_search."""

from __future__ import annotations

import numpy as np
import pytest

import poisson_reference as nv
from plume_multi import Simulator, ValidationError
from plume_multi.policies.infotaxis import Infotaxis, run_search
from plume_multi.models.plumes.poisson_hits import kernels as kp
from plume_multi.models.plumes.poisson_hits import PoissonHits
from plume_multi.models.sensors import Belief, Concentration, Hits, Position
from plume_multi.scenario import Scenario
from plume_multi.scenarios import poisson_search


def _play(sim, policy, max_steps):
    """Steps until every world's search ended: (steps, found) per world (first arrival)."""
    B, N = sim.num_worlds, sim.scenario.n_agents
    steps = np.full(B, max_steps)
    found = np.zeros(B, dtype=bool)
    done = np.zeros(B, dtype=bool)
    for t in range(1, max_steps + 1):
        _, reward, term, trunc = sim.step(policy.act(sim))
        arrived = (reward.reshape(B, N) > 0).any(axis=1) & ~done
        steps[arrived] = t
        found |= arrived
        done |= arrived | trunc.reshape(B, N).all(axis=1)
        if done.all():
            break
    return steps, found


@pytest.mark.parametrize("n_agents,team,space_aware", [(1, True, False), (1, True, True), (3, True, False), (2, False, False)])
def test_engine_episodes_equal_the_protocol_runner(n_agents, team, space_aware):
    sc = poisson_search(1.0, 2.0, n_agents=n_agents, team=team, max_steps=200)
    sim = Simulator(sc, num_worlds=24, autoreset="disabled")
    sim.reset(seed=5)
    steps, found = _play(sim, Infotaxis(space_aware), 200)
    ref = run_search(sc.plume, 24, team_size=n_agents, shared=team, space_aware=space_aware, seed=5, max_steps=200)
    np.testing.assert_array_equal(steps, ref.steps)
    np.testing.assert_array_equal(found, ref.found)
    np.testing.assert_array_equal(sim.state.models["plume.source"], ref.source)
    np.testing.assert_array_equal(sim.state.models["plume.first_hit"], ref.first_hit)


def test_hits_and_belief_observations():
    sc = poisson_search(1.0, 2.0, n_agents=2, team=False, max_steps=50, grid_size=11)
    plume = sc.plume
    h_, w_ = plume.shape
    sim = Simulator(sc, num_worlds=3, autoreset="disabled")
    obs = sim.reset(seed=9)
    first = sim.state.models["plume.first_hit"]
    np.testing.assert_array_equal(obs[:, 0], np.repeat(first, 2))  # after a reset: the first hit
    like = nv.Likelihood(plume.shape, 1.0, 2.0, 2, plume.n_hits)
    refs = [plume.initial_belief(int(first[i // 2])) for i in range(6)]
    src = sim.state.models["plume.source"].astype(int)
    rng_ = np.random.default_rng(0)
    for t in range(1, 6):
        actions = rng_.integers(0, 4, 6)
        obs, _, term, _ = sim.step(actions)
        for i in range(6):
            b, n = divmod(i, 2)
            x, y = sim.state.pos[i]
            if (x, y) == tuple(src[b]) or not sim.state.active[i] and term[i]:
                continue
            key = np.uint64(kp.rng.stream_key(9 + b, 0, kp.STREAM_HITS))
            hit = kp.draw_hit(key, t, n, plume.centred_likelihood, (src[b, 0] - x, src[b, 1] - y))
            assert obs[i, 0] == hit
            refs[i] = nv.update(refs[i], like(hit, x, y), x, y)
            img = np.zeros((2 * h_ - 1, 2 * w_ - 1), np.float32)
            img[h_ - 1 - y:2 * h_ - 1 - y, w_ - 1 - x:2 * w_ - 1 - x] = refs[i]
            np.testing.assert_allclose(obs[i, 1:].reshape(img.shape), img, rtol=1e-5, atol=1e-9)
    assert sim.validate() == []


def test_sensors_need_the_poisson_plume():
    with pytest.raises(ValidationError, match="Hits.plume"):
        Scenario(sensors=(Hits(),))
    with pytest.raises(ValidationError, match="Belief.plume"):
        Scenario(sensors=(Belief(),))
    with pytest.raises(ValidationError, match="grid_size"):
        Scenario(plume=PoissonHits(1.0, 2.0), grid_size=(21, 21))


def test_concentration_reads_the_mean_hits_and_1d_runs():
    sc = poisson_search(2.0, 2.0, dims=1, sensors=(Concentration(), Hits(), Position(), Belief()))
    assert sc.grid_size == (sc.plume.grid_size, 1)
    sim = Simulator(sc, num_worlds=2)
    obs = sim.reset(seed=1)
    src = sim.state.models["plume.source"].astype(int)
    for b in range(2):
        d = abs(int(sim.state.pos[b, 0]) - src[b, 0])
        assert obs[b, 0] == np.float32(sc.plume.mean_hits(max(d, 1)))
    steps, found = _play(sim, Infotaxis(), 500)
    ref = run_search(sc.plume, 2, seed=1, max_steps=500)
    np.testing.assert_array_equal(steps, ref.steps)


def test_belief_state_survives_snapshot_and_restore():
    sc = poisson_search(1.0, 2.0, n_agents=2, team=True, max_steps=40, grid_size=11)
    sim = Simulator(sc, num_worlds=3)
    sim.reset(seed=2)
    policy = Infotaxis()
    for _ in range(3):
        sim.step(policy.act(sim))
    snap = sim.snapshot()
    later = [sim.step(policy.act(sim))[0].copy() for _ in range(5)]
    sim.restore(snap)
    again = [sim.step(policy.act(sim))[0].copy() for _ in range(5)]
    for a, b in zip(later, again):
        np.testing.assert_array_equal(a, b)
    assert sim.state.models["sensor1.belief"].shape == (3, 11, 11)


def test_belief_validates_its_argument():
    with pytest.raises(ValidationError, match="Belief.shared"):
        Belief(shared="yes")
    sc = poisson_search(1.0, 2.0, n_agents=2, team=True, sensors=(Hits(), Belief(shared=False)))
    assert Simulator(sc, 2).state.models["sensor1.belief"].shape == (4, 19, 19)


def test_pettingzoo_front_end_runs_the_poisson_search():
    from pettingzoo.test import parallel_api_test

    from plume_multi.envs.pettingzoo import parallel_env

    plume = PoissonHits(1.0, 2.0, grid_size=11)
    env = parallel_env(n_agents=3, plume=plume, sensors=(Hits(), Belief()), start_positions=[plume.start] * 3,
                       team=True, max_cycles=30, render_mode="rgb_array")
    parallel_api_test(env, num_cycles=40)
    obs, _ = env.reset(seed=0)
    assert all(o.shape == (1 + 21 * 21,) for o in obs.values())
    assert env.render().ndim == 3


def test_a_fixed_source_is_every_episodes_and_its_first_hit_follows_its_distance():
    """Issue 23 item 14: PoissonHits(source=(x, y))."""
    sc = poisson_search(1.0, 2.0, grid_size=11, source=(7, 5), max_steps=200)  # two cells right of the start
    sim = Simulator(sc, num_worlds=16, autoreset="disabled")
    sim.reset(seed=4)
    np.testing.assert_array_equal(sim.sources, np.tile([7.0, 5.0], (16, 1)))
    lik = sc.plume.centred_likelihood
    np.testing.assert_array_equal(sim.state.models["plume.first_hit"], [kp.draw_first_hit_at(4 + b, 0, lik, (2, 0))
                                                                        for b in range(16)])
    for b in range(16):
        np.testing.assert_array_equal(sim.state.models["sensor1.belief"][b],
                                      sc.plume.initial_belief(int(sim.state.models["plume.first_hit"][b])))
    steps, found = _play(sim, Infotaxis(), 200)
    ref = run_search(sc.plume, 16, seed=4, max_steps=200)
    np.testing.assert_array_equal(steps, ref.steps)
    assert (ref.source == [7, 5]).all() and found.all()
    with pytest.raises(ValidationError, match="PoissonHits.source"):  # drawn starts: the first hit has no distance
        Scenario(plume=sc.plume, sensors=(Hits(), Belief()))
    with pytest.raises(ValidationError, match="PoissonHits.source"):  # the first agent starts on it
        Scenario(plume=sc.plume, sensors=(Hits(), Belief()), start_positions=((7, 5),))


def test_restore_refuses_a_source_outside_the_domain_it_would_crash_on():
    """Issue 21 item 4: a 1-D search restored with source y = 1000 (within max(w, h) - 1, outside the
    one-row domain) crashed the process with SIGSEGV."""
    sim = Simulator(poisson_search(1.0, 2.0, dims=1, grid_size=1001), num_worlds=2)
    sim.reset(seed=0)
    snap = sim.snapshot()
    before = sim.state.models["plume.source"].copy()
    for column, value, match in [(1, 1000.0, "rows above"), (0, 1001.0, "rows above"), (0, 3.5, "not whole numbers")]:
        bad = dict(snap)
        bad["model:plume.source"] = snap["model:plume.source"].copy()
        bad["model:plume.source"][:, column] = value
        with pytest.raises(ValidationError, match=match):
            sim.restore(bad)
        np.testing.assert_array_equal(sim.state.models["plume.source"], before)  # nothing restored
    sim.state.models["plume.source"][0, 1] = 1000.0
    assert any("plume.source" in p for p in sim.validate())  # reported, not read by compiled code


def test_restore_and_validate_refuse_a_first_hit_below_one():
    """Issue 32, item 3: a first hit of 0 (the protocol conditions every search on one hit at least)
    passed restore and validate()."""
    sim = Simulator(poisson_search(1.0, 2.0, grid_size=11, max_steps=50), num_worlds=3)
    sim.reset(seed=2)
    snap = sim.snapshot()
    for value, match in ((0, r"1 worlds with a first hit below 1 \(first: world 1, 0\)"), (-1, r"1 rows below 0")):
        bad = dict(snap)
        bad["model:plume.first_hit"] = snap["model:plume.first_hit"].copy()
        bad["model:plume.first_hit"][1] = value
        with pytest.raises(ValidationError, match=rf"plume\.first_hit \(PoissonHits\.first_hit\): {match}"):
            sim.restore(bad)
    np.testing.assert_array_equal(sim.state.models["plume.first_hit"], snap["model:plume.first_hit"])
    assert sim.validate() == []
    sim.state.models["plume.first_hit"][2] = 0
    assert any("plume.first_hit" in p and "below 1" in p for p in sim.validate())


def test_restore_refuses_a_belief_that_is_not_the_posterior_of_the_hits():
    """Issue 21 item 8: a zeroed belief passed validate() and stepped on."""
    sim = Simulator(poisson_search(1.0, 2.0, grid_size=11, max_steps=50), num_worlds=3)
    sim.reset(seed=2)
    policy = Infotaxis()
    for _ in range(2):
        sim.step(policy.act(sim))
    assert sim.state.active.all() and sim.validate() == []
    snap = sim.snapshot()
    src = sim.sources.astype(int)
    x, y = sim.state.pos[0]

    def corrupt(edit):
        bad = dict(snap)
        bad["model:sensor1.belief"] = b = snap["model:sensor1.belief"].copy()
        edit(b[0])
        b[0] /= max(b[0].sum(), 1e-300)
        return bad

    def mass_on_agent(p):
        p[y, x] = 0.5

    def source_ruled_out(p):
        p[src[0, 1], src[0, 0]] = 0.0

    cases = [(lambda p: p.fill(0.0), "do not sum to 1"), (mass_on_agent, "non-zero belief"),
             (source_ruled_out, "rules out their source")]
    for edit, match in cases:
        with pytest.raises(ValidationError, match=match):
            sim.restore(corrupt(edit))
    unnormalized = dict(snap)
    unnormalized["model:sensor1.belief"] = snap["model:sensor1.belief"] * 0.5
    with pytest.raises(ValidationError, match="do not sum to 1"):
        sim.restore(unnormalized)
    sim.restore(snap)
    assert sim.validate() == []
