"""Recording: the trajectory recorder, the PNG of trajectories, GIF/MP4 writing and missing extras."""

import os
import sys

os.environ.setdefault("MPLBACKEND", "Agg")

import imageio.v3 as iio
import numpy as np
import pytest

from plume_multi import RenderingError, Scenario, Simulator, StateError, ValidationError
from plume_multi.policies import GradientClimber
from plume_multi.viz.recording import (
    TrajectoryRecorder,
    annotate_frame,
    auto_scale,
    caption_height,
    save_trajectory_png,
    write_movie,
)
from plume_multi.viz.render import SOURCE_COLOUR, agent_colours, cell_centre_pixel

W, H = 30, 18  # non-square


def run_episode(n_agents=4, steps=60, seed=1, **scenario):
    sim = Simulator(Scenario(n_agents=n_agents, grid_size=(W, H), max_steps=steps, **scenario), autoreset="disabled")
    obs = sim.reset(seed=seed)
    rec = TrajectoryRecorder.from_simulator(sim)
    policy = GradientClimber(seed=seed)
    history = [sim.positions.copy()]
    for _ in range(steps):
        obs, *_ = sim.step(policy(obs))
        rec.record()
        history.append(sim.positions.copy())
        if not sim.active.any():
            break
    return sim, rec, np.stack(history)


def test_recorder_keeps_every_position_and_flag():
    sim, rec, history = run_episode()
    assert len(rec) == len(history)
    assert rec.positions.shape == (len(history), 4, 2) and rec.positions.dtype == np.int32
    assert (rec.positions == history).all()
    assert rec.active.shape == (len(history), 4)
    assert rec.active[0].all() and (rec.active[-1] == sim.active).all()
    assert rec.grid_size == (W, H) and rec.source == sim.scenario.source_location


def test_recorder_reads_one_world_of_many():
    sim = Simulator(Scenario(n_agents=3, grid_size=(W, H)), num_worlds=4, autoreset="disabled")
    sim.reset(seed=0)
    rec = TrajectoryRecorder.from_simulator(sim, world=2)
    sim.step(np.ones(12, dtype=np.int64))
    rec.record()
    assert (rec.positions[-1] == sim.positions[6:9]).all()
    with pytest.raises(ValidationError, match=r"world: got 4; expected an integer in 0\.\.3"):
        TrajectoryRecorder.from_simulator(sim, world=4)


def test_recorder_refuses_to_cross_an_autoreset():
    sim = Simulator(Scenario(n_agents=2, grid_size=(W, H), max_steps=3))  # next_step autoreset
    sim.reset(seed=0)
    rec = TrajectoryRecorder.from_simulator(sim)
    for _ in range(3):
        sim.step(np.zeros(2, dtype=np.int64))
        rec.record()
    sim.step(np.zeros(2, dtype=np.int64))  # this step starts the next episode
    with pytest.raises(StateError, match="new episode"):
        rec.record()
    assert len(rec) == 4


def test_recorder_from_arrays_and_its_errors():
    field = np.zeros((H, W), dtype=np.float32)
    rec = TrajectoryRecorder(field, source=(5, 5))
    with pytest.raises(StateError, match="nothing recorded"):
        rec.positions
    with pytest.raises(ValidationError, match="no simulator"):
        rec.record()
    rec.record([(1, 1), (2, 2)])
    rec.record([(1, 2), (2, 2)], active=[True, False])
    assert rec.active.tolist() == [[True, True], [True, False]]
    with pytest.raises(ValidationError, match=r"got shape \(3, 2\); expected \(2, 2\)"):
        rec.record([(1, 1), (2, 2), (3, 3)])
    with pytest.raises(ValidationError, match="outside the 30x18 grid"):
        rec.record([(1, 1), (2, 18)])
    with pytest.raises(ValidationError, match=r"active: got shape \(1,\)"):
        rec.record([(1, 1), (2, 2)], active=[True])


def test_png_is_written_and_readable(tmp_path):
    sim, rec, _ = run_episode()
    path = rec.save_png(tmp_path / "search.png")
    image = iio.imread(path)
    assert image.ndim == 3 and image.shape[2] in (3, 4) and image.dtype == np.uint8
    assert image.shape[1] > image.shape[0] > 200  # a wide grid gives a wide picture
    assert len(np.unique(image.reshape(-1, image.shape[2]), axis=0)) > 50  # a picture, not a blank
    # matplotlib reads it back too
    import matplotlib.image

    assert matplotlib.image.imread(path).shape[:2] == image.shape[:2]


