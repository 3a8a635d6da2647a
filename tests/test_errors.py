"""plume_multi.errors: ValidationError's attributes (owner, field, got, expected), filled by the
validators of plume_multi.checks with the messages unchanged, and errors that pickle."""

import copy
import pickle
from dataclasses import dataclass

import pytest

from plume_multi import Scenario
from plume_multi.checks import (check_arguments, check_bool, check_choice, check_int, check_point, check_real,
                                check_seed, fail, refuse)
from plume_multi.errors import ComponentError, PlumeError, StateError, ValidationError


@dataclass
class Wind:
    speed: float
    angle: float = 0.0


def raised(call, *args, **kwargs) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        call(*args, **kwargs)
    return info.value


def attributes(err) -> tuple:
    return err.owner, err.field, err.got, err.expected


@pytest.mark.parametrize("call, message, attrs", [
    (lambda: fail("Model", "rate", 2.5, "a number in [0, 1]"),
     "Model.rate: got 2.5; expected a number in [0, 1]", ("Model", "rate", "2.5", "a number in [0, 1]")),
    (lambda: refuse("Movie", "path", "'a.npy' (no such file)", "a file"),
     "Movie.path: got 'a.npy' (no such file); expected a file", ("Movie", "path", "'a.npy' (no such file)", "a file")),
    (lambda: check_real("Gaussian", "sigma", float("nan"), 0.1, 100.0),
     "Gaussian.sigma: got nan; expected a finite number in [0.1, 100]",
     ("Gaussian", "sigma", "nan", "a finite number in [0.1, 100]")),
    (lambda: check_int("Protocol", "episodes", True, 1, 10),
     "Protocol.episodes: got True; expected an integer in 1..10", ("Protocol", "episodes", "True", "an integer in 1..10")),
    (lambda: check_bool("Scenario", "team", "yes"),
     "Scenario.team: got 'yes'; expected True or False", ("Scenario", "team", "'yes'", "True or False")),
    (lambda: check_choice("Task", "kind", "b", ("a",)),
     "Task.kind: got 'b'; expected one of ['a']", ("Task", "kind", "'b'", "one of ['a']")),
    (lambda: check_point("Gaussian", "source", (1, 2, 3, 4)),
     "Gaussian.source: got (1, 2, 3, 4); expected a sequence (tuple, list or 1-D array) of 2 finite numbers",
     ("Gaussian", "source", "(1, 2, 3, 4)", "a sequence (tuple, list or 1-D array) of 2 finite numbers")),
    (lambda: check_seed(1.5, max_seed=10),
     "seed: got 1.5 (float); expected None or an integer with 0 <= seed <= 10",
     (None, "seed", "1.5 (float)", "None or an integer with 0 <= seed <= 10")),
    (lambda: check_seed(9, max_seed=10, num_worlds=3),
     "seed: got 9; expected None or an integer with 0 <= seed <= 8 (world i is seeded seed + i, for 3 worlds)",
     (None, "seed", "9", "None or an integer with 0 <= seed <= 8 (world i is seeded seed + i, for 3 worlds)")),
    (lambda: check_arguments(Wind, (), {"sped": 2.0}),
     "Wind.sped: got an unknown keyword argument (sped=2.0); expected one of the parameters ['speed', 'angle']",
     ("Wind", "sped", "an unknown keyword argument (sped=2.0)", "one of the parameters ['speed', 'angle']")),
    (lambda: check_arguments(Wind, (1.0,), {"speed": 2.0}),
     "Wind.speed: got it both by position and by keyword; expected it once",
     ("Wind", "speed", "it both by position and by keyword", "it once")),
    (lambda: check_arguments(Wind, (), {}),
     "Wind.speed: missing; expected a value (it has no default)", ("Wind", "speed", None, "a value (it has no default)")),
])
def test_validators_fill_the_attributes_and_keep_their_messages(call, message, attrs):
    err = raised(call)
    assert str(err) == message
    if attrs is not None:
        assert attributes(err) == attrs
    if err.owner is not None and err.got is not None:  # the message is made of the attributes
        assert str(err) == f"{err.owner}.{err.field}: got {err.got}; expected {err.expected}"


def test_an_error_made_by_hand_has_no_attributes_and_its_message():
    err = ValidationError("seed: got x")
    assert str(err) == "seed: got x" and attributes(err) == (None, None, None, None)
    assert isinstance(err, PlumeError) and isinstance(err, ValueError)


def test_scenario_errors_name_the_scenario_field():
    err = raised(Scenario, sigma=500.0)
    assert (err.owner, err.field) == ("Scenario", "sigma") and str(err).startswith("Scenario.sigma: got 500.0;")
    assert str(err) == f"Scenario.sigma: got {err.got}; expected {err.expected}"
    err = raised(Scenario, grid_size=(9, 5), source_location=(9, 0))  # found by the default Gaussian
    assert (err.owner, err.field) == ("Scenario", "source_location")
    assert str(err) == f"Scenario.source_location: got {err.got}; expected {err.expected}"
    err = raised(Scenario, max_steps=0)
    assert attributes(err) == ("Scenario", "max_steps", "0", "an integer in 1..2**31-1")


@pytest.mark.parametrize("err", [
    ValidationError("plain"),
    ValidationError("Model.rate: got 2; expected 1", owner="Model", field="rate", got="2", expected="1"),
    StateError("Cannot step before reset(): call reset() first"),
    ComponentError("plume_model: no sample"),
])
def test_errors_survive_pickle_and_copy(err):
    """Ray sends a worker's error to the driver by pickling it."""
    for back in (pickle.loads(pickle.dumps(err)), copy.deepcopy(err)):
        assert type(back) is type(err) and str(back) == str(err) and back.args == err.args
        assert getattr(back, "__dict__", {}) == getattr(err, "__dict__", {})


def test_a_validators_error_pickles_whatever_the_bad_value_was():
    unpicklable = (x for x in range(3))  # a generator: pickle refuses it
    err = raised(check_point, "Gaussian", "source", unpicklable)
    back = pickle.loads(pickle.dumps(err))
    assert str(back) == str(err) and attributes(back) == attributes(err) and back.got.startswith("<generator")

