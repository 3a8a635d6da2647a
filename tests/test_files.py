"""The one checked opener (plume_multi/files.py): every kind of path that is not a readable
regular file is refused with our error, before anything blocks on it; and every reader of the
package goes through it (issue 32, item 9: ``load_scenario`` and ``plume-multi render --scenario``
of a FIFO hung)."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from plume_multi import files, plumes
from plume_multi.cli import UsageError
from plume_multi.errors import PlumeError, ValidationError


def hostile_paths(folder, suffix: str = ".json") -> dict:
    """``{what: path}``: every kind of path a reader must refuse, named ``*suffix`` (in ``folder``)."""
    folder.mkdir(parents=True, exist_ok=True)
    fifo = folder / f"pipe{suffix}"
    os.mkfifo(fifo)
    (folder / f"a folder{suffix}").mkdir()
    os.symlink(folder / f"nowhere{suffix}", folder / f"dangling{suffix}")
    os.symlink(folder / f"loop_b{suffix}", folder / f"loop_a{suffix}")
    os.symlink(folder / f"loop_a{suffix}", folder / f"loop_b{suffix}")
    (folder / "plain").write_text("x")
    os.symlink("/dev/zero", folder / f"device{suffix}")
    return {"a FIFO": str(fifo), "a folder": str(folder / f"a folder{suffix}"),
            "a dangling symbolic link": str(folder / f"dangling{suffix}"),
            "a loop of symbolic links": str(folder / f"loop_a{suffix}"), "a missing file": str(folder / f"missing{suffix}"),
            "a NUL in the name": str(folder / f"a\0b{suffix}"), "a 100,000-character name": "x" * 100_000 + suffix,
            "a path through a file": str(folder / "plain" / f"x{suffix}"), "a device": str(folder / f"device{suffix}")}


WHY = {"a FIFO": "FIFO", "a folder": "a folder", "a dangling symbolic link": "symbolic link to a missing file",
       "a loop of symbolic links": "loop of symbolic links", "a missing file": "does not exist",
       "a NUL in the name": "NUL character", "a 100,000-character name": "too long",
       "a path through a file": "through a file", "a device": "character device"}


def test_every_path_that_is_not_a_regular_file_is_refused_saying_what_it_is(tmp_path):
    for what, path in hostile_paths(tmp_path).items():
        with pytest.raises(ValidationError) as err:
            files.read_bytes(path, "reader")
        message = str(err.value)
        assert message.startswith("reader: got ") and WHY[what] in message, (what, message)
        assert len(message) < 400, what


def test_what_is_not_a_path_is_refused_by_type():
    for value in (None, 5, b"x.json", ["x.json"]):
        with pytest.raises(ValidationError, match=r"reader: got .*\((NoneType|int|bytes|list)\); expected .*str or "):
            files.read_text(value, "reader")
    with pytest.raises(ValidationError, match="an empty path"):
        files.open_file("", "reader")


def test_a_regular_file_reads_and_a_limit_or_bad_text_is_refused(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(b"hello")
    assert files.read_bytes(path, "reader") == b"hello" and files.read_text(str(path), "reader") == "hello"
    with pytest.raises(ValidationError, match="holds 5 bytes; expected .* at most 4 bytes"):
        files.read_bytes(path, "reader", limit=4)
    path.write_bytes(b"ok\xff")
    with pytest.raises(ValidationError, match=r"is not UTF-8 text \(byte 2"):
        files.read_text(path, "reader")
    assert files.check_folder(tmp_path, "reader") == tmp_path
    with pytest.raises(ValidationError, match="is a regular file"):
        files.check_folder(path, "reader")



def test_a_write_is_whole_or_not_at_all(tmp_path):
    path = tmp_path / "out.csv"
    files.write_text(path, "old\n", "writer")
    with pytest.raises(RuntimeError):
        with files.writing(path, "writer") as f:
            f.write("half of the new")
            raise RuntimeError("killed mid-write")
    assert path.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]
    assert files.write_text(tmp_path / "made" / "new.csv", "x", "writer").read_text() == "x"
    with pytest.raises(ValidationError, match="writer: got '.*out.csv/x', which goes through a file as if a folder"):
        files.write_text(path / "x", "x", "writer")

# ----------------------------------------------------------------------------- every reader
def _render(path):
    from plume_multi.cli import main

    return main(["render", "--scenario", path, "--steps", "1", "--quiet", "--no-movie", "--png", "out.png"])


def _import_policy(path):
    from plume_multi.cli.policies import _import_target

    return _import_target(path)


def _load_policy(path):
    pytest.importorskip("torch", reason="the plume-multi[train] extra (part of [test])")
    from plume_multi.training import load_policy

    return load_policy(path)


def _read_rows(path):
    from plume_multi.tasks.table import read_rows

    return read_rows(path)


def _load_scenario(path):
    from plume_multi.scenario import load_scenario

    return load_scenario(path)


# (reader, the suffix its paths have, the kinds of path it may legitimately take: a folder of results
# or a Zarr store is a folder; a device is no .npy)
READERS = {
    "load_scenario": (_load_scenario, ".json", ()),
    "plume-multi render --scenario": (_render, ".json", ()),
    "Movie (.npy)": (lambda p: plumes.Movie(p, source=(0, 0)), ".npy", ()),
    "Movie (.npz)": (lambda p: plumes.Movie(p, source=(0, 0)), ".npz", ()),
    "Movie (HDF5)": (lambda p: plumes.Movie(p, source=(0, 0)), ".h5", ()),
    "Movie (Zarr)": (lambda p: plumes.Movie(p, source=(0, 0)), ".zarr", ("a folder",)),
    "load_policy": (_load_policy, ".pt", ()),
    "a policy's .py file (--policy)": (_import_policy, ".py", ()),
    "results (benchmark table)": (_read_rows, ".csv", ("a folder",)),
}


def _outcome(reader, path):
    """What ``reader(path)`` did, within a thread that a blocking open would leave waiting."""
    done = []

    def call():
        try:
            done.append(("returned", reader(path)))
        except (PlumeError, Exception) as exc:  # noqa: B014  (every failure is looked at below)
            done.append(("raised", exc))

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    worker.join(120)
    return done[0] if done else ("hung", None)


@pytest.mark.parametrize("reader", sorted(READERS))
def test_every_reader_refuses_every_path_that_is_not_a_regular_file(tmp_path, monkeypatch, capsys, reader):
    monkeypatch.chdir(tmp_path)
    read, suffix, legit = READERS[reader]
    for what, path in hostile_paths(tmp_path / "paths", suffix).items():
        if what in legit:
            continue
        kind, result = _outcome(read, path)
        assert kind != "hung", (reader, what)
        if reader.startswith("plume-multi"):  # the command line: one line on stderr, exit code 2
            err = capsys.readouterr().err
            assert kind == "returned" and result == 2 and WHY[what] in err and err.count("\n") == 1, (what, err)
            continue
        assert kind == "raised" and isinstance(result, (PlumeError, UsageError)), (reader, what, result)
        message = str(result)
        assert WHY[what] in message and len(message) < 600, (reader, what, message)
