"""plume_multi.stats.runs: the run-length encoding against a plain loop, log-binned densities and
the power-law slope on distributions with known densities."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from plume_multi.errors import ValidationError
from plume_multi.stats import log_binned_density, power_law_slope, runs
from stats_reference import naive_runs


@given(hnp.arrays(np.bool_, st.tuples(st.integers(1, 5), st.integers(1, 30))))
def test_runs_equal_a_plain_loop_over_each_series(above):
    r = runs(above)
    for s in range(above.shape[0]):
        mine = r.row == s
        expected = naive_runs(above[s].tolist())
        assert list(zip(r.start[mine].tolist(), r.length[mine].tolist(), r.above[mine].tolist(),
                        r.censored[mine].tolist())) == expected
    # every sample is in exactly one run; neighbouring runs of a row alternate
    assert np.bincount(r.row, weights=r.length, minlength=above.shape[0]).tolist() == [above.shape[1]] * above.shape[0]
    same_row = r.row[1:] == r.row[:-1]
    assert np.all(r.above[1:][same_row] != r.above[:-1][same_row])
    assert r.onset.tolist() == (r.above & (r.start > 0)).tolist()


def test_runs_of_one_series_and_bad_shapes():
    r = runs(np.array([1, 1, 0, 0, 0, 1, 0, 1, 1]))
    assert r.length.tolist() == [2, 3, 1, 1, 2]
    assert r.censored.tolist() == [True, False, False, False, True]
    assert r.samples == 9
    one = runs(np.zeros(4, bool))  # one run, cut at both edges
    assert (one.length.tolist(), one.censored.tolist(), one.above.tolist()) == ([4], [True], [False])
    for bad in (np.zeros((2, 0), bool), np.zeros((1, 2, 3), bool), np.bool_(True)):
        with pytest.raises(ValidationError, match="above"):
            runs(bad)


def test_lattice_log_bins_give_the_geometric_probabilities_exactly():
    """Durations that are whole steps: each bin's width counts its lattice points, so the density
    of a sample equals the empirical probability of each duration in single-point bins."""
    rng = np.random.default_rng(0)
    g = rng.geometric(0.2, 50_000)
    t, density, counts = log_binned_density(g, bins_per_decade=5, dt=1.0)
    assert t[:3].tolist() == [1.0, 2.0, 3.0]  # one lattice point each
    assert np.allclose(density[:3], [np.mean(g == 1), np.mean(g == 2), np.mean(g == 3)])
    assert np.allclose(density[:3], 0.2 * 0.8 ** np.arange(3), atol=0.01)
    # the density integrates to one over the bins (each bin's width is its lattice points)
    widths = counts / (density * g.size)
    assert np.isclose((density * widths).sum(), 1.0)
    # the same in seconds: dt scales durations and densities
    ts, ds, _ = log_binned_density(g * 0.01, bins_per_decade=5, dt=0.01)
    assert np.allclose(ts, t * 0.01) and np.allclose(ds, density / 0.01)


def test_power_law_slope_finds_the_exponent_of_known_densities():
    rng = np.random.default_rng(1)
    pareto = rng.random(200_000) ** -2.0  # density t^-3/2 on [1, inf): Celani et al.'s whiffs and blanks
    assert abs(power_law_slope(pareto, 1.0, 1e4) + 1.5) < 0.05
    steeper = rng.random(200_000) ** -1.0  # t^-2
    assert abs(power_law_slope(steeper, 1.0, 1e3) + 2.0) < 0.05
    # an exponential is not a power law: its log-log slope steepens with the range
    expo = rng.exponential(10.0, 200_000)
    assert power_law_slope(expo, 10.0, 60.0) < power_law_slope(expo, 0.5, 5.0) - 1.0
    assert np.isnan(power_law_slope([], 1.0, 10.0)) and np.isnan(power_law_slope([2.0], 1.0, 10.0))
    with pytest.raises(ValidationError, match="low, high"):
        power_law_slope(pareto, 10.0, 1.0)
    with pytest.raises(ValidationError, match="bins_per_decade"):
        log_binned_density(pareto, bins_per_decade=0)
