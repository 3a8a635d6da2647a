"""One renderer for every front-end.

``render_frame`` draws a plain-NumPy RGB frame: the field as a perceptually uniform heat map
(viridis), the source and every agent marked so they stay visible at any grid size, with y drawn
upward (UP moves up on screen). ``HumanWindow`` shows frames in one matplotlib window
(matplotlib is the optional ``viz`` extra).
"""

from __future__ import annotations

import numpy as np

from .errors import RenderingError

__all__ = ["render_frame", "HumanWindow", "agent_colours"]

# viridis, sampled at 9 points; interpolated to a 256-entry table once at import.
_VIRIDIS_ANCHORS = np.array([
    [68, 1, 84], [71, 44, 122], [59, 81, 139], [44, 113, 142], [33, 144, 141],
    [39, 173, 129], [92, 200, 99], [170, 220, 50], [253, 231, 37],
], dtype=np.float64)
_LUT = np.stack([
    np.interp(np.linspace(0, 1, 256), np.linspace(0, 1, len(_VIRIDIS_ANCHORS)), _VIRIDIS_ANCHORS[:, c])
    for c in range(3)
], axis=1).round().astype(np.uint8)

SOURCE_COLOUR = np.array([255, 40, 40], dtype=np.uint8)
FINISHED_COLOUR = np.array([255, 255, 255], dtype=np.uint8)


def agent_colours(n: int) -> np.ndarray:
    """``(n, 3)`` uint8 distinct, bright colours (golden-ratio hues)."""
    hues = (np.arange(n) * 0.618033988749895) % 1.0
    h6 = hues * 6.0
    c = np.stack([np.abs(h6 - 3) - 1, 2 - np.abs(h6 - 2), 2 - np.abs(h6 - 4)], axis=1)
    rgb = np.clip(c, 0, 1) * 0.75 + 0.25
    return (rgb * 255).round().astype(np.uint8)


def _marker_radius(w: int, h: int) -> int:
    return max(1, min(w, h) // 48)


def _stamp(frame, x, y, colour, radius, cross=False):
    """Draw a filled square (or a cross) centred on cell (x, y); y upward."""
    h, w = frame.shape[:2]
    row = h - 1 - y
    if cross:
        frame[max(row - radius, 0):row + radius + 1, x] = colour
        frame[row, max(x - radius, 0):x + radius + 1] = colour
    else:
        frame[max(row - radius, 0):row + radius + 1, max(x - radius, 0):x + radius + 1] = colour


def render_frame(field: np.ndarray, positions=None, *, source=None, active=None) -> np.ndarray:
    """An RGB picture of a world, one pixel per cell.

    Args:
        field: ``(H, W)`` float in [0, 1], indexed ``[y, x]``.
        positions: ``(M, 2)`` int cells ``(x, y)`` of the agents to draw (or None).
        source: ``(x, y)`` of the source, drawn as a red cross (or None).
        active: ``(M,)`` bool; agents not active (finished) are drawn white.

    Returns:
        ``(H, W, 3)`` uint8, row 0 at the top (the largest y).
    """
    field = np.asarray(field)
    h, w = field.shape
    idx = np.clip(field[::-1] * 255.0, 0, 255).astype(np.uint8)
    frame = _LUT[idx]
    r = _marker_radius(w, h)
    if source is not None:
        _stamp(frame, int(source[0]), int(source[1]), SOURCE_COLOUR, r + 1, cross=True)
    if positions is not None:
        positions = np.asarray(positions)
        colours = agent_colours(len(positions))
        for k, (x, y) in enumerate(positions):
            finished = active is not None and not active[k]
            _stamp(frame, int(x), int(y), FINISHED_COLOUR if finished else colours[k], r)
    return frame


class HumanWindow:
    """One matplotlib window, updated in place with each frame."""

    def __init__(self, title: str = "plume_multi", fps: int = 30):
        try:
            import matplotlib.pyplot as plt
        except ImportError as exc:
            raise RenderingError(
                "render_mode='human' needs matplotlib: pip install 'plume-multi[viz]' (or pip install matplotlib)"
            ) from exc
        self._plt = plt
        self._title = title
        self._pause = 1.0 / fps
        self._fig = None
        self._image = None

    def show(self, frame: np.ndarray) -> None:
        plt = self._plt
        if self._fig is None or not plt.fignum_exists(self._fig.number):
            self._fig, ax = plt.subplots()
            ax.set_title(self._title)
            ax.set_axis_off()
            self._image = ax.imshow(frame, interpolation="nearest")
            plt.show(block=False)
        else:
            self._image.set_data(frame)
        self._fig.canvas.draw_idle()
        plt.pause(self._pause)

    def close(self) -> None:
        if self._fig is not None:
            try:
                self._plt.close(self._fig)
            except Exception:  # closing a window must never raise
                pass
            self._fig = None
