"""PoissonHits, its kernels and Infotaxis against the plain reference in tests/poisson_reference.py."""

from __future__ import annotations

import json
import math
from collections import namedtuple

import numba
import numpy as np
import pytest

import poisson_reference as nv
from plume_multi import StateError, ValidationError
from plume_multi.policies.infotaxis import Infotaxis, run_search
from plume_multi.models.plumes.poisson_hits import kernels as kp
from plume_multi.policies import infotaxis_kernels as ik
from plume_multi.engine import rng
from plume_multi.engine.records import stable
from plume_multi.models.plumes.poisson_hits import PoissonHits
from plume_multi.policies import Infotaxis as ReExported
from plume_multi.policies.belief_state import tables_of


def _like(m: PoissonHits) -> nv.Likelihood:
    return nv.Likelihood(m.shape, m.lambda_over_dx, m.R_dt, m.dims, m.n_hits, m.norm)


def _moves(m):
    return [tuple(int(v) for v in r) for r in m.moves]


def _tables(m):
    return tables_of(m)


# what observe_beliefs reads of the engine's WorldView, in a class Numba's cache finds again in any
# process (a class of this module would make its cached index unreadable elsewhere)
World = stable(namedtuple("World", "b n_agents first was_done pos"))


def _random_belief(rng_, shape, sharp=4.0, zeros=0.2):
    p = rng_.random(shape) ** sharp
    p[rng_.random(shape) < zeros] = 0.0
    return p / p.sum()


def _decide(m, p, x, y, space_aware=False):
    h, w = m.shape
    scratch = np.empty((3, h * (2 * w - 1)))
    scores = np.empty(m.n_actions)
    a = ik.decide(p, scratch, _tables(m), m.moves, (x, y), space_aware, scores, None)
    return a, scores


SMALL = [  # (L, I, dims, norm, grid) kept small so the cell-by-cell reference stays quick
    (1.0, 2.0, 2, "euclidean", 9),
    (2.0, 3.0, 2, "manhattan", 11),
    (1.5, 0.7, 2, "chebyshev", 7),
    (2.0, 2.0, 1, "euclidean", 15),
    (1.0, 20.0, 2, "euclidean", 9),  # a strong source: 17 hit values, Pr(0 | d=1) ~ 1e-5
]


# -- the model -------------------------------------------------------------------------------

@pytest.mark.parametrize("dims", [1, 2])
@pytest.mark.parametrize("L,I", [(1.0, 2.0), (2.5, 0.3), (3.0, 10.0)])
def test_rates_and_hit_probabilities_match_the_formulas(dims, L, I):
    m = PoissonHits(L, I, dims=dims)
    d = np.array([1.0, 1.5, 2.0, 3.7, 10.0, 40.0])
    np.testing.assert_allclose(m.mean_hits(d), nv.mean_hits(d, L, I, dims), rtol=1e-13)
    probs = m.hit_probabilities(d)
    ref = np.array([[nv.hit_probability(h, di, L, I, dims, m.n_hits) for h in range(m.n_hits)] for di in d])
    np.testing.assert_allclose(probs, ref, rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-12)
    assert m.n_hits == nv.default_n_hits(L, I, dims)


@pytest.mark.parametrize("L,I,dims,norm,grid", SMALL)
def test_likelihood_table_matches_the_reference(L, I, dims, norm, grid):
    m = PoissonHits(L, I, dims=dims, norm=norm, grid_size=grid)
    h_, w_ = m.shape
    ref = np.stack([nv.likelihood_grid(m.shape, 0, 0, h, L, I, dims, m.n_hits, norm) for h in range(m.n_hits)])
    np.testing.assert_allclose(m.likelihood, ref, rtol=1e-10, atol=1e-15)
    logs = np.where(ref > 0, np.log(np.where(ref > 0, ref, 1)), 0.0)
    np.testing.assert_allclose(m.log_likelihood, logs, rtol=1e-10, atol=1e-12)
    # the centred table at offset (dx, dy) is the entry at (|dx|, |dy|)
    c = m.centred_likelihood
    assert c.shape == (m.n_hits, 2 * h_ - 1, 2 * w_ - 1)
    for dy in range(1 - h_, h_):
        for dx in range(1 - w_, w_):
            np.testing.assert_array_equal(c[:, dy + h_ - 1, dx + w_ - 1], m.likelihood[:, abs(dy), abs(dx)])
    assert not m.likelihood.flags.writeable


