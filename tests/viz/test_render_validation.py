"""Bad input to the renderer and the recorders raises the project's errors, naming the argument,
the value and what is expected, before anything is drawn or written."""

import os

os.environ.setdefault("MPLBACKEND", "Agg")

import numpy as np
import pytest

from plume_multi import RenderingError, Scenario, Simulator, StateError, ValidationError
from plume_multi.viz.recording import TrajectoryRecorder, auto_scale, save_trajectory_png, write_movie
from plume_multi.viz.render import (
    HumanWindow,
    agent_colours,
    cell_centre_pixel,
    display_scale,
    marker_radius,
    render_frame,
    upscale,
)

W, H = 12, 8
FIELD = np.linspace(0, 1, W * H, dtype=np.float32).reshape(H, W)
GOOD = np.zeros((8, 8, 3), dtype=np.uint8)


# ------------------------------------------------------------------ render_frame
@pytest.mark.parametrize("field, message", [
    (np.zeros((0, 5)), r"field: got shape \(0, 5\) dtype float64; expected a non-empty \(H, W\) float array"),
    (np.zeros((2, 3, 3)), r"field: got shape \(2, 3, 3\)"),
    (np.full((2, 2), np.nan), r"field: contains NaN or infinite values"),
    (np.array([[0.1, np.inf]]), r"field: contains NaN or infinite values"),
    (np.array([["a", "b"]]), r"field: got shape \(1, 2\) dtype <U1"),
    (np.ones((2, 2), dtype=bool), r"field: got shape \(2, 2\) dtype bool"),
])
def test_render_frame_refuses_bad_fields(field, message):
    with pytest.raises(ValidationError, match=message):
        render_frame(field)


@pytest.mark.parametrize("kwargs, message", [
    ({"positions": [(1.5, 2)]}, r"positions: got non-integer or non-finite coordinates"),
    ({"positions": [(np.nan, 2)]}, r"positions: got non-integer or non-finite coordinates"),
    ({"positions": [(1, 2), (3,)]}, r"positions: got list of uneven length"),
    ({"positions": [(True, False)]}, r"positions: got shape \(1, 2\) dtype bool"),
    ({"positions": [(1, 2)], "active": [0.5]}, r"active: got dtype float64 .*expected bool flags"),
    ({"positions": [(1, 2)], "active": [2]}, r"active: got dtype int64 .*expected bool flags"),
    ({"active": [True]}, r"active: got flags but no positions"),
    ({"positions": [(1, 2), (3, 4)], "trails": np.zeros((3, 1, 2), int)},
     r"trails: got shape \(3, 1, 2\); expected \(T, 2, 2\), one trail per agent"),
    ({"source": (1,)}, r"source: got \(1,\); expected \(x, y\), two integers"),
    ({"source": "ab"}, r"source: got 'ab'; expected \(x, y\), two integers"),
    ({"source": (1.5, 2)}, r"source: got \(1\.5, 2\); expected \(x, y\), two integers"),
    ({"source": (-1, 2)}, r"source: got \(-1, 2\); expected \(x, y\) with 0 <= x < 12"),
    ({"scale": -2}, r"scale: got -2; expected an integer in 1\.\.64"),
    ({"scale": 2.0}, r"scale: got 2\.0; expected an integer in 1\.\.64"),
    ({"scale": True}, r"scale: got True; expected an integer in 1\.\.64"),
    ({"scale": 65}, r"scale: got 65; expected an integer in 1\.\.64"),
])
def test_render_frame_refuses_bad_arguments(kwargs, message):
    with pytest.raises(ValidationError, match=message):
        render_frame(FIELD, **kwargs)


def test_render_frame_accepts_integral_floats_and_zero_one_flags():
    a = render_frame(FIELD, [(1, 2), (3, 4)], active=[1, 0], source=(5.0, 6.0))
    b = render_frame(FIELD, np.array([(1.0, 2.0), (3.0, 4.0)]), active=[True, False], source=(5, 6))
    assert (a == b).all()


