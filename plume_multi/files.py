"""Every path the package reads is checked and opened here, and every file it writes is written here.

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

A file is written whole or not at all (``writing``, ``write_text``): into a temporary file beside
it, then moved into place, so a reader never sees half of it and a kill leaves the old file (or
none). A path that cannot be written (a folder, a FIFO, a path through a file, a folder that cannot
be made) is refused with a ``ValidationError`` before anything is written.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import uuid
from pathlib import Path

from .checks import shown
from .errors import ValidationError

__all__ = ["check_path", "check_file", "check_folder", "kind_of", "is_file", "open_file", "open_text", "read_bytes", "read_text",
           "check_output", "outputs", "writing", "write_text"]

# what the refusals say a path is, by the kind of its inode
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe), which would wait for another process"),
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


def kind_of(mode: int) -> str:
    """What a file of ``stat`` mode ``mode`` is, in words ("a folder", "a FIFO ...")."""
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def check_file(path, owner: str, expected: str = "the path of a readable file") -> Path:
    """``path`` as a ``Path`` when it names an existing regular file (through links); else a
    ``ValidationError`` saying what it names instead. Opens nothing."""
    p = check_path(path, owner, expected)
    mode = _stat(p, owner, expected).st_mode
    if not stat.S_ISREG(mode):
        _refuse(owner, p, f"is {kind_of(mode)}", expected)
    return p


def check_folder(path, owner: str, expected: str = "the path of a folder") -> Path:
    """``path`` as a ``Path`` when it names an existing folder; else a ``ValidationError``."""
    p = check_path(path, owner, expected)
    mode = _stat(p, owner, expected).st_mode
    if not stat.S_ISDIR(mode):
        _refuse(owner, p, "is a regular file" if stat.S_ISREG(mode) else f"is {kind_of(mode)}", expected)
    return p


def is_file(path) -> bool:
    """Whether ``path`` is a usable name of an existing regular file; never raises."""
    try:
        check_file(path, "path")
    except ValidationError:
        return False
    return True


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
            _refuse(owner, p, f"is {kind_of(mode)}", expected)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def open_text(path, owner: str, expected: str = "the path of a readable UTF-8 text file", newline=None):
    """A text file object (UTF-8, ``newline`` as for ``open``) of the regular file ``path``
    (``open_file``); bytes that are not UTF-8 raise ``UnicodeDecodeError`` as they are read."""
    return io.TextIOWrapper(open_file(path, owner, expected), encoding="utf-8", newline=newline)


def read_bytes(path, owner: str, expected: str = "the path of a readable file", limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path`` (``open_file``); with ``limit``, a file larger than
    ``limit`` bytes is refused before it is read."""
    with open_file(path, owner, expected) as f:
        if limit is not None:
            size = os.fstat(f.fileno()).st_size
            if size > limit:
                _refuse(owner, path, f"holds {size} bytes", f"{expected}, of at most {limit} bytes")
            data = f.read(size + 1)  # not f.read(limit + 1): that allocates the limit first
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


# ----------------------------------------------------------------------------- writing
def check_output(path, owner: str, expected: str = "the path of a file to write", *, parents: bool = True) -> Path:
    """``path`` as a ``Path`` when a file can be written there: not an existing folder, FIFO or
    device, in a folder that exists (made, with ``parents``, when it is missing). A
    ``ValidationError`` naming ``owner`` otherwise, before anything is written."""
    p = check_path(path, owner, expected)
    if p.name in ("", ".", ".."):
        _refuse(owner, p, "names a folder, not a file", expected)
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        _refuse(owner, p, _ERRNO.get(exc.errno, f"cannot be written: {exc.strerror or exc}"), expected)
    if mode is not None and not stat.S_ISREG(mode):
        _refuse(owner, p, f"is {kind_of(mode)}", expected)
    folder = p.parent
    try:
        if parents:
            folder.mkdir(parents=True, exist_ok=True)
        elif not folder.is_dir():
            _refuse(owner, p, f"is in the folder {shown(str(folder), 120)}, which does not exist", expected)
    except FileExistsError:
        _refuse(owner, p, "goes through a file as if a folder", expected)
    except OSError as exc:
        _refuse(owner, p, "goes through a file as if a folder" if exc.errno == errno.ENOTDIR else
                f"cannot be written: its folder cannot be made ({exc.strerror or exc})", expected)
    return p


def outputs(prefix, suffixes, owner: str, expected: str = "a path prefix (PREFIX.csv, ... are written)") -> list:
    """The paths ``PREFIX + suffix`` for each of ``suffixes``, each checked by ``check_output``
    (missing folders made), before anything is written; the prefix must end in a file name."""
    p = check_path(prefix, owner, expected)
    if p.name in ("", ".", ".."):
        _refuse(owner, prefix, "names a folder, not a file name to extend", expected)
    return [check_output(p.with_name(p.name + suffix), owner, expected) for suffix in suffixes]


@contextlib.contextmanager
def writing(path, owner: str, expected: str = "the path of a file to write", *, text: bool = True,
            newline=None, parents: bool = True):
    """``with writing(path, owner) as f: ...`` writes ``path`` whole or not at all: ``f`` is a
    temporary file beside it (UTF-8 text, or binary without ``text``), moved into place when the
    block ends without an error. Yields the file; the path is ``check_output``'s."""
    p = check_output(path, owner, expected, parents=parents)
    tmp = p.parent / f".{p.name[:100]}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp"
    try:  # the mode a plain open would give (mkstemp's is 0600)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
                     | getattr(os, "O_BINARY", 0), 0o666)
    except OSError as exc:
        _refuse(owner, p, f"cannot be written ({exc.strerror or exc})", expected)
    try:
        with (open(fd, "w", encoding="utf-8", newline=newline) if text else open(fd, "wb")) as f:
            yield f
        os.replace(tmp, p)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        _refuse(owner, p, f"cannot be written ({exc.strerror or exc})", expected)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text(path, text: str, owner: str, expected: str = "the path of a file to write", *,
               parents: bool = True) -> Path:
    """Write ``text`` (UTF-8) to ``path``, whole or not at all (``writing``); returns the path."""
    with writing(path, owner, expected, parents=parents) as f:
        f.write(text)
    return Path(path)