@pytest.mark.parametrize("L,expected", [(1.0, 19), (2.0, 37), (3.0, 53)])
def test_auto_grid_size_is_the_documented_protocol_size(L, expected):
    m = PoissonHits(L, 2.0)
    assert m.grid_size == expected == nv.auto_grid_size(L, 2.0, 2, m.n_hits)


@pytest.mark.parametrize("L,I,dims", [(1.0, 5.0, 2), (2.0, 1.0, 1), (1.3, 0.5, 2)])
def test_auto_grid_and_first_hit_distribution_match_the_reference(L, I, dims):
    m = PoissonHits(L, I, dims=dims)
    assert m.grid_size == nv.auto_grid_size(L, I, dims, m.n_hits)
    ref = nv.first_hit_probabilities(L, I, dims, m.n_hits)
    np.testing.assert_allclose(m.first_hit_probabilities, ref, rtol=1e-9, atol=1e-15)
    assert m.first_hit_probabilities[0] == 0.0 and m.first_hit_cdf[-1] == 1.0


def test_metadata_is_json_and_rebuilds_the_model():
    m = PoissonHits(2.0, 1.5, norm="Manhattan")
    meta = json.loads(json.dumps(m.metadata()))
    rebuilt = PoissonHits(**{k: v for k, v in meta.items() if k not in ("family", "model")})
    assert rebuilt == m and meta["model"] == "PoissonHits" and meta["norm"] == "manhattan"


@pytest.mark.parametrize("kwargs,field", [
    (dict(lambda_over_dx=0.5, R_dt=1.0), "lambda_over_dx"),
    (dict(lambda_over_dx=float("nan"), R_dt=1.0), "lambda_over_dx"),
    (dict(lambda_over_dx=True, R_dt=1.0), "lambda_over_dx"),
    (dict(lambda_over_dx=1.0, R_dt=0.0), "R_dt"),
    (dict(lambda_over_dx=1.0, R_dt="2"), "R_dt"),
    (dict(lambda_over_dx=1.0, R_dt=1.0, dims=4), "dims"),
    (dict(lambda_over_dx=1.0, R_dt=1.0, norm="l2"), "norm"),
    (dict(lambda_over_dx=1.0, R_dt=1.0, n_hits=1), "n_hits"),
    (dict(lambda_over_dx=1.0, R_dt=1.0, n_hits=2.0), "n_hits"),
    (dict(lambda_over_dx=1.0, R_dt=1.0, grid_size=20), "grid_size"),
    (dict(lambda_over_dx=1.0, R_dt=1.0, grid_size=1), "grid_size"),
    (dict(lambda_over_dx=1.0, R_dt=5e-324), "R_dt"),  # issue 21 item 6: NaN first-hit probabilities before
    (dict(lambda_over_dx=1.0, R_dt=1e-7), "R_dt"),
    (dict(lambda_over_dx=1.0, R_dt=10 ** 400), "R_dt"),
    (dict(lambda_over_dx=1.0, R_dt=1.0, source=(19, 0)), "source"),
    (dict(lambda_over_dx=1.0, R_dt=1.0, source=(9, 9)), "source"),  # the start: no first hit there
    (dict(lambda_over_dx=1.0, R_dt=1.0, source="12"), "source"),
    (dict(lambda_over_dx=1.0, R_dt=1.0, source=(True, False)), "source"),
    (dict(lambda_over_dx=1.0, R_dt=1.0, source={3, 1}), "source"),
    (dict(lambda_over_dx=1.0, R_dt=1.0, source=(3.0, 1.0)), "source"),
])
def test_bad_values_raise_validation_error_naming_the_field(kwargs, field):
    with pytest.raises(ValidationError, match=f"PoissonHits.{field}"):
        PoissonHits(**kwargs)


