"""MkDocs hook: the capability table of docs/capabilities.md, written at build time from the
package's own declarations (``plume_multi.capabilities().to_markdown()``), so the page always shows
what the code being documented supports."""

from __future__ import annotations

MARKER = "<!-- capability table: written at build time by docs/hooks/capabilities.py -->"


def on_page_markdown(markdown, page, config, files):
    if MARKER not in markdown:
        return markdown
    from plume_multi import capabilities

    return markdown.replace(MARKER, capabilities().to_markdown())
