import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from plume_multi import Scenario, ValidationError
from plume_multi.scenario import DEFAULT_GOAL_RADIUS


def test_defaults_are_the_contracts():
    sc = Scenario()
    assert sc.grid_size == (128, 128) and sc.source_location == (64, 64) and sc.sigma == 12.0
    assert sc.max_steps == 1000 and sc.goal_radius == DEFAULT_GOAL_RADIUS > 0 and sc.goal_d2() == 0
    assert sc.n_actions == 4 and sc.obs_dim == 3
    assert Scenario(grid_size=(7, 5)).source_location == (3, 2)


@pytest.mark.parametrize("field,value", [
    ("grid_size", (0, 10)), ("grid_size", (10, 2049)), ("grid_size", (10.0, 10)), ("grid_size", 10),
    ("grid_size", (True, 4)), ("source_location", (128, 0)), ("source_location", (-1, 3)),
    ("source_location", (1.5, 2)), ("sigma", 0.05), ("sigma", 101), ("sigma", float("nan")),
    ("sigma", "12"), ("n_agents", 0), ("n_agents", 2.0), ("goal_radius", 0.0), ("goal_radius", -1),
    ("goal_radius", float("inf")), ("max_steps", 0), ("max_steps", 1.5), ("max_steps", True),
    ("start_positions", ((0, 0), (1, 1))), ("start_positions", ((128, 0),)), ("start_positions", ((0.5, 1),)),
    ("action_model", "hex"), ("n_neighbours", 1), ("n_neighbours", -1), ("team", 1),
])
def test_invalid_values_raise_naming_field_value_and_rule(field, value):
    with pytest.raises(ValidationError) as info:
        Scenario(**{field: value})
    message = str(info.value)
    assert f"Scenario.{field}" in message and repr(value) in message and "expected" in message


def test_scenario_is_frozen_and_replace_revalidates():
    sc = Scenario()
    with pytest.raises(AttributeError):
        sc.sigma = 3.0
    assert sc.replace(sigma=3.0).sigma == 3.0
    with pytest.raises(ValidationError):
        sc.replace(sigma=-3.0)


def test_numpy_integers_are_accepted_and_normalized():
    sc = Scenario(grid_size=(np.int64(10), np.int32(8)), n_agents=np.int16(3), max_steps=np.uint8(9))
    assert sc.grid_size == (10, 8) and type(sc.grid_size[0]) is int and sc.n_agents == 3


@given(r=st.floats(1e-45, 300), w=st.integers(1, 200), h=st.integers(1, 200))
def test_goal_d2_decides_exactly_like_sqrt(r, w, h):
    sc = Scenario(grid_size=(w, h), source_location=(0, 0), goal_radius=r)
    k = sc.goal_d2()
    assert math.sqrt(k) <= r or k == 0 and r < 1
    limit = (w - 1) ** 2 + (h - 1) ** 2
    assert k == limit or math.sqrt(k + 1) > r
