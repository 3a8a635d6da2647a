"""The source motions (``plume_multi.sources``): their compiled functions against the plain
reference of ``sources_reference.py``, their validation and their metadata."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from plume_multi import ValidationError, sources
from plume_multi.engine.jit import njit
from plume_multi.models.registry import from_metadata
from plume_multi.models.sources.source_set import move_sources, place_sources
from sources_reference import MotionRef


@njit
def _moved(starts, M, n_worlds, n_states, steps, width, height, seed, lattice):
    """World ``b``'s sources (episode 0, seeded ``seed + b``) placed at ``starts`` (K, 2), then
    moved ``steps`` times: the positions after each step, ``(steps + 1, B, K, 2)``."""
    k = starts.shape[0]
    xy = np.zeros((n_worlds, k, 2))
    found = np.zeros((n_worlds, k), np.bool_)
    MS = np.zeros((n_worlds, k, n_states))
    out = np.zeros((steps + 1, n_worlds, k, 2))
    for t in range(steps + 1):
        for b in range(n_worlds):
            if t == 0:
                place_sources(starts, None, M, MS, xy, found, b, seed + b, 0, width, height, 0x6A09E667, lattice)
            else:
                move_sources(M, MS, xy, b, t, width, height, seed + b, 0, lattice)
            for j in range(k):  # element by element: an array slice assignment takes seconds to compile
                out[t, b, j, 0] = xy[b, j, 0]
                out[t, b, j, 1] = xy[b, j, 1]
    return out


@njit
def _tracks(starts, drift, walk, path, cells, steps, width, height, seed):
    """The tracks of every motion in one compiled function (one compilation for all, not one per
    motion): Drift, RandomWalk, Waypoints from ``starts``, RandomWalk on cells from ``cells``."""
    return (_moved(starts, drift, 2, 2, steps, width, height, seed, None),
            _moved(starts, walk, 2, 1, steps, width, height, seed, None),
            _moved(starts, path, 2, 1, steps, width, height, seed, None),
            _moved(cells, walk, 2, 1, steps, width, height, seed, True))


def _reference(motion, starts, steps, width, height, seed, n_worlds=2, lattice=False):
    ref = MotionRef(motion, lattice)
    out = np.zeros((steps + 1, n_worlds, len(starts), 2))
    for b in range(n_worlds):
        xy = [list(map(float, s)) for s in starts]
        state = [[0.0] * motion.state_width() for _ in starts]
        for k in range(len(starts)):
            ref.start(xy, state, k, seed + b, 0)
        out[0, b] = xy
        for t in range(1, steps + 1):
            for k in range(len(starts)):
                ref.move(xy, state, k, t, width, height, seed + b, 0)
            out[t, b] = xy
    return out


def _track(motion, starts, width, height, seed, steps=40, cells=None):
    """The compiled tracks of ``motion`` (and of the others, at their defaults), checked against
    the reference and inside the grid."""
    starts = np.array(starts, np.float64).reshape(-1, 2)
    cells = starts if cells is None else np.array(cells, np.float64).reshape(-1, 2)
    motions = {sources.Drift: sources.Drift(), sources.RandomWalk: sources.RandomWalk(),
               sources.Waypoints: sources.Waypoints()}
    motions[type(motion)] = motion
    drift, walk, path, on_cells = _tracks(starts, *(m.record() for m in motions.values()), cells, steps, width,
                                          height, seed)
    for got, m, first, lattice in ((drift, motions[sources.Drift], starts, False),
                                   (walk, motions[sources.RandomWalk], starts, False),
                                   (path, motions[sources.Waypoints], starts, False),
                                   (on_cells, motions[sources.RandomWalk], cells, True)):
        if lattice and not np.array_equal(cells, np.floor(cells)):
            continue
        np.testing.assert_array_equal(got, _reference(m, first.tolist(), steps, width, height, seed, lattice=lattice))
        assert (got[..., 0] >= 0).all() and (got[..., 0] <= width - 1).all()
        assert (got[..., 1] >= 0).all() and (got[..., 1] <= height - 1).all()
    return {sources.Drift: drift, sources.RandomWalk: on_cells if cells is not starts else walk,
            sources.Waypoints: path}[type(motion)]


grids = st.tuples(st.integers(1, 30), st.integers(1, 30))


@st.composite
def starts_in(draw, grid, cells=False):
    w, h = grid
    k = draw(st.integers(1, 3))
    if cells:
        return [(draw(st.integers(0, w - 1)), draw(st.integers(0, h - 1))) for _ in range(k)]
    return [(draw(st.floats(0, w - 1)), draw(st.floats(0, h - 1))) for _ in range(k)]


@given(grid=grids, data=st.data(), vx=st.floats(-40, 40), vy=st.floats(-40, 40), seed=st.integers(0, 2**32))
def test_drift_matches_the_reference(grid, data, vx, vy, seed):
    _track(sources.Drift(velocity=(vx, vy)), data.draw(starts_in(grid)), *grid, seed)


@given(grid=grids, data=st.data(), speed=st.floats(0, 20), persistence=st.floats(1, 50), seed=st.integers(0, 2**32))
def test_random_walk_matches_the_reference(grid, data, speed, persistence, seed):
    _track(sources.RandomWalk(speed=speed, persistence=persistence), data.draw(starts_in(grid)), *grid, seed)


@given(grid=grids, data=st.data(), speed=st.floats(0, 1), persistence=st.floats(1, 50), seed=st.integers(0, 2**32))
def test_random_walk_on_cells_matches_the_reference(grid, data, speed, persistence, seed):
    cells = data.draw(starts_in(grid, cells=True))
    got = _track(sources.RandomWalk(speed=speed, persistence=persistence), cells, *grid, seed, cells=cells)
    steps = np.abs(np.diff(got, axis=0)).sum(axis=-1)
    assert set(np.unique(steps)) <= {0.0, 1.0}  # one cell at a time, along an axis


@given(grid=grids, data=st.data(), speed=st.floats(0, 30), loop=st.booleans(), seed=st.integers(0, 2**32))
def test_waypoints_match_the_reference(grid, data, speed, loop, seed):
    points = data.draw(starts_in(grid))
    _track(sources.Waypoints(points=points, speed=speed, loop=loop), data.draw(starts_in(grid)), *grid, seed)


def test_a_random_walk_runs_for_its_persistence_on_average():
    """Tumbles come at rate 1 / persistence: runs of 20 steps on average."""
    walk = sources.RandomWalk(speed=0.0, persistence=20.0)  # headings change, positions do not
    ref = MotionRef(walk)
    tumbles = 0
    for seed in range(20):
        state = [[0.0]]
        before = None
        for t in range(1, 501):
            ref.move([[0.0, 0.0]], state, 0, t, 10, 10, seed, 0)
            tumbles += before is not None and state[0][0] != before
            before = state[0][0]
    assert 20 * 499 / tumbles == pytest.approx(20.0, rel=0.15)


def test_waypoints_stop_at_the_last_point_or_loop():
    stop = _track(sources.Waypoints(points=((4, 0), (4, 3)), speed=1.0), [(0.0, 0.0)], 10, 10, 0, steps=12)
    assert stop[4, 0, 0].tolist() == [4.0, 0.0] and stop[-1, 0, 0].tolist() == [4.0, 3.0]
    loop = _track(sources.Waypoints(points=((4, 0), (0, 0)), speed=2.0, loop=True), [(0.0, 0.0)], 10, 10, 0,
                  steps=8)
    assert loop[:, 0, 0, 0].tolist() == [0, 2, 4, 2, 0, 2, 4, 2, 0]


def test_a_drift_reflects_at_the_edges():
    track = _track(sources.Drift(velocity=(3.0, 0.0)), [(5.0, 2.0)], 10, 5, 0, steps=6)
    assert track[:, 0, 0, 0].tolist() == [5, 8, 7, 4, 1, 2, 5]


BAD = [
    (lambda: sources.Drift(velocity=1.0), "Drift.velocity"),
    (lambda: sources.Drift(velocity=(math.nan, 0.0)), "Drift.velocity"),
    (lambda: sources.Drift(velocity=(2000.0, 0.0)), "Drift.velocity"),
    (lambda: sources.RandomWalk(speed=-1.0), "RandomWalk.speed"),
    (lambda: sources.RandomWalk(speed=True), "RandomWalk.speed"),
    (lambda: sources.RandomWalk(persistence=0.5), "RandomWalk.persistence"),
    (lambda: sources.RandomWalk(persistence=math.inf), "RandomWalk.persistence"),
    (lambda: sources.Waypoints(points=()), "Waypoints.points"),
    (lambda: sources.Waypoints(points=((1, 2, 3),)), "Waypoints.points"),
    (lambda: sources.Waypoints(points=((1, math.nan),)), "Waypoints.points"),
    (lambda: sources.Waypoints(points=[(0, 0)] * 65), "Waypoints.points"),
    (lambda: sources.Waypoints(points=((0, 0),), speed=-0.1), "Waypoints.speed"),
    (lambda: sources.Waypoints(points=((0, 0),), loop=1), "Waypoints.loop"),
]


@pytest.mark.parametrize("factory, field", BAD)
def test_bad_values_are_refused_naming_the_field(factory, field):
    with pytest.raises(ValidationError, match=field.replace(".", r"\.")):
        factory()


@pytest.mark.parametrize("motion", [sources.Static(), sources.Drift(velocity=(0.5, -1.0)),
                                    sources.RandomWalk(speed=0.3, persistence=7.0),
                                    sources.Waypoints(points=((1, 2), (3.5, 4)), speed=2.0, loop=True)])
def test_metadata_rebuilds_the_motion(motion):
    assert from_metadata(motion.metadata()) == motion
