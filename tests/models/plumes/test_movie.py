"""plumes.Movie: shared frames (no memory per world), file loaders, clock conventions, grid size."""

import numpy as np
import pytest

from plume_multi import Scenario, Simulator, bodies, plumes
from plume_multi.errors import ValidationError

from models_reference import sensor_set

# The movie-oriented combination of tests/models_reference.py (its compiled driver is shared with the
# other model tests): concentration in column 0, the wind in columns 8-9. Headings start at 0, so
# the wind reads (u, v) exactly; action 1 turns on the spot.
WIND = slice(8, 10)
STAY = 1


def movie_scenario(movie, **kw):
    return Scenario(plume=movie, n_agents=kw.pop("n_agents", 2), sensors=sensor_set(),
                    action_model=bodies.Oriented(initial_heading=0.0), **kw)


def frames_with_index(t, h, w, dtype=np.uint8):
    """Frame f holds the value f + 1 everywhere (so a reading tells the frame)."""
    return np.broadcast_to((np.arange(t) + 1).astype(dtype)[:, None, None], (t, h, w)).copy()


# ----------------------------------------------------------------------------- memory
def test_a_long_movie_shared_by_4096_worlds_adds_no_memory_per_world(tmp_path):
    T, H, W = 1000, 512, 512
    path = tmp_path / "big.npy"
    mm = np.lib.format.open_memmap(path, mode="w+", dtype=np.uint8, shape=(T, H, W))  # sparse on disk
    mm[:, 256, 256] = 255
    mm.flush()
    del mm
    movie = plumes.Movie(str(path), source=(256.0, 256.0), mmap=True)
    assert isinstance(movie.frames, np.memmap) or isinstance(movie.frames.base, np.memmap)
    assert not movie.frames.flags.writeable
    sim = Simulator(movie_scenario(movie), num_worlds=4096)
    frames_param = sim._params["plume"][0]
    assert frames_param is movie.frames  # the very array, not a copy
    per_agent_long = sim.state.nbytes_per_agent()

    short = plumes.Movie(np.zeros((3, H, W), np.uint8), source=(256.0, 256.0))
    sim_short = Simulator(movie_scenario(short), num_worlds=4096)
    assert sim_short._params["plume"][0] is short.frames
    assert sim_short.state.nbytes_per_agent() == per_agent_long  # independent of T
    assert per_agent_long < 200  # a few counters and the observation row, no frame data
    sim.reset(seed=0)
    sim.step(np.full(sim.total_agents, STAY, np.int64))
    assert sim._params["plume"][0] is movie.frames


def test_an_in_memory_array_is_not_copied():
    frames = np.zeros((10, 4, 6), np.uint8)
    movie = plumes.Movie(frames, source=(1.0, 1.0))
    assert np.shares_memory(movie.frames, frames)
    sim = Simulator(movie_scenario(movie), num_worlds=8)
    assert sim._params["plume"][0] is movie.frames
    assert np.shares_memory(sim._params["plume"][0], frames)


# ----------------------------------------------------------------------------- loaders
def _expected(frames):
    return frames.astype(np.float32) * np.float32(1.0 / 255)


@pytest.fixture
def movie_data():
    rng = np.random.default_rng(0)
    frames = rng.integers(0, 256, (7, 5, 9)).astype(np.uint8)
    u = rng.normal(size=(7, 5, 9)).astype(np.float32)
    v = rng.normal(size=(7, 5, 9)).astype(np.float32)
    return frames, u, v


def _check_loaded(movie, frames, source=(3.0, 2.0)):
    np.testing.assert_array_equal(movie.frames, frames)
    assert movie.source == source
    sim = Simulator(movie_scenario(movie, start_positions=((0, 0), (8, 4))), num_worlds=1)
    assert sim.scenario.grid_size == (9, 5)
    obs = sim.reset(seed=0)
    start = int(sim.model_state("plume.start")[0])
    assert obs[0, 0] == _expected(frames)[start, 0, 0] and obs[1, 0] == _expected(frames)[start, 4, 8]
    return sim


def _mapped(movie) -> bool:
    base = movie.frames
    while not isinstance(base, np.memmap) and getattr(base, "base", None) is not None:
        base = base.base
    return isinstance(base, np.memmap)


