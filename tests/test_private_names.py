"""No module of the package imports another module's private (``_name``) names: a helper two
modules share lives, under a public name, in the module where it belongs."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import plume_multi

PACKAGE = Path(plume_multi.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def test_no_module_imports_another_modules_private_names():
    crossings = []
    for path in sorted(PACKAGE.rglob("*.py")):
        here = _module_name(path)
        package = here if path.name == "__init__.py" else here.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            if not source.startswith("plume_multi"):
                continue
            for alias in node.names:
                name = alias.name
                if name.startswith("_") and not name.startswith("__") and not _is_module(f"{source}.{name}"):
                    crossings.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {name} from {source}")
    assert crossings == [], "\n".join(crossings)
