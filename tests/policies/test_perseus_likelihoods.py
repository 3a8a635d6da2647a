"""policies.Perseus on a calibrated likelihood (a Gaussian plume's, the small scenario of
tests/models/test_likelihoods.py): the backups against the plain NumPy Perseus on the same tables,
values that never decrease, determinism for a seed, save/load and evaluate, and the refusals."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from plume_multi import Scenario, evaluate
from plume_multi import calibration
from plume_multi.calibration import calibrate
from plume_multi.errors import ValidationError
from plume_multi.models import bodies, plumes, sensors
from plume_multi.models.likelihoods import PoissonLikelihood
from plume_multi.policies import Perseus

sys.path.insert(0, str(Path(__file__).resolve().parent))
import perseus_reference as ref  # noqa: E402

GRID = (13, 9)  # tests/models/test_likelihoods.py's Gaussian scenario: the same compiled step


def gaussian_scenario(**changes):
    plume = plumes.Gaussian(source=(3, 4), sigma=2.5, wind=(1.0, 0.0))
    fields = dict(grid_size=GRID, plume=plume, action_model=bodies.Cardinal(), sensors=(sensors.Concentration(),),
                  max_steps=40)
    return Scenario(**{**fields, **changes})


@pytest.fixture(scope="module")
def likelihood():
    return calibrate(gaussian_scenario(), (0.05, 0.3), worlds=2, steps=2, progress=False, cache=False)


@pytest.fixture(scope="module")
def solved(likelihood):
    return Perseus.solve(gaussian_scenario(), likelihood=likelihood, beliefs=24, iterations=3, seed=1,
                         explore="random")


def test_calibrated_backups_equal_the_numpy_perseus_and_values_never_decrease(likelihood):
    model = SimpleNamespace(shape=likelihood.shape, centred_likelihood=likelihood.centred_likelihood,
                            n_hits=likelihood.n_outcomes, start=(10, 2),
                            first_hit_probabilities=np.full(likelihood.n_outcomes, 1.0 / likelihood.n_outcomes))
    moves = np.zeros((4, 3), dtype=np.int64)
    moves[:, :2] = gaussian_scenario().moves()
    n = 10
    b3, c3 = ref.random_points(model, moves, n, seed=3)  # walks whose outcomes follow the calibrated table
    got = Perseus.solve(gaussian_scenario(), likelihood=likelihood, points=(b3.reshape((n,) + likelihood.shape),
                                                                            c3[:, :2]), iterations=4, tol=0.0, seed=5)
    lik3 = likelihood.centred_likelihood.reshape((likelihood.n_outcomes, 1) + likelihood.centred_likelihood.shape[1:])
    alphas, actions, means = ref.solve(b3, c3, moves, lik3, got.discount, got.report.iterations, seed=5)
    assert got.report.iterations == 4
    assert got.actions.tolist() == actions.tolist()
    assert got.alphas.reshape(alphas.shape).tobytes() == alphas.tobytes()
    assert list(got.report.lower) == means
    assert np.all(np.diff(means) >= 0.0) and means[-1] > means[0]  # values improve, never decrease
    assert got.likelihood is likelihood and got.report.upper >= means[-1]


def test_a_calibrated_solve_is_deterministic_for_a_seed(likelihood, solved):
    again = Perseus.solve(gaussian_scenario(), likelihood=likelihood, beliefs=24, iterations=3, seed=1,
                          explore="random")
    assert again.alphas.tobytes() == solved.alphas.tobytes() and again.actions.tolist() == solved.actions.tolist()
    assert again.report.lower == solved.report.lower and solved.report.n_beliefs == 24
    assert solved.scenario.sensors[0].likelihood is likelihood  # the scenario solved carries its Belief


def test_save_load_and_evaluate_a_calibrated_policy(likelihood, solved, tmp_path):
    back = Perseus.load(solved.save(tmp_path / "gaussian.npz"))
    assert back.alphas.tobytes() == solved.alphas.tobytes() and back.likelihood is not likelihood
    assert back.likelihood.key == likelihood.key
    assert np.array_equal(back.likelihood.centred_likelihood, likelihood.centred_likelihood)
    task = gaussian_scenario()  # a Concentration sensor: scenario_for gives it the Belief solved for
    back.check_scenario(back.scenario_for(task))  # equal by value, not identity
    assert back.scenario_for(task).sensors[0].likelihood is back.likelihood
    result = evaluate(back, task, 4, progress=False)
    assert result.scenario.sensors[0].likelihood is back.likelihood and result.arrival_time.shape == (4, 1)


def test_refusals_come_up_front(likelihood, solved, monkeypatch):
    other = calibrate(gaussian_scenario(), (0.05, 0.2), worlds=2, steps=2, progress=False, cache=False)
    mismatched = PoissonLikelihood(plumes.PoissonHits(1.0, 2.0, grid_size=9, n_hits=3), thresholds=(0.05, 0.3))
    for model, scenario in ((other, gaussian_scenario()), (mismatched, gaussian_scenario(grid_size=(9, 9)))):
        with pytest.raises(ValidationError, match="likelihood the alpha vectors were solved for"):
            solved.check_scenario(scenario.replace(sensors=(sensors.Belief(likelihood=model),)))
    with pytest.raises(ValidationError, match="Poisson-hit plume"):  # no Belief, no closed form
        solved.check_scenario(gaussian_scenario())

    def no_sampling(*args, **kwargs):
        raise AssertionError("calibrated before refusing")

    monkeypatch.setattr(calibration, "_sample", no_sampling)
    walls = np.zeros(GRID[::-1], dtype=bool)
    walls[0, 12] = True
    for changes, words in ((dict(walls=walls), "walls"), (dict(goal_radius=1.5), "goal_radius"),
                           (dict(plume=plumes.Puffs(source=(2.5, 4.0), cell_size=0.25)), "between cells"),
                           (dict(plume=plumes.Gaussian(source=((3, 4), (9, 4)))), "2 sources")):
        with pytest.raises(ValidationError, match=words):
            Perseus.solve(gaussian_scenario(**changes), beliefs=5)
    with pytest.raises(ValidationError, match="Perseus.solve.likelihood"):
        Perseus.solve(gaussian_scenario(), likelihood="calibrated")
    with pytest.raises(ValidationError, match="grid"):
        Perseus.solve(gaussian_scenario(grid_size=(11, 9), plume=plumes.Gaussian(source=(3, 4))),
                      likelihood=likelihood)


def test_a_mismatched_poisson_model_solves_the_poisson_plume_s_own_pomdp():
    hits = plumes.PoissonHits(1.0, 2.0, grid_size=9, n_hits=3)
    # a Gaussian plume's levels read as hits; no floor: the closed form's own table
    model = PoissonLikelihood(hits, thresholds=(0.05, 0.3), floor=0.0)
    moves = np.zeros((4, 3), dtype=np.int64)
    moves[:, :2] = gaussian_scenario().moves()
    b3, c3 = ref.random_points(hits, moves, 8, seed=2)
    points = (b3.reshape((8, 9, 9)), c3[:, :2])
    got = Perseus.solve(gaussian_scenario(grid_size=(9, 9)), likelihood=model, points=points, iterations=3, seed=4)
    own = Perseus.solve(Scenario(plume=hits, sensors=(sensors.Belief(),)), points=points, iterations=3, seed=4)
    assert got.likelihood is model and own.likelihood is None
    assert got.alphas.tobytes() == own.alphas.tobytes() and got.actions.tolist() == own.actions.tolist()