def test_npy_small_files_are_read_into_memory_and_mmap_true_maps_them(tmp_path, movie_data):
    frames = movie_data[0]
    np.save(tmp_path / "m.npy", frames)
    movie = plumes.Movie(tmp_path / "m.npy", source=(3, 2))
    assert not _mapped(movie) and movie.guard() is None  # a private copy: nothing to guard
    _check_loaded(movie, frames)
    mapped = plumes.Movie(tmp_path / "m.npy", source=(3, 2), mmap=True)
    assert _mapped(mapped) and mapped.guard() is not None
    _check_loaded(mapped, frames)


def test_npz(tmp_path, movie_data):
    frames = movie_data[0]
    np.savez(tmp_path / "m.npz", concentration=frames, other=np.zeros(3))
    _check_loaded(plumes.Movie(str(tmp_path / "m.npz"), source=(3, 2)), frames)
    np.savez(tmp_path / "k.npz", plume=frames)
    _check_loaded(plumes.Movie(str(tmp_path / "k.npz"), source=(3, 2), key="plume"), frames)
    with pytest.raises(ValidationError, match="Movie.key"):
        plumes.Movie(str(tmp_path / "k.npz"), source=(3, 2))


def test_hdf5_with_attributes(tmp_path, movie_data):
    import h5py  # the plume-multi[data] extra, part of [test]

    frames = movie_data[0]
    with h5py.File(tmp_path / "m.h5", "w") as f:
        ds = f.create_dataset("concentration", data=frames)
        ds.attrs["fps"] = 15.0
        ds.attrs["source_location"] = (3.0, 2.0)
    movie = plumes.Movie(str(tmp_path / "m.h5"))
    assert movie.fps == 15.0
    _check_loaded(movie, frames)
    with pytest.raises(ValidationError, match="Movie.key"):
        plumes.Movie(str(tmp_path / "m.h5"), key="missing")


@pytest.mark.filterwarnings("ignore:Consolidated metadata")  # zarr 3 writing its default format
def test_zarr_written_by_xarray_in_the_data_zoo_layout(tmp_path, movie_data):
    import xarray as xr  # the plume-multi[data] extra (with zarr), part of [test]

    frames, u, v = movie_data
    ds = xr.Dataset(
        {"concentration": (("t", "y", "x"), frames), "u": (("t", "y", "x"), u), "v": (("t", "y", "x"), v)},
        attrs={"fps": 30.0, "source_location": [3.0, 2.0], "source_dtype": "uint8", "pixel_to_grid": [1.0, 1.0],
               "origin": [0.0, 0.0], "extent": [5.0, 9.0], "schema_version": "1.0.0"},
    )
    ds.to_zarr(tmp_path / "m.zarr")
    movie = plumes.Movie(str(tmp_path / "m.zarr"))
    assert movie.fps == 30.0
    sim = _check_loaded(movie, frames)
    # the wind comes from u / v: the Wind sensor reads them at the agent's cell and frame
    obs = sim.reset(seed=0)
    start = int(sim.model_state("plume.start")[0])
    assert tuple(obs[1, WIND]) == (u[start, 4, 8], v[start, 4, 8])
    # dims in another order are refused
    ds.transpose("t", "x", "y").to_zarr(tmp_path / "bad.zarr")
    with pytest.raises(ValidationError, match="dims"):
        plumes.Movie(str(tmp_path / "bad.zarr"))


def test_bad_paths(tmp_path):
    with pytest.raises(ValidationError, match="Movie.frames"):
        plumes.Movie(str(tmp_path / "missing.npy"), source=(0, 0))
    (tmp_path / "movie.txt").write_text("x")
    with pytest.raises(ValidationError, match="Movie.frames"):
        plumes.Movie(str(tmp_path / "movie.txt"), source=(0, 0))


# ----------------------------------------------------------------------------- conventions
@pytest.mark.parametrize("end", ["wrap", "clamp"])
@pytest.mark.parametrize("start", [0, 3, 6])
def test_frame_clock_after_reset_and_k_steps(start, end):
    T = 7
    movie = plumes.Movie(frames_with_index(T, 3, 4), source=(0.0, 0.0), start=start, end=end)
    sim = Simulator(movie_scenario(movie, max_steps=100, start_positions=((3, 2), (3, 2))), num_worlds=2)
    obs = sim.reset(seed=5)
    scale = np.float32(1 / 255)

    def frame_shown():
        values = np.rint(sim.state.obs[:, 0] / scale).astype(int) - 1
        assert (values == values[0]).all()
        return values[0]

    assert frame_shown() == start
    for k in range(1, 20):
        sim.step(np.full(sim.total_agents, STAY, np.int64))
        expected = (start + k) % T if end == "wrap" else min(start + k, T - 1)
        assert frame_shown() == expected
        np.testing.assert_array_equal(sim.plume_image(1), frames_with_index(T, 3, 4)[expected] * scale)
    assert obs is sim.state.obs


