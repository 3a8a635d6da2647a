"""The docs' figure scripts (docs/plume_statistics.py, docs/task_statistics.py) as modules for the tests."""

import importlib.util
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def load(name: str):
    """``docs/<name>.py`` imported as ``<name>_script`` (its dataclasses look their module up)."""
    spec = importlib.util.spec_from_file_location(f"{name}_script", DOCS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