def test_rate_bounds_are_in_the_message_and_every_bound_gives_finite_tables():
    with pytest.raises(ValidationError, match=r"PoissonHits.R_dt: got 5e-324; expected a finite number in \[1e-06, 1000"):
        PoissonHits(1.0, 5e-324)
    for L in (1.0, 50.0):
        for R in (1e-6, 1000.0):
            try:
                m = PoissonHits(L, R)
            except ValidationError as err:  # too many hit values or too large a grid: said so
                assert "R_dt" in str(err) or "lambda_over_dx" in str(err)
                continue
            for table in (m.first_hit_probabilities, m.centred_likelihood, m.centred_mean_hits):
                assert np.isfinite(table).all()
            assert abs(m.initial_belief(1).sum() - 1.0) < 1e-12


def test_mean_hits_rejects_distances_below_one_cell():
    with pytest.raises(ValidationError, match="d="):
        PoissonHits(1.0, 1.0).mean_hits([0.0, 2.0])


# -- draws -------------------------------------------------------------------------------------

def test_first_hits_follow_their_distribution_and_repeat_for_a_seed():
    m = PoissonHits(1.0, 2.0)
    cdf = np.ascontiguousarray(m.first_hit_cdf)
    draws = np.array([kp.draw_first_hit(s, 0, cdf) for s in range(20000)])
    assert draws.min() >= 1
    freq = np.bincount(draws, minlength=m.n_hits) / len(draws)
    np.testing.assert_allclose(freq, m.first_hit_probabilities, atol=0.012)
    assert [kp.draw_first_hit(s, 3, cdf) for s in range(50)] == [kp.draw_first_hit(s, 3, cdf) for s in range(50)]


def test_hits_follow_pr_h_given_d_and_are_a_function_of_seed_step_agent():
    m = PoissonHits(2.0, 3.0, grid_size=21)
    lik = m.centred_likelihood
    key = np.uint64(rng.stream_key(7, 0, kp.STREAM_HITS))
    for dx, dy in [(1, 0), (3, -2), (-7, 5)]:
        draws = np.array([kp.draw_hit(key, t, 0, lik, (dx, dy)) for t in range(20000)])
        freq = np.bincount(draws, minlength=m.n_hits) / len(draws)
        np.testing.assert_allclose(freq, m.hit_probabilities(math.hypot(dx, dy)), atol=0.012)
    a = [kp.draw_hit(key, t, k, lik, (2, 1)) for t in range(30) for k in range(3)]
    b = [kp.draw_hit(key, t, k, lik, (2, 1)) for t in range(30) for k in range(3)]
    other = [kp.draw_hit(np.uint64(rng.stream_key(8, 0, kp.STREAM_HITS)), t, k, lik, (2, 1)) for t in range(30) for k in range(3)]
    assert a == b and a != other


def test_source_draws_follow_the_belief():
    m = PoissonHits(1.0, 2.0, grid_size=7)
    p = nv.update(np.full(m.shape, 1 / 48), _like(m)(2, 3, 3), 3, 3)
    counts = np.zeros(m.shape)
    for s in range(20000):
        x, y = kp.draw_source(s, 0, p)
        counts[y, x] += 1
    np.testing.assert_allclose(counts / counts.sum(), p, atol=0.01)
    assert counts[3, 3] == 0


def test_first_hits_of_a_fixed_source_follow_its_distance():
    m = PoissonHits(1.0, 2.0, grid_size=11)
    lik = m.centred_likelihood
    for dx, dy in [(2, 0), (-3, 4)]:
        draws = np.array([kp.draw_first_hit_at(s, 0, lik, (dx, dy)) for s in range(20000)])
        p = m.hit_probabilities(math.hypot(dx, dy))
        np.testing.assert_allclose(np.bincount(draws, minlength=m.n_hits) / len(draws), np.r_[0.0, p[1:] / p[1:].sum()],
                                   atol=0.012)
    assert kp.draw_first_hit_at(3, 0, lik, (0, 0)) == 0  # on the source: no hit possible (the models refuse it)


