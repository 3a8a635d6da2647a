"""plume_multi.stats.odor_statistics on signals built in NumPy: closed forms (square waves, a
telegraph signal, constants), the censoring rule, thresholds, moments, against a plain loop;
tables and the figure."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from plume_multi.errors import ValidationError
from plume_multi.stats import COLUMNS, OdorStatistics, Threshold, odor_statistics
from stats_reference import naive_statistics, square_wave, telegraph


@pytest.mark.parametrize("period, on, phase", [(5, 2, 0), (5, 2, 3), (7, 1, 6), (12, 9, 4)])
def test_a_square_wave_gives_exact_durations_frequency_and_intermittency(period, on, phase):
    """Whiffs of ``on`` steps, blanks of ``period - on``, one onset a period: exact whatever the
    phase, for windows of whole periods (intermittency: T = k P samples; frequency: T - 1 = k P
    transitions); the runs cut by the window's edges are left out."""
    k, dt = 20, 0.25
    stats = odor_statistics(square_wave(period, on, k * period + 1, phase, rows=3), threshold=0.5, dt=dt)
    assert stats.whiff_frequency[0] == pytest.approx(1.0 / (period * dt), rel=1e-12)
    assert set(stats.whiff_durations[0].tolist()) == {on * dt}
    assert set(stats.blank_durations[0].tolist()) == {(period - on) * dt}
    assert (stats.mean_whiff[0], stats.mean_blank[0]) == (on * dt, (period - on) * dt)
    # every series has one run cut at each edge; complete ones: all the others
    assert stats.censored_whiffs[0] + stats.censored_blanks[0] == 2 * 3
    whole = odor_statistics(square_wave(period, on, k * period, phase, rows=3), threshold=0.5)
    assert whole.intermittency[0] == on / period
    assert whole.mean[0] == pytest.approx(on / period) and whole.peak[0] == 1.0
    assert whole.conditional_mean[0] == 1.0


def test_a_telegraph_signal_gives_its_closed_forms():
    """A two-state Markov signal: geometric whiff and blank durations of means 1/p_off and 1/p_on
    steps (exponential in the limit of small steps), intermittency p_on / (p_on + p_off), onsets
    p_on p_off / (p_on + p_off) per step; within four standard errors."""
    p_on, p_off, rows, T = 0.05, 0.2, 200, 2000
    signal = telegraph(p_on, p_off, rows, T, seed=3)
    stats = odor_statistics(signal.astype(np.float32), threshold=0.5)
    w, b = stats.whiff_durations[0], stats.blank_durations[0]
    for durations, p in ((w, p_off), (b, p_on)):
        mean, sd = 1.0 / p, math.sqrt(1.0 - p) / p
        assert abs(durations.mean() - mean) < 4 * sd / math.sqrt(durations.size)
        for k in (1, 2, 3):  # the geometric law itself, P(k) = p (1 - p)^(k - 1)
            expected = p * (1 - p) ** (k - 1)
            assert abs(np.mean(durations == k) - expected) < 4 * math.sqrt(expected * (1 - expected) / durations.size)
    pi = p_on / (p_on + p_off)
    # the samples are correlated: the standard error of the fraction of time above, by batch means
    per_row = signal.mean(axis=1)
    assert abs(stats.intermittency[0] - pi) < 4 * per_row.std(ddof=1) / math.sqrt(rows)
    rate = p_on * p_off / (p_on + p_off)
    onsets = (signal[:, 1:] & ~signal[:, :-1]).sum(axis=1) / (T - 1)
    assert abs(stats.whiff_frequency[0] - rate) < 4 * onsets.std(ddof=1) / math.sqrt(rows)
    assert stats.whiff_frequency[0] == pytest.approx(onsets.mean(), rel=1e-12)


@pytest.mark.parametrize("level, above", [(0.7, True), (0.2, False), (0.5, False)])
def test_a_constant_signal_is_one_censored_run(level, above):
    """Intermittency 1 (above) or 0 (at or below: the threshold is strict), no onset, no complete
    run; kept, the one censored run per series has the window's length."""
    signal = np.full((4, 50), level)
    stats = odor_statistics(signal, threshold=0.5, dt=0.1)
    assert stats.intermittency[0] == float(above) and stats.whiff_frequency[0] == 0.0
    assert stats.whiff_durations[0].size == stats.blank_durations[0].size == 0
    assert np.isnan(stats.mean_whiff[0]) and np.isnan(stats.mean_blank[0])
    assert (stats.censored_whiffs[0], stats.censored_blanks[0]) == ((4, 0) if above else (0, 4))
    assert np.isnan(stats.skewness[0]) and stats.std[0] == 0.0
    kept = odor_statistics(signal, threshold=0.5, dt=0.1, censored="keep")
    runs = kept.whiff_durations[0] if above else kept.blank_durations[0]
    assert runs.tolist() == pytest.approx([5.0] * 4)


