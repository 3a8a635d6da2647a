"""The source motions (``plume_multi.sources``): the semantics of their plain reference
(``sources_reference.py``, which the compiled motions match in the engine's tests beside this
file), the compiled fold at the grid's edges, validation and metadata."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from plume_multi import ValidationError, sources
from plume_multi.engine.jit import njit
from plume_multi.models.registry import from_metadata
from plume_multi.models.sources.motion import reflect
from sources_reference import MotionRef
from sources_reference import reflect as reference_reflect


@njit
def _reflected(x, high):
    return reflect(x, high)


@given(x=st.floats(-1e4, 1e4), high=st.sampled_from([0.0, 1.0, 4.0, 9.0, 29.0, 127.0]))
def test_reflect_matches_the_reference(x, high):
    """The fold of every continuous motion at the grid's edges (the compiled motions themselves
    are checked against ``sources_reference.py`` in the engine: tests/models/sources/test_*_sources.py)."""
    got = _reflected(x, high)
    assert (got[0], bool(got[1])) == reference_reflect(x, high)
    assert 0.0 <= got[0] <= high


def _reference_track(motion, starts, width, height, seed, steps, lattice=False):
    ref = MotionRef(motion, lattice)
    xy = [list(map(float, s)) for s in starts]
    state = [[0.0] * motion.state_width() for _ in starts]
    for k in range(len(starts)):
        ref.start(xy, state, k, seed, 0)
    out = [[list(p) for p in xy]]
    for t in range(1, steps + 1):
        for k in range(len(starts)):
            ref.move(xy, state, k, t, width, height, seed, 0)
        out.append([list(p) for p in xy])
    return np.array(out)


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


def test_on_cells_a_random_walk_steps_one_cell_along_an_axis_inside_the_grid():
    track = _reference_track(sources.RandomWalk(speed=0.7, persistence=3.0), [(0, 0), (5, 3)], 6, 4, 9, 300, True)
    steps = np.abs(np.diff(track, axis=0)).sum(axis=-1)
    assert set(np.unique(steps)) == {0.0, 1.0}
    assert track.min() >= 0 and (track[..., 0] <= 5).all() and (track[..., 1] <= 3).all()


def test_waypoints_stop_at_the_last_point_or_loop():
    stop = _reference_track(sources.Waypoints(points=((4, 0), (4, 3)), speed=1.0), [(0.0, 0.0)], 10, 10, 0, 12)
    assert stop[4, 0].tolist() == [4.0, 0.0] and stop[-1, 0].tolist() == [4.0, 3.0]
    loop = _reference_track(sources.Waypoints(points=((4, 0), (0, 0)), speed=2.0, loop=True), [(0.0, 0.0)], 10, 10,
                            0, 8)
    assert loop[:, 0, 0].tolist() == [0, 2, 4, 2, 0, 2, 4, 2, 0]


def test_a_drift_reflects_at_the_edges():
    track = _reference_track(sources.Drift(velocity=(3.0, 0.0)), [(5.0, 2.0)], 10, 5, 0, 6)
    assert track[:, 0, 0].tolist() == [5, 8, 7, 4, 1, 2, 5]


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