def test_png_marks_the_source_in_red(tmp_path):
    field = np.zeros((H, W), dtype=np.float32)  # dark field: red can only be the source star
    traj = np.zeros((2, 1, 2), dtype=np.int32)
    with_source = iio.imread(save_trajectory_png(tmp_path / "a.png", field, traj, source=(15, 9)))[..., :3].astype(int)
    without = iio.imread(save_trajectory_png(tmp_path / "b.png", field, traj))[..., :3].astype(int)

    def red(image):
        return int(((image[..., 0] > 200) & (image[..., 1] < 90) & (image[..., 2] < 90)).sum())

    assert red(with_source) > 30 and red(without) == 0


def test_png_for_a_tall_grid_and_a_demo_style_call(tmp_path):
    field = np.random.default_rng(0).random((90, 20)).astype(np.float32)
    traj = np.random.default_rng(1).integers(0, 20, size=(30, 5, 2))
    path = save_trajectory_png(tmp_path / "tall.png", field, traj, source=(10, 45), active=np.array([1, 0, 1, 0, 1], bool))
    image = iio.imread(path)
    assert image.shape[0] > image.shape[1]
    assert image.shape[0] <= 800  # tall grids get a narrower figure, not a huge one


def test_png_errors(tmp_path):
    field = np.zeros((H, W), dtype=np.float32)
    traj = np.zeros((3, 2, 2), dtype=np.int32)
    with pytest.raises(ValidationError, match=r"picture path: got .*search\.jpg.*expected a file name ending in \.png"):
        save_trajectory_png(tmp_path / "search.jpg", field, traj)
    with pytest.raises(ValidationError, match="does not exist"):
        save_trajectory_png(tmp_path / "missing" / "a.png", field, traj)
    with pytest.raises(ValidationError, match=r"trajectory: got shape \(2, 2\)"):
        save_trajectory_png(tmp_path / "a.png", field, traj[0])
    with pytest.raises(ValidationError, match="outside the 30x18 grid"):
        save_trajectory_png(tmp_path / "a.png", field, traj + [0, 18])
    with pytest.raises(ValidationError, match=r"active: got shape \(3,\); expected \(2,\)"):
        save_trajectory_png(tmp_path / "a.png", field, traj, active=[True] * 3)


