"""The pages' code blocks, found and run: what ``tests/test_docs.py`` runs under pytest, and what
``make test`` runs first in the environment ``make demo`` builds, without pytest (so a README block
that needs a package only the tests install fails there)::

    python tests/docs_blocks.py README.md [PAGE.md ...]

Each Python block runs as a script in a fresh temporary folder (see ``tests/test_docs.py`` for the
``docs-test`` marks and the checked ``print(...)  # value`` lines); the command prints one line per
block and exits 1 if any failed.
"""

from __future__ import annotations

import os
import re
import runpy
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)
MARK = re.compile(r"<!--\s*docs-test:\s*([^<>]*?)\s*-->\s*\Z")
LANGUAGES = {"python", "bash", "text", ""}  # the fences the pages may use


@dataclass
class Block:
    page: Path
    line: int
    language: str
    code: str
    replacements: list[tuple[str, str]] = field(default_factory=list)
    skip: str | None = None

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[:match.start()]
        block = Block(page, before.count("\n") + 1, match.group(1).strip(), match.group(2))
        mark = MARK.search(before.rstrip())
        if mark:
            directive = mark.group(1)
            if directive.startswith("skip:"):
                block.skip = directive[len("skip:"):].strip()
            elif directive.startswith("replace "):
                words = shlex.split(directive[len("replace "):])
                if len(words) % 2:
                    raise ValueError(f"{block.id}: docs-test replace needs pairs of strings, got {words}")
                block.replacements = list(zip(words[::2], words[1::2]))
            else:
                raise ValueError(f"{block.id}: unknown docs-test directive {directive!r}")
        found.append(block)
    return found


PRINTED = re.compile(r"^(\s*)print\((.+)\)\s*#\s*(.+?)\s*$")


def _literal(comment: str):
    """The Python literal a comment states (whole, or before ': ' / '; '), or raise ValueError."""
    import ast

    for text in (comment, *(comment.split(mark, 1)[0] for mark in (": ", "; ") if mark in comment)):
        try:
            return ast.literal_eval(text.strip())
        except (ValueError, SyntaxError):
            continue
    raise ValueError(comment)


def checked_prints(code: str) -> str:
    """``code`` with each ``print(expr)  # literal`` turned into an assertion of that value."""
    lines = []
    for line in code.splitlines():
        match = PRINTED.match(line)
        if match:
            indent, expr, comment = match.groups()
            try:
                value = _literal(comment)
            except ValueError:
                lines.append(line)
                continue
            message = f"the page says print({expr}) shows {value!r}; it shows "
            line = f"{indent}assert ({expr}) == {value!r}, {message!r} + repr({expr})"
        lines.append(line)
    return "\n".join(lines) + "\n"




def prepared(block: Block) -> str:
    """The code that runs for ``block``: its replacements made (each must occur), its checked
    prints turned into assertions."""
    code = block.code
    for old, new in block.replacements:
        if old not in code:
            raise ValueError(f"{block.id}: the docs-test mark replaces {old!r}, which the block no longer contains")
        code = code.replace(old, new)
    return checked_prints(code)


def run_block(block: Block, folder: Path) -> None:
    """Run ``block`` as a reader runs it: a script (a module with a source file) in ``folder``,
    the current folder while it runs; the Gymnasium ids and tasks a page registers are removed after."""
    import gymnasium

    from plume_multi.tasks import registry

    script = folder / "block.py"
    script.write_text(prepared(block), encoding="utf-8")
    tasks_before, ids_before = dict(registry._load()), set(gymnasium.registry)
    cwd = os.getcwd()
    os.chdir(folder)
    # Stable-Baselines3 makes a log folder in the system's temporary folder at every `learn()`
    # unless SB3_LOGDIR names one: the block's own folder, removed with it
    own_logdir = "SB3_LOGDIR" not in os.environ
    if own_logdir:
        os.environ["SB3_LOGDIR"] = str(folder / "sb3-logs")
    try:
        runpy.run_path(str(script), run_name="__docs__")
    finally:  # a page's own task (the benchmark page registers one) stays on that page
        if own_logdir:
            os.environ.pop("SB3_LOGDIR", None)
        os.chdir(cwd)
        registry._TASKS.clear()
        registry._TASKS.update(tasks_before)
        for env_id in set(gymnasium.registry) - ids_before:
            del gymnasium.registry[env_id]


def main(argv=None) -> int:
    import tempfile
    import time
    import traceback

    pages = [Path(p).resolve() for p in (sys.argv[1:] if argv is None else argv)] or [ROOT / "README.md"]
    failed = 0
    for page in pages:
        for block in blocks(page):
            if block.language != "python" or block.skip is not None:
                continue
            start = time.perf_counter()
            with tempfile.TemporaryDirectory(prefix="docs-block-") as folder:
                try:
                    run_block(block, Path(folder))
                except Exception:
                    failed += 1
                    print(f"FAILED {block.id}\n{traceback.format_exc()}", flush=True)
                    continue
            print(f"ok {block.id} ({time.perf_counter() - start:.1f} s)", flush=True)
    print(f"{failed} failed" if failed else "every block ran")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
