"""Captions for movie frames: a strip under the picture with the step counter and a legend of the
markers ``render_frame`` draws (several agent colours for "searching", white for "finished", the
red cross for the source). Drawn with Pillow, which the ``movie`` and ``viz`` extras install.
"""

from __future__ import annotations

import math

import numpy as np

from ..checks import is_int
from ..errors import RenderingError, ValidationError
from .render import FINISHED_COLOUR, SOURCE_COLOUR, agent_colours, check_frame

__all__ = ["annotate_frame", "caption_height"]

PILLOW_EXTRA = "pip install 'plume-multi[movie]' (or pip install pillow)"


def _integer(name: str, value, low: int) -> int:
    if not is_int(value) or value < low:
        raise ValidationError(f"{name}: got {value!r}; expected an integer >= {low}")
    return int(value)


CAPTION_BACKGROUND = (24, 24, 24)
CAPTION_TEXT = (235, 235, 235)


def _font(size: int):
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)  # Pillow >= 10.1 with FreeType: a scalable font
    except TypeError:  # older Pillow: the fixed bitmap font
        return ImageFont.load_default()


def annotate_frame(frame, *, step=None, last_step=None, searching=None, finished=None,
                   source: bool = True) -> np.ndarray:
    """``frame`` with a caption strip added below it: the step counter and a legend of the markers.

    The strip reads, e.g., ``step 37 / 120   ■ searching (12)   ■ finished (4)   + source``, in
    the colours ``render_frame`` draws (several agent colours for "searching", white for
    "finished", the red cross for the source); items that do not fit the width go on a second line.

    Args:
        frame: ``(H, W, 3)`` uint8, e.g. from ``render_frame`` or an env's ``render()``.
        step: the step shown (an int >= 0), or None for no counter.
        last_step: the last step of the recording (shown as ``step / last_step``), or None.
        searching: how many agents are still searching (shown in the legend), or None.
        finished: how many have finished, or None (then "finished" is listed without a count).
        source: list the source's marker in the legend.

    Returns:
        a new ``(H + caption_height(W), W, 3)`` uint8 array, the frame on top and the caption
        below (its height depends only on ``W``, so every frame of a movie gets the same size).

    Raises:
        ValidationError: a frame that is not ``(H, W, 3)`` uint8, a negative or non-integer count,
            ``step`` beyond ``last_step``.
        RenderingError: Pillow (installed with the ``movie`` and ``viz`` extras) is missing.
    """
    frame = check_frame(frame)
    if step is not None:
        step = _integer("step", step, low=0)
    if last_step is not None:
        last_step = _integer("last_step", last_step, low=0)
        if step is not None and step > last_step:
            raise ValidationError(f"step: got {step}; expected 0 <= step <= last_step ({last_step})")
    for name, value in (("searching", searching), ("finished", finished)):
        if value is not None:
            _integer(name, value, low=0)
    try:
        from PIL import Image, ImageDraw
    except ImportError as exc:
        raise RenderingError(f"captions need Pillow: {PILLOW_EXTRA}") from exc

    width = frame.shape[1]
    size, pad, gap, box, font, measure = _caption_metrics(width)

    # each item: (label, swatch colours or None, draw the source cross?)
    items = []
    if step is not None:
        items.append((f"step {step}" + ("" if last_step is None else f" / {last_step}"), None, False))
    items.append(("searching" + ("" if searching is None else f" ({searching})"),
                  [tuple(int(v) for v in c) for c in agent_colours(3)], False))
    items.append(("finished" + ("" if finished is None else f" ({finished})"), [tuple(FINISHED_COLOUR.tolist())], False))
    if source:
        items.append(("source", None, True))

    def item_width(label, swatch, cross):
        marks = (len(swatch) * (box + 1) + pad) if swatch else (box + pad if cross else 0)
        return marks + int(math.ceil(measure(label, font=font)))

    # lay the items out in lines of at most `width` pixels
    lines, line, used = [], [], pad
    for item in items:
        w_item = item_width(*item)
        if line and used + w_item > width - pad:
            lines.append(line)
            line, used = [], pad
        line.append(item)
        used += w_item + gap
    lines.append(line)
    line_h = size + 2 * pad
    strip = Image.new("RGB", (width, max(len(lines) * line_h, caption_height(width))), CAPTION_BACKGROUND)
    draw = ImageDraw.Draw(strip)
    for k, line in enumerate(lines):
        x, top = pad, k * line_h + pad
        for label, swatch, cross in line:
            if swatch:
                for colour in swatch:
                    draw.rectangle((x, top + 1, x + box - 1, top + box), fill=colour)
                    x += box + 1
                x += pad - 1
            elif cross:
                mid_x, mid_y = x + box // 2, top + 1 + box // 2
                colour = tuple(int(v) for v in SOURCE_COLOUR)
                draw.line((x, mid_y, x + box - 1, mid_y), fill=colour, width=max(1, box // 6))
                draw.line((mid_x, top + 1, mid_x, top + box), fill=colour, width=max(1, box // 6))
                x += box + pad
            draw.text((x, top), label, fill=CAPTION_TEXT, font=font)
            x += int(math.ceil(measure(label, font=font))) + gap
    return np.concatenate([frame, np.asarray(strip, dtype=np.uint8)], axis=0)


def _caption_metrics(width: int):
    from PIL import Image, ImageDraw

    size = int(min(18, max(9, width // 32)))  # font height in pixels, readable at 256..1024 pixels wide
    pad = max(3, size // 3)
    measure = ImageDraw.Draw(Image.new("RGB", (1, 1))).textlength
    return size, pad, size, size - 2, _font(size), measure


def caption_height(width: int) -> int:
    """Height in pixels of the strip ``annotate_frame`` adds under a frame ``width`` pixels wide.

    It fits the longest caption (six-digit step and counts), so every frame of a movie, whatever
    its step and counts, gets the same height.
    """
    width = _integer("width", width, low=1)
    size, pad, gap, box, font, measure = _caption_metrics(width)
    widths = [int(math.ceil(measure("step 000000 / 000000", font=font))),
              3 * (box + 1) + pad + int(math.ceil(measure("searching (000000)", font=font))),
              box + 1 + pad + int(math.ceil(measure("finished (000000)", font=font))),
              box + pad + int(math.ceil(measure("source", font=font)))]
    lines, used = 1, pad
    for w_item in widths:
        if used > pad and used + w_item > width - pad:
            lines, used = lines + 1, pad
        used += w_item + gap
    return lines * (size + 2 * pad)
