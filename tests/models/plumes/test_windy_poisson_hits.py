"""WindyPoissonHits against the NumPy port of otto-benchmark's windy setup (windy_reference.py):
tables, the first belief and every Bayes update bit for bit; draws, decisions and the engine."""

from __future__ import annotations

import numpy as np
import pytest

import poisson_reference as nv
from windy_reference import WindySearch
from plume_multi import Simulator, ValidationError
from plume_multi.engine import rng
from plume_multi.models.plumes import WindyPoissonHits
from plume_multi.models.plumes.poisson_hits import kernels as kp
from plume_multi.policies import infotaxis_kernels as ik
from plume_multi.policies.belief_state import tables_of
from plume_multi.policies.infotaxis import Infotaxis, run_search
from plume_multi.scenario import Scenario
from plume_multi.models.sensors import Belief, Hits

# otto-benchmark's own small debugging domain (its DEBUG shape and start), with other parameters
SMALL = dict(R_bar=1.5, V_bar=1.5, tau_bar=50.0, grid_size=(21, 11), start=(15, 5))


def _reference(m: WindyPoissonHits) -> WindySearch:
    return WindySearch(m.R_bar, m.V_bar, m.tau_bar, m.grid_size, m.start, m.n_hits)


class _Like:
    """``like(h, x, y)`` of poisson_reference.decide from the windy reference: ``[y, x]`` grids."""

    def __init__(self, ref: WindySearch):
        self.ref, self.n_hits = ref, ref.Nhits

    def __call__(self, h, x, y):
        return self.ref.evidence(h, agent=[x, y]).T


@pytest.mark.parametrize("kwargs", [dict(R_bar=2.5), dict(R_bar=0.25), dict(SMALL, n_hits=3)])
def test_likelihood_table_and_first_belief_are_otto_benchmarks_bit_for_bit(kwargs):
    m = WindyPoissonHits(**kwargs)
    ref = _reference(m)
    assert m.lambda_bar == ref.lambda_bar
    assert m.shape == (ref.shape[1], ref.shape[0]) and m.start == tuple(ref.agent)
    np.testing.assert_array_equal(m.centred_likelihood, ref.centred_table())
    np.testing.assert_array_equal(m.initial_belief(1), ref.p_source.T)
    assert list(m.first_hit_probabilities) == [0.0, 1.0] + [0.0] * (m.n_hits - 2)
    assert not m.centred_likelihood.flags.writeable


def test_mean_hits_are_the_hit_law():
    m = WindyPoissonHits(**SMALL)
    ref = _reference(m)
    h, w = m.shape
    dy, dx = np.meshgrid(np.arange(1 - h, h), np.arange(1 - w, w), indexing="ij")  # agent - source
    expected = ref._mean_number_of_hits(np.sqrt(dx * dx + dy * dy), dx).astype(np.float32)
    np.testing.assert_array_equal(m.centred_mean_hits, expected)
    assert m.centred_mean_hits[h - 1, w] > m.centred_mean_hits[h - 1, w - 2]  # downwind gets more
    assert m.concentration_bounds() == (0.0, float(expected.max()))


@pytest.mark.parametrize("kwargs", [dict(R_bar=2.5), dict(SMALL, n_hits=3)])
def test_bayes_updates_along_random_walks_are_otto_benchmarks_bit_for_bit(kwargs):
    m = WindyPoissonHits(**kwargs)
    ref = _reference(m)
    p = m.initial_belief(1)
    r = np.random.default_rng(0)
    h, w = m.shape
    for step in range(60):
        dx, dy = m.moves[r.integers(0, 4)]
        x, y = min(max(ref.agent[0] + dx, 0), w - 1), min(max(ref.agent[1] + dy, 0), h - 1)
        ref.agent = [x, y]
        predictive = np.array([(ref.p_source * ref.evidence(k)).sum() for k in range(m.n_hits)])
        hit = int(r.choice(m.n_hits, p=predictive / predictive.sum()))
        ref.update(hit)
        total = kp.update_belief(p, m.centred_likelihood, (x, y), hit)
        assert total > 0
        np.testing.assert_array_equal(p, ref.p_source.T, err_msg=f"step {step}")


