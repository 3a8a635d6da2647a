"""``evaluate`` and ``sweep`` refuse what they used to take in silence or pass to Python (issue 32,
items 3 and 12): a scenario dict with an unknown field, grid values that are not a list."""

import numpy as np
import pytest

from plume_multi import Scenario
from plume_multi.evaluation import evaluate, sweep
from plume_multi.errors import ValidationError
from plume_multi.policies import RandomPolicy

SMALL = Scenario(grid_size=(7, 5), max_steps=3)


def test_a_scenario_dict_with_an_unknown_field_is_our_error_naming_it():
    with pytest.raises(ValidationError, match=r"Scenario\.bogus: got an unknown keyword argument \(bogus=1\); "
                                              r"expected one of the parameters"):
        evaluate(RandomPolicy, {"bogus": 1}, 2, progress=False)
    with pytest.raises(ValidationError, match=r"Scenario\.bogus"):
        evaluate(RandomPolicy, {"grid_size": (7, 5), "bogus": 1}, 2, progress=False)


@pytest.mark.parametrize("values", [{5: "x"}, {3, 5}, (v for v in (3, 5)), "35", 3, [], np.array([[3, 5]]), None])
def test_sweep_refuses_grid_values_that_are_not_a_list(values):
    """``{5: "x"}`` swept max_steps=5 (a dict's keys) without a word."""
    with pytest.raises(ValidationError, match=r"grid\['max_steps'\]: got .*; expected a non-empty list \(or tuple, "
                                              r"or 1-D array\) of values"):
        sweep(RandomPolicy, SMALL, {"max_steps": values}, 2, out=None, progress=False)


def test_sweep_takes_a_list_a_tuple_or_a_1d_array():
    for values in ([2, 3], (2, 3), np.array([2, 3])):
        result = sweep(RandomPolicy, SMALL, {"max_steps": values}, 2, out=None, progress=False)
        assert [row["max_steps"] for row in result.rows] == [2, 3]
