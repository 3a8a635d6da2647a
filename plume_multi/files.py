"""Every path the package reads is checked and opened here.

A path a user names (a scenario JSON, a movie file or Zarr store, a saved policy, a results CSV, a
model's ``.py`` file) is read only when it is what it claims to be: an existing regular file (or,
where a folder is expected, a folder). Everything else is refused with a ``ValidationError`` naming
the path, what it is and what was expected, before anything opens it:

* not a path (None, a number), an empty name, a name with a NUL character or too long for the
  system (``ENAMETOOLONG``);
* a missing file, a dangling symbolic link, a loop of links, a path through a file;
* a folder where a file is expected, and a FIFO, a socket or a device anywhere: opening a FIFO
  blocks until some other process writes to it, and a device can be endless.

A file is opened without blocking (``O_NONBLOCK``) and checked again on the open descriptor
(``fstat``), so a path swapped for a FIFO between the check and the open is refused too, never
waited on. ``read_bytes`` and ``read_text`` read at most a stated number of bytes.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from .checks import shown
from .errors import ValidationError

__all__ = ["check_path", "check_file", "check_folder", "open_file", "read_bytes", "read_text"]

# what the refusals say a path is, by the kind of its inode
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe): reading it would wait for a writer"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
_ERRNO = {errno.ENOENT: "does not exist", errno.ELOOP: "is a loop of symbolic links",
          errno.ENAMETOOLONG: "is a name too long for the file system", errno.ENOTDIR: "goes through a file as if a folder",
          errno.EACCES: "cannot be read: permission denied", errno.EPERM: "cannot be read: permission denied"}


def _refuse(owner: str, path, why: str, expected: str):
    raise ValidationError(f"{owner}: got {shown(str(path), 120)}, which {why}; expected {expected}")


def check_path(path, owner: str, expected: str) -> Path:
    """``path`` as a ``Path`` when it is a usable name (a ``str`` or ``os.PathLike`` of text, not
    empty, without NUL); ``ValidationError`` naming ``owner`` otherwise. Touches nothing."""
    if not isinstance(path, (str, os.PathLike)):
        raise ValidationError(f"{owner}: got {shown(path, typed=True)}; expected {expected} (a str or pathlib.Path)")
    try:
        name = os.fspath(path)
    except TypeError:
        name = None
    if not isinstance(name, str):
        raise ValidationError(f"{owner}: got {shown(path, typed=True)}; expected {expected} (a str or pathlib.Path)")
    if not name:
        raise ValidationError(f"{owner}: got an empty path ''; expected {expected}")
    if "\0" in name:
        raise ValidationError(f"{owner}: got {shown(name, 120)}, a path with a NUL character; expected {expected}")
    return Path(name)


def _stat(p: Path, owner: str, expected: str) -> os.stat_result:
    try:
        return os.stat(p)
    except OSError as exc:
        why = _ERRNO.get(exc.errno, f"cannot be read: {exc.strerror or exc}")
        if exc.errno == errno.ENOENT and os.path.islink(p):
            why = "is a symbolic link to a missing file"
        _refuse(owner, p, why, expected)
    except ValueError as exc:  # a name the platform refuses outright
        _refuse(owner, p, f"is not a valid path ({exc})", expected)


def _kind(mode: int) -> str:
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def check_file(path, owner: str, expected: str = "the path of a readable file") -> Path:
    """``path`` as a ``Path`` when it names an existing regular file (through links); else a
    ``ValidationError`` saying what it names instead. Opens nothing."""
    p = check_path(path, owner, expected)
    mode = _stat(p, owner, expected).st_mode
    if not stat.S_ISREG(mode):
        _refuse(owner, p, f"is {_kind(mode)}", expected)
    return p


def check_folder(path, owner: str, expected: str = "the path of a folder") -> Path:
    """``path`` as a ``Path`` when it names an existing folder; else a ``ValidationError``."""
    p = check_path(path, owner, expected)
    mode = _stat(p, owner, expected).st_mode
    if not stat.S_ISDIR(mode):
        _refuse(owner, p, "is a regular file" if stat.S_ISREG(mode) else f"is {_kind(mode)}", expected)
    return p


def open_file(path, owner: str, expected: str = "the path of a readable file"):
    """A binary file object (``"rb"``) of the regular file ``path``: checked (``check_file``),
    opened without blocking and checked again on the open descriptor."""
    p = check_file(path, owner, expected)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0) \
        | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(p, flags)
    except OSError as exc:
        _refuse(owner, p, _ERRNO.get(exc.errno, f"cannot be opened: {exc.strerror or exc}"), expected)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # swapped between the check and the open
            _refuse(owner, p, f"is {_kind(mode)}", expected)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path, owner: str, expected: str = "the path of a readable file", limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path`` (``open_file``); with ``limit``, a file larger than
    ``limit`` bytes is refused before it is read."""
    with open_file(path, owner, expected) as f:
        if limit is not None:
            size = os.fstat(f.fileno()).st_size
            if size > limit:
                _refuse(owner, path, f"holds {size} bytes", f"{expected}, of at most {limit} bytes")
            data = f.read(limit + 1)
            if len(data) > limit:  # grew while read
                _refuse(owner, path, f"holds more than {limit} bytes", f"{expected}, of at most {limit} bytes")
            return data
        return f.read()


def read_text(path, owner: str, expected: str = "the path of a readable UTF-8 text file",
              limit: int | None = None) -> str:
    """The text of the UTF-8 file ``path`` (``read_bytes``); bytes that are not UTF-8 are refused
    naming their position."""
    data = read_bytes(path, owner, expected, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        _refuse(owner, path, f"is not UTF-8 text (byte {exc.start}: {exc.reason})", expected)
