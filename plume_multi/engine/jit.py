"""``njit`` for every kernel of the package: Numba's, with a cache that is never stale and never
fails to import.

Numba keys a cached function on its own source file only. A kernel that calls (or inlines) a
function from another file keeps running the old code after that file changes. So every compiled
function of plume_multi is cached under ``<cache root>/<numba version>-<hash of the package's compiled
source>/`` (every file that uses ``njit``): editing any of them starts a fresh cache, and two checkouts of different
versions never overwrite each other's.

The cache root, first that is writable: ``$PLUME_MULTI_CACHE_DIR``; ``$NUMBA_CACHE_DIR/plume_multi``;
``$XDG_CACHE_HOME/plume_multi`` (default ``~/.cache/plume_multi``); a new temporary folder. If none
is (a read-only container), caching is off, with one warning: kernels then compile in each process.
Generated step drivers (``assemble.py``) are written under the same folder.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import warnings
from pathlib import Path

import numba
from numba.core import caching

__all__ = ["njit", "CACHE_DIR", "CACHING", "PACKAGE_DIR", "SOURCE_HASH"]

PACKAGE_DIR = Path(__file__).resolve().parent.parent


def _source_hash() -> str:
    digest = hashlib.sha1()
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        text = path.read_bytes()
        if b"njit" in text:  # only files with compiled code can make a cached kernel stale
            digest.update(str(path.relative_to(PACKAGE_DIR)).encode())
            digest.update(text)
    return digest.hexdigest()[:16]


SOURCE_HASH = _source_hash()


def _writable(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
        return True
    except OSError:
        return False


def _choose_cache_dir() -> Path | None:
    roots = []
    if os.environ.get("PLUME_MULTI_CACHE_DIR"):
        roots.append(Path(os.environ["PLUME_MULTI_CACHE_DIR"]))
    if os.environ.get("NUMBA_CACHE_DIR"):
        roots.append(Path(os.environ["NUMBA_CACHE_DIR"]) / "plume_multi")
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    roots.append(Path(xdg) / "plume_multi")
    version = f"numba{numba.__version__}-py{sys.version_info[0]}{sys.version_info[1]}-{SOURCE_HASH}"
    for root in roots:
        if _writable(root / version):
            return root / version
    try:
        tmp = Path(tempfile.mkdtemp(prefix="plume_multi-cache-"))
    except OSError:
        tmp = None
    if tmp is not None and _writable(tmp):
        warnings.warn(f"plume_multi: no writable cache folder (tried {', '.join(map(str, roots))}); "
                      f"compiled kernels are cached in {tmp} for this process only. Set "
                      "PLUME_MULTI_CACHE_DIR to a writable folder to keep them.", RuntimeWarning, stacklevel=2)
        return tmp
    warnings.warn("plume_multi: no writable folder for Numba's cache; kernels compile in every process. "
                  "Set PLUME_MULTI_CACHE_DIR to a writable folder.", RuntimeWarning, stacklevel=2)
    return None


CACHE_DIR = _choose_cache_dir()
CACHING = CACHE_DIR is not None


class _PackageCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """Numba cache locator for plume_multi's files and its generated drivers: ``CACHE_DIR/<subpath>``."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        path = Path(py_file).resolve()
        try:
            sub = path.parent.relative_to(PACKAGE_DIR)
        except ValueError:
            sub = Path("drivers")
        self._cache_path = str(CACHE_DIR / "numba" / sub)

    def get_cache_path(self):
        return self._cache_path

    @classmethod
    def from_function(cls, py_func, py_file):
        if CACHE_DIR is None or not os.path.exists(py_file):
            return None
        path = Path(py_file).resolve()
        if PACKAGE_DIR not in path.parents and CACHE_DIR not in path.parents:
            return None
        return super().from_function(py_func, py_file)


_IMPL = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # renamed in Numba 0.61
if _PackageCacheLocator not in _IMPL._locator_classes:
    _IMPL._locator_classes.insert(0, _PackageCacheLocator)


def njit(*args, **kwargs):
    """``numba.njit`` with ``cache=True`` unless no cache folder is writable (see the module doc)."""
    kwargs["cache"] = CACHING and kwargs.get("cache", True)
    return numba.njit(*args, **kwargs)
