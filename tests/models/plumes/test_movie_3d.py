"""plumes.Movie over volumes ``(T, D, H, W)`` in 3-D scenarios: the plain reference bit for bit
(trilinear reads, per-world clocks, wrap and clamp, NaN and normalisation), the files (npy, npz,
HDF5, Zarr with a ``z`` dimension), the checksum and the memory-map guard, and what is refused.

One compiled combination for every test here: the continuous body of
tests/models/test_three_dimensions.py with its point sensors and ``StepPenalty`` (float32
volumes; integer volumes would compile drivers of their own), plus the kernels ``sample_at``,
``sample_cell`` and ``wind_at`` called directly on tiny volumes.
"""

import hashlib
import os

import numpy as np
import pytest

from models_reference import NaiveSim
from test_three_dimensions import compare, continuous_actions, point_sensors, snapshot_and_continue
from plume_multi import Scenario, Simulator, bodies, plumes, rewards
from plume_multi.errors import StateError, ValidationError
from plume_multi.models.plumes.movie import sample_at, sample_cell, wind_at
from plume_multi.scenario import load_scenario, save_scenario
from plume_multi.tasks.families.recorded import (SYNTHETIC_FPS, SYNTHETIC_VOLUME_SOURCE, synthetic_volumes,
                                                 write_synthetic_recording)

T, D, H, W = 3, 4, 5, 6


def volumes(seed=0, nan_cells=0, low=0.0, high=1.0, shape=(T, D, H, W)):
    rng = np.random.default_rng(seed)
    frames = rng.uniform(low, high, shape).astype(np.float32)
    flat = frames.reshape(-1)
    flat[rng.choice(flat.size, nan_cells, replace=False)] = np.nan
    return frames


def scenario(movie, **kw):
    """The continuous combination of test_three_dimensions.py with the movie as its plume."""
    return Scenario(plume=movie, n_agents=kw.pop("n_agents", 2), action_model=bodies.Continuous(max_speed=1.5),
                    sensors=point_sensors(), reward=rewards.StepPenalty(), **kw)


# --------------------------------------------------------------------------- against the reference
@pytest.mark.parametrize("options, shape, worlds, seed", [
    # NaN cells read nan=0.25 (and 0.25's stored value where interpolated), minmax normalisation
    (dict(nan=0.25, normalize="minmax"), (T, D, H, W), 3, 1),
    # a fixed first frame, the last frame held (clamp); values as concentrations
    (dict(start=1, end="clamp"), (T, D, H, W), 2, 2),
    # one plane (z0 = z1), long clock (wrap): every world's clock over seven frames
    (dict(nan=0.0), (7, 1, 3, 4), 3, 3),
])
def test_volumes_match_the_plain_reference_bit_for_bit(options, shape, worlds, seed):
    frames = volumes(seed, nan_cells=5 if options.get("nan") is not None else 0, low=-2.0 if "normalize" in options
                     else 0.0, shape=shape)
    movie = plumes.Movie(frames, source=(1.5, 2.0, 0.0), **options)
    sc = scenario(movie, goal_radius=0.5, max_steps=9)
    assert sc.grid_size == shape[:0:-1] and sc.dims == 3
    sim = compare(sc, worlds, seed, 14, seed, validate=True)  # obs, rewards, positions, sources, after each step
    ref = NaiveSim(sc, worlds)
    ref.reset(seed)
    for a in continuous_actions(sc, worlds * 2, 14, seed):
        ref.step(a)
    np.testing.assert_array_equal(sim.model_state("plume.start"), ref.movie_start)  # the per-world clocks
    for b in range(worlds):
        np.testing.assert_array_equal(sim.plume_image(b), [[[ref.plume_ref.conc_cell(b, x, y, z)
                                                              for x in range(shape[3])] for y in range(shape[2])]
                                                            for z in range(shape[1])])