@pytest.mark.parametrize("call, message", [
    (lambda: agent_colours(-1), r"n: got -1; expected an integer >= 0"),
    (lambda: agent_colours(2.5), r"n: got 2\.5; expected an integer >= 0"),
    (lambda: marker_radius(0, 5), r"width: got 0; expected an integer >= 1"),
    (lambda: marker_radius(5, -5), r"height: got -5; expected an integer >= 1"),
    (lambda: marker_radius(5, 5, 0), r"scale: got 0; expected an integer in 1\.\.64"),
    (lambda: cell_centre_pixel(1, 1, 0), r"height: got 0; expected an integer >= 1"),
    (lambda: cell_centre_pixel(1, 1, 5, scale=-1), r"scale: got -1; expected an integer in 1\.\.64"),
    (lambda: display_scale(-4, 4), r"width: got -4; expected an integer >= 1"),
    (lambda: display_scale(4, 4, min_side=0), r"min_side: got 0; expected an integer >= 1"),
    (lambda: upscale(GOOD, 0), r"scale: got 0; expected an integer in 1\.\.64"),
    (lambda: upscale(GOOD[..., :2], 2), r"frame: got shape \(8, 8, 2\) dtype uint8; expected \(H, W, 3\) uint8"),
    (lambda: upscale(GOOD.astype(np.float32), 2), r"frame: got shape \(8, 8, 3\) dtype float32"),
    (lambda: upscale(np.zeros((0, 4, 3), np.uint8), 2), r"frame: got shape \(0, 4, 3\)"),
    (lambda: upscale(None, 2), r"frame: got NoneType; expected an \(H, W, 3\) uint8 array"),
])
def test_geometry_helpers_refuse_bad_sizes(call, message):
    with pytest.raises(ValidationError, match=message):
        call()


def test_display_scale_and_upscale():
    assert display_scale(128, 96) == 3 and display_scale(32, 32) == 8 and display_scale(512, 512) == 1
    assert display_scale(1, 1) == 64  # capped: at most 64 pixels per cell
    assert display_scale(2048, 1) == 2  # the longer side stays within 4096 pixels
    for w, h in [(48, 30), (20, 12), (7, 300), (128, 128)]:
        s = display_scale(w, h)
        assert min(w, h) * s >= 256 or s == 64 or max(w, h) * (s + 1) > 4096
        assert s == 1 or min(w, h) * (s - 1) < 256  # the smallest such scale
    frame = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    big = upscale(frame, 4)
    assert big.shape == (8, 12, 3)
    assert (big[::4, ::4] == frame).all() and (big[3, 11] == frame[0, 2]).all()  # blocks, nearest neighbour
    one = upscale(frame, 1)
    assert (one == frame).all() and not np.shares_memory(one, frame)


def test_human_window_refuses_bad_arguments():
    with pytest.raises(ValidationError, match=r"fps: got 0; expected a number with 0 < fps <= 1000"):
        HumanWindow(fps=0)
    with pytest.raises(ValidationError, match=r"fps: got -5"):
        HumanWindow(fps=-5)
    with pytest.raises(ValidationError, match=r"title: got 3; expected a string"):
        HumanWindow(title=3)
    window = HumanWindow(fps=1000)
    with pytest.raises(ValidationError, match=r"frame: got shape \(4, 4\) dtype uint8"):
        window.show(np.zeros((4, 4), np.uint8))
    assert window._fig is None  # nothing was opened
    window.close()


