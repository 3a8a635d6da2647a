"""PoissonHits(dims=3), its 3-D kernels and 3-D infotaxis against poisson_reference_3d.py (otto's
3-D hit law written from its formulas)."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

import poisson_reference_3d as r3
from plume_multi import Scenario, Simulator, ValidationError
from plume_multi.engine import rng
from plume_multi.models.plumes import PoissonHits, WindyPoissonHits
from plume_multi.models.plumes.poisson_hits import kernels as kp
from plume_multi.policies import Greedy
from plume_multi.policies.infotaxis import Infotaxis, run_search
from plume_multi.scenarios import poisson_search

STREAMS = (kp.STREAM_FIRST_HIT, kp.STREAM_SOURCE, kp.STREAM_HITS)


def _like(m):
    return r3.Likelihood3(m.shape, m.lambda_over_dx, m.R_dt, m.n_hits)


def _moves(m):
    return [tuple(int(v) for v in row) for row in m.moves]


@pytest.mark.parametrize("L,I,sizes", [(1.0, 2.0, (2, 19)), (2.0, 2.0, (3, 39)), (1.0, 1.0, (2, 19))])
def test_hit_law_sizes_and_first_hits_are_otto_s(L, I, sizes):
    m = PoissonHits(L, I, dims=3)
    d = np.array([1.0, 1.7, 3.0, 12.5])
    np.testing.assert_allclose(m.mean_hits(d), r3.mean_hits(d, L, I), rtol=1e-13)
    assert (m.n_hits, m.grid_size) == sizes == r3.auto_sizes(L, I)
    assert m.shape == (m.grid_size,) * 3 and m.start == (m.grid_size // 2,) * 3 and m.moves.shape == (6, 3)
    assert m.first_hit_probabilities[0] == 0 and abs(m.first_hit_probabilities.sum() - 1) < 1e-12


def test_tables_and_beliefs_match_the_reference_bit_for_bit():
    m = PoissonHits(1.0, 2.0, dims=3, grid_size=7, n_hits=3)
    like = _like(m)
    n = m.grid_size
    lik = m.centred_likelihood
    assert lik.shape == (3, 13, 13, 13) and m.centred_manhattan[6, 6, 6] == 0 and m.centred_manhattan[0, 12, 3] == 15
    # what Concentration reads in 3-D (sample_cell3), by the agent's offset from the source on all three axes
    mean = m.centred_mean_hits
    assert mean.shape == (13, 13, 13) and mean[6, 6, 6] == np.float32(m.mean_hits(1.0))
    assert mean[6 - 2, 6 + 1, 6 + 3] == mean[6 + 2, 6 - 1, 6 - 3] == np.float32(m.mean_hits(np.sqrt(14.0)))
    for h in range(3):  # the window at a cell is the likelihood of every source cell
        np.testing.assert_allclose(lik[h, 6 - 2:13 - 2, 6 - 5:13 - 5, 6 - 1:13 - 1], like(h, 1, 5, 2), rtol=1e-10,
                                   atol=1e-15)
    r = np.random.default_rng(0)
    p = m.initial_belief(1)
    x, y, z = m.start
    ref = r3.update(np.where(np.arange(n ** 3).reshape(m.shape) == (z * n + y) * n + x, 0.0, 1.0 / (n ** 3 - 1)),
                    lik[1, n - 1 - z:2 * n - 1 - z, n - 1 - y:2 * n - 1 - y, n - 1 - x:2 * n - 1 - x], x, y, z)
    np.testing.assert_array_equal(p, ref)
    for _ in range(20):
        x, y, z = (int(v) for v in r.integers(0, n, 3))
        hit = int(r.integers(0, 3))
        window = lik[hit, n - 1 - z:2 * n - 1 - z, n - 1 - y:2 * n - 1 - y, n - 1 - x:2 * n - 1 - x]
        if (p * window).sum() == 0:
            continue
        ref = r3.update(p, window, x, y, z)
        assert kp.update_belief(p, lik, (x, y, z), hit) > 0
        np.testing.assert_array_equal(p, ref)
    out = np.full(13 ** 3, np.nan, np.float32)
    kp.centred_belief(p, (1, 5, 2), out)
    img = out.reshape(13, 13, 13)
    assert img[6, 6, 6] == np.float32(p[2, 5, 1]) and img[6 - 2, 6 - 5, 6 - 1] == np.float32(p[0, 0, 0])
    assert np.count_nonzero(np.isnan(img)) == 0 and np.isclose(img.sum(dtype=np.float64), 1.0, atol=1e-5)


def test_draws_follow_their_laws_and_the_source_follows_the_first_belief():
    m = PoissonHits(1.0, 2.0, dims=3, grid_size=7, n_hits=3)
    lik = m.centred_likelihood
    key = np.uint64(rng.stream_key(3, 0, kp.STREAM_HITS))
    draws = np.array([kp.draw_hit(key, t, 0, lik, (1, -2, 1)) for t in range(20000)])
    np.testing.assert_allclose(np.bincount(draws, minlength=3) / 20000, m.hit_probabilities(math.sqrt(6)), atol=0.012)
    first = np.array([kp.draw_first_hit_at(s, 0, lik, (2, 0, 0)) for s in range(20000)])
    p = m.hit_probabilities(2.0)
    np.testing.assert_allclose(np.bincount(first, minlength=3) / 20000, np.r_[0, p[1:] / p[1:].sum()], atol=0.012)
    b = np.empty(m.shape)
    for seed in range(30):
        h0 = 1 + seed % 2
        kp.init_belief(b, lik, (3, 3, 3), h0, None)
        assert kp.draw_source_after(seed, 0, lik, (3, 3, 3), h0, (7, 7, 7)) == kp.draw_source(seed, 0, b)


@pytest.mark.parametrize("space_aware", [False, True])
def test_decisions_match_the_reference(space_aware):
    m = PoissonHits(1.0, 2.0, dims=3, grid_size=7, n_hits=3)
    like, moves = _like(m), _moves(m)
    r = np.random.default_rng(4)
    beliefs, cells = [], []
    for trial in range(6):
        p = r.random(m.shape) ** (1 + 4 * r.random())
        beliefs.append(p / p.sum())
        cells.append((0, 6, 3) if trial == 0 else tuple(int(v) for v in r.integers(0, 7, 3)))  # a face first
    pol = Infotaxis(space_aware, plume=m)
    got = pol.decide(np.array(beliefs), np.array(cells))
    for i in range(6):
        ref_a, ref_scores = r3.decide(beliefs[i], cells[i], moves, like, space_aware)
        assert got[i] == ref_a
        fin = np.isfinite(ref_scores)
        np.testing.assert_array_equal(np.isfinite(pol.scores[i]), fin)
        np.testing.assert_allclose(pol.scores[i][fin], ref_scores[fin], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("grid", [9, 65])
def test_a_one_plane_volume_decides_as_the_plane(grid):
    """3-D kernels on a (1, H, W) volume (a 2-D table with a leading axis) score the four planar
    moves as the 2-D kernels do, for narrow grids (one padded run per plane) and wide ones (row by
    row), and refuse to leave the plane."""
    m2 = PoissonHits(1.0, 2.0, grid_size=grid)
    r = np.random.default_rng(5)
    p = r.random(m2.shape) ** 3
    p /= p.sum()
    cell = (grid // 2 - 1, 3)
    two = Infotaxis(plume=m2)
    a2 = two.decide(p[None], [cell])[0]
    from plume_multi.models.plumes.poisson_hits.kernels import BeliefTables
    from plume_multi.policies import team_kernels as tk
    from plume_multi.policies.belief_state import scratch_for

    def frozen(a):
        a = np.ascontiguousarray(a)
        a.flags.writeable = False
        return a

    moves = frozen(np.array([(0, 1, 0), (1, 0, 0), (0, -1, 0), (-1, 0, 0), (0, 0, 1), (0, 0, -1)], np.int32))
    out = tk.Decisions(np.empty((1, 6)), np.empty(1, np.int64))
    tables = BeliefTables(frozen(m2.centred_likelihood[:, None]), frozen(m2.centred_likelihood_log[:, None]),
                          frozen(m2.centred_manhattan[None]), frozen(m2.first_hit_cdf))
    tk.decide_batch(tk.Groups(p[None, None].copy(), np.array([0, 1]), np.ones(1, np.bool_)),
                    tk.Searchers(np.array([[cell[0], cell[1], 0]], np.int32), np.zeros(1, np.int64),
                                 np.zeros(1, np.int64), moves, 1),
                    tables, scratch_for((1,) + m2.shape, False), out, None)
    a3, scores = out.actions[0], out.scores[0]
    assert a3 == a2 and np.isinf(scores[4:]).all()
    np.testing.assert_allclose(scores[:4], two.scores[0], rtol=1e-12)


def test_episodes_match_the_step_by_step_reference_and_ignore_threads_and_batches():
    m = PoissonHits(1.0, 2.0, dims=3, grid_size=7, n_hits=3)
    like, moves = _like(m), _moves(m)
    res = run_search(m, 4, seed=8, max_steps=60)
    for i in range(4):
        assert (res.steps[i], res.found[i], res.first_hit[i], tuple(res.source[i])) == r3.episode(
            m.shape, m.start, 8 + i, rng.uniform, rng.stream_key, STREAMS, moves, like, m.first_hit_cdf, max_steps=60)
    runs = []
    for threads, batch in [(1, 1024), (2, 3)]:
        numba.set_num_threads(threads)
        try:
            runs.append((run_search(m, 12, seed=1, max_steps=60, team_size=2),
                         run_search(m, 12, seed=1, max_steps=400, protocol="bayesian", batch=batch)))
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a.steps, b.steps)
        np.testing.assert_array_equal(a.search_time, b.search_time)
    drawn, bayes = runs[0]
    assert drawn.source.shape == (12, 3) and drawn.found.sum() >= 10 and bayes.found.all()
    fixed = run_search(PoissonHits(1.0, 2.0, dims=3, grid_size=7, n_hits=3, source=(5, 3, 3)), 6, seed=0, max_steps=60)
    assert (fixed.source == [5, 3, 3]).all() and fixed.found.all()


def test_engine_episodes_equal_the_protocol_runner_and_beliefs_are_the_kernels():
    """The 3-D engine: PoissonHits(dims=3) with sensors.Hits and sensors.Belief (one belief per
    agent here), stepped with Infotaxis.act, plays run_search's episodes."""
    sc = poisson_search(1.0, 2.0, dims=3, grid_size=7, n_hits=3, max_steps=100, team=False)
    assert sc.dims == 3 and sc.grid_size == (7, 7, 7) and sc.start_positions == ((3, 3, 3),)
    assert sc.obs_dim == 1 + 13 ** 3
    sim = Simulator(sc, num_worlds=12, autoreset="disabled")
    obs = sim.reset(seed=3)
    first = sim.state.models["plume.first_hit"]
    for b in range(12):
        np.testing.assert_array_equal(sim.state.models["sensor1.belief"][b], sc.plume.initial_belief(int(first[b])))
    np.testing.assert_array_equal(obs[:, 0], first)
    img = obs[0, 1:].reshape(13, 13, 13)
    np.testing.assert_array_equal(img[3:10, 3:10, 3:10], sc.plume.initial_belief(int(first[0])).astype(np.float32))
    steps = np.full(12, 100)
    policy = Infotaxis()
    for t in range(1, 101):
        active = sim.state.active.copy()
        _, reward, _, _ = sim.step(policy.act(sim))
        steps[(reward > 0) & active] = t
        if not sim.state.active.any():
            break
    ref = run_search(sc.plume, 12, seed=3, max_steps=100)
    np.testing.assert_array_equal(steps, ref.steps)
    np.testing.assert_array_equal(sim.sources, ref.source)
    assert sim.validate() == []
    sx, sy, sz = (int(v) for v in sim.sources[0])  # the picture: mean hits around world 0's source, (D, H, W)
    image = sim.plume_image(0)
    assert image.shape == (7, 7, 7) and image[sz, sy, sx] == np.float32(sc.plume.mean_hits(1.0))


