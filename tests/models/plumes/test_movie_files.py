"""plumes.Movie from real recordings: the data zoo's layout, NaN and normalisation policies, wind in
every format, the layout attributes and physical units, JSON round trips, and files that are
corrupt, hostile or change under a running simulation.

Simulators here reuse the combinations tests/models already compiles: uint16 frames with the
default body and sensors (test_movie.py), uint8 frames with ``movie_scenario``'s oriented body and
``sensor_set`` (test_movie.py), float32 frames with the continuous body and ``sensor_set``
(models_reference.simple_scenario).
"""

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

import plume_multi
from plume_multi import Scenario, Simulator, bodies, plumes
from plume_multi.errors import StateError, ValidationError
from plume_multi.evaluation import EvaluationResult
from plume_multi.scenario import load_scenario, save_scenario, scenario_from_metadata
from plume_multi.models.units import Units

from models_reference import sensor_set
from test_movie import WIND, movie_scenario

h5py = pytest.importorskip("h5py", reason="the plume-multi[data] extra (part of [test])")
zarr = pytest.importorskip("zarr", reason="the plume-multi[data] extra (part of [test])")


def zoo_store(path, frames, **attrs):
    """A Zarr v2 store as the data zoo's writer makes it (plume_nav_sim's media/h5_movie.py): a
    float32 ``concentration`` array with fill_value 0.0, ``_ARRAY_DIMENSIONS`` (t, y, x), the
    schema-1.0.0 attributes on the group (pairs are (y, x))."""
    T, H, W = frames.shape
    group = zarr.open_group(str(path), mode="w", zarr_format=2)
    arr = group.create_array("concentration", shape=frames.shape, dtype="float32", chunks=(2, H, W), fill_value=0.0)
    arr[...] = frames
    arr.attrs["_ARRAY_DIMENSIONS"] = ["t", "y", "x"]
    base = {"schema_version": "1.0.0", "fps": 60.0, "source_dtype": "uint8", "pixel_to_grid": [1.0, 1.0],
            "origin": [0.0, 0.0], "extent": [float(H), float(W)], "dims": ["t", "y", "x"]}
    group.attrs.update({**base, **attrs})
    return str(path)


def gaussian_frames(T=6, H=7, W=9):
    """A drifting Gaussian puff in [0, 1], exactly 0 far from it (as the demo store)."""
    t, y, x = np.meshgrid(np.arange(T), np.arange(H), np.arange(W), indexing="ij")
    f = np.exp(-((x - 2 - t) ** 2 + (y - 3) ** 2) / 2.0)
    return np.where(f < 1e-3, 0.0, f).astype(np.float32)


# ----------------------------------------------------------------------------- 23.1: the data zoo
def test_the_data_zoo_demo_store_loads_as_written(tmp_path):
    """The demo store's 'NaN' were xarray's: it takes a Zarr v2 fill_value (0.0) for a CF
    _FillValue and turns every exact 0 into NaN. Values are read as written."""
    frames = gaussian_frames()
    assert (frames == 0).sum() > 100
    movie = plumes.Movie(zoo_store(tmp_path / "gaussian_plume_demo.zarr", frames), source=(2, 3))
    np.testing.assert_array_equal(movie.frames, frames)
    sc = Scenario(plume=movie)
    assert sc.grid_size == (9, 7)
    assert sc.units == Units(cell_size=1.0, step_duration=1 / 60.0, origin=(0.0, 0.0))
    assert sc.step_duration == 1 / 60.0 and sc.cell_size == 1.0


def test_nan_values_are_counted_located_and_loaded_with_nan_option(tmp_path):
    frames = gaussian_frames()
    frames[3, 4, 5] = np.nan
    frames[3, 0, 0] = np.nan
    frames[5, 6, 8] = np.inf
    path = zoo_store(tmp_path / "masked.zarr", frames)
    with pytest.raises(ValidationError) as err:
        plumes.Movie(path, source=(2, 3))
    text = str(err.value)
    for part in ("Movie.frames", "3 of 378 values", "masked.zarr", "2 of 6 frames", "frame 3, row 0, column 0",
                 "nan=0.0"):
        assert part in text
    with pytest.raises(ValidationError, match="Movie.nan"):
        plumes.Movie(path, source=(2, 3), nan=1.5)
    movie = plumes.Movie(path, source=(2, 3), nan=0.25)
    image = movie.concentration(movie.frames[3])
    assert image[4, 5] == np.float32(0.25) and image[0, 0] == np.float32(0.25) and np.isfinite(image).all()