# ------------------------------------------------------------------ write_movie
@pytest.mark.parametrize("kwargs, message", [
    ({"fps": 0}, r"fps: got 0; expected a number with 0 < fps <= 100"),
    ({"fps": -3}, r"fps: got -3"),
    ({"fps": float("nan")}, r"fps: got nan"),
    ({"fps": "20"}, r"fps: got '20'"),
    ({"hold_last": -1}, r"hold_last: got -1; expected seconds with 0 <= hold_last <= 60"),
    ({"hold_last": float("inf")}, r"hold_last: got inf"),
])
def test_write_movie_refuses_bad_timing(tmp_path, kwargs, message):
    with pytest.raises(ValidationError, match=message):
        write_movie(tmp_path / "a.gif", [GOOD], **kwargs)
    assert not (tmp_path / "a.gif").exists()


def test_write_movie_refuses_bad_paths_and_frames(tmp_path):
    with pytest.raises(ValidationError, match=r"movie path: got 'a\.webm'; expected a file name ending in \.gif or \.mp4"):
        write_movie("a.webm", [GOOD])
    with pytest.raises(ValidationError, match=r"movie path: got 3; expected a file name \(str or pathlib\.Path\)"):
        write_movie(3, [GOOD])
    (tmp_path / "dir.gif").mkdir()
    with pytest.raises(ValidationError, match=r"which is a folder"):
        write_movie(tmp_path / "dir.gif", [GOOD])
    with pytest.raises(ValidationError, match=r"frames: got int; expected an iterable of \(H, W, 3\) uint8 arrays"):
        write_movie(tmp_path / "a.gif", 5)
    with pytest.raises(ValidationError, match=r"frames: got one array of shape \(8, 8, 3\)"):
        write_movie(tmp_path / "a.gif", GOOD)
    with pytest.raises(ValidationError, match=r"frames: got shape \(8, 8, 4\) dtype uint8"):
        write_movie(tmp_path / "a.gif", [np.zeros((8, 8, 4), np.uint8)])
    with pytest.raises(ValidationError, match=r"frames: got shape \(0, 8, 3\)"):
        write_movie(tmp_path / "a.gif", [np.zeros((0, 8, 3), np.uint8)])
    with pytest.raises(ValidationError, match=r"frames\[1\]: got shape \(8, 8, 3\) dtype float64"):
        write_movie(tmp_path / "a.gif", [GOOD, GOOD.astype(float)])
    assert list(tmp_path.iterdir()) == [tmp_path / "dir.gif"]  # nothing half-written


def test_auto_scale_refuses_bad_sizes():
    with pytest.raises(ValidationError, match=r"width: got 0; expected an integer >= 1"):
        auto_scale(0, 5)
    with pytest.raises(ValidationError, match=r"height: got -3"):
        auto_scale(5, -3)
    with pytest.raises(ValidationError, match=r"target: got 0"):
        auto_scale(5, 5, target=0)


# ------------------------------------------------------------------ save_trajectory_png
@pytest.mark.parametrize("kwargs, message", [
    ({"field": np.full((H, W), np.nan)}, r"field: contains NaN or infinite values"),
    ({"source": (W, 0)}, r"source: got \(12, 0\); expected \(x, y\) with 0 <= x < 12"),
    ({"title": 5}, r"title: got 5; expected a string or None"),
    ({"width_inches": 0}, r"width_inches: got 0; expected a number in 1\.\.50"),
    ({"dpi": -100}, r"dpi: got -100; expected an integer >= 1"),
    ({"dpi": 100000}, r"dpi: got 100000; expected an integer in 1\.\.1000"),
    ({"active": [0.5, 0.5]}, r"active: got shape \(2,\); expected \(2,\) bool, one flag per agent \(got dtype float64\)"),
])
def test_png_refuses_bad_arguments(tmp_path, kwargs, message):
    args = {"field": FIELD, "trajectory": np.zeros((3, 2, 2), int), **kwargs}
    with pytest.raises(ValidationError, match=message):
        save_trajectory_png(tmp_path / "a.png", args.pop("field"), args.pop("trajectory"), **args)
    assert not (tmp_path / "a.png").exists()


