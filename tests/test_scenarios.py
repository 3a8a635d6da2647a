"""plume_multi.scenarios: the published problems, one call away (otto_benchmark, poisson_search)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import plume_multi
from plume_multi import ValidationError
from plume_multi.models.plumes import PoissonHits, WindyPoissonHits
from plume_multi.models.sensors import Belief, Hits
from plume_multi.scenarios import OTTO_BENCHMARK_CASES, otto_benchmark, poisson_search

# otto-benchmark's cases as its parameter files and its windy SourceTracking state them:
# (model, parameters, grid, hit values, start, STOP_t)
CASES = {
    "isotropic-19x19": (PoissonHits, dict(lambda_over_dx=1.0, R_dt=1.0), (19, 19), 3, (9, 9), 642),
    "isotropic-53x53": (PoissonHits, dict(lambda_over_dx=3.0, R_dt=2.0), (53, 53), 4, (26, 26), 2188),
    "windy-medium-detections": (WindyPoissonHits, dict(R_bar=2.5, V_bar=2.0, tau_bar=150.0), (81, 41), 2, (65, 20),
                                10000),
    "windy-low-detections": (WindyPoissonHits, dict(R_bar=0.25, V_bar=2.0, tau_bar=150.0), (81, 41), 2, (65, 20),
                             10000),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_case_is_its_pomdp(case):
    cls, params, grid, n_hits, start, stop_t = CASES[case]
    sc = otto_benchmark(case)
    assert type(sc.plume) is cls and sc.grid_size == grid and sc.plume.n_hits == n_hits
    assert all(getattr(sc.plume, k) == v for k, v in params.items())
    assert sc.start_positions == (start,) and sc.plume.start == start and sc.max_steps == stop_t
    assert sc.plume.source is None and sc.action_model.name == "Cardinal" and sc.reward.values() == (1.0, 0.0)
    assert [type(s) for s in sc.sensors] == [Hits, Belief] and sc.n_agents == 1 and not sc.team
    first = sc.plume.first_hit_probabilities
    assert first[0] == 0.0 and abs(first.sum() - 1.0) < 1e-12
    if cls is WindyPoissonHits:
        assert first[1] == 1.0  # the windy cases start from a hit of 1


def test_teams_and_bad_names():
    sc = otto_benchmark("isotropic-19x19", n_agents=3, team=True)
    assert sc.n_agents == 3 and sc.team and sc.start_positions == ((9, 9),) * 3
    with pytest.raises(ValidationError) as err:
        otto_benchmark("isotropic-21x21")
    assert "otto_benchmark.case" in str(err.value) and all(name in str(err.value) for name in OTTO_BENCHMARK_CASES)
    for bad in (0, "2", True, 2.0):
        with pytest.raises(ValidationError, match="otto_benchmark.n_agents"):
            otto_benchmark("windy-low-detections", n_agents=bad)
    with pytest.raises(ValidationError, match="otto_benchmark.team"):
        otto_benchmark("windy-low-detections", team="yes")
    with pytest.raises(ValidationError, match="poisson_search.n_agents"):
        poisson_search(n_agents="3")


def test_poisson_search_lives_here_and_presets_is_a_deprecated_alias():
    sc = poisson_search(1.0, 2.0, n_agents=2, source=(3, 9))
    assert sc.plume.source == (3, 9) and sc.source_location == (3, 9) and sc.start_positions == ((9, 9),) * 2
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        from plume_multi.presets import poisson_search as old
    assert old is poisson_search and any(issubclass(w.category, DeprecationWarning) for w in record)
    assert np.array_equal(plume_multi.scenarios.otto_benchmark("isotropic-19x19").plume.centred_likelihood,
                          PoissonHits(1.0, 1.0).centred_likelihood)
