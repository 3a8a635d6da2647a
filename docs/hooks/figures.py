"""MkDocs hook: draw the model pages' pictures at build time (docs/figures.py) and serve them as
``figures/<family>/<Model>.png``, so every picture shows the models of the code being documented."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from mkdocs.structure.files import File


def _figures_module(docs_dir: str):
    path = Path(docs_dir) / "figures.py"
    spec = importlib.util.spec_from_file_location("plume_multi_docs_figures", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def on_files(files, config):
    for path, png in _figures_module(config["docs_dir"]).render_all().items():
        files.append(File.generated(config, path, content=png))
    return files
