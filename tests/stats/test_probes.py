"""plume_multi.stats.sample_signals: the probes read what the plume holds where the protocol puts
them (static Gaussian: the field itself), relative to each world's own source (PoissonHits: its
hits match their closed-form law), deterministically; the wind direction and the time step come
from the plume; bad probes are refused by name."""

import math

import numpy as np
import pytest

from plume_multi import Scenario, plumes
from plume_multi.errors import ValidationError
from plume_multi.models import sensors
from plume_multi.models.plumes import Puffs, Wind
from plume_multi.scenarios import poisson_search
from plume_multi.stats import Probes, odor_statistics, plume_wind, sample_signals, time_step


def test_probes_read_the_gaussian_field_along_the_plumes_wind():
    plume = plumes.Gaussian(source=(20, 10), sigma=6.0, wind=(0.0, 2.0))  # the wind blows along +y
    sc = Scenario(grid_size=(40, 36), plume=plume)
    probes = Probes(downwind=(1, 3, 6, 12), crosswind=(0, -2, 4))
    sig = sample_signals(sc, probes, steps=4, num_worlds=2, progress=False)
    assert (sig.direction_from, sig.probes.direction, sig.signal) == ("plume", 90.0, "concentration")
    # probe (d, c): d along +y, c to the left of the wind, which is -x
    expected = [[20 - c, 10 + d] for d in (1, 3, 6, 12) for c in (0, -2, 4)]
    assert sig.cells.tolist() == [expected, expected] and sig.valid.all()
    assert np.allclose(sig.downwind, probes.downwind_offsets) and np.allclose(sig.crosswind, probes.crosswind_offsets)
    field = sc.plume.field(sc.grid_size)  # (H, W) float32, what the engine senses
    at_probes = field[[y for _, y in expected], [x for x, _ in expected]]
    assert sig.values.shape == (2, 12, 4) and np.array_equal(sig.values, np.broadcast_to(at_probes[None, :, None], (2, 12, 4)))

    stats = odor_statistics(sig, 0.5)
    assert stats.intermittency.tolist() == (at_probes > 0.5).astype(float).tolist()
    assert np.allclose(stats.mean, at_probes) and stats.whiff_frequency.tolist() == [0.0] * 12
    assert stats.downwind.tolist() == probes.downwind_offsets.tolist() and (stats.dt, stats.time_unit) == (1.0, "steps")
    # the mean against distance downwind on the axis is the Gaussian's profile
    axis = stats.crosswind == 0
    assert np.allclose(stats.mean[axis], np.exp(-np.array([1, 3, 6, 12]) ** 2 / 72.0), atol=1e-6)

    along_x = sample_signals(sc, Probes(downwind=(5,), crosswind=(1,), direction=0.0), steps=2, progress=False,
                             num_worlds=1)
    assert along_x.direction_from == "given" and along_x.cells[0].tolist() == [[25, 11]]


def test_hits_at_probes_around_each_worlds_own_source_follow_their_law():
    """PoissonHits draws each world's source at reset: the probes move there. Hits are independent
    draws of Pr(h | d): intermittency 1 - Pr(0 | d), whiffs geometric of mean 1 / Pr(0 | d),
    blanks of mean 1 / (1 - Pr(0 | d)), mean hits sum_h h Pr(h | d); within four standard errors.
    The probes keep poisson_search's sensors (Hits, Belief): its compiled step samples them."""
    scenario = poisson_search(1.0, 2.0)
    plume = scenario.plume
    probes = Probes(downwind=(1, 2, 4), crosswind=(0, 1))
    sig = sample_signals(scenario, probes, steps=300, num_worlds=24, seed=5, progress=False)
    assert (sig.signal, sig.direction_from, sig.probes.direction) == ("hits", "calm (+x)", 0.0)
    assert sig.scenario.sensors == scenario.sensors and sig.scenario.n_agents == probes.n_probes
    assert len(np.unique(sig.sources, axis=0)) > 3  # the sources differ between worlds
    offsets = np.stack([probes.downwind_offsets, probes.crosswind_offsets], axis=-1)
    rel = sig.cells - sig.sources[:, None, :]
    assert np.array_equal(rel[sig.valid], np.broadcast_to(offsets, rel.shape)[sig.valid])
    inside = (sig.cells >= 0).all(-1) & (sig.cells < 19).all(-1)
    assert np.array_equal(sig.valid, inside) and sig.valid.sum(axis=0).min() >= 8

    stats = odor_statistics(sig, 0.0)  # a whiff: at least one hit
    for p in range(probes.n_probes):
        probs = plume.hit_probabilities(float(np.hypot(*offsets[p])))
        p0, n = probs[0], stats.n_signals[p] * 300
        assert abs(stats.intermittency[p] - (1 - p0)) < 4 * math.sqrt(p0 * (1 - p0) / n)
        hits = np.arange(probs.size)
        sd = math.sqrt((probs * hits ** 2).sum() - (probs * hits).sum() ** 2)
        assert abs(stats.mean[p] - (probs * hits).sum()) < 4 * sd / math.sqrt(n)
        for durations, end in ((stats.whiff_durations[p], p0), (stats.blank_durations[p], 1 - p0)):
            if durations.size > 30:
                assert abs(durations.mean() - 1 / end) < 4 * math.sqrt(1 - end) / end / math.sqrt(durations.size)

    again = sample_signals(scenario, probes, steps=300, num_worlds=24, seed=5, progress=False)
    assert np.array_equal(again.values, sig.values) and np.array_equal(again.valid, sig.valid)