def test_normalisations(tmp_path):
    rng = np.random.default_rng(1)
    raw = rng.normal(50.0, 20.0, (4, 5, 6)).astype(np.float32)
    raw[0, 0, 0] = np.nan
    with pytest.raises(ValidationError) as err:  # outside [0, 1]: counted, located, options named
        plumes.Movie(raw, source=(0, 0), nan=0.0)
    for part in ("values of the frames outside [0, 1]", "min ", "max ", "normalize='minmax'", "normalize='robust'",
                 "scale="):
        assert part in str(err.value)
    finite = raw[np.isfinite(raw)]
    lo, hi = finite.min(), finite.max()
    minmax = plumes.Movie(raw, source=(0, 0), nan=0.0, normalize="minmax")
    expected = np.clip((raw - np.float32(lo)) * np.float32(1 / (float(hi) - float(lo))), 0, 1)
    np.testing.assert_array_equal(minmax.concentration(raw), np.where(np.isfinite(raw), expected, 0))
    q5, q95 = np.percentile(finite, (5, 95))
    robust = plumes.Movie(raw, source=(0, 0), nan=0.0, normalize="robust")
    assert (float(robust._offset), float(robust._scale)) == (np.float32(q5), np.float32(1 / (q95 - q5)))
    pair = plumes.Movie(raw, source=(0, 0), nan=0.0, normalize=(1, 99))
    assert float(pair._offset) == np.float32(np.percentile(finite, (1, 99))[0]) and pair.normalize == (1.0, 99.0)
    # integer frames: exact percentiles from a histogram, as NumPy's
    ints = rng.integers(0, 4096, (3, 8, 8)).astype(np.uint16)
    r16 = plumes.Movie(ints, source=(0, 0), normalize="robust")
    q5, q95 = np.percentile(ints, (5, 95))
    assert (float(r16._offset), float(r16._scale)) == (np.float32(q5), np.float32(1 / (q95 - q5)))
    # a declared scale for float frames (none with a declared scale)
    declared = plumes.Movie(np.full((1, 2, 2), 500.0, np.float32), source=(0, 0), scale=1e-3)
    assert declared.concentration(declared.frames).tolist() == [[[np.float32(500) * np.float32(1e-3)] * 2] * 2]
    for bad in ("zscore", (50, 50), (-1, 50), "12"):
        with pytest.raises(ValidationError, match="Movie.normalize"):
            plumes.Movie(raw, source=(0, 0), nan=0.0, normalize=bad)
    with pytest.raises(ValidationError, match="Movie.normalize.*constant"):
        plumes.Movie(np.full((2, 2, 2), 3.0), source=(0, 0), normalize="minmax")
    with pytest.raises(ValidationError, match="Movie.scale"):
        plumes.Movie(raw, source=(0, 0), nan=0.0, normalize="minmax", scale=0.1)


@pytest.mark.parametrize("scale", [1e-300, 0.0, -1.0, 1e300, float("nan"), True, "0.5"])
def test_scale_is_bounded(scale):
    """Movie(scale=1e-300) read 0 everywhere (float32 underflow): the bound is in the message."""
    with pytest.raises(ValidationError, match=r"Movie.scale.*\[1e-30, 1e\+30\]"):
        plumes.Movie(np.full((1, 2, 2), 200, np.uint8), source=(0, 0), scale=scale)


def test_the_simulation_reads_normalised_integer_frames_as_the_rule_says():
    """uint16 frames with robust normalisation: the kernel's offset, scale and clipping equal
    Movie.concentration (NumPy) at every agent's cell (the default body and sensors)."""
    rng = np.random.default_rng(2)
    frames = rng.integers(0, 4096, (5, 6, 7)).astype(np.uint16)
    movie = plumes.Movie(frames, source=(0, 0), normalize=(10, 90), start=2)
    cells = [(x, y) for x in range(7) for y in range(6)]
    sim = Simulator(Scenario(plume=movie, n_agents=len(cells), start_positions=cells))
    obs = sim.reset(seed=0)
    image = movie.concentration(frames[2])
    assert 0 < (image == 0).sum() and 0 < (image == 1).sum()  # clipped at both ends
    np.testing.assert_array_equal(obs[:, 0], [image[y, x] for x, y in cells])