def test_censoring_drops_or_keeps_the_runs_cut_by_the_window():
    signal = np.array([1, 1, 0, 0, 0, 1, 0, 1, 1], float)
    dropped = odor_statistics(signal, 0.5)
    assert dropped.whiff_durations[0].tolist() == [1.0] and dropped.blank_durations[0].tolist() == [3.0, 1.0]
    assert (dropped.censored_whiffs[0], dropped.censored_blanks[0]) == (2, 0)
    kept = odor_statistics(signal, 0.5, censored="keep")
    assert kept.whiff_durations[0].tolist() == [2.0, 1.0, 2.0] and kept.mean_whiff[0] == pytest.approx(5 / 3)
    assert kept.intermittency[0] == dropped.intermittency[0] == 5 / 9
    assert dropped.whiff_frequency[0] == 2 / 8  # two blank-to-whiff transitions among 8


@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(2, 25)),
                  elements=st.sampled_from([0.0, 0.25, 0.5, 1.0, 3.0])),
       st.sampled_from([0.0, 0.25, 0.5, 2.0]), st.sampled_from(["drop", "keep"]))
def test_every_statistic_equals_a_plain_loop_per_probe(values, threshold, censored):
    stats = odor_statistics(values, threshold, censored=censored, dt=0.5)
    for p in range(values.shape[1]):
        ref = naive_statistics([values[w, p].tolist() for w in range(values.shape[0])], threshold, censored, 0.5)
        assert sorted(stats.whiff_durations[p].tolist()) == ref["whiff_durations"]
        assert sorted(stats.blank_durations[p].tolist()) == ref["blank_durations"]
        for name in ("intermittency", "whiff_frequency", "mean", "std", "conditional_mean", "peak"):
            assert getattr(stats, name)[p] == pytest.approx(ref[name], nan_ok=True, abs=1e-12), name
        assert (stats.censored_whiffs[p], stats.censored_blanks[p]) == (ref["censored_whiffs"], ref["censored_blanks"])


def test_invalid_series_are_left_out_and_worlds_are_pooled():
    rng = np.random.default_rng(2)
    values = rng.exponential(1.0, (6, 3, 40))
    valid = rng.random((6, 3)) < 0.6
    valid[0] = True
    stats = odor_statistics(values, 1.0, valid=valid, dt=0.5, time_unit="s")
    for p in range(3):
        alone = odor_statistics(values[valid[:, p], p], 1.0, dt=0.5)  # (S, T): S series of one probe
        for name in ("intermittency", "whiff_frequency", "mean_whiff", "mean_blank", "mean", "std", "kurtosis"):
            assert getattr(stats, name)[p] == pytest.approx(getattr(alone, name)[0], rel=1e-12), name
        assert stats.n_signals[p] == valid[:, p].sum()
    assert stats.time_unit == "s" and stats.dt == 0.5 and np.isnan(stats.downwind).all()
    none = valid.copy()
    none[:, 1] = False
    empty = odor_statistics(values, 1.0, valid=none)
    assert empty.n_signals[1] == 0 and np.isnan(empty.intermittency[1]) and empty.whiff_durations[1].size == 0
    relative = odor_statistics(values, Threshold(0.5, "max"), valid=none)
    assert np.isnan(relative.threshold[1]) and np.isnan(relative.intermittency[1])
    for p in (0, 2):
        assert relative.threshold[p] == 0.5 * values[none[:, p], p].max()
    median = odor_statistics(values, Threshold(2.0, "median", "all"), valid=none)
    assert median.threshold.tolist() == [2.0 * np.median(values[none])] * 3
    with pytest.raises(ValidationError, match="valid"):
        odor_statistics(values, 1.0, valid=valid[:, :2])


