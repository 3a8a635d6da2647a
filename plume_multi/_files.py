"""Files written whole or not at all: a temporary file beside the target, then one rename."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["atomic_output"]


@contextlib.contextmanager
def atomic_output(path, mode: str = "wb"):
    """Open a temporary file in ``path``'s folder for writing (``mode`` ``"wb"`` or ``"w"``); when
    the block ends without an error, flush it to disk and rename it onto ``path`` (one atomic step
    on POSIX and Windows), else remove it. A process killed meanwhile leaves ``path`` as it was
    (its earlier version, or nothing) and at most a ``.PATH.*.tmp`` file beside it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, mode, **({} if "b" in mode else {"encoding": "utf-8", "newline": ""})) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