def test_float_reads_are_trilinear_and_zero_off_the_grid():
    """``sample_at`` at random points (inside, on the faces, outside, NaN) equals the reference;
    off ``[0, W-1] x [0, H-1] x [0, D-1]`` it reads 0 (the 3-D convention: 2-D frames read their
    edge within half a cell)."""
    movie = plumes.Movie(volumes(4, nan_cells=6), source=(0, 0, 0), nan=0.5, start=0)
    ref = NaiveSim(scenario(movie), 1)
    P, S = movie.params(None), (np.zeros(1, np.int64),)
    rng = np.random.default_rng(5)
    points = rng.uniform(-0.6, 1.0, (400, 3)) * np.array([W, H, D])
    points[:20] = np.floor(points[:20])  # cells: trilinear at a cell is the cell
    points[20:30, 2] = D - 1
    points[30, 0] = np.nan
    for f in range(T):
        ref.plume_ref.start[0] = f
        for x, y, z in points:
            got = sample_at(P, S, f, (x, y, z))
            assert got == ref.conc_at(0, x, y, z), (f, x, y, z)
            inside = 0 <= x <= W - 1 and 0 <= y <= H - 1 and 0 <= z <= D - 1
            if not inside:
                assert got == 0.0
            elif float(x).is_integer() and float(y).is_integer() and float(z).is_integer():
                assert got == sample_cell(P, S, f, (int(x), int(y), int(z)))
    assert sample_at(P, S, 0, (-0.25, 1.0, 1.0)) == 0.0 and sample_at(P, S, 0, (0.0, 1.0, 1.0)) > 0.0


def test_the_wind_of_a_volume_is_read_at_the_nearest_cell_of_the_frame():
    wind = np.random.default_rng(6).normal(size=(T, D, H, W, 3))
    movie = plumes.Movie(volumes(), source=(0, 0, 0), wind=wind)
    P, S = movie.params(None), (np.zeros(1, np.int64),)
    ref = NaiveSim(scenario(movie), 1)
    ref.plume_ref.start[0] = 2
    for point in [(0.0, 0.0, 0.0), (2.4, 3.6, 1.5), (-3.0, 9.0, 2.49), (5.0, 4.0, 3.0)]:
        assert wind_at(P, S, 2, point) == ref.wind_at(0, *point)
    assert wind_at(P, S, 1, (2.4, 3.6, 1.5)) == tuple(np.float32(wind[1, 2, 4, 2]).astype(float))
    pair = plumes.Movie(volumes(), source=(0, 0, 0), wind=(0.5, -1.0))  # a pair: no vertical wind
    assert pair.wind == (0.5, -1.0, 0.0)
    assert wind_at(pair.params(None), S, 0, (1.0, 1.0, 1.0)) == (0.5, -1.0, 0.0)
    per_frame = plumes.Movie(volumes(), source=(0, 0, 0), wind=[(1, 2, 3)] * T)
    assert per_frame.wind == ((1.0, 2.0, 3.0),) * T


# --------------------------------------------------------------------------- files
def test_volumes_load_from_npy_npz_hdf5_and_zarr_with_a_z_dimension(tmp_path):
    import h5py
    import xarray as xr

    frames = volumes(7)
    u, v, w = np.random.default_rng(8).normal(size=(3, T, D, H, W))
    np.save(tmp_path / "m.npy", frames)
    np.savez(tmp_path / "m.npz", concentration=frames, u=u, v=v, w=w, source_location=np.array([1.0, 2.0, 3.0]))
    with h5py.File(tmp_path / "m.h5", "w") as f:
        ds = f.create_dataset("concentration", data=frames)
        ds.attrs["source_location"] = (1.0, 2.0, 3.0)
        ds.attrs["fps"] = 10.0
    cells = ("t", "z", "y", "x")
    xr.Dataset({"concentration": (cells, frames), "u": (cells, u), "v": (cells, v), "w": (cells, w)},
               attrs={"schema_version": "1.0.0", "source_location": [1.0, 2.0, 3.0], "pixel_to_grid": [0.5, 0.5],
                      "length_unit": "mm"}).to_zarr(tmp_path / "m.zarr", zarr_format=2, consolidated=False)
    loaded = [plumes.Movie(str(tmp_path / "m.npy"), source=(1, 2, 3))] + \
        [plumes.Movie(str(tmp_path / name)) for name in ("m.npz", "m.h5", "m.zarr")]
    for movie in loaded:
        np.testing.assert_array_equal(movie.frames, frames)
        assert movie.source == (1.0, 2.0, 3.0) and movie.natural_grid_size() == (W, H, D)
    assert loaded[2].fps == 10.0
    zarr = loaded[3]
    assert zarr.units().origin == (0.0, 0.0, 0.0) and zarr.units().cell_size == 0.5
    S = (np.zeros(1, np.int64),)
    for movie in loaded[1], zarr:  # u, v, w per cell, read at the nearest cell of the frame
        want = tuple(float(np.float32(c[1, 2, 1, 4])) for c in (u, v, w))  # stored as float32
        assert wind_at(movie.params(None), S, 1, (4.0, 1.0, 2.0)) == want
    # 'upper' rows are flipped in every plane; the source and the wind follow
    upper = plumes.Movie(str(tmp_path / "m.npz"), origin="upper")
    np.testing.assert_array_equal(upper.frames, frames[:, :, ::-1, :])
    assert upper.source == (1.0, H - 1 - 2.0, 3.0)
    assert wind_at(upper.params(None), S, 0, (4.0, 1.0, 2.0))[0] == np.float32(u[0, 2, H - 2, 4])
    # without w, the vertical wind is 0
    np.savez(tmp_path / "uv.npz", concentration=frames, u=u, v=v)
    assert wind_at(plumes.Movie(str(tmp_path / "uv.npz"), source=(0, 0, 0)).params(None), S, 0, (0, 0, 0))[2] == 0.0