def test_nan_cells_read_the_fill_everywhere_and_frames_written_later_stay_finite():
    """Float frames, continuous body: bilinear reads take a non-finite stored value as the one
    that reads ``nan`` (per corner), and a NaN written into the caller's array after loading
    reads the fill too: every observation stays finite."""
    from models_reference import bilinear

    frames = gaussian_frames(T=1)
    frames[0, 3, 3] = np.nan
    movie = plumes.Movie(frames, source=(2.0, 3.0), nan=0.5, start=0)
    sc = Scenario(plume=movie, n_agents=3, start_positions=((3, 3), (4, 3), (0, 6)), sensors=sensor_set(),
                  action_model=bodies.Continuous(max_speed=1.5, initial_heading=180.0), max_steps=5)
    sim = Simulator(sc)
    sim.reset(seed=0)
    obs, *_ = sim.step(np.array([[0.5, 0.0], [0.5, 0.0], [0.0, 0.0]]))  # to x = 2.5 and 3.5, y = 3
    filled = np.where(np.isfinite(frames[0]), frames[0], np.float32(0.5))
    xy = sim.model_state("body.xy")
    for row in (0, 1):
        assert obs[row, 0] == np.float32(bilinear(filled, xy[row, 0], xy[row, 1]))
    frames[0, 6, 0] = np.nan  # the caller's array, shared by the movie
    obs, *_ = sim.step(np.zeros((3, 2)))
    assert obs[2, 0] == np.float32(0.5) and np.isfinite(obs).all()


# ----------------------------------------------------------------------------- 23.2: wind
def _write_h5(path, frames, u, v, **attrs):
    with h5py.File(path, "w") as f:
        ds = f.create_dataset("concentration", data=frames)
        for k, val in attrs.items():
            ds.attrs[k] = val
        if u is not None:
            f.create_dataset("u", data=u)
        if v is not None:
            f.create_dataset("v", data=v)
    return str(path)


def _write_zarr(path, frames, u, v, **attrs):
    import xarray as xr

    ds = xr.Dataset({"concentration": (("t", "y", "x"), frames), "u": (("t", "y", "x"), u),
                     "v": (("t", "y", "x"), v)}, attrs=attrs)
    ds.to_zarr(path, zarr_format=2, consolidated=False)
    return str(path)


def test_hdf5_and_zarr_give_the_same_episodes(tmp_path):
    rng = np.random.default_rng(3)
    frames = rng.integers(0, 256, (7, 5, 9)).astype(np.uint8)
    u, v = rng.normal(size=(2, 7, 5, 9)).astype(np.float32)
    attrs = {"fps": 15.0, "source_location": [4.0, 2.0]}
    runs = []
    for path in (_write_h5(tmp_path / "m.h5", frames, u, v, **attrs), _write_zarr(tmp_path / "m.zarr", frames, u, v,
                                                                                  **attrs)):
        sim = Simulator(movie_scenario(plumes.Movie(path), max_steps=12), num_worlds=3)
        out = [sim.reset(seed=7).copy()]
        for a in np.random.default_rng(4).integers(0, 3, (15, sim.total_agents)):
            obs, reward, term, trunc = sim.step(a)
            out += [obs.copy(), reward.copy(), term.copy(), trunc.copy()]
        runs.append(out)
    assert np.abs(runs[0][0][:, WIND]).sum() > 0  # the wind was read
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("fmt", ["h5", "npz", "zarr"])
def test_a_file_with_half_a_wind_is_refused(tmp_path, fmt):
    frames = np.zeros((2, 3, 4), np.uint8)
    u = np.ones((2, 3, 4), np.float32)
    if fmt == "h5":
        path = _write_h5(tmp_path / "m.h5", frames, u, None)
    elif fmt == "npz":
        path = str(tmp_path / "m.npz")
        np.savez(path, concentration=frames, u=u)
    else:
        import xarray as xr

        path = str(tmp_path / "m.zarr")
        xr.Dataset({"concentration": (("t", "y", "x"), frames), "u": (("t", "y", "x"), u)}).to_zarr(
            path, zarr_format=2, consolidated=False)
    with pytest.raises(ValidationError, match=r"Movie.wind.*with u but no v"):
        plumes.Movie(path, source=(0, 0))