def test_bad_probes_and_scenarios_are_refused_by_name():
    sc = Scenario(grid_size=(30, 20), source_location=(25, 10))
    with pytest.raises(ValidationError, match=r"Probes: the probe 10 cells downwind.*off the 30x20 grid"):
        sample_signals(sc, Probes(downwind=(2, 10)), steps=5, progress=False)
    with pytest.raises(ValidationError, match="on the source"):
        sample_signals(sc, Probes(downwind=(0,)), steps=5, progress=False)
    with pytest.raises(ValidationError, match="2-D scenario"):
        sample_signals(Scenario(grid_size=(8, 8, 8)), steps=5, progress=False)
    for bad in (dict(downwind=()), dict(downwind=(1, float("nan"))), dict(crosswind="a"), dict(direction="x"),
                dict(downwind=tuple(range(1, 70)), crosswind=tuple(range(70)))):
        with pytest.raises(ValidationError, match="Probes"):
            Probes(**bad)
    for kwargs, name in ((dict(steps=1), "steps"), (dict(num_worlds=0), "num_worlds"), (dict(seed=-1), "seed"),
                         (dict(warmup=-1), "warmup"), (dict(probes=(1, 2)), "probes")):
        with pytest.raises(ValidationError, match=name):
            sample_signals(sc, **{"probes": Probes(downwind=(-3,)), "steps": 5, **kwargs})
    with pytest.raises(ValidationError, match="scenario"):
        sample_signals("gaussian", steps=5)
    with pytest.raises(ValidationError, match=r"sensors.*starting with Concentration\(\)"):
        sample_signals(sc, Probes(downwind=(-3,)), steps=5, sensors=(sensors.Position(),))
    with pytest.raises(ValidationError, match=r"sensors.*starting with Hits\(\)"):
        sample_signals(poisson_search(1.0, 2.0), Probes(downwind=(1,)), steps=5, sensors=(sensors.Concentration(),))


def test_the_probes_sense_the_signal_first():
    """A scenario whose first sensor is not the signal: the probes sense the default pair."""
    sc = Scenario(grid_size=(30, 20), source_location=(10, 10), sensors=(sensors.Position(), sensors.Concentration()))
    sig = sample_signals(sc, Probes(downwind=(2, 4)), steps=2, num_worlds=1, progress=False)
    assert sig.scenario.sensors == (sensors.Concentration(), sensors.Position())
    assert np.allclose(sig.values[0, :, 0], np.exp(-np.array([2.0, 4.0]) ** 2 / (2 * 12.0 ** 2)))


def test_the_wind_and_the_time_step_come_from_the_plume():
    assert plume_wind(plumes.Gaussian()) is None and plume_wind(plumes.Gaussian(wind=(1.0, -1.0))) == (1.0, -1.0)
    puffs = Puffs(source=(10, 50), wind=Wind(u=0.5, v=0.5), dt=0.02)
    assert plume_wind(puffs) == (0.5, 0.5) and time_step(puffs) == (0.02, "s")
    assert plume_wind(Puffs(source=(10, 50), wind=(0.0, -2.0))) == (0.0, -2.0)
    frames = np.zeros((4, 6, 8), np.uint8)
    per_frame = np.array([[1.0, 0.0], [1.0, 2.0], [1.0, 0.0], [1.0, 2.0]])
    movie = plumes.Movie(frames, source=(1, 3), wind=per_frame, fps=50.0)
    assert plume_wind(movie) == (1.0, 1.0) and time_step(movie) == (0.02, "s")
    assert time_step(plumes.Movie(frames, source=(1, 3))) == (1.0, "steps")
    assert plume_wind(plumes.PoissonHits(1.0, 2.0)) is None and time_step(plumes.PoissonHits(1.0, 2.0)) == (1.0, "steps")


# ------------------------------------------------------------------------------ walls (issue 32, item 2)
def _two_masks():
    """Two 12 x 8 masks: a wall at x = 6 (rows 2..6) in the first, at x = 3 (rows 0..4) in the second,
    and the cell (4, 4) solid in both."""
    first = np.zeros((8, 12), bool)
    first[2:7, 6] = True
    second = np.zeros((8, 12), bool)
    second[0:5, 3] = True
    first[4, 4] = second[4, 4] = True
    return first, second