def test_thresholds_relative_to_a_statistic_of_each_probe_or_of_all():
    values = np.stack([np.linspace(0, 1, 101), np.linspace(0, 3, 101)])[None]  # (1, 2, 101)
    absolute = odor_statistics(values, 0.5)
    assert absolute.threshold.tolist() == [0.5, 0.5]
    assert absolute.intermittency.tolist() == [50 / 101, pytest.approx(84 / 101)]
    by_probe = odor_statistics(values, Threshold(0.5, relative_to="max"))
    assert by_probe.threshold.tolist() == [0.5, 1.5]
    assert by_probe.intermittency[0] == by_probe.intermittency[1] == 50 / 101
    everywhere = odor_statistics(values, Threshold(0.5, relative_to="max", scope="all"))
    assert everywhere.threshold.tolist() == [1.5, 1.5]
    assert odor_statistics(values, Threshold(1.0, "mean")).threshold.tolist() == pytest.approx([0.5, 1.5])
    assert odor_statistics(values, Threshold(1.0, "median", "all")).threshold.tolist() == pytest.approx([0.75, 0.75])
    assert Threshold(0.1, "max", "all").describe() == "> 0.1 x max (all probes)"
    for bad in (dict(value=-1.0, relative_to="mean"), dict(value=0.5, relative_to="mode"),
                dict(value=0.5, scope="world"), dict(value=float("nan")), dict(value=True)):
        with pytest.raises(ValidationError, match="Threshold"):
            Threshold(**bad)
    with pytest.raises(ValidationError, match="threshold"):
        odor_statistics(values, "0.5")


def test_moments_and_density_of_a_known_distribution():
    from scipy import stats as sps

    rng = np.random.default_rng(4)
    values = rng.gamma(2.0, 1.0, (3, 2, 500))
    stats = odor_statistics(values, 1.0, bins=40)
    for p in range(2):
        pooled = values[:, p].ravel()
        assert stats.mean[p] == pytest.approx(pooled.mean()) and stats.std[p] == pytest.approx(pooled.std())
        assert stats.skewness[p] == pytest.approx(sps.skew(pooled))
        assert stats.kurtosis[p] == pytest.approx(sps.kurtosis(pooled, fisher=False))
        assert stats.conditional_mean[p] == pytest.approx(pooled[pooled > 1.0].mean())
        assert (stats.pdf[p] * np.diff(stats.pdf_edges)).sum() == pytest.approx(1.0)
        assert np.allclose(stats.pdf[p], np.histogram(pooled, stats.pdf_edges, density=True)[0])


def test_bad_signals_and_arguments_are_refused_by_name():
    for bad, match in ((np.array([1.0]), "at least 2 samples"), (np.array([[np.nan, 1.0]]), "finite"),
                       (np.zeros((1, 1, 1, 3)), "signals"), ("abc", "signals"), (np.zeros((0, 5)), "at least")):
        with pytest.raises(ValidationError, match=match):
            odor_statistics(bad, 0.5)
    with pytest.raises(ValidationError, match="censored"):
        odor_statistics(np.zeros(5), 0.5, censored="ignore")
    with pytest.raises(ValidationError, match="bins"):
        odor_statistics(np.zeros(5), 0.5, bins=0)
    with pytest.raises(ValidationError, match="pdf_range"):
        odor_statistics(np.zeros(5), 0.5, pdf_range=(1.0, 0.0))
    with pytest.raises(ValidationError, match="dt"):
        odor_statistics(np.zeros(5), 0.5, dt=0.0)


def test_tables_and_the_figure(tmp_path):
    stats = odor_statistics(square_wave(5, 2, 101, rows=2), 0.5, dt=0.1, time_unit="s")
    assert isinstance(stats, OdorStatistics) and stats.time_unit == "s"
    (row,) = stats.rows()
    assert list(row) == list(COLUMNS) and row["whiffs"] == 2 * 19 and row["whiff_frequency"] == pytest.approx(2.0)
    assert math.isnan(row["downwind"])
    text = (stats.to_csv(tmp_path / "stats.csv")).read_text().splitlines()
    assert text[0].split(",") == list(COLUMNS) and len(text) == 2
    assert "| 0.406 | 2 |" in stats.to_markdown(("intermittency", "whiff_frequency"))
    frame = stats.to_frame()
    assert frame.shape == (1, len(COLUMNS)) and frame["mean_whiff"].iloc[0] == pytest.approx(0.2)
    png = stats.plot(tmp_path / "stats.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValidationError, match="png"):
        stats.plot(tmp_path / "stats.jpg")
    with pytest.raises(ValidationError, match="columns"):
        stats.to_markdown(("nonsense",))