def test_source_after_a_first_hit_is_the_draw_from_the_initial_belief():
    m = PoissonHits(1.0, 2.0)
    h_, w_ = m.shape
    b = np.empty(m.shape)
    for seed in range(200):
        h0 = 1 + seed % (m.n_hits - 1)
        x0, y0 = (seed * 7) % w_, (seed * 3) % h_
        kp.init_belief(b, m.centred_likelihood, (x0, y0), h0, None)
        assert kp.draw_source_after(seed, 2, m.centred_likelihood, (x0, y0), h0, (h_, w_)) == kp.draw_source(seed, 2, b)


# -- beliefs ------------------------------------------------------------------------------------

@pytest.mark.parametrize("L,I,dims,norm,grid", SMALL)
def test_belief_updates_match_the_reference(L, I, dims, norm, grid):
    m = PoissonHits(L, I, dims=dims, norm=norm, grid_size=grid)
    like = _like(m)
    r = np.random.default_rng(1)
    h_, w_ = m.shape
    for _ in range(6):
        p = _random_belief(r, m.shape, zeros=0.0)
        x, y, hit = int(r.integers(0, w_)), int(r.integers(0, h_)), int(r.integers(0, m.n_hits))
        q = p.copy()
        total = kp.update_belief(q, m.centred_likelihood, (x, y), hit)
        assert total > 0
        np.testing.assert_allclose(q, nv.update(p, like(hit, x, y), x, y), rtol=1e-9, atol=1e-16)
        assert q[y, x] == 0.0
    b = np.empty(m.shape)
    x0, y0 = m.start
    kp.init_belief(b, m.centred_likelihood, (x0, y0), 1, None)
    ref = nv.update(np.where(np.arange(h_ * w_).reshape(m.shape) == y0 * w_ + x0, 0.0, 1.0 / (h_ * w_ - 1)),
                    like(1, x0, y0), x0, y0)
    np.testing.assert_allclose(b, ref, rtol=1e-9, atol=1e-16)
    np.testing.assert_allclose(m.initial_belief(1), ref, rtol=1e-9, atol=1e-16)