# ------------------------------------------------------------------ TrajectoryRecorder
def test_recorder_from_a_simulator_before_reset_is_a_state_error():
    sim = Simulator(Scenario(n_agents=2, grid_size=(W, H)), autoreset="disabled")
    with pytest.raises(StateError, match=r"before the simulator's reset\(\): call sim\.reset\(\) first"):
        TrajectoryRecorder.from_simulator(sim)
    sim.reset(seed=0)
    rec = TrajectoryRecorder.from_simulator(sim)
    assert (rec.positions[0] == sim.positions).all() and len(rec) == 1


def test_recorder_refuses_bad_simulators_and_worlds():
    with pytest.raises(ValidationError, match=r"sim: got dict; expected a plume_multi\.Simulator"):
        TrajectoryRecorder.from_simulator({})
    sim = Simulator(Scenario(n_agents=2, grid_size=(W, H)), num_worlds=2, autoreset="disabled")
    sim.reset(seed=0)
    with pytest.raises(ValidationError, match=r"world: got True; expected an integer in 0\.\.1"):
        TrajectoryRecorder.from_simulator(sim, world=True)
    with pytest.raises(ValidationError, match=r"world: got -1"):
        TrajectoryRecorder.from_simulator(sim, world=-1)


def test_recorder_refuses_bad_fields_sources_and_entries(tmp_path):
    with pytest.raises(ValidationError, match=r"field: contains NaN"):
        TrajectoryRecorder(np.full((H, W), np.nan))
    with pytest.raises(ValidationError, match=r"field: got shape \(0, 3\)"):
        TrajectoryRecorder(np.zeros((0, 3)))
    with pytest.raises(ValidationError, match=r"source: got \(3, 8\); expected \(x, y\) with 0 <= x < 12 and 0 <= y < 8"):
        TrajectoryRecorder(FIELD, source=(3, 8))
    rec = TrajectoryRecorder(FIELD, source=(3, 3))
    with pytest.raises(ValidationError, match=r"positions: got non-integer"):
        rec.record([(1.5, 1)])
    with pytest.raises(ValidationError, match=r"positions: got shape \(2,\) dtype int64; expected \(N, 2\)"):
        rec.record([1, 2])
    with pytest.raises(ValidationError, match=r"active: got shape \(1,\); expected \(1,\) bool.*got dtype float64"):
        rec.record([(1, 1)], active=[0.3])
    assert len(rec) == 0  # nothing recorded by the failed calls
    rec.record([(1, 1)])
    rec.record([(2, 1)])
    with pytest.raises(ValidationError, match=r"t: got 2; expected an integer in -2\.\.1 \(2 entries recorded\)"):
        rec.frame(2)
    with pytest.raises(ValidationError, match=r"trail: got -1; expected an integer >= 0"):
        rec.frame(0, trail=-1)
    with pytest.raises(ValidationError, match=r"scale: got 0; expected an integer in 1\.\.64"):
        rec.frame(0, scale=0)
    with pytest.raises(ValidationError, match=r"scale: got 65; expected an integer in 1\.\.64"):
        rec.save_movie(tmp_path / "a.gif", scale=65)
    with pytest.raises(ValidationError, match=r"progress: got 3; expected a callable"):
        rec.save_movie(tmp_path / "a.gif", progress=3)
    with pytest.raises(ValidationError, match=r"fps: got 0"):
        rec.save_movie(tmp_path / "a.gif", fps=0)
    with pytest.raises(ValidationError, match=r"movie path: got .*a\.avi"):
        rec.save_movie(tmp_path / "a.avi")
    assert list(tmp_path.iterdir()) == []


def test_rendering_errors_name_the_missing_extra(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "imageio", None)
    monkeypatch.setitem(sys.modules, "imageio.v3", None)
    with pytest.raises(RenderingError, match=r"plume-multi\[movie\]"):
        write_movie(tmp_path / "a.gif", [GOOD])
