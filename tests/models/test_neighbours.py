"""``sensors.Neighbours`` at extreme grid shapes (issue 21, item 10): what its docstring promises,
``(dx / (W - 1), dy / (H - 1))`` to the k nearest (exact squared distance, ties by lower index),
each in [-1, 1] and 0 on a side of one cell, holds on grids of one row or column and on a movie
10,001 cells wide (wider than Scenario's 2048: a movie's own size), where squared distances pass
2**24 and a float32 no longer holds them exactly. The sensor's compiled per-world function is run
directly: no step compiles."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from plume_multi.models.sensors.neighbours import observe

F32 = np.float32


def compiled(pos, k, width, height):
    obs = np.zeros((len(pos), 2 * k), np.float32)
    observe(0, len(pos), k, 0, (width, height), np.ascontiguousarray(pos, np.int32), obs)
    return obs


def reference(pos, k, width, height):
    """The docstring, in Python integers."""
    sx = float(F32(1.0 / (width - 1))) if width > 1 else 0.0
    sy = float(F32(1.0 / (height - 1))) if height > 1 else 0.0
    out = np.zeros((len(pos), 2 * k), np.float32)
    for n, (x, y) in enumerate(pos.tolist()):
        others = sorted(((ox - x) ** 2 + (oy - y) ** 2, m, ox - x, oy - y)
                        for m, (ox, oy) in enumerate(pos.tolist()) if m != n)
        out[n] = [F32(v) for _, _, dx, dy in others[:k] for v in (dx * sx, dy * sy)]
    return out


def test_a_movie_10001_cells_wide_reads_offsets_as_fractions_of_its_width():
    pos = np.array([[10000, 1], [5000, 1], [0, 0]])
    obs = compiled(pos, 1, 10001, 3)
    np.testing.assert_array_equal(obs[0], [-0.5, 0.0])  # 5000 cells to the left of 10,000
    np.testing.assert_array_equal(obs[2], [0.5, 0.5])
    np.testing.assert_array_equal(compiled(np.array([[10000, 0], [0, 0]]), 1, 10001, 1)[0], [-1.0, 0.0])


def test_the_nearest_is_exact_where_float32_squared_distances_tie():
    """25,000,001 and 25,000,000 cells^2 are one float32: the nearer one, not the lower index."""
    pos = np.array([[0, 0], [5000, 1], [5000, 0]])
    obs = compiled(pos, 1, 10001, 2)
    np.testing.assert_array_equal(obs[0], [0.5, 0.0])
    np.testing.assert_array_equal(obs, reference(pos, 1, 10001, 2))


SHAPES = [(10001, 2), (2048, 1), (1, 2048), (1, 1), (3, 10001), (2, 2)]


@pytest.mark.parametrize("width, height", SHAPES)
@given(data=st.data(), n=st.integers(2, 12), k=st.integers(1, 11))
def test_extreme_shapes_match_the_docstring_and_stay_in_minus_1_1(width, height, data, n, k):
    k = min(k, n - 1)
    xs = data.draw(st.lists(st.integers(0, width - 1), min_size=n, max_size=n))
    ys = data.draw(st.lists(st.integers(0, height - 1), min_size=n, max_size=n))
    pos = np.stack([xs, ys], axis=1)
    obs = compiled(pos, k, width, height)
    np.testing.assert_array_equal(obs, reference(pos, k, width, height))
    assert ((obs >= -1.0) & (obs <= 1.0)).all()
    if width == 1:
        assert (obs[:, 0::2] == 0).all()
    if height == 1:
        assert (obs[:, 1::2] == 0).all()
