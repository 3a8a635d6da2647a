"""A movie reads only the file (or store) the user named (issue 32, item 4).

HDF5 external storage, external links (directly or through a soft link), virtual datasets over
other files, and Zarr entries that are symbolic links out of the store each turned another file's
bytes into observations: a scenario file could read any file the process can. Each is refused
before anything follows it, naming what it points to; ``Movie(..., allow_external=True)``, in code
or on the command line, reads it; a scenario file never opts in.
"""

from __future__ import annotations

import json
import os
import threading

import numpy as np
import pytest

from plume_multi import Scenario, plumes
from plume_multi.errors import ValidationError
from plume_multi.scenario import load_scenario, save_scenario, scenario_from_metadata

h5py = pytest.importorskip("h5py", reason="the plume-multi[data] extra (part of [test])")
zarr = pytest.importorskip("zarr", reason="the plume-multi[data] extra (part of [test])")

from test_movie_files import zoo_store  # noqa: E402  (after the extras' checks, as there)

# another file's bytes: values a movie of the named file would never hold
SECRET = (np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4) + 1) / 100
FRAMES = np.full((2, 3, 4), 0.5, np.float32)


def _hdf5_files() -> dict:
    """``{what: path}`` (in the working folder): files whose ``concentration`` (or wind) lies in
    another file."""
    SECRET.tofile("secret.bin")
    with h5py.File("other.h5", "w") as f:
        f["concentration"] = SECRET
    made = {}
    with h5py.File(made.setdefault("external storage", "storage.h5"), "w") as f:
        f.create_dataset("concentration", shape=SECRET.shape, dtype="f4", external=[("secret.bin", 0, SECRET.nbytes)])
    with h5py.File(made.setdefault("an external link", "link.h5"), "w") as f:
        f["concentration"] = h5py.ExternalLink("other.h5", "/concentration")
    with h5py.File(made.setdefault("a soft link through an external link", "soft.h5"), "w") as f:
        f["elsewhere"] = h5py.ExternalLink("other.h5", "/")
        f["concentration"] = h5py.SoftLink("/elsewhere/concentration")
    with h5py.File(made.setdefault("a virtual dataset over another file", "virtual.h5"), "w") as f:
        layout = h5py.VirtualLayout(shape=SECRET.shape, dtype="f4")
        layout[...] = h5py.VirtualSource("other.h5", "concentration", shape=SECRET.shape)
        f.create_virtual_dataset("concentration", layout)
    with h5py.File(made.setdefault("a wind linked to another file", "wind.h5"), "w") as f:
        f["concentration"] = FRAMES
        f["u"] = np.zeros_like(FRAMES)
        f["v"] = h5py.ExternalLink("other.h5", "/concentration")
    return made


WHY = {"external storage": "stored in other files ('secret.bin')",
       "an external link": "'concentration' is an external link to 'other.h5'",
       "a soft link through an external link": "is an external link to 'other.h5'",
       "a virtual dataset over another file": "a virtual dataset over 'other.h5'",
       "a wind linked to another file": "'/v' is an external link to 'other.h5'"}


def test_hdf5_datasets_stored_outside_the_named_file_are_refused_unless_opted_in(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # HDF5 finds external storage relative to the working folder
    for what, path in _hdf5_files().items():
        with pytest.raises(ValidationError) as err:
            plumes.Movie(path, source=(0, 0))
        message = str(err.value)
        assert message.startswith("Movie.frames: got ") and path in message and WHY[what] in message, (what, message)
        assert "allow_external=True" in message
        movie = plumes.Movie(path, source=(0, 0), allow_external=True)  # the user's choice: read there
        expected = FRAMES if what == "a wind linked to another file" else SECRET
        np.testing.assert_array_equal(movie.frames, expected)


def test_a_virtual_dataset_within_the_named_file_is_read(tmp_path):
    path = tmp_path / "inside.h5"
    with h5py.File(path, "w") as f:
        f["stored"] = SECRET
        layout = h5py.VirtualLayout(shape=SECRET.shape, dtype="f4")
        layout[...] = h5py.VirtualSource(".", "stored", shape=SECRET.shape)
        f.create_virtual_dataset("concentration", layout)
    np.testing.assert_array_equal(plumes.Movie(str(path), source=(0, 0)).frames, SECRET)


def test_zarr_entries_linked_out_of_the_store_are_refused_unless_opted_in(tmp_path):
    store = zoo_store(tmp_path / "movie.zarr", FRAMES)
    chunk = os.path.join(store, "concentration", "0.0.0")
    outside = tmp_path / "outside.bin"
    os.replace(chunk, outside)
    os.symlink(outside, chunk)
    with pytest.raises(ValidationError, match=r"Movie.frames: got the Zarr store .*movie.zarr', whose entry "
                                              r"'concentration/0.0.0' is a symbolic link to .*outside.bin', outside the "
                                              r"store; expected .*allow_external=True"):
        plumes.Movie(store, source=(0, 0))
    np.testing.assert_array_equal(plumes.Movie(store, source=(0, 0), allow_external=True).frames, FRAMES)
    os.unlink(chunk)  # a link that stays inside the store is the store's own bytes
    os.replace(outside, os.path.join(store, "concentration", "kept"))
    os.symlink("kept", chunk)
    np.testing.assert_array_equal(plumes.Movie(store, source=(0, 0)).frames, FRAMES)


def test_a_fifo_in_a_zarr_store_is_refused_even_opted_in(tmp_path):
    store = zoo_store(tmp_path / "movie.zarr", FRAMES)
    chunk = os.path.join(store, "concentration", "0.0.0")
    os.unlink(chunk)
    os.mkfifo(chunk)
    outcome = []

    def load():
        try:
            plumes.Movie(store, source=(0, 0), allow_external=True)
        except ValidationError as exc:
            outcome.append(str(exc))

    worker = threading.Thread(target=load, daemon=True)  # reading the FIFO would block it for good
    worker.start()
    worker.join(60)
    assert outcome and "'concentration/0.0.0' is a FIFO" in outcome[0], outcome


def test_a_scenario_file_never_opts_in(tmp_path):
    path = tmp_path / "movie.npy"
    np.save(path, FRAMES)
    scenario = Scenario(plume=plumes.Movie(str(path), source=(1, 1)))
    meta = json.loads(save_scenario(scenario, tmp_path / "s.json").read_text())
    assert "allow_external" not in meta["plume"]
    assert load_scenario(tmp_path / "s.json") == scenario
    meta["plume"]["allow_external"] = True
    with pytest.raises(ValidationError, match=r"Movie.allow_external: got True; expected the key left out of a "
                                              r"scenario file"):
        scenario_from_metadata(meta)
    opted = Scenario(plume=plumes.Movie(str(path), source=(1, 1), allow_external=True))
    with pytest.raises(ValidationError, match="save_scenario: Movie.allow_external: a movie read with "
                                              "allow_external=True cannot be written to JSON"):
        save_scenario(opted, tmp_path / "opted.json")
    assert not (tmp_path / "opted.json").exists()
    with pytest.raises(ValidationError, match="Movie.allow_external: got 1"):
        plumes.Movie(str(path), source=(1, 1), allow_external=1)