def test_the_synthetic_recording_writes_volumes_in_the_data_zoo_layout(tmp_path):
    movie = plumes.Movie(str(write_synthetic_recording(tmp_path / "volume.h5", dims=3)))
    np.testing.assert_array_equal(movie.frames, synthetic_volumes())
    assert movie.source == tuple(float(c) for c in SYNTHETIC_VOLUME_SOURCE) and movie.fps == SYNTHETIC_FPS
    assert Scenario(plume=movie).grid_size == (24, 12, 6)
    x, y, z = SYNTHETIC_VOLUME_SOURCE
    assert (movie.frames[:, z, y, x] == 1.0).all() and movie.frames.min() >= 0.0
    with pytest.raises(ValidationError, match="dims: got 4"):
        write_synthetic_recording(tmp_path / "v.h5", dims=4)


def test_a_saved_volume_keeps_its_checksum_and_a_mapped_one_is_guarded(tmp_path):
    path = tmp_path / "m.npy"
    np.save(path, volumes(9))
    digest = "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    movie = plumes.Movie(str(path), source=(1, 2, 3), start=0, mmap=True)
    assert movie.file_checksum() == digest and movie.guard() is not None
    sc = scenario(movie)
    save_scenario(sc, tmp_path / "s.json")
    assert load_scenario(tmp_path / "s.json") == sc
    with pytest.raises(ValidationError, match="Movie.checksum"):
        plumes.Movie(str(path), source=(1, 2, 3), checksum="sha256:" + "0" * 64)
    sim = Simulator(sc, num_worlds=2)
    sim.reset(seed=0)
    stat = os.stat(path)
    with open(path, "r+b") as f:
        f.seek(128)
        f.write(np.full(8, 0.5, np.float32).tobytes())
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    with pytest.raises(StateError, match="changed"):
        sim.step(continuous_actions(sc, 4, 1, 0)[0])
    with pytest.raises(ValidationError, match="Movie.checksum"):
        load_scenario(tmp_path / "s.json")


def test_a_snapshot_of_volume_worlds_continues_bit_for_bit_and_bad_clocks_are_refused():
    sc = scenario(plumes.Movie(volumes(10), source=(1, 1, 1)), max_steps=20)
    snap, other = snapshot_and_continue(sc, continuous_actions(sc, 4, 12, 3), 5, seed=4)
    bad = dict(snap)
    bad["model:plume.start"] = np.array([0, T], np.int64)  # frame T: outside the movie
    with pytest.raises(ValidationError, match="plume.start"):
        other.restore(bad)


