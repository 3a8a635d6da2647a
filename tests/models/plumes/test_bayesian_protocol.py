"""otto-benchmark's Bayesian protocol (policies.bayesian_protocol, run_search(protocol="bayesian"))
against the step-by-step reference in poisson_reference.py."""

from __future__ import annotations

import numba
import numpy as np
import pytest

import poisson_reference as nv
from windy_reference import WindySearch
from plume_multi import ValidationError
from plume_multi.engine import rng
from plume_multi.models.plumes import PoissonHits, WindyPoissonHits
from plume_multi.models.plumes.poisson_hits import kernels as kp
from plume_multi.policies.infotaxis import run_search

STREAMS = (kp.STREAM_FIRST_HIT, kp.STREAM_SOURCE, kp.STREAM_HITS)


class _WindyLike:
    def __init__(self, m):
        self.ref = WindySearch(m.R_bar, m.V_bar, m.tau_bar, m.grid_size, m.start, m.n_hits)
        self.n_hits = m.n_hits

    def __call__(self, h, x, y):
        return self.ref.evidence(h, agent=[x, y]).T


def _plumes():
    iso = PoissonHits(1.0, 2.0, grid_size=11)
    windy = WindyPoissonHits(R_bar=1.5, V_bar=1.5, tau_bar=50.0, grid_size=(21, 11), start=(15, 5))
    return [(iso, nv.Likelihood(iso.shape, 1.0, 2.0, 2, iso.n_hits)), (windy, _WindyLike(windy))]


@pytest.mark.parametrize("space_aware", [False, True])
@pytest.mark.parametrize("which", [0, 1])
def test_bayesian_episodes_match_the_step_by_step_reference(which, space_aware):
    plume, like = _plumes()[which]
    moves = [tuple(int(v) for v in row) for row in plume.moves]
    res = run_search(plume, 5, seed=21, max_steps=80, space_aware=space_aware, protocol="bayesian", stuck_after=8)
    assert res.protocol == "bayesian" and (res.source == -1).all()
    for i in range(5):
        steps, expected, not_found, h0, stuck = nv.bayesian_episode(
            plume.shape, plume.start, 21 + i, rng.uniform, rng.stream_key, STREAMS, moves, like, plume.first_hit_cdf,
            space_aware=space_aware, max_steps=80, stuck_after=8)
        assert (res.steps[i], res.first_hit[i]) == (steps, h0)
        np.testing.assert_allclose(res.search_time[i], expected, rtol=1e-9)
        assert res.found[i] == (not_found < 1e-6 and not stuck)


def test_an_agent_going_back_and_forth_stops_its_episode_as_otto_s_isotropic_setup_does():
    plume = PoissonHits(1.0, 1.0, grid_size=11)  # seed 467: infotaxis ends up going back and forth
    like = nv.Likelihood(plume.shape, 1.0, 1.0, 2, plume.n_hits)
    moves = [tuple(int(v) for v in row) for row in plume.moves]
    for stuck_after in (1, 8, 0):
        res = run_search(plume, 1, seed=467, max_steps=200, protocol="bayesian", stuck_after=stuck_after)
        steps, expected, not_found, h0, stuck = nv.bayesian_episode(
            plume.shape, plume.start, 467, rng.uniform, rng.stream_key, STREAMS, moves, like, plume.first_hit_cdf,
            max_steps=200, stuck_after=stuck_after)
        assert (res.steps[0], bool(res.found[0])) == (steps, False) and stuck == (stuck_after > 0)
        np.testing.assert_allclose(res.search_time[0], expected, rtol=1e-9)
    assert steps == 200  # without the rule it runs to the cap


def test_bayesian_and_drawn_source_means_agree_and_results_ignore_threads_and_batches():
    plume = PoissonHits(1.0, 2.0, grid_size=11)
    drawn = run_search(plume, 1500, seed=0, max_steps=500)
    runs = []
    for threads, batch in [(1, 1024), (2, 97)]:
        numba.set_num_threads(threads)
        try:
            runs.append(run_search(plume, 1500, seed=0, max_steps=500, protocol="bayesian", batch=batch))
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    np.testing.assert_array_equal(runs[0].search_time, runs[1].search_time)
    np.testing.assert_array_equal(runs[0].steps, runs[1].steps)
    bayes = runs[0]
    # the same mean (the policy meets the same law of hits), a smaller spread
    assert abs(bayes.mean - drawn.mean) < 2 * np.hypot(bayes.ci95, drawn.ci95)
    assert bayes.ci95 < drawn.ci95 and bayes.found.all() and (bayes.search_time <= bayes.steps).all()


@pytest.mark.parametrize("kwargs,match", [
    (dict(protocol="exact"), "protocol"), (dict(protocol="bayesian", team_size=2), "one searcher"),
    (dict(protocol="bayesian", stop_p=0.0), "stop_p"), (dict(protocol="bayesian", stop_p=float("nan")), "stop_p"),
    (dict(progress="yes"), "progress"), (dict(protocol="bayesian", stuck_after=-1), "stuck_after"),
    (dict(stuck_after=8), "stuck_after"),
])
def test_run_search_refuses_impossible_protocol_settings(kwargs, match):
    with pytest.raises(ValidationError, match=match):
        run_search(PoissonHits(1.0, 2.0, grid_size=7), 2, **kwargs)
    with pytest.raises(ValidationError, match="one searcher and a drawn source"):
        run_search(PoissonHits(1.0, 2.0, grid_size=7, source=(1, 1)), 2, protocol="bayesian")