def test_three_dimensions_are_checked():
    m = PoissonHits(1.0, 2.0, dims=3, grid_size=7)
    with pytest.raises(ValidationError, match="PoissonHits.dims"):  # a 2-D model in a 3-D scenario
        Scenario(plume=PoissonHits(1.0, 2.0, grid_size=7), grid_size=(7, 7, 7))
    with pytest.raises(ValidationError, match="WindyPoissonHits is 2-D only"):
        Scenario(plume=WindyPoissonHits(), grid_size=(81, 41, 5))
    with pytest.raises(ValidationError, match="grid_size"):
        Scenario(plume=m, grid_size=(7, 7))
    pol = Infotaxis(plume=m)
    belief = m.initial_belief(1)[None]
    with pytest.raises(ValidationError, match=r"expected \(M, 3\)"):
        pol.decide(belief, [[3, 3]])
    with pytest.raises(ValidationError, match="outside"):
        pol.decide(belief, [[3, 3, 7]])
    with pytest.raises(ValidationError, match="moves"):
        pol.decide(belief, [[3, 3, 3]], moves=[[1, 0]])
    with pytest.raises(ValidationError, match=r"Greedy.decide: positions has shape \(1, 2\)"):
        Greedy(plume=m).decide(belief, [[3, 3]])  # Greedy decides in 3-D too (tests/policies/test_greedy.py)
    for kwargs, field in [(dict(dims=4), "dims"), (dict(dims=3, grid_size=83), "grid_size"),
                          (dict(dims=3, source=(1, 2)), "source"), (dict(dims=3, source=(3, 3, 3), grid_size=7), "source")]:
        with pytest.raises(ValidationError, match=f"PoissonHits.{field}"):
            PoissonHits(1.0, 2.0, **kwargs)