# --------------------------------------------------------------------------- refusals
@pytest.mark.parametrize("make, message", [
    (lambda: Scenario(plume=plumes.Movie(volumes()[:, 0], source=(1, 1)), grid_size=(W, H, D)),
     r"Movie.frames: got frames \(T, H, W\) of shape \(3, 5, 6\); expected volumes \(T, D, H, W\) to run in the "
     r"3-D scenario of grid_size=\(6, 5, 4\)"),
    (lambda: Scenario(plume=plumes.Movie(volumes(), source=(1, 1, 1)), grid_size=(W, H)),
     r"Movie.frames: got volumes \(T, D, H, W\) of shape \(3, 4, 5, 6\); expected frames \(T, H, W\) to run in the "
     r"2-D scenario of grid_size=\(6, 5\)"),
    (lambda: Scenario(plume=plumes.Movie(volumes(), source=(1, 1, 1)), grid_size=(W, H, 5)),
     r"Scenario.grid_size: got \(6, 5, 5\); expected None or the plume's own size \(6, 5, 4\)"),
    (lambda: plumes.Movie(np.zeros((2, 2, 2, 2, 2), np.float32), source=(0, 0, 0)),
     r"Movie.frames: got array of shape \(2, 2, 2, 2, 2\); expected shape \(T, H, W\), or \(T, D, H, W\)"),
    (lambda: plumes.Movie(volumes(), source=(1, 1)), r"Movie.source: got \(1, 1\); expected \(x, y, z\) in cells"),
    (lambda: plumes.Movie(volumes(), source=(1, 1, 4)), r"inside the 6x5x4 volumes: \[0, 5\] x \[0, 4\] x \[0, 3\]"),
    (lambda: plumes.Movie(volumes(nan_cells=1), source=(1, 1, 1)), r"the first at frame \d, plane \d, row \d, column"),
    (lambda: plumes.Movie(volumes(), source=(1, 1, 1), wind=np.zeros((T, H, W, 2))),
     r"Movie.wind: got shape \(3, 5, 6, 2\); expected None, \(u, v, w\) \(or \(u, v\): w = 0\), \(3, 3\) or "
     r"\(3, 4, 5, 6, 3\)"),
    (lambda: plumes.Movie(volumes()[:, 0], source=(1, 1), wind=(1.0, 2.0, 3.0)), r"Movie.wind: got shape \(3,\)"),
])
def test_impossible_combinations_are_refused_by_name(make, message):
    with pytest.raises(ValidationError, match=message):
        make()


def test_files_of_the_wrong_layout_are_refused(tmp_path):
    import xarray as xr

    frames = volumes()
    xr.Dataset({"concentration": (("t", "y", "z", "x"), frames)}).to_zarr(tmp_path / "yz.zarr", zarr_format=2,
                                                                           consolidated=False)
    with pytest.raises(ValidationError, match=r"dims \('t', 'y', 'x'\), or \('t', 'z', 'y', 'x'\) for volumes"):
        plumes.Movie(str(tmp_path / "yz.zarr"), source=(0, 0, 0))
    plane = np.zeros((T, H, W), np.float32)
    np.savez(tmp_path / "w2.npz", concentration=plane, u=plane, v=plane, w=plane)
    with pytest.raises(ValidationError, match=r"Movie.wind: .*w is for volumes"):
        plumes.Movie(str(tmp_path / "w2.npz"), source=(0, 0))
    np.savez(tmp_path / "uv.npz", concentration=frames, u=np.zeros((T, H, W)), v=np.zeros((T, H, W)))
    with pytest.raises(ValidationError, match=r"Movie.wind: got u, v of shape \(3, 5, 6\)"):
        plumes.Movie(str(tmp_path / "uv.npz"), source=(0, 0, 0))
    np.savez(tmp_path / "src.npz", concentration=frames, source_location=np.array([1.0, 2.0]))
    with pytest.raises(ValidationError, match=r"Movie.source: .*\(x, y, z\): three finite numbers"):
        plumes.Movie(str(tmp_path / "src.npz"))
    np.save(tmp_path / "five.npy", np.zeros((1, 2, 2, 2, 2), np.float32))
    with pytest.raises(ValidationError, match=r"volumes \(T, D, H, W\), each side at least 1"):
        plumes.Movie(str(tmp_path / "five.npy"), source=(0, 0, 0))


def test_world_i_of_seed_s_is_world_0_of_seed_s_plus_i():
    """Batch splits: each world's clock and moves come from its own stream (the same compiled
    combination as the tests above; the threaded driver is the 3-D template checked in
    tests/models/plumes/test_poisson_hits_3d.py and tests/models/test_three_dimensions.py)."""
    movie = plumes.Movie(volumes(6, shape=(7, D, H, W)), source=(1.5, 2.0, 0.0))
    sc = scenario(movie, goal_radius=0.5, max_steps=9)
    B, N, seed, steps = 3, sc.n_agents, 40, 8
    acts = continuous_actions(sc, B * N, steps, 5)
    batch = Simulator(sc, num_worlds=B)
    obs = [batch.reset(seed=seed)]
    starts = batch.model_state("plume.start").copy()
    obs += [batch.step(a)[0] for a in acts]
    for b in range(B):
        single = Simulator(sc, num_worlds=1)
        mine = [single.reset(seed=seed + b)]
        assert single.model_state("plume.start")[0] == starts[b]
        mine += [single.step(a[b * N:(b + 1) * N])[0] for a in acts]
        for k, (got, want) in enumerate(zip(obs, mine)):
            np.testing.assert_array_equal(got[b * N:(b + 1) * N], want, err_msg=f"world {b} step {k}")