@pytest.mark.parametrize("dims", [1, 2])
def test_centred_belief_row_matches_numpy(dims):
    m = PoissonHits(1.0, 2.0, dims=dims, grid_size=9)
    h_, w_ = m.shape
    r = np.random.default_rng(2)
    p = _random_belief(r, m.shape)
    for x, y in [(0, 0), (w_ - 1, h_ - 1), (3, h_ // 2), (w_ // 2, 0)]:
        out = np.full((2 * h_ - 1) * (2 * w_ - 1), np.nan, dtype=np.float32)
        kp.centred_belief(p, (x, y), out)
        img = np.zeros((2 * h_ - 1, 2 * w_ - 1), dtype=np.float32)
        for yy in range(h_):
            for xx in range(w_):
                img[yy - y + h_ - 1, xx - x + w_ - 1] = p[yy, xx]
        np.testing.assert_array_equal(out.reshape(img.shape), img)
        assert out[(h_ - 1) * (2 * w_ - 1) + w_ - 1] == np.float32(p[y, x])  # the centre is the agent's cell


@pytest.mark.parametrize("shared", [True, False])
def test_observe_beliefs_starts_from_the_first_hit_and_writes_centred_images(shared):
    m = PoissonHits(1.0, 2.0, grid_size=7)
    like = _like(m)
    h_, w_ = m.shape
    n_agents, n_worlds, col = 3, 2, 2
    pos = np.array([[3, 3], [0, 6], [5, 1]] * n_worlds, dtype=np.int32)
    beliefs = np.zeros((n_worlds if shared else n_worlds * n_agents, h_, w_))
    obs = np.full((n_worlds * n_agents, col + (2 * h_ - 1) * (2 * w_ - 1) + 1), -7.0, dtype=np.float32)
    kp.observe_beliefs(beliefs, m.centred_likelihood, World(1, n_agents, True, False, pos), shared, 2, obs, col, None)
    before = obs.copy()
    kp.observe_beliefs(beliefs, m.centred_likelihood, World(1, n_agents, False, True, pos[::-1].copy()), shared, 2, obs,
                       col, None)
    np.testing.assert_array_equal(obs, before)  # a world already done: nothing written
    assert np.all(obs[:n_agents] == -7.0) and np.all(beliefs[0] == 0.0)  # world 0 untouched
    uniform = np.full(m.shape, 1.0 / (h_ * w_ - 1))
    for n in range(n_agents):
        i = n_agents + n
        x0, y0 = pos[n_agents if shared else i]
        p0 = uniform.copy()
        p0[y0, x0] = 0.0
        ref = nv.update(p0, like(2, x0, y0), x0, y0)
        np.testing.assert_allclose(beliefs[1 if shared else i], ref, rtol=1e-12, atol=1e-18)
        img = np.zeros((2 * h_ - 1, 2 * w_ - 1), np.float32)
        x, y = pos[i]
        img[h_ - 1 - y:2 * h_ - 1 - y, w_ - 1 - x:2 * w_ - 1 - x] = beliefs[1 if shared else i]
        np.testing.assert_array_equal(obs[i, col:-1].reshape(img.shape), img)
        assert obs[i, 0] == obs[i, 1] == obs[i, -1] == -7.0  # other columns untouched


# -- decisions ----------------------------------------------------------------------------------

@pytest.mark.parametrize("space_aware", [False, True])
@pytest.mark.parametrize("L,I,dims,norm,grid", SMALL)
def test_decisions_match_the_reference_on_random_beliefs(L, I, dims, norm, grid, space_aware):
    m = PoissonHits(L, I, dims=dims, norm=norm, grid_size=grid)
    like, moves = _like(m), _moves(m)
    r = np.random.default_rng(3)
    h_, w_ = m.shape
    for trial in range(8):
        p = _random_belief(r, m.shape, sharp=1.0 + 4 * r.random())
        x, y = int(r.integers(0, w_)), int(r.integers(0, h_))
        if trial == 0:
            x, y = 0, h_ - 1  # a corner: some moves are not allowed
        a, scores = _decide(m, p, x, y, space_aware)
        ref_a, ref_scores = nv.decide(p, x, y, moves, like, space_aware)
        assert a == ref_a
        np.testing.assert_array_equal(np.isinf(scores), np.isinf(ref_scores))
        fin = np.isfinite(ref_scores)
        np.testing.assert_allclose(scores[fin], ref_scores[fin], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("space_aware", [False, True])
def test_decisions_match_the_reference_along_random_hit_sequences(space_aware):
    m = PoissonHits(1.0, 2.0, grid_size=11)
    like, moves = _like(m), _moves(m)
    r = np.random.default_rng(6)
    h_, w_ = m.shape
    for _ in range(3):
        p = m.initial_belief(int(r.integers(1, m.n_hits)))
        ref_p = p.copy()
        x, y = m.start
        for step in range(8):
            a, scores = _decide(m, p, x, y, space_aware)
            assert a == nv.decide(ref_p, x, y, moves, like, space_aware)[0]
            a = int(r.integers(0, m.n_actions)) if step % 2 else a  # wander off the policy's path too
            x = min(max(x + moves[a][0], 0), w_ - 1)
            y = min(max(y + moves[a][1], 0), h_ - 1)
            hit = int(r.integers(0, m.n_hits))
            kp.update_belief(p, m.centred_likelihood, (x, y), hit)
            ref_p = nv.update(ref_p, like(hit, x, y), x, y)
            np.testing.assert_allclose(p, ref_p, rtol=1e-8, atol=1e-15)


@pytest.mark.parametrize("space_aware", [False, True])
def test_decisions_on_a_wide_grid_match_the_reference(space_aware):
    """Grids of 32 cells and more are summed row by row (narrower ones in one padded run), each row
    from its first to its last cell above ``NEGLIGIBLE_P``: a belief spread everywhere, and one
    concentrated as in an episode (most cells below 1e-30, a row and row ends of exact zeros),
    decided where the moves' cells are in the summed runs and where they are not."""
    m = PoissonHits(1.0, 2.0, grid_size=33)
    like, moves = _like(m), _moves(m)
    r = np.random.default_rng(9)
    spread = _random_belief(r, m.shape, sharp=3.0)
    yy, xx = np.mgrid[0:33, 0:33]
    peaked = np.exp(-((xx - 22.0) ** 2 + (yy - 10.0) ** 2) / 3.0) * (1 + r.random(m.shape))
    peaked[0] = 0.0
    peaked[5:15, 27:] = 0.0
    peaked /= peaked.sum()
    assert 0.5 < np.mean(peaked <= ik.NEGLIGIBLE_P) < 0.95
    for p, cells in [(spread, [(15, 17), (0, 6)]), (peaked, [(21, 11), (3, 28)])]:
        for x, y in cells:
            a, scores = _decide(m, p, x, y, space_aware)
            ref_a, ref_scores = nv.decide(p, x, y, moves, like, space_aware)
            assert a == ref_a
            fin = np.isfinite(ref_scores)
            np.testing.assert_allclose(scores[fin], ref_scores[fin], rtol=1e-9, atol=1e-12)


def test_ties_go_to_the_lowest_allowed_action():
    m = PoissonHits(1.0, 2.0, grid_size=9)
    like, moves = _like(m), _moves(m)
    x0, y0 = m.start
    p = m.initial_belief(1)  # symmetric under the square's rotations: four ties
    a, scores = _decide(m, p, x0, y0)
    assert a == 0 == nv.decide(p, x0, y0, moves, like)[0]
    assert np.ptp(scores) < 1e-12
    # mirror symmetric in x and weighted upwards: RIGHT (1) and LEFT (3) tie but DOWN (2) is worst
    q = p.copy()
    q[y0 + 1:, :] *= 0.01
    q /= q.sum()
    a, scores = _decide(m, q, x0, y0)
    ref = nv.decide(q, x0, y0, moves, like)
    assert a == ref[0]
    assert abs(scores[1] - scores[3]) < 1e-12
    # at the left edge LEFT is not allowed, the symmetric tie among the rest still goes lowest
    a, scores = _decide(m, p, 0, y0)
    assert scores[3] == np.inf and a == nv.decide(p, 0, y0, moves, like)[0] and a != 3


def test_the_decision_kernel_refuses_tables_without_the_sum_plane():
    """``llogl`` ends with ``sum_h L log L`` (``centred_likelihood_log``): a table of the hit values
    alone is an error, not a read past its end."""
    m = PoissonHits(1.0, 2.0, grid_size=9)
    llogl = m.centred_likelihood_log
    assert llogl.shape == (m.n_hits + 1,) + m.centred_likelihood.shape[1:]
    np.testing.assert_allclose(llogl[-1], llogl[:-1].sum(axis=0), rtol=1e-15, atol=1e-300)
    with pytest.raises(ValueError, match="n_hits \\+ 1 planes"):
        ik.decide(m.initial_belief(1), np.empty((3, 9 * 17)), _tables(m)._replace(likelihood_log=llogl[:-1]), m.moves,
                  (4, 4), False, np.empty(4), None)


def test_a_move_onto_a_certain_source_is_taken():
    m = PoissonHits(1.0, 2.0, grid_size=9)
    p = np.zeros(m.shape)
    p[5, 4] = 1.0  # (x=4, y=5): UP (action 0) from (4, 4)
    a, scores = _decide(m, p, 4, 4)
    assert a == 0 and scores[0] == -np.inf
    p[5, 4], p[4, 3] = 1 - 1e-12, 1e-12
    assert _decide(m, p / p.sum(), 4, 4)[0] == 0 == nv.decide(p / p.sum(), 4, 4, _moves(m), _like(m))[0]


def test_batched_decisions_are_the_single_ones_for_any_thread_count():
    m = PoissonHits(1.0, 2.0)
    h_, w_ = m.shape
    r = np.random.default_rng(4)
    n = 64
    beliefs = np.stack([_random_belief(r, m.shape) for _ in range(n)])
    pos = np.stack([r.integers(0, w_, n), r.integers(0, h_, n)], axis=1).astype(np.int32)
    single = np.array([_decide(m, beliefs[i], pos[i, 0], pos[i, 1])[0] for i in range(n)])
    results = []
    for threads in (1, 2):
        numba.set_num_threads(threads)
        try:
            pol = Infotaxis(plume=m)
            results.append((pol.decide(beliefs, pos), pol.scores.copy()))
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    np.testing.assert_array_equal(results[0][0], single)
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


@pytest.mark.parametrize("rule", ["believer", "independent"])
def test_team_decisions_match_the_sequential_reference(rule):
    m = PoissonHits(1.0, 2.0, grid_size=11)
    like, moves = _like(m), _moves(m)
    x0, y0 = m.start
    r = np.random.default_rng(5)
    beliefs = [m.initial_belief(1), _random_belief(r, m.shape)]
    teams = [[(x0, y0)] * 3, [(2, 3), (2, 3), (7, 8)]]
    pol = Infotaxis(plume=m, team_rule=rule)
    got = pol.decide(np.stack(beliefs), np.array(teams[0] + teams[1]), groups=3)
    ref = nv.team_decide(beliefs[0], teams[0], moves, like, rule=rule) + nv.team_decide(beliefs[1], teams[1], moves, like, rule=rule)
    assert got.tolist() == ref
    if rule == "independent":
        assert len(set(got[:3].tolist())) == 1  # agents together move together
    else:
        assert len(set(got[:3].tolist())) == 3  # believers spread out


def test_groups_without_an_active_agent_are_skipped():
    m = PoissonHits(1.0, 2.0, grid_size=9)
    r = np.random.default_rng(8)
    beliefs = np.stack([_random_belief(r, m.shape) for _ in range(3)])
    pos = np.array([[4, 4], [4, 4], [1, 2], [1, 2], [7, 7], [7, 7]])
    pol = Infotaxis(plume=m)
    full = pol.decide(beliefs, pos, groups=2)
    part = pol.decide(beliefs, pos, groups=2, active=np.array([True, False, False, False, False, True]))
    assert part[[0, 1, 4, 5]].tolist() == full[[0, 1, 4, 5]].tolist()
    assert part[[2, 3]].tolist() == [0, 0] and np.all(pol.scores[[2, 3]] == np.inf)


def test_decide_refuses_moves_it_cannot_use():
    """Issue 23 item 17: NaN moves were cast to huge integers and the action was -1."""
    m = PoissonHits(1.0, 2.0, grid_size=7)
    pol = Infotaxis(plume=m)
    belief = m.initial_belief(1)[None]
    for moves in ([[np.nan, 0.0], [0.0, 1.0]], [[0.5, 0.0]], [[np.inf, 0]], [["a", "b"]], [[1, 0, 0]], [[10 ** 9, 0]]):
        with pytest.raises(ValidationError, match="Infotaxis.decide: moves"):
            pol.decide(belief, [[3, 3]], moves=moves)
    with pytest.raises(ValidationError, match="agent 0 at \\(6, 3\\) has no move"):
        pol.decide(belief, [[6, 3]], moves=[[1, 0]])  # its only move leaves the grid
    assert pol.decide(belief, [[3, 3]], moves=np.array([[1.0, 0.0], [0.0, -1.0]])).tolist() in ([0], [1])


def test_policy_is_reexported_and_checks_its_inputs():
    assert ReExported is Infotaxis
    m = PoissonHits(1.0, 2.0, grid_size=7)
    with pytest.raises(StateError):
        Infotaxis().decide(np.ones((1, 7, 7)) / 49, [[3, 3]])
    with pytest.raises(ValidationError, match="space_aware"):
        Infotaxis(space_aware="yes")
    with pytest.raises(ValidationError, match="team_rule"):
        Infotaxis(team_rule="swarm")
    pol = Infotaxis(plume=m)
    with pytest.raises(ValidationError, match="shape"):
        pol.decide(np.ones((1, 5, 5)), [[0, 0]])
    with pytest.raises(ValidationError, match="outside"):
        pol.decide(np.ones((1, 7, 7)) / 49, [[7, 0]])
    with pytest.raises(ValidationError, match="positions"):
        pol.decide(np.ones((2, 7, 7)) / 49, [[0, 0]])


# -- episodes -----------------------------------------------------------------------------------

@pytest.mark.parametrize("team_size,shared,space_aware", [(1, True, False), (1, True, True), (2, True, False), (2, False, False)])
def test_episodes_match_the_step_by_step_reference(team_size, shared, space_aware):
    m = PoissonHits(1.0, 2.0, grid_size=11)
    like, moves = _like(m), _moves(m)
    res = run_search(m, 6, team_size=team_size, shared=shared, space_aware=space_aware, seed=11, max_steps=60)
    for i in range(6):
        ref = nv.episode(m.shape, 11 + i, rng.uniform, rng.stream_key,
                         (kp.STREAM_FIRST_HIT, kp.STREAM_SOURCE, kp.STREAM_HITS), moves, like,
                         m.first_hit_cdf, team_size=team_size, shared=shared, space_aware=space_aware,
                         max_steps=60)
        assert (res.steps[i], res.found[i], res.first_hit[i], tuple(res.source[i])) == ref


def test_search_results_are_the_same_for_any_thread_count_and_batch():
    m = PoissonHits(1.0, 2.0)
    out = []
    for threads, batch in [(1, 1024), (2, 7)]:
        numba.set_num_threads(threads)
        try:
            out.append(run_search(m, 40, team_size=2, seed=3, batch=batch))
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    for f in ("steps", "found", "first_hit", "source"):
        np.testing.assert_array_equal(getattr(out[0], f), getattr(out[1], f))
    assert out[0].found.all() and 0 < out[0].mean < 100 and out[0].ci95 > 0


def test_run_search_validates_its_arguments():
    m = PoissonHits(1.0, 2.0)
    with pytest.raises(ValidationError, match="n_episodes"):
        run_search(m, 0)
    with pytest.raises(ValidationError, match="team_rule"):
        run_search(m, 1, team_rule="x")
    with pytest.raises(ValidationError, match="plume"):
        run_search("plume", 1)


# -- properties over configurations ------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def _configs(draw):
    dims = draw(st.sampled_from([1, 2]))
    grid = draw(st.sampled_from([3, 5, 7, 9] if dims == 2 else [3, 7, 15, 21]))
    m = PoissonHits(draw(st.floats(1.0, 4.0)), draw(st.floats(0.05, 15.0)), dims=dims,
                    norm=draw(st.sampled_from(["euclidean", "manhattan", "chebyshev"])), grid_size=grid)
    h_, w_ = m.shape
    x, y = draw(st.integers(0, w_ - 1)), draw(st.integers(0, h_ - 1))
    seed = draw(st.integers(0, 2**32 - 1))
    return m, x, y, seed, draw(st.booleans())


@settings(max_examples=40, deadline=None)
@given(_configs())
def test_decisions_and_updates_match_the_reference_for_any_config(cfg):
    m, x, y, seed, space_aware = cfg
    r = np.random.default_rng(seed)
    like, moves = _like(m), _moves(m)
    p = _random_belief(r, m.shape, sharp=1.0 + 6 * r.random(), zeros=0.3 * r.random())
    a, scores = _decide(m, p, x, y, space_aware)
    ref_a, ref_scores = nv.decide(p, x, y, moves, like, space_aware)
    assert a == ref_a
    if np.isneginf(ref_scores[ref_a]):  # a move onto the certain source, taken at once: the reference
        assert np.isneginf(scores[a])   # scores no later move, the kernel may have (same action)
        fin = np.isfinite(ref_scores[:ref_a])
        np.testing.assert_array_equal(np.isfinite(scores[:ref_a]), fin)
        np.testing.assert_allclose(scores[:ref_a][fin], ref_scores[:ref_a][fin], rtol=1e-9, atol=1e-12)
    else:
        fin = np.isfinite(ref_scores)
        np.testing.assert_array_equal(np.isfinite(scores), fin)
        np.testing.assert_allclose(scores[fin], ref_scores[fin], rtol=1e-9, atol=1e-12)
    hit = int(r.integers(0, m.n_hits))
    expected = p.copy()
    expected[y, x] = 0.0
    expected *= like(hit, x, y)
    q = p.copy()
    if expected.sum() > 0:
        kp.update_belief(q, m.centred_likelihood, (x, y), hit)
        np.testing.assert_allclose(q, expected / expected.sum(), rtol=1e-9, atol=1e-300)
