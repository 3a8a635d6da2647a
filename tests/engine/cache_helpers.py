"""Helpers of the cache's tests."""

from __future__ import annotations

import os
from pathlib import Path


def written_before(path: Path, seconds: float = 60.0) -> None:
    """Date ``path`` ``seconds`` back. The cache trusts a source only when it was written before
    the process started (a process runs the source it imported, which a later edit is not), with a
    margin for the clocks: a file written an instant before a process starts is compiled, never
    cached, in that process."""
    then = os.stat(path).st_mtime - seconds
    os.utime(path, (then, then))