def test_random_starts_are_uniform_over_frames_and_drawn_per_world_and_episode():
    T = 5
    movie = plumes.Movie(frames_with_index(T, 2, 3), source=(0.0, 0.0))
    assert movie.start == "random"
    sim = Simulator(movie_scenario(movie, n_agents=2), num_worlds=2000)
    sim.reset(seed=0)
    starts = sim.model_state("plume.start").copy()
    counts = np.bincount(starts, minlength=T)
    assert counts.size == T and (np.abs(counts - 400) < 100).all()
    sim.reset()
    assert not np.array_equal(starts, sim.model_state("plume.start"))


def test_grid_size_defaults_to_the_movie_and_another_is_refused():
    movie = plumes.Movie(np.zeros((2, 6, 10), np.float32), source=(1.0, 1.0))
    assert movie.natural_grid_size() == (10, 6)
    assert movie_scenario(movie).grid_size == (10, 6)
    assert movie_scenario(movie, grid_size=(10, 6)).grid_size == (10, 6)
    for bad in ((6, 10), (10, 7), (128, 128)):
        with pytest.raises(ValidationError, match="Scenario.grid_size"):
            movie_scenario(movie, grid_size=bad)


def test_no_source_is_an_error():
    with pytest.raises(ValidationError, match="Movie.source"):
        plumes.Movie(np.zeros((2, 3, 3), np.uint8))


@pytest.mark.parametrize("end", [np.array(["wrap"]), ["clamp"], b"wrap", "Wrap", None])
def test_end_is_one_of_its_two_words_nothing_that_compares_equal_to_one(end):
    """Issue 32, item 3: ``np.array(["wrap"])`` is "in" ``("wrap", "clamp")`` (elementwise) and was kept."""
    with pytest.raises(ValidationError, match=r"Movie\.end: got .*; expected 'wrap' or 'clamp'"):
        plumes.Movie(np.zeros((2, 3, 3), np.uint8), source=(1.0, 1.0), end=end)


def test_integer_scales_and_float_frames():
    f16 = np.full((1, 2, 2), 65535, np.uint16)
    assert float(plumes.Movie(f16, source=(0, 0))._scale) == pytest.approx(1 / 65535)
    # uint16 frames compile a driver of their own: read them with the default body and sensors
    # (concentration in column 0 too), which compile in a third of the time of movie_scenario's
    sim = Simulator(Scenario(plume=plumes.Movie(f16, source=(0, 0)), n_agents=2, start_positions=((0, 0), (1, 1))))
    assert (sim.reset(seed=0)[:, 0] == np.float32(65535) * np.float32(1 / 65535)).all()
    half = plumes.Movie(np.full((1, 2, 2), 200, np.uint8), source=(0, 0), scale=1 / 510)
    sim = Simulator(movie_scenario(half, start_positions=((0, 0), (1, 1))))
    assert (sim.reset(seed=0)[:, 0] == np.float32(200) * np.float32(1 / 510)).all()
    f64 = plumes.Movie(np.full((1, 2, 2), 0.25), source=(0, 0))
    assert f64.frames.dtype == np.float32


def test_a_source_between_cells_is_reached_within_goal_radius():
    """Scenario.goal_radius: Euclidean distance <= goal_radius, also for a movie source between cells
    (the integer-d2 shortcut of grid bodies holds only for sources on cells)."""
    movie = plumes.Movie(np.zeros((1, 5, 1), np.uint8), source=(0.0, 1.5))
    sc = movie_scenario(movie, goal_radius=1.5, start_positions=((0, 3), (0, 4)))
    assert sc.goal_d2() == 2.25
    sim = Simulator(sc)
    sim.reset(seed=0)
    _, reward, terminated, _ = sim.step(np.zeros(2, np.int64))  # FORWARD along +x: against the wall
    assert terminated.tolist() == [True, False] and reward.tolist() == [1.0, 0.0]
