"""A dependency-free progress line on stderr, for long runs."""

from __future__ import annotations

import sys
import time


class Progress:
    """``with Progress(total, "search") as p: p.update(k, "found 3/64")``.

    On a terminal the line is redrawn in place (at most 10 times a second); otherwise a line is
    printed every 10 % so logs stay short. ``enabled=False`` prints nothing.
    """

    def __init__(self, total: int, label: str = "", *, enabled: bool = True, stream=None):
        self.total = max(int(total), 1)
        self.label = label
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self._tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._last_draw = 0.0
        self._last_decile = -1
        self._start = time.perf_counter()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.enabled and self._tty:
            self.stream.write("\n")
            self.stream.flush()

    def update(self, done: int, note: str = "") -> None:
        if not self.enabled:
            return
        frac = min(done / self.total, 1.0)
        now = time.perf_counter()
        if self._tty:
            if now - self._last_draw < 0.1 and done < self.total:
                return
            self._last_draw = now
            bar = "#" * int(frac * 30)
            self.stream.write(f"\r{self.label} [{bar:<30}] {done}/{self.total} {note}  ")
        else:
            decile = int(frac * 10)
            if decile == self._last_decile:
                return
            self._last_decile = decile
            self.stream.write(f"{self.label}: {done}/{self.total} ({now - self._start:.1f} s) {note}\n")
        self.stream.flush()