def test_probes_sample_among_the_walls_and_a_probe_in_a_wall_is_marked_not_read_as_nan():
    """The probes sampled the plume without the scenario's walls (their scenario dropped them), and a
    probe with no series gave NaN statistics without a word."""
    from plume_multi.walls import mask_indices

    masks = _two_masks()
    sc = Scenario(grid_size=(12, 8), walls=list(masks), source_location=(9, 4), sigma=4.0)
    sig = sample_signals(sc, Probes(downwind=(1, 3, 5, 6), direction=180.0), steps=3, num_worlds=6, seed=3,
                         progress=False)
    cells = sig.cells[0]
    assert cells.tolist() == [[8, 4], [6, 4], [4, 4], [3, 4]] and sig.scenario.walls == sc.walls
    drawn = mask_indices(np.arange(3, 9, dtype=np.int64), np.zeros(6, np.int64), 2)
    solid = np.array([[masks[k][y, x] for x, y in cells] for k in drawn])
    assert 0 < drawn.sum() < 6 and np.array_equal(sig.in_wall, solid) and np.array_equal(sig.valid, ~solid)
    field = sc.plume.field(sc.grid_size)
    for b in range(6):  # a probe outside the walls reads the field (one inside waits elsewhere, left out)
        expected = np.repeat(field[cells[:, 1], cells[:, 0]][:, None], 3, axis=1)
        np.testing.assert_array_equal(sig.values[b][~solid[b]], expected[~solid[b]])

    stats = odor_statistics(sig, 0.5)
    assert stats.status == ("sampled", "sampled", "in a wall", "sampled")
    assert stats.n_signals.tolist() == (~solid).sum(axis=0).tolist() and stats.n_signals[2] == 0
    sampled = np.array([True, True, False, True])
    assert np.isfinite(stats.intermittency[sampled]).all() and np.isnan(stats.intermittency[2])
    rows = stats.rows()
    assert [r["status"] for r in rows] == list(stats.status) and math.isnan(rows[2]["intermittency"])
    line = stats.to_markdown().splitlines()[4]  # the probe in a wall says so where its numbers would be
    assert line.startswith("| 5 | 0 | in a wall | in a wall |")


def test_a_probe_the_odour_never_reaches_or_never_sampled_is_marked():
    signals = np.zeros((3, 2, 50), np.float32)
    signals[:, 0, ::5] = 1.0
    stats = odor_statistics(signals, 0.5)
    assert stats.status == ("sampled", "never reached")
    assert stats.intermittency.tolist() == [0.2, 0.0] and math.isnan(stats.mean_whiff[1])
    assert "| never reached |" in stats.to_markdown()
    stats = odor_statistics(signals, 0.5, valid=np.array([[True, False]] * 3))
    assert stats.status == ("sampled", "not sampled") and stats.n_signals.tolist() == [3, 0]
    assert math.isnan(stats.intermittency[1]) and stats.rows()[1]["status"] == "not sampled"


def test_a_puff_plume_among_walls_in_the_switch_many_regime_has_statistics_or_says_why():
    """The case of the issue: moving puff sources among walls, the wind switching many times."""
    from plume_multi import sources

    walls = np.zeros((16, 32), bool)
    walls[2:14, 7] = True
    plume = plumes.Puffs(source=[(4, 4), (4, 11)], region=((0.0, 16.0), (0.0, 8.0)),
                         source_motion=sources.RandomWalk(speed=0.6, persistence=4.0),
                         wind=Wind(u=3.0, regime="switch-many", switch_every=0.1, switch_jitter=0.02, grid=(5, 5)),
                         puff_release_rate=100.0, puff_init_rad=0.3, puff_spread_rate=0.02, conc_scale=0.05,
                         init_num_puffs=5, max_num_puffs=200)
    sc = Scenario(grid_size=(32, 16), plume=plume, walls=walls, goal_radius=0.5)
    sig = sample_signals(sc, Probes(downwind=(1, 3, 12), crosswind=(0,)), steps=6, num_worlds=3, progress=False)
    stats = odor_statistics(sig, 0.0)
    for p, status in enumerate(stats.status):
        assert status in ("sampled", "never reached", "in a wall", "not sampled")
        assert (stats.n_signals[p] == 0) == (status in ("in a wall", "not sampled"))
        assert np.isnan(stats.intermittency[p]) == (stats.n_signals[p] == 0)
        assert (status == "in a wall") == (stats.n_signals[p] == 0 and sig.in_wall[:, p].any())
    # the probe three cells downwind of each world's first source is in the wall at x = 7
    assert sig.in_wall[:, 1].all() and stats.status[1] == "in a wall"