def test_wind_from_npz_and_per_frame_wind_from_hdf5(tmp_path):
    frames = np.zeros((3, 2, 4), np.uint8)
    np.savez(tmp_path / "m.npz", concentration=frames, u=np.full((3, 2, 4), 0.5), v=np.full((3, 2, 4), -1.0),
             fps=np.float64(12.0))
    movie = plumes.Movie(str(tmp_path / "m.npz"), source=(0, 0))
    assert movie._wind.shape == (3, 2, 4, 2) and (movie._wind[..., 0] == 0.5).all() and movie.fps == 12.0
    path = _write_h5(tmp_path / "f.h5", frames, np.arange(3.0), -np.arange(3.0))
    per_frame = plumes.Movie(path, source=(0, 0))
    assert per_frame._wind[:, 0, 0].tolist() == [[0.0, 0.0], [1.0, -1.0], [2.0, -2.0]]
    bad = _write_h5(tmp_path / "bad.h5", frames, np.ones(5), np.ones(5))
    with pytest.raises(ValidationError, match=r"Movie.wind.*\(3, 2, 4\).*per frame"):
        plumes.Movie(bad, source=(0, 0))


# ----------------------------------------------------------------------------- 23.3: layout, units
def test_origin_and_extent_put_every_pixel_where_the_file_says(tmp_path):
    rng = np.random.default_rng(5)
    scene = rng.integers(0, 256, (2, 4, 6)).astype(np.uint8)  # as the simulation sees it (row 0 at the bottom)
    lower = _write_h5(tmp_path / "lower.h5", scene, None, None, origin="lower", source_location_px=(1, 0))
    upper = _write_h5(tmp_path / "upper.h5", scene[:, ::-1], None, None, origin="upper", source_location_px=(1, 3))
    a, b = plumes.Movie(lower), plumes.Movie(upper)
    np.testing.assert_array_equal(a.frames, scene)
    np.testing.assert_array_equal(b.frames, scene)
    assert a.source == b.source == (1.0, 0.0)
    # matplotlib's extent (left, right, bottom, top) with the columns running right to left
    mirrored = _write_h5(tmp_path / "mirrored.h5", scene[:, :, ::-1], None, None, extent=[12.0, 0.0, -4.0, 4.0],
                         pixel_to_grid=2.0, length_unit="mm")
    c = plumes.Movie(mirrored, source=(0, 0))
    np.testing.assert_array_equal(c.frames, scene)
    assert c.units() == Units(cell_size=2.0, origin=(1.0, -3.0), length_unit="mm")
    # the data zoo's numeric origin (y, x): the position of pixel (0, 0)
    shifted = plumes.Movie(zoo_store(tmp_path / "s.zarr", scene.astype(np.float32) / 255, origin=[10.0, -5.0],
                                     pixel_to_grid=[0.5, 0.5], extent=[2.0, 3.0]), source=(0, 0))
    assert shifted.units().origin == (-5.0, 10.0) and shifted.units().cell_size == 0.5
    assert shifted.units().position((2, 1)).tolist() == [-4.0, 10.5]
    # the declared origin wins over the file's
    np.testing.assert_array_equal(plumes.Movie(lower, origin="upper").frames, scene[:, ::-1])


def test_layouts_that_disagree_are_refused(tmp_path):
    frames = np.zeros((1, 4, 6), np.float32)
    cases = {"extent": dict(pixel_to_grid=[1.0, 1.0], extent=[7.0, 6.0]),
             "cell_size": dict(pixel_to_grid=[0.5, 2.0], extent=[2.0, 12.0]),  # pixels that are not square
             "origin": dict(origin="middle"),
             "pixel_to_grid": dict(pixel_to_grid=[-1.0, 1.0])}
    for name, attrs in cases.items():
        with pytest.raises(ValidationError, match=f"Movie.{name}"):
            plumes.Movie(zoo_store(tmp_path / f"{name}.zarr", frames, **attrs), source=(0, 0))
    ok = plumes.Movie(zoo_store(tmp_path / "declared.zarr", frames, pixel_to_grid=[0.5, 2.0], extent=[2.0, 12.0]),
                      source=(0, 0),
                      cell_size=1.0)
    assert ok.units().cell_size == 1.0
    with pytest.raises(ValidationError, match="schema version 1"):
        plumes.Movie(zoo_store(tmp_path / "v2.zarr", frames, schema_version="2.0.0"), source=(0, 0))