def test_png_without_matplotlib(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(RenderingError, match=r"pip install 'plume-multi\[viz\]'"):
        save_trajectory_png(tmp_path / "a.png", np.zeros((4, 4)), np.zeros((1, 1, 2), int))


def test_gif_frames_match_the_rendered_frames(tmp_path):
    sim, rec, history = run_episode(steps=40)
    path = rec.save_movie(tmp_path / "search.gif", fps=20, scale=3, every=3, trail=5)
    frames = iio.imread(path, index=None)
    last = len(history) - 1
    expected_times = list(range(0, last + 1, 3)) + ([last] if last % 3 else [])
    assert frames.shape == (len(expected_times), 3 * H + caption_height(3 * W), 3 * W, 3)
    colours = agent_colours(4)
    for k, t in enumerate(expected_times):
        want = rec.frame(t, trail=5, scale=3, caption=True)
        assert (want[:3 * H] == rec.frame(t, trail=5, scale=3)).all()  # the picture, then the caption below
        # GIF stores a 256-colour palette per frame: equal up to small quantisation errors
        assert np.abs(frames[k].astype(int) - want).mean() < 3, f"frame {k} (step {t})"
    x, y = history[0, 0]
    row, col = cell_centre_pixel(x, y, H, 3)
    assert np.abs(frames[0, row, col].astype(int) - colours[0]).max() <= 12
    plain = iio.imread(rec.save_movie(tmp_path / "plain.gif", scale=3, every=3, trail=5, caption=False), index=None)
    assert plain.shape == (len(expected_times), 3 * H, 3 * W, 3)


def test_caption_shows_the_step_counter_and_the_legend():
    frame = np.zeros((40, 300, 3), dtype=np.uint8)
    a = annotate_frame(frame, step=3, last_step=120, searching=5, finished=2)
    b = annotate_frame(frame, step=4, last_step=120, searching=5, finished=2)
    assert a.shape == (40 + caption_height(300), 300, 3) and a.dtype == np.uint8
    assert (a[:40] == frame).all()  # the picture is untouched, the strip is below it
    strip = a[40:].reshape(-1, 3)
    assert (a[40:] != b[40:]).any()  # the counter changes with the step
    assert (annotate_frame(frame, step=3, last_step=120, searching=5, finished=2) == a).all()  # deterministic
    colours = {tuple(c) for c in strip.tolist()}
    for colour in agent_colours(3):  # the "searching" swatches, the "finished" swatch, the source cross
        assert tuple(int(v) for v in colour) in colours
    assert (255, 255, 255) in colours and tuple(int(v) for v in SOURCE_COLOUR) in colours
    no_source = annotate_frame(frame, step=3, searching=5, source=False)[40:].reshape(-1, 3)
    assert tuple(int(v) for v in SOURCE_COLOUR) not in {tuple(c) for c in no_source.tolist()}
    # every step and count fits in a strip of one height, wide or narrow
    for width in (40, 120, 256, 1024):
        big = annotate_frame(np.zeros((8, width, 3), np.uint8), step=999999, last_step=999999,
                             searching=999999, finished=999999)
        assert big.shape == (8 + caption_height(width), width, 3)


def test_caption_errors():
    frame = np.zeros((10, 64, 3), dtype=np.uint8)
    with pytest.raises(ValidationError, match=r"frame: got shape \(10, 64\) dtype uint8; expected \(H, W, 3\) uint8"):
        annotate_frame(frame[..., 0])
    with pytest.raises(ValidationError, match=r"frame: got shape \(10, 64, 3\) dtype float64"):
        annotate_frame(frame.astype(float))
    with pytest.raises(ValidationError, match=r"step: got -1; expected an integer >= 0"):
        annotate_frame(frame, step=-1)
    with pytest.raises(ValidationError, match=r"step: got 9; expected 0 <= step <= last_step \(5\)"):
        annotate_frame(frame, step=9, last_step=5)
    with pytest.raises(ValidationError, match=r"searching: got 2\.5; expected an integer >= 0"):
        annotate_frame(frame, searching=2.5)
    with pytest.raises(ValidationError, match=r"width: got 0; expected an integer >= 1"):
        caption_height(0)


def test_caption_without_pillow(monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(RenderingError, match="Pillow"):
        annotate_frame(np.zeros((4, 4, 3), np.uint8), step=1)


def test_gif_timing_holds_the_last_frame(tmp_path):
    frames = [np.full((10, 12, 3), 20 * i, dtype=np.uint8) for i in range(5)]
    path = write_movie(tmp_path / "a.gif", frames, fps=20, hold_last=1.0)
    assert iio.imread(path, index=None).shape == (5, 10, 12, 3)
    assert [iio.immeta(path, index=k)["duration"] for k in range(5)] == [50, 50, 50, 50, 1000]
    assert iio.immeta(path)["loop"] == 0
    path = write_movie(tmp_path / "one.gif", iter([frames[0]]), fps=5)  # a generator of one frame
    assert iio.imread(path, index=None).shape[0] == 1


def test_movie_errors_leave_no_file(tmp_path):
    good = np.zeros((8, 8, 3), dtype=np.uint8)
    with pytest.raises(ValidationError, match=r"movie path: got .*a\.avi.*\.gif or \.mp4"):
        write_movie(tmp_path / "a.avi", [good])
    with pytest.raises(ValidationError, match="fps: got 0"):
        write_movie(tmp_path / "a.gif", [good], fps=0)
    with pytest.raises(RenderingError, match="no frames"):
        write_movie(tmp_path / "a.gif", [])
    with pytest.raises(ValidationError, match=r"frames: got shape \(8, 8\)"):
        write_movie(tmp_path / "a.gif", [np.zeros((8, 8), np.uint8)])
    with pytest.raises(ValidationError, match=r"frames\[2\]: got shape \(8, 9, 3\)"):
        write_movie(tmp_path / "a.gif", [good, good, np.zeros((8, 9, 3), np.uint8)])
    assert not (tmp_path / "a.gif").exists()


def test_movie_without_imageio(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "imageio", None)
    monkeypatch.setitem(sys.modules, "imageio.v3", None)
    with pytest.raises(RenderingError, match=r"pip install 'plume-multi\[movie\]'"):
        write_movie(tmp_path / "a.gif", [np.zeros((8, 8, 3), np.uint8)])


def test_mp4_without_an_ffmpeg_backend(tmp_path, monkeypatch):
    import imageio.v2

    def no_backend(*args, **kwargs):
        raise ImportError("The `FFMPEG` plugin is not installed.")

    monkeypatch.setattr(imageio.v2, "get_writer", no_backend)
    with pytest.raises(RenderingError, match="pip install imageio-ffmpeg"):
        write_movie(tmp_path / "a.mp4", [np.zeros((8, 8, 3), np.uint8)])
    assert not (tmp_path / "a.mp4").exists()


def test_mp4_frames_get_even_sides(tmp_path, monkeypatch):
    import imageio.v2

    written = []

    class FakeWriter:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def append_data(self, frame):
            written.append(frame)

    monkeypatch.setattr(imageio.v2, "get_writer", lambda *a, **k: FakeWriter())
    write_movie(tmp_path / "a.mp4", [np.zeros((7, 9, 3), np.uint8)] * 2, fps=10)
    assert [f.shape for f in written] == [(8, 10, 3), (8, 10, 3)]


def test_auto_scale():
    assert auto_scale(128, 128) == 2
    assert auto_scale(30, 18) == 9
    assert auto_scale(2048, 16) == 1