def test_first_hit_is_one_and_the_source_is_drawn_from_its_belief():
    m = WindyPoissonHits(**SMALL)
    prior = _reference(m).p_source.T
    h, w = m.shape
    x0, y0 = m.start
    for seed in range(40):
        assert kp.draw_first_hit(seed, 0, m.first_hit_cdf) == 1
        u = rng.uniform(np.uint64(rng.stream_key(seed, 0, kp.STREAM_SOURCE)), 0, 0)
        expected = nv.categorical(prior.ravel(), u)
        assert kp.draw_source_after(seed, 0, m.centred_likelihood, (x0, y0), 1, (h, w)) == (expected % w, expected // w)


@pytest.mark.parametrize("space_aware", [False, True])
def test_decisions_on_windy_beliefs_match_the_reference(space_aware):
    m = WindyPoissonHits(**SMALL)
    like = _Like(_reference(m))
    moves = [tuple(int(v) for v in row) for row in m.moves]
    h, w = m.shape
    scratch = np.empty((3, h * (2 * w - 1)))
    scores = np.empty(4)
    r = np.random.default_rng(3)
    for trial in range(6):
        p = r.random(m.shape) ** (1 + 3 * r.random())
        p /= p.sum()
        x, y = (0, 0) if trial == 0 else (int(r.integers(0, w)), int(r.integers(0, h)))
        a = ik.decide(p, scratch, tables_of(m), m.moves, (x, y), space_aware, scores, None)
        ref_a, ref_scores = nv.decide(p, x, y, moves, like, space_aware)
        assert a == ref_a
        fin = np.isfinite(ref_scores)
        np.testing.assert_array_equal(np.isfinite(scores), fin)
        np.testing.assert_allclose(scores[fin], ref_scores[fin], rtol=1e-9, atol=1e-12)


def _windy_scenario(n_agents=1, team=False, max_steps=300, **kwargs):
    plume = WindyPoissonHits(**{**SMALL, **kwargs})
    return Scenario(plume=plume, n_agents=n_agents, team=team, max_steps=max_steps, start_positions=(plume.start,) * n_agents,
                    sensors=(Hits(), Belief()))


def test_engine_episodes_equal_the_protocol_runner_and_beliefs_follow_the_reference():
    sc = _windy_scenario()
    sim = Simulator(sc, num_worlds=8, autoreset="disabled")
    sim.reset(seed=3)
    refs = []
    for b in range(8):
        ref = _reference(sc.plume)
        refs.append(ref)
        np.testing.assert_array_equal(sim.state.models["sensor1.belief"][b], ref.p_source.T)
    policy = Infotaxis()
    steps = np.full(8, sc.max_steps)
    for t in range(1, sc.max_steps + 1):
        active = sim.state.active.copy()
        obs, reward, _, _ = sim.step(policy.act(sim))
        steps[(reward > 0) & active] = t
        for b in np.flatnonzero(sim.state.active):
            refs[b].agent = [int(v) for v in sim.state.pos[b]]
            refs[b].update(int(obs[b, 0]))
            np.testing.assert_array_equal(sim.state.models["sensor1.belief"][b], refs[b].p_source.T)
        if not sim.state.active.any():
            break
    ref = run_search(sc.plume, 8, seed=3, max_steps=sc.max_steps)
    np.testing.assert_array_equal(steps, ref.steps)
    np.testing.assert_array_equal(sim.state.models["plume.source"], ref.source)
    assert (sim.state.models["plume.first_hit"] == 1).all() and sim.validate() == []


def test_a_team_on_one_belief_plays_the_protocol_runner_s_team_episodes():
    """Two searchers on one belief (``team=True``: the same compiled step, a run-time flag): the
    first arrival ends the world's search, as in ``run_search(team_size=2, shared=True)``."""
    sc = _windy_scenario(n_agents=2, team=True, max_steps=120)
    sim = Simulator(sc, num_worlds=4, autoreset="disabled")
    sim.reset(seed=3)
    steps = np.full(4, sc.max_steps)
    for t in range(1, sc.max_steps + 1):
        active = sim.active.reshape(4, 2).any(axis=1)
        _, reward, terminated, _ = sim.step(Infotaxis().act(sim))
        arrived = (reward.reshape(4, 2) > 0).any(axis=1) & active
        steps[arrived] = t
        assert terminated.reshape(4, 2)[arrived].all()  # the whole team stops
        if not sim.active.any():
            break
    ref = run_search(sc.plume, 4, team_size=2, shared=True, seed=3, max_steps=sc.max_steps)
    np.testing.assert_array_equal(steps, ref.steps)
    np.testing.assert_array_equal(sim.state.models["plume.source"], ref.source)
    assert ref.found.any()


@pytest.mark.parametrize("kwargs,field", [
    (dict(R_bar=0.0), "R_bar"), (dict(R_bar=5e-324), "R_bar"), (dict(R_bar=float("nan")), "R_bar"),
    (dict(R_bar=True), "R_bar"), (dict(R_bar=1e4), "R_bar"),
    (dict(V_bar=0.0), "V_bar"), (dict(V_bar=-2.0), "V_bar"), (dict(V_bar=1e300), "V_bar"), (dict(V_bar="2"), "V_bar"),
    (dict(tau_bar=0.5), "tau_bar"), (dict(tau_bar=float("inf")), "tau_bar"),
    (dict(grid_size=(81,)), "grid_size"), (dict(grid_size=(2, 41)), "grid_size"), (dict(grid_size=(81.0, 41)), "grid_size"),
    (dict(grid_size="81x41"), "grid_size"), (dict(grid_size=(1000, 41)), "grid_size"),
    (dict(start=(81, 20)), "start"), (dict(start=(-1, 0)), "start"), (dict(start=(True, 3)), "start"),
    (dict(start="65,20"), "start"),
    (dict(n_hits=1), "n_hits"), (dict(n_hits=65), "n_hits"), (dict(n_hits=2.0), "n_hits"),
    (dict(source=(81, 0)), "source"), (dict(source={3, 1}), "source"), (dict(source="12"), "source"),
    (dict(source=(65, 20)), "source"),  # the start itself: no first hit there
    (dict(source=(0, 0), V_bar=20.0, tau_bar=1.0), "source"),  # 65 cells upwind: its hits underflow to 0
])
def test_bad_values_raise_validation_error_naming_the_field(kwargs, field):
    with pytest.raises(ValidationError, match=f"WindyPoissonHits.{field}"):
        WindyPoissonHits(**kwargs)


def test_every_bound_gives_finite_tables_and_a_first_belief():
    for R in (1e-6, 1000.0):
        for V in (0.01, 20.0):
            for tau in (1.0, 10000.0):
                try:
                    m = WindyPoissonHits(R_bar=R, V_bar=V, tau_bar=tau, grid_size=(21, 11), start=(15, 5))
                except ValidationError as err:  # refused: then it names why
                    assert "first hit" in str(err)
                    continue
                assert np.isfinite(m.centred_likelihood).all() and np.isfinite(m.centred_mean_hits).all()
                np.testing.assert_allclose(m.centred_likelihood.sum(axis=0)[m.centred_likelihood.sum(axis=0) > 0], 1.0)
                assert abs(m.initial_belief(1).sum() - 1.0) < 1e-12