def test_a_scenario_knows_its_units_from_the_plume_or_from_the_caller(tmp_path):
    movie = plumes.Movie(np.zeros((2, 3, 4), np.uint8), source=(0, 0), fps=20.0, cell_size=0.5)
    sc = Scenario(plume=movie)
    assert (sc.cell_size, sc.step_duration) == (0.5, 0.05)
    assert sc.units.seconds(30) == 1.5 and sc.units.speed(10.0) == 1.0 and sc.units.length(4) == 2.0
    assert Scenario(plume=movie, step_duration=0.05).step_duration == 0.05
    with pytest.raises(ValidationError, match=r"Scenario.step_duration.*0.05"):
        Scenario(plume=movie, step_duration=0.1)
    puffs = Scenario(plume=plumes.Puffs(source=(2.0, 12.0)), grid_size=(50, 25))
    assert puffs.units == Units(cell_size=1.0, step_duration=0.01, origin=(0.5, -12.0))
    gaussian = Scenario()
    assert gaussian.units == Units()
    with pytest.raises(ValidationError, match=r"Units.step_duration.*Scenario\(step_duration"):
        gaussian.units.seconds(3)
    declared = Scenario(cell_size=0.01, step_duration=0.1)
    assert declared.units.speed(0.05) == pytest.approx(0.5)
    assert scenario_from_metadata(declared.metadata()) == declared  # given units are kept
    np.save(tmp_path / "m.npy", np.zeros((2, 3, 4), np.uint8))
    saved = Scenario(plume=plumes.Movie(str(tmp_path / "m.npy"), source=(0, 0), fps=20.0))
    other = plumes.Movie(str(tmp_path / "m.npy"), source=(0, 0), fps=10.0)
    assert scenario_from_metadata(saved.metadata()).replace(plume=other).step_duration == 0.1  # derived: they follow
    for bad in (0.0, -1.0, float("inf"), "1", True):
        with pytest.raises(ValidationError, match="Scenario.cell_size"):
            Scenario(cell_size=bad)


def test_a_body_given_a_speed_in_length_per_second_moves_that_far():
    frames = gaussian_frames(T=2)
    movie = plumes.Movie(frames, source=(2.0, 3.0), fps=10.0, cell_size=0.2)  # 0.2 mm cells, 0.1 s steps
    speed = movie.units().speed(3.0)  # 3 mm/s -> 1.5 cells per step
    assert speed == pytest.approx(1.5)
    sc = Scenario(plume=movie, n_agents=2, start_positions=((0, 0), (0, 6)), sensors=sensor_set(),
                  action_model=bodies.Continuous(max_speed=speed, initial_heading=0.0))
    sim = Simulator(sc)
    sim.reset(seed=0)
    sim.step(np.array([[speed, 0.0], [speed, 0.0]]))
    sim.step(np.array([[speed, 0.0], [speed, 0.0]]))
    travelled = sc.units.length(sim.model_state("body.xy")[:, 0])  # cells -> mm
    np.testing.assert_allclose(travelled, [0.6, 0.6])  # 3 mm/s for 0.2 s


def test_evaluation_results_report_seconds_as_well_as_steps():
    sc = Scenario(plume=plumes.Movie(np.zeros((2, 3, 4), np.uint8), source=(0, 0), fps=4.0), n_agents=2)
    result = EvaluationResult(scenario=sc, seed=0, until="first", arrival_time=np.array([[3, -1], [-1, -1]], np.int32),
                              episode_length=np.array([3, 1000], np.int32))
    np.testing.assert_array_equal(result.search_seconds, [0.75, np.nan])
    assert result.summary()["mean_search_seconds"] == 0.75
    unknown = EvaluationResult(scenario=Scenario(n_agents=2), seed=0, until="first",
                               arrival_time=np.array([[3, -1]], np.int32), episode_length=np.array([3], np.int32))
    assert "mean_search_seconds" not in unknown.summary()
    with pytest.raises(ValidationError, match="step_duration"):
        unknown.search_seconds


# ----------------------------------------------------------------------------- 21.7: sources
@pytest.mark.parametrize("source", ["12", (True, False), {3, 1}, {5: "a", 2: "b"}, (1.0,), (1, 2, 3), np.array(3.0),
                                    (float("nan"), 1.0), (9.0, 0.0), b"12"])
def test_a_source_is_a_sequence_of_numbers_inside_the_frames(source):
    with pytest.raises(ValidationError, match="Movie.source"):
        plumes.Movie(np.zeros((1, 3, 4), np.uint8), source=source)


