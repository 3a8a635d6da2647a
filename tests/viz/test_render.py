"""The renderer: frame geometry (y upward, non-square grids), markers, trails, scale, speed, window."""

import os
import sys
import time
import warnings

os.environ.setdefault("MPLBACKEND", "Agg")

import numpy as np
import pytest

from plume_multi import RenderingError, Scenario, Simulator, ValidationError
from plume_multi.viz.render import (
    FINISHED_COLOUR,
    SOURCE_COLOUR,
    HumanWindow,
    _LUT,
    agent_colours,
    cell_centre_pixel,
    marker_radius,
    render_frame,
)

W, H = 40, 24  # non-square, so x/y mix-ups show


def flat_field(value=0.0):
    return np.full((H, W), value, dtype=np.float32)


def pixel(frame, x, y, scale=1):
    row, col = cell_centre_pixel(x, y, frame.shape[0] // scale, scale)
    return tuple(int(v) for v in frame[row, col])


def test_shape_dtype_and_fresh_array():
    field = flat_field(0.5)
    frame = render_frame(field, [(1, 2)], source=(20, 12), active=[True])
    assert frame.shape == (H, W, 3) and frame.dtype == np.uint8
    frame[:] = 0  # the caller owns the frame: drawing again is unaffected
    assert render_frame(field).max() > 0
    assert render_frame(field, scale=3).shape == (3 * H, 3 * W, 3)


def test_heat_map_is_viridis_with_y_upward():
    # concentration grows with y: the top row (largest y) is the brightest
    field = np.tile(np.linspace(0, 1, H, dtype=np.float32)[:, None], (1, W))
    frame = render_frame(field)
    assert tuple(frame[0, 0]) == tuple(_LUT[255])  # row 0 is y = H-1, concentration 1
    assert tuple(frame[-1, 0]) == tuple(_LUT[0])  # bottom row is y = 0
    assert frame[0].astype(int).sum() > frame[-1].astype(int).sum()
    # perceptually uniform map: lightness rises monotonically along the table
    lightness = _LUT.astype(float) @ [0.2126, 0.7152, 0.0722]
    assert np.all(np.diff(lightness) > -1.0)


@pytest.mark.parametrize("scale", [1, 3])
def test_agent_markers_at_their_cells_on_a_non_square_grid(scale):
    positions = np.array([[3, 2], [35, 20], [20, 5]], dtype=np.int32)
    frame = render_frame(flat_field(), positions, scale=scale)
    colours = agent_colours(3)
    background = tuple(int(v) for v in _LUT[0])
    for k, (x, y) in enumerate(positions):
        assert pixel(frame, x, y, scale) == tuple(colours[k]), f"agent {k} at {(x, y)}"
        # y drawn upward: the mirrored cell (x, H-1-y) is plain field, and so is the transposed one
        assert pixel(frame, x, H - 1 - y, scale) == background
    assert frame[(H - 1 - 2) * scale + scale // 2, 3 * scale + scale // 2].tolist() == colours[0].tolist()
    # the marker is a square of side 2r+1 pixels, centred on the cell
    r = marker_radius(W, H, scale)
    row, col = cell_centre_pixel(35, 20, H, scale)
    block = frame[row - r:row + r + 1, col - r:col + r + 1]
    assert (block == colours[1]).all()
    assert tuple(frame[row, col + r + 1]) == background


def test_colours_are_distinct_and_stable():
    colours = agent_colours(64)
    assert colours.shape == (64, 3) and colours.dtype == np.uint8
    assert len({tuple(c) for c in colours}) == 64
    assert not any((c == FINISHED_COLOUR).all() for c in colours)
    # none looks like the source: red dominant with little green and blue
    reddish = (colours[:, 0] > 200) & (colours[:, 1] < 90) & (colours[:, 2] < 90)
    assert not reddish.any(), colours[reddish]
    assert (agent_colours(8) == colours[:8]).all()  # agent k keeps its colour whatever N is
    colours[:] = 0  # a copy: the cache is not corrupted
    assert agent_colours(64).max() > 0


def test_finished_agents_are_white_and_beneath_searching_ones():
    positions = np.array([[5, 5], [30, 18], [30, 18]])
    frame = render_frame(flat_field(), positions, active=np.array([False, True, False]))
    assert pixel(frame, 5, 5) == tuple(FINISHED_COLOUR)
    # agent 1 (searching) and agent 2 (finished) share a cell: the searcher is visible
    assert pixel(frame, 30, 18) == tuple(agent_colours(3)[1])
    frame = render_frame(flat_field(), positions, active=np.array([True, True, True]))
    assert pixel(frame, 5, 5) == tuple(agent_colours(3)[0])


def test_source_cross():
    frame = render_frame(flat_field(), source=(10, 4))
    r = marker_radius(W, H) + 1
    row, col = cell_centre_pixel(10, 4, H)
    assert (frame[row, col - r:col + r + 1] == SOURCE_COLOUR).all()
    assert (frame[row - r:row + r + 1, col] == SOURCE_COLOUR).all()
    assert not (frame[row - 1, col - 1] == SOURCE_COLOUR).all()  # a cross, not a square


def test_several_sources_are_a_cross_each():
    frame = render_frame(flat_field(), source=[(10, 4), (30, 20)])
    r = marker_radius(W, H) + 1
    for x, y in ((10, 4), (30, 20)):
        row, col = cell_centre_pixel(x, y, H)
        assert (frame[row, col - r:col + r + 1] == SOURCE_COLOUR).all()
        assert (frame[row - r:row + r + 1, col] == SOURCE_COLOUR).all()
    assert (frame == SOURCE_COLOUR).all(axis=2).sum() == 2 * (render_frame(flat_field(), source=(10, 4))
                                                               == SOURCE_COLOUR).all(axis=2).sum()
    with pytest.raises(ValidationError, match=r"source 1 of 2: source: got \(40, 2\)"):
        render_frame(flat_field(), source=[(10, 4), (40, 2)])


def test_markers_clipped_at_the_corners():
    frame = render_frame(flat_field(), [(0, 0), (W - 1, H - 1)], source=(0, H - 1))
    colours = agent_colours(2)
    assert tuple(frame[H - 1, 0]) == tuple(colours[0])
    assert tuple(frame[0, W - 1]) == tuple(colours[1])
    assert tuple(frame[0, 0]) == tuple(SOURCE_COLOUR)


def test_trails_are_blended_in_the_agents_colour():
    field = flat_field(0.2)
    background = _LUT[int(0.2 * 255)].astype(int)
    trails = np.array([[[2, 20]], [[3, 20]], [[4, 20]]])  # T=3, M=1
    frame = render_frame(field, [(10, 10)], trails=trails)
    expected = tuple((background + 3 * agent_colours(1)[0].astype(int)) // 4)
    for x in (2, 3, 4):
        assert pixel(frame, x, 20) == expected
    assert pixel(frame, 5, 20) == tuple(background)
    # with scale, the whole cell block is tinted
    frame = render_frame(field, [(10, 10)], trails=trails, scale=2)
    row, col = (H - 1 - 20) * 2, 2 * 2
    assert (frame[row:row + 2, col:col + 2] == expected).all()


def test_bad_arguments_name_what_was_given():
    with pytest.raises(ValidationError, match=r"positions.*x 0\.\.40.*0 <= x < 40"):
        render_frame(flat_field(), [(0, 0), (40, 3)])
    with pytest.raises(ValidationError, match=r"active: got shape \(1,\); expected \(2,\)"):
        render_frame(flat_field(), [(0, 0), (1, 1)], active=[True])
    with pytest.raises(ValidationError, match="scale: got 0"):
        render_frame(flat_field(), scale=0)
    with pytest.raises(ValidationError, match=r"field: got shape \(5,\)"):
        render_frame(np.zeros(5))
    with pytest.raises(ValidationError, match=r"source: got \(3, 24\)"):
        render_frame(flat_field(), source=(3, 24))
    with pytest.raises(ValidationError, match=r"trails: got shape \(4, 2\)"):
        render_frame(flat_field(), trails=np.zeros((4, 2), int))


def test_frame_of_a_simulator_state():
    sim = Simulator(Scenario(n_agents=5, grid_size=(W, H)), autoreset="disabled")
    sim.reset(seed=3)
    frame = render_frame(sim.field, sim.positions, source=sim.scenario.source_location, active=sim.active)
    colours = agent_colours(5)
    for k, (x, y) in enumerate(sim.positions):
        if not any((sim.positions[j] == (x, y)).all() for j in range(k + 1, 5)):
            row, col = cell_centre_pixel(x, y, H)
            assert tuple(frame[row, col]) == tuple(colours[k])


def test_fast_enough_to_call_every_step():
    rng = np.random.default_rng(0)
    field = rng.random((128, 128)).astype(np.float32)
    positions = rng.integers(0, 128, size=(256, 2))
    active = rng.random(256) < 0.5
    trails = rng.integers(0, 128, size=(16, 256, 2))
    render_frame(field, positions, source=(64, 64), active=active, trails=trails)
    times = []
    for _ in range(30):
        start = time.perf_counter()
        render_frame(field, positions, source=(64, 64), active=active, trails=trails)
        times.append(time.perf_counter() - start)
    assert np.median(times) < 0.02, f"median {np.median(times) * 1e3:.1f} ms per 128x128 frame with 256 agents"


def test_human_window_headless_draws_without_warnings():
    import matplotlib

    matplotlib.use("Agg")
    window = HumanWindow(title="test", fps=1000)
    frame = render_frame(flat_field(0.3), [(1, 1)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        window.show(frame)
        window.show(render_frame(flat_field(0.9), [(2, 2)]))
    shown = window._image.get_array()
    assert shown.shape == frame.shape and not np.array_equal(np.asarray(shown), frame)  # updated in place
    window.close()
    window.close()  # idempotent


def test_human_window_without_matplotlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(RenderingError, match=r"pip install 'plume-multi\[viz\]'"):
        HumanWindow()
