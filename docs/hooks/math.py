"""MkDocs hook: typeset the pages' formulas at build time, as MathML.

`pymdownx.arithmatex` (generic mode) marks every formula of a page, ``\\(...\\)`` inline and
``\\[...\\]`` on its own lines, as ``<span class="arithmatex">`` / ``<div class="arithmatex">``
holding the TeX. This hook replaces each with the MathML that `latex2mathml` makes of it, which
browsers typeset natively: the built site needs no script and no network to show its equations
(MathJax from a CDN showed raw TeX offline). A formula that does not convert fails the build,
naming the page and the TeX, so raw TeX never reaches a reader.
"""

from __future__ import annotations

import html
import re

from latex2mathml.converter import convert

# the TeX of one formula, HTML-escaped by Markdown; arithmatex wraps it in \( \) or \[ \]
_FORMULA = re.compile(r'<(span|div) class="arithmatex">\s*\\([(\[])(.*?)\\[)\]]\s*</\1>', re.S)


# latex2mathml passes a command it does not know through as text (<mi>\foo</mi>): that is raw TeX too
_UNKNOWN_COMMAND = re.compile(r">(\\[A-Za-z]+)<")


def typeset(tex: str, display: bool) -> str:
    """``<math>`` markup of one TeX formula (``display``: a block of its own)."""
    math = convert(tex.strip(), display="block" if display else "inline")
    unknown = _UNKNOWN_COMMAND.search(math)
    if unknown:
        raise ValueError(f"latex2mathml does not know the command {unknown.group(1)}")
    return math


def typeset_page(content: str, where: str) -> str:
    """``content`` (a page's HTML) with every arithmatex formula replaced by MathML."""

    def replace(match: re.Match) -> str:
        tag, opening, tex = match.group(1), match.group(2), html.unescape(match.group(3))
        try:
            math = typeset(tex, display=opening == "[")
        except Exception as error:  # latex2mathml raises several types; all mean "cannot typeset"
            raise ValueError(f"{where}: cannot typeset the formula {tex!r} as MathML: {error}") from error
        return f'<{tag} class="formula">{math}</{tag}>'

    return _FORMULA.sub(replace, content)


def on_page_content(html_content: str, page, config, files) -> str:
    return typeset_page(html_content, page.file.src_uri)