def test_a_file_source_of_text_is_refused(tmp_path):
    path = _write_h5(tmp_path / "m.h5", np.zeros((1, 3, 4), np.uint8), None, None, source_location="12")
    with pytest.raises(ValidationError, match="Movie.source"):
        plumes.Movie(path)


# ----------------------------------------------------------------------------- 21.13: JSON
def test_a_movie_with_per_frame_wind_round_trips_through_json_by_path_and_checksum(tmp_path):
    frames = np.arange(4 * 3 * 5, dtype=np.uint8).reshape(4, 3, 5)
    np.save(tmp_path / "m.npy", frames)
    movie = plumes.Movie(str(tmp_path / "m.npy"), source=(1, 2), wind=[[1, 0], [0, 1], [-1, 0], [0, -1]],
                         nan=0.0, normalize="minmax", fps=30.0, start=1)
    sc = Scenario(plume=movie, n_agents=2)
    path = save_scenario(sc, tmp_path / "sc.json")
    meta = json.loads(path.read_text())["plume"]
    assert meta["frames"] == str((tmp_path / "m.npy").resolve()) and meta["checksum"].startswith("sha256:")
    assert meta["wind"] == [[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]]
    assert len(path.read_text()) < 2000  # a reference, not the frames
    back = load_scenario(path)
    assert back == sc and back.plume.wind == movie.wind and back.step_duration == sc.step_duration
    np.testing.assert_array_equal(back.plume._wind, movie._wind)
    frames[0, 0, 0] = 7  # the file changes: the saved scenario no longer describes it
    np.save(tmp_path / "m.npy", frames)
    with pytest.raises(ValidationError, match="Movie.checksum.*changed since the scenario was saved"):
        load_scenario(path)


def test_a_movie_held_in_memory_cannot_be_saved(tmp_path):
    sc = Scenario(plume=plumes.Movie(np.zeros((1, 2, 2), np.uint8), source=(0, 0)))
    with pytest.raises(ValidationError, match="save_scenario: Movie.frames.*np.save"):
        save_scenario(sc, tmp_path / "sc.json")
    assert not (tmp_path / "sc.json").exists()


# ----------------------------------------------------------------------------- 21.5, 21.11, 23.16
def test_every_value_of_a_large_file_is_checked(tmp_path):
    """A 12 x 2048 x 2048 float32 .npy with one NaN was accepted (only smaller files were checked)."""
    path = tmp_path / "large.npy"
    mm = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(12, 2048, 2048))  # sparse on disk
    mm[11, 2047, 2000] = np.nan
    mm.flush()
    del mm
    with pytest.raises(ValidationError, match="1 of 50331648 values.*frame 11, row 2047, column 2000"):
        plumes.Movie(str(path), source=(0, 0), mmap=True)


def test_a_fifo_is_refused_before_it_is_opened(tmp_path):
    fifo = tmp_path / "m.npy"
    os.mkfifo(fifo)
    outcome = []

    def load():
        try:
            plumes.Movie(str(fifo), source=(0, 0))
        except ValidationError as exc:
            outcome.append(str(exc))

    worker = threading.Thread(target=load, daemon=True)  # opening a FIFO would block it for good
    worker.start()
    worker.join(10)
    assert outcome and "FIFO" in outcome[0] and "m.npy" in outcome[0]


def _npy_bytes(array) -> bytes:
    import io

    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


HOSTILE = {
    "truncated.npy": lambda: _npy_bytes(np.zeros((4, 8, 8), np.float32))[:300],
    "header.npy": lambda: b"\x93NUMPY\x01\x00\x20\x00{'descr': '<f4', 'shape': (3,}     \n",
    "huge.npy": lambda: _npy_bytes(np.zeros((1, 1, 1), np.uint8)).replace(b"(1, 1, 1)", b"(99999, 99999, 99)"),
    "object.npy": lambda: _npy_bytes(np.array([[[None]]], dtype=object)),
    "flat.npy": lambda: _npy_bytes(np.zeros(5, np.float32)),
    "ints.npy": lambda: _npy_bytes(np.zeros((1, 2, 2), np.int64)),
    "empty.npy": lambda: b"",
    "notzip.npz": lambda: b"PK\x03\x04 not a zip at all",
    "truncated.npz": lambda: _npz_bytes()[:200],
    "garbage.h5": lambda: b"\x89HDF\r\n\x1a\n" + bytes(range(256)) * 4,
}


