"""Likelihoods (``plume_multi.models.likelihoods``): the closed form recovered by calibration within
its reported error, a calibrated belief update and infotaxis decision equal to plain NumPy, the
on-disk cache (round trip, key, corruption), determinism over batch splits, refusals, and infotaxis
with a calibrated puff likelihood against a random walk."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from plume_multi import Scenario, Simulator, evaluate
from plume_multi.errors import ValidationError
from plume_multi.models import bodies, likelihoods, plumes, sensors
from plume_multi import calibration
from plume_multi.calibration import calibrate
from plume_multi.models.likelihoods import CalibratedLikelihood, PoissonLikelihood
from plume_multi.policies import Greedy, Infotaxis

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "policies"))
import policies_reference as ref  # noqa: E402

GRID = (13, 9)


def gaussian_scenario(**changes):
    plume = plumes.Gaussian(source=(3, 4), sigma=2.5, wind=(1.0, 0.0))
    fields = dict(grid_size=GRID, plume=plume, action_model=bodies.Cardinal(), sensors=(sensors.Concentration(),))
    return Scenario(**{**fields, **changes})


@pytest.fixture(scope="module")
def gaussian_likelihood():
    return calibrate(gaussian_scenario(), (0.05, 0.3), worlds=2, steps=2, progress=False, cache=False)


class Like:
    """``like(h, x, y)``: ``Pr(h | source at each cell)`` for an agent at ``(x, y)``, from a centred table."""

    def __init__(self, table, shape):
        self.table, self.shape, self.n_hits = table, shape, table.shape[0]

    def __call__(self, h, *cell):
        h_, w_ = self.shape
        x, y = cell
        return self.table[h, h_ - 1 - y:2 * h_ - 1 - y, w_ - 1 - x:2 * w_ - 1 - x]


def test_calibration_recovers_the_poisson_closed_form_within_its_error():
    plume = plumes.PoissonHits(1.0, 2.0, grid_size=9, source=(3, 4))
    sc = Scenario(plume=plume, grid_size=(9, 9), sensors=(sensors.Hits(),), start_positions=((4, 4),))
    lik = calibrate(sc, None, worlds=16, steps=50, progress=False, cache=False)
    closed = plume.centred_likelihood
    m = lik.sampled
    assert m.sum() == 80 and lik.worlds_sampled[m].min() == 16  # every cell but the source's, in every world
    z = np.abs(lik.estimate - closed)[:, m] / lik.stderr[:, m]
    assert z.max() < 5.0 and (z > 2.0).mean() < 0.15  # as a standard error should
    assert np.abs(lik.estimate - closed)[:, m].max() > 0  # an estimate, not the table itself
    assert np.isinf(lik.stderr[:, ~m]).all() and lik.max_stderr < 0.2
    assert "offsets sampled" in repr(lik) and "standard error" in lik.summary()


def test_poisson_likelihood_is_the_plume_s_own_tables():
    plume = plumes.PoissonHits(1.0, 2.0, grid_size=7)
    lik = PoissonLikelihood(plume)
    assert lik.tables.likelihood is plume.centred_likelihood or np.array_equal(lik.tables.likelihood,
                                                                               plume.centred_likelihood)
    assert np.array_equal(lik.centred_likelihood_log, plume.centred_likelihood_log)
    with pytest.raises(ValidationError, match="thresholds"):
        PoissonLikelihood(plume, thresholds=(0.1,))  # n_hits - 1 thresholds needed


def test_calibrated_table_rules(gaussian_likelihood):
    lik = gaussian_likelihood
    table = lik.centred_likelihood
    assert table.shape == (3, 17, 25) and lik.n_outcomes == 3
    centre = (slice(None), 8, 12)
    assert (table[centre] == 0).all()  # on the source: found
    off = lik.sampled.copy()
    off[8, 12] = False
    assert np.allclose(table[:, off].sum(axis=0), 1.0) and table[:, off].min() >= lik.floor
    never = ~lik.sampled
    never[8, 12] = False
    assert never.any() and np.allclose(table[0, never], 1 - 2 * lik.floor)  # unsampled: no detection


def test_calibrated_belief_update_matches_numpy(gaussian_likelihood):
    lik = gaussian_likelihood
    sc = gaussian_scenario(sensors=(sensors.Belief(likelihood=lik),), start_positions=((10, 2),))
    sim = Simulator(sc, num_worlds=2)
    sim.reset(seed=3)
    field = Simulator(gaussian_scenario(), num_worlds=1).static_field  # the concentration the sensor reads
    like = Like(lik.centred_likelihood, sc.grid_size[::-1])
    thresholds = np.array(lik.thresholds, np.float32)
    cell = (10, 2)
    p = ref.first_belief(like, cell, int((field[cell[::-1]] > thresholds).sum()))
    actions = [3, 3, 0, 3]  # LEFT, LEFT, UP, LEFT
    for a in actions:
        sim.step(np.full(2, a))
        cell = tuple(int(v) for v in sim.positions[0])
        q = p * like(int((field[cell[::-1]] > thresholds).sum()), *cell)
        q[cell[::-1]] = 0.0
        p = q / q.sum()
    beliefs = sim.model_state("sensor0.belief")
    np.testing.assert_allclose(beliefs[0], p, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(beliefs[0], beliefs[1])  # a static plume: the same belief in both worlds

    # the decision on it: infotaxis and space-aware infotaxis as the NumPy reference chooses
    moves = sc.moves()
    for aware in (False, True):
        action = Infotaxis(aware, likelihood=lik).decide(beliefs[:1], sim.positions[:1], moves=moves)
        want, scores = ref.infotaxis_decide(beliefs[0], cell, moves, like, space_aware=aware)
        assert action[0] == want


def test_cache_round_trip_key_and_corruption(tmp_path, monkeypatch):
    from plume_multi.engine import jit

    monkeypatch.setattr(jit, "CACHE_DIR", tmp_path)
    sc = gaussian_scenario()
    first = calibrate(sc, (0.05,), worlds=2, steps=2, progress=False)
    path = tmp_path / "likelihoods" / f"{first.key}.npz"
    assert path.is_file()

    def no_sampling(*args, **kwargs):
        raise AssertionError("sampled again")

    real = calibration._sample
    monkeypatch.setattr(calibration, "_sample", no_sampling)
    again = calibrate(sc, (0.05,), worlds=2, steps=2, progress=False)  # from the cache
    assert np.array_equal(again.estimate, first.estimate) and np.array_equal(again.stderr, first.stderr)
    other = sc.replace(plume=plumes.Gaussian(source=(3, 4), sigma=2.0, wind=(1.0, 0.0)))
    keys = {first.key, calibration._key(other, {**first.settings}),
            calibration._key(sc, {**first.settings, "seed": 1}), calibration._key(sc, {**first.settings, "steps": 3})}
    assert len(keys) == 4  # the plume, the seed and the budget are in the key
    monkeypatch.setattr(calibration, "_sample", real)
    path.write_bytes(path.read_bytes()[:200])  # a truncated file: recomputed, never trusted
    with pytest.warns(RuntimeWarning, match="cannot be used"):
        mended = calibrate(sc, (0.05,), worlds=2, steps=2, progress=False)
    assert np.array_equal(mended.estimate, first.estimate)
    np.savez(path, key=np.array("foreign"))  # a foreign file
    with pytest.warns(RuntimeWarning, match="cannot be used"):
        calibrate(sc, (0.05,), worlds=2, steps=2, progress=False)


def test_calibration_does_not_depend_on_the_batch_split(monkeypatch):
    sc = gaussian_scenario(sensors=(sensors.Concentration(),))
    whole = calibrate(sc, (0.05,), worlds=3, steps=2, progress=False, cache=False, seed=5)
    monkeypatch.setattr(calibration, "CHUNK_AGENTS", 1)  # one world per simulator
    split = calibrate(sc, (0.05,), worlds=3, steps=2, progress=False, cache=False, seed=5)
    for name in ("estimate", "stderr", "samples", "worlds_sampled"):
        assert np.array_equal(getattr(whole, name), getattr(split, name))


def test_refusals(gaussian_likelihood):
    sc = gaussian_scenario()
    with pytest.raises(ValidationError, match=r"Belief.plume: .* or give Belief likelihood="):
        sc.replace(sensors=(sensors.Belief(),))  # a Gaussian plume has no closed form
    with pytest.raises(ValidationError, match="grid"):
        Scenario(grid_size=(11, 9), plume=plumes.Gaussian(source=(3, 4)),
                 sensors=(sensors.Belief(likelihood=gaussian_likelihood),))
    with pytest.raises(ValidationError, match="calibrate.thresholds"):
        calibrate(sc, None, progress=False)
    with pytest.raises(ValidationError, match="calibrate.thresholds"):
        calibrate(sc, (0.3, 0.1), progress=False)
    with pytest.raises(ValidationError, match="calibrate.worlds"):
        calibrate(sc, (0.1,), worlds=1, progress=False)
    with pytest.raises(ValidationError, match="Infotaxis.likelihood"):
        Infotaxis(likelihood="calibrated")
    with pytest.raises(ValidationError, match="Greedy.likelihood"):
        Greedy(likelihood=np.zeros(3))


def test_infotaxis_on_a_calibrated_puff_plume_beats_a_random_walk():
    plume = plumes.Puffs(source=(2.0, 6.0), cell_size=0.25, spin_up_steps=300)
    sc = Scenario(grid_size=(24, 12), plume=plume, action_model=bodies.Cardinal(), sensors=(sensors.Concentration(),),
                  max_steps=200)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a grid body already: no swap to warn about
        prepared = Infotaxis().scenario_for(sc)
    lik = prepared.sensors[0].likelihood
    assert isinstance(lik, CalibratedLikelihood) and lik.thresholds == (0.0,)
    found = evaluate(Infotaxis(likelihood=lik), sc, 16, progress=False).summary()["success_rate"]
    walk = evaluate("random", sc, 16, progress=False).summary()["success_rate"]
    assert found > walk


def test_a_mismatched_poisson_model_on_another_plume_and_its_json():
    from plume_multi.scenario import scenario_from_metadata

    plume = plumes.Gaussian(source=(2, 4), sigma=2.5, wind=(1.0, 0.0))
    sc = Scenario(grid_size=(9, 9), plume=plume, action_model=bodies.Cardinal(), sensors=(sensors.Concentration(),),
                  max_steps=40)
    model = PoissonLikelihood(plumes.PoissonHits(1.0, 2.0, grid_size=9, n_hits=2), thresholds=(0.05,))
    policy = Infotaxis(likelihood=model)
    prepared = policy.scenario_for(sc)
    assert prepared.sensors[0].likelihood is model
    result = evaluate(policy, sc, 4, progress=False)
    assert result.scenario.sensors[0].likelihood is model
    back = scenario_from_metadata(prepared.metadata())  # a scenario's JSON keeps its likelihood
    assert np.array_equal(back.sensors[0].likelihood.centred_likelihood, model.centred_likelihood)
    assert back.sensors[0].likelihood.thresholds == (0.05,)


def test_a_calibrated_likelihood_in_a_scenarios_json_is_read_back_without_sampling(gaussian_likelihood, monkeypatch):
    import json

    from plume_multi.scenario import scenario_from_metadata

    sc = gaussian_scenario(sensors=(sensors.Belief(likelihood=gaussian_likelihood),))
    text = json.dumps(sc.metadata())

    def no_sampling(*args, **kwargs):
        raise AssertionError("sampled again")

    monkeypatch.setattr(calibration, "_sample", no_sampling)
    back = scenario_from_metadata(json.loads(text)).sensors[0].likelihood
    assert isinstance(back, CalibratedLikelihood) and back.key == gaussian_likelihood.key
    for name in ("estimate", "stderr", "samples", "worlds_sampled", "centred_likelihood"):
        assert np.array_equal(getattr(back, name), getattr(gaussian_likelihood, name))
    record = json.loads(text)
    belief = next(s for s in record["sensors"] if s.get("likelihood"))
    belief["likelihood"]["arrays"] = belief["likelihood"]["arrays"][:40]  # a record cut short: refused, named
    with pytest.raises(ValidationError, match="Belief.likelihood"):
        scenario_from_metadata(record)


def test_a_mismatched_poisson_model_has_a_floor_so_no_detection_empties_a_belief():
    plume = plumes.WindyPoissonHits(R_bar=2.5, V_bar=2.0, tau_bar=150.0, grid_size=(41, 21), start=(32, 10))
    own = plume.centred_likelihood
    assert (own[1] == 0).sum() > 1  # the closed form gives 0 to a hit far off the plume (an underflow)
    model = PoissonLikelihood(plume, thresholds=(0.0,))
    lik = model.centred_likelihood
    centre = tuple(n - 1 for n in model.shape)
    off = np.ones(lik.shape[1:], bool)
    off[centre] = False
    assert lik[:, off].min() >= 1e-3 and np.all(lik[(slice(None), *centre)] == 0)
    np.testing.assert_allclose(lik[:, off].sum(axis=0), 1.0)  # still a distribution over the outcomes
    np.testing.assert_array_equal(model.tables.likelihood, lik)
    exact = PoissonLikelihood(plume, thresholds=(0.0,), floor=0.0)
    assert exact.centred_likelihood is own  # no floor: the closed form itself
    assert PoissonLikelihood(plume).centred_likelihood is own  # its own plume's hits: no floor either


def test_a_3d_calibration_of_a_static_plume_is_its_thresholded_field_at_every_offset():
    # a Gaussian plume without noise: the detection at a cell is certain, so the calibrated estimate
    # at offset d is exactly whether the field at source - d is above the threshold (plain NumPy)
    grid = (5, 4, 3)
    plume = plumes.Gaussian(source=(2, 1, 1), sigma=1.5)
    sc = Scenario(grid_size=grid, plume=plume, action_model=bodies.Cardinal(), sensors=(sensors.Concentration(),))
    lik = calibrate(sc, (0.4,), worlds=2, steps=2, progress=False, cache=False)
    d, h, w = grid[2], grid[1], grid[0]
    assert lik.shape == (d, h, w) and lik.estimate.shape == (2, 2 * d - 1, 2 * h - 1, 2 * w - 1)
    field = plume.bind(grid).field(grid).astype(np.float32)  # [z, y, x]
    expected = np.zeros((2 * d - 1, 2 * h - 1, 2 * w - 1))
    seen = np.zeros(expected.shape, bool)
    sx, sy, sz = 2, 1, 1
    for z, y, x in np.ndindex(d, h, w):  # the agent at (x, y, z): the source at offset source - cell
        idx = (sz - z + d - 1, sy - y + h - 1, sx - x + w - 1)
        expected[idx] = float(field[z, y, x] > np.float32(0.4))
        seen[idx] = True
    seen[d - 1, h - 1, w - 1] = False  # the agent on the source has found it: no outcome there
    assert 0 < expected[seen].sum() < seen.sum()  # the threshold splits the cells
    np.testing.assert_array_equal(lik.sampled, seen)
    np.testing.assert_array_equal(lik.estimate[1][seen], expected[seen])
    np.testing.assert_array_equal(lik.estimate[0][seen], 1.0 - expected[seen])
