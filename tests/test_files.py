"""The one checked opener (plume_multi/files.py): every kind of path that is not a readable
regular file is refused with our error, before anything blocks on it."""

from __future__ import annotations

import os

import pytest

from plume_multi import files
from plume_multi.errors import ValidationError


def hostile_paths(folder) -> dict:
    """``{what: path}``: every kind of path a reader must refuse (made in ``folder``)."""
    fifo = folder / "pipe.json"
    os.mkfifo(fifo)
    (folder / "a folder.json").mkdir()
    os.symlink(folder / "nowhere.json", folder / "dangling.json")
    os.symlink(folder / "loop_b.json", folder / "loop_a.json")
    os.symlink(folder / "loop_a.json", folder / "loop_b.json")
    (folder / "plain").write_text("x")
    return {"a FIFO": fifo, "a folder": folder / "a folder.json", "a dangling symbolic link": folder / "dangling.json",
            "a loop of symbolic links": folder / "loop_a.json", "a missing file": folder / "missing.json",
            "a NUL in the name": str(folder / "a\0b.json"), "a 100,000-character name": "x" * 100_000 + ".json",
            "a path through a file": folder / "plain" / "x.json", "a device": "/dev/zero"}


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