def _npz_bytes() -> bytes:
    import io

    buf = io.BytesIO()
    np.savez(buf, concentration=np.zeros((2, 8, 8), np.float32))
    return buf.getvalue()


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_corrupt_and_hostile_files_give_our_error_naming_the_file(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(HOSTILE[name]())
    with pytest.raises(ValidationError, match=f"Movie.*{name}"):
        plumes.Movie(str(path), source=(0, 0))


def test_corrupt_zarr_stores_and_wrong_kinds_of_paths(tmp_path):
    store = zoo_store(tmp_path / "broken.zarr", np.zeros((2, 3, 4), np.float32))
    with open(os.path.join(store, "concentration", ".zarray"), "w") as f:
        f.write("{ not json")
    with pytest.raises(ValidationError, match="Movie.frames.*broken.zarr"):
        plumes.Movie(store, source=(0, 0))
    (tmp_path / "dir.npy").mkdir()
    with pytest.raises(ValidationError, match="Movie.frames.*dir.npy', which is a folder"):
        plumes.Movie(str(tmp_path / "dir.npy"), source=(0, 0))
    (tmp_path / "file.zarr").write_text("x")
    with pytest.raises(ValidationError, match="Movie.frames.*file.zarr', which is a regular file; expected a Zarr "
                                              "directory store"):
        plumes.Movie(str(tmp_path / "file.zarr"), source=(0, 0))
    np.save(tmp_path / "m.npy", np.zeros((1, 2, 2), np.uint8))
    with pytest.raises(ValidationError, match="Movie.mmap"):
        plumes.Movie(store, source=(0, 0), mmap=True)
    with pytest.raises(ValidationError, match="Movie.key"):
        plumes.Movie(str(tmp_path / "m.npy"), source=(0, 0), key="frames")


# ----------------------------------------------------------------------------- 21.1: files that change
CHANGING = textwrap.dedent("""
    import sys
    import numpy as np
    from plume_multi import Scenario, Simulator, plumes
    from plume_multi.errors import StateError

    for mode in ("copied", "mapped"):
        np.save("m.npy", np.full((3, 4, 5), 1000, np.uint16))
        movie = plumes.Movie("m.npy", source=(3, 3), start=0, mmap=(mode == "mapped"))
        sim = Simulator(Scenario(plume=movie, n_agents=2, start_positions=((0, 0), (4, 3))), 2)
        before = sim.reset(seed=0)[:, 0].copy()
        with open("m.npy", "r+b") as f:
            f.truncate(128)
        try:
            obs = sim.step(np.zeros(4, np.int64))[0]
            print(mode, "stepped:", np.array_equal(obs[:, 0], before) and bool(np.isfinite(obs).all()))
        except StateError as exc:
            print(mode, "refused:", exc)
""")


def test_a_file_truncated_under_a_running_simulation_never_kills_it(tmp_path):
    """The file is read into memory (the default for files up to 256 MiB: nothing done to the file
    reaches the simulation) or mapped (mmap=True: checked before every step). Before, the step read
    a truncated mapping and the process died of SIGBUS."""
    package_root = str(Path(plume_multi.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", CHANGING], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    copied, mapped = done.stdout.splitlines()
    assert copied == "copied stepped: True"
    assert mapped.startswith("mapped refused: Movie.frames: the memory-mapped file 'm.npy' changed"), mapped


def test_a_mapped_file_overwritten_with_nan_is_refused_before_the_step_reads_it(tmp_path):
    np.save(tmp_path / "m.npy", np.full((3, 4, 5), 1000, np.uint16))
    movie = plumes.Movie(str(tmp_path / "m.npy"), source=(3, 3), start=0, mmap=True)
    sim = Simulator(Scenario(plume=movie, n_agents=2, start_positions=((0, 0), (4, 3))), 2)
    sim.reset(seed=0)
    stat = os.stat(tmp_path / "m.npy")
    with open(tmp_path / "m.npy", "r+b") as f:
        f.seek(128)
        f.write(np.full(60, 0xFFFF, np.uint16).tobytes())
    os.utime(tmp_path / "m.npy", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))  # coarse clocks: a later time
    with pytest.raises(StateError, match="changed"):
        sim.step(np.zeros(4, np.int64))
    with pytest.raises(StateError, match="changed"):
        sim.validate()
    with pytest.raises(StateError, match="changed"):
        sim.plume_image(0)
