"""``njit`` for every kernel of the package: Numba's, with a cache that is never stale and never
fails to import.

Numba keys a cached function on its own source file only: a kernel that calls (or inlines) a
function from another file would keep running the old code after that file changed. Here every
cached function of plume_multi, and every generated step driver, is keyed on the source of every
module it can reach: its own file and, transitively, the files of the modules and functions its
module's globals refer to (the package's, and the user's own modules; not installed third-party
libraries). Editing a model recompiles exactly the kernels and drivers that use it; a user's
model edited in its own file gives the new behaviour on the next run.

The cache root, first that is writable: ``$PLUME_MULTI_CACHE_DIR``; ``$NUMBA_CACHE_DIR/plume_multi``;
``$XDG_CACHE_HOME/plume_multi`` (default ``~/.cache/plume_multi``); a new temporary folder. Under it,
``numba<version>-py<version>/`` holds ``drivers/`` (generated step drivers) and ``numba/`` (compiled
code). If no folder is writable (a read-only container), caching is off, with one warning. A cache
that fails later (a full disk, ``OSError: [Errno 27] File too large``; a truncated or corrupt file)
is never an error: what cannot be saved is kept in memory, what cannot be loaded is compiled again
(and the corrupt index removed, so the next save mends it), with one warning per process.

Never stale, under concurrent processes and edits too:

* The key is the source that was compiled. A process runs the source it imported, which a file
  edited since may no longer hold; so a source file counts only while it provably has not changed
  since the process started (its modification time is earlier than the process's start, with a
  margin for the clocks' resolution; generated drivers excepted: their name is their text's hash).
  Code that reaches a file edited since is compiled in memory for this process, neither loaded from
  nor saved to the cache (the next process, which imports the edit, caches it). Each file is hashed
  as it is read, between two ``stat`` calls that must agree.
* What is stored was compiled from that source: before saving, every file is hashed again, and
  nothing is saved when one changed meanwhile.
* The store is atomic: each compiled function is written to a data file named after its key (the
  sources' hash and Numba's signature key) and holding that key, then the index that points to it;
  a load checks the key the data file holds. (Numba's own files are numbered per index: two
  processes saving different sources could leave an index pointing at the other's code.)
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import site
import sys
import sysconfig
import tempfile
import time
import types
import uuid
import warnings
from pathlib import Path

import numba
from numba.core import caching

from . import numba_link, numba_memo, refs  # noqa: F401  (refs: records' layout, part of every key below)

numba_memo.install()  # before anything compiles: Numba's repeated work on inlined code, done once
numba_link.install()  # and a call of a large compiled function refers to its code instead of copying it

__all__ = ["njit", "CACHE_DIR", "CACHE_ROOT", "CACHING", "PACKAGE_DIR", "source_digest", "module_files", "prune",
           "cache_failed", "compiled_in_memory"]

PACKAGE_DIR = Path(__file__).resolve().parent.parent
VERSION = f"numba{numba.__version__}-py{sys.version_info[0]}{sys.version_info[1]}"


def _writable(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
        return True
    except OSError:
        return False


def _choose_cache_dir() -> tuple[Path | None, Path | None]:
    roots = []
    if os.environ.get("PLUME_MULTI_CACHE_DIR"):
        roots.append(Path(os.environ["PLUME_MULTI_CACHE_DIR"]))
    if os.environ.get("NUMBA_CACHE_DIR"):
        roots.append(Path(os.environ["NUMBA_CACHE_DIR"]) / "plume_multi")
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    roots.append(Path(xdg) / "plume_multi")
    for root in roots:
        if _writable(root / VERSION):
            return root, root / VERSION
    try:
        tmp = Path(tempfile.mkdtemp(prefix="plume_multi-cache-"))
    except OSError:
        tmp = None
    if tmp is not None and _writable(tmp):
        warnings.warn(f"plume_multi: no writable cache folder (tried {', '.join(map(str, roots))}); "
                      f"compiled kernels are cached in {tmp} for this process only. Set "
                      "PLUME_MULTI_CACHE_DIR to a writable folder to keep them.", RuntimeWarning, stacklevel=2)
        return None, tmp
    warnings.warn("plume_multi: no writable folder for Numba's cache; kernels compile in every process. "
                  "Set PLUME_MULTI_CACHE_DIR to a writable folder.", RuntimeWarning, stacklevel=2)
    return None, None


CACHE_ROOT, CACHE_DIR = _choose_cache_dir()
CACHING = CACHE_DIR is not None


# ----------------------------------------------------------------------------- what a kernel reaches
def _installed_roots() -> tuple:
    """The folders installed libraries and the standard library live in: this interpreter's, its
    site folders and the user's (``pip install --user``)."""
    roots = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    try:
        roots.update(site.getsitepackages())
        roots.add(site.getusersitepackages())
    except AttributeError:  # an embedded interpreter's reduced site module
        pass
    return tuple(str(Path(p).resolve()) for p in roots if p)


_INSTALLED = _installed_roots()
# a library installed where this interpreter's paths do not say (a virtual environment's under
# `python -S`, `pip install --target`, a user site elsewhere) is still under a folder of this name:
# without this test, numpy's and Numba's hundreds of modules were walked and hashed as the user's
# own code at every import of the package (a warm first step took 8 s instead of 2 s)
_SITE_FOLDERS = frozenset({"site-packages", "dist-packages"})


_own_files: dict = {}


def _own_file(module) -> str | None:
    """The source file of ``module`` when it is the package's or the user's own code, else None
    (installed libraries and the standard library never make a kernel stale)."""
    key = (getattr(module, "__name__", None), getattr(module, "__file__", None))
    if key not in _own_files:
        _own_files[key] = _find_own_file(module)
    return _own_files[key]


def _find_own_file(module) -> str | None:
    path = getattr(module, "__file__", None)
    if not path or not path.endswith(".py"):
        return None
    path = str(Path(path).resolve())
    name = getattr(module, "__name__", "")
    if name == "plume_multi" or name.startswith("plume_multi."):
        return path
    if path.startswith(_INSTALLED) or not _SITE_FOLDERS.isdisjoint(Path(path).parts):
        return None
    return path


def _referenced_module(value):
    if isinstance(value, types.ModuleType):
        return value
    py_func = getattr(value, "py_func", None)  # a Numba dispatcher
    name = getattr(py_func if py_func is not None else value, "__module__", None)
    if not isinstance(name, str):
        return None
    return sys.modules.get(name)


def without_source_file(module) -> bool:
    """Whether ``module`` is code of the user's that has no source file (a notebook's cells, code
    exec'd into a module), rather than a built-in or installed module."""
    if getattr(module, "__file__", None) is not None or getattr(module, "__name__", None) in sys.builtin_module_names:
        return False
    origin = getattr(getattr(module, "__spec__", None), "origin", None)
    return origin not in ("built-in", "frozen") and not hasattr(module, "__path__")


def module_files(modules) -> dict:
    """``{module name: source file}`` of ``modules`` and of every own module their globals reach
    (through modules without a source file too: a notebook's function may call a module's)."""
    seen: dict = {}
    stack = list(modules)
    while stack:
        module = stack.pop()
        name = getattr(module, "__name__", None)
        if name in seen:
            continue
        path = _own_file(module)
        if path is None and not without_source_file(module):
            continue
        seen[name] = path  # None: walked, nothing to hash
        for value in list(vars(module).values()):
            other = _referenced_module(value)
            if other is not None and other.__name__ not in seen:
                stack.append(other)
            # records of compiled functions (a model's ``kernels``) and classes hold functions too
            for item in _members(value):
                other = _referenced_module(item)
                if other is not None and other.__name__ not in seen:
                    stack.append(other)
    return {name: path for name, path in seen.items() if path is not None}


def _members(value):
    if isinstance(value, type):
        mod = value.__dict__.get("__module__")
        own = [v for v in value.__dict__.values()]
        return own if isinstance(mod, str) else []
    fields = getattr(value, "__dataclass_fields__", None)
    if fields is not None and not isinstance(value, type):
        return [getattr(value, f, None) for f in fields]
    return []


# ----------------------------------------------------------------------------- sources as compiled
def _process_start() -> float:
    """When this process started (``time.time()`` scale): a time before it read any source. Read
    from ``/proc/self/stat`` (in clock ticks since boot); elsewhere the time this module was
    imported, which is later than the reading of modules imported before plume_multi."""
    now = time.time()
    try:
        with open("/proc/self/stat", "rb") as f:
            text = f.read()
        ticks = int(text[text.rindex(b")") + 2:].split()[19])  # field 22, starttime
        start = now - (time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return now
    return start if 0 < start <= now else now


_STARTED_NS = int(_process_start() * 1e9)
# a file's time comes from a clock that lags by up to a timer tick (10 ms at HZ = 100), the start
# time is truncated to a clock tick (10 ms); whole seconds are a file system's 1 or 2 s resolution
_MARGIN_NS = 50_000_000
_COARSE_MARGIN_NS = 2_000_000_000
_file_states: dict = {}


def _signature(st: os.stat_result) -> tuple:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


_DRIVERS = None if CACHE_DIR is None else str((CACHE_DIR / "drivers").resolve())


def _generated(path: str, sha1: str) -> bool:
    """A driver this package generated, holding the text its name is the hash of (``assemble``)."""
    return os.path.dirname(path) == _DRIVERS and os.path.basename(path) == f"plume_multi_driver_{sha1[:16]}.py"


def _file_state(path: str) -> tuple:
    """``(sha1 of the file's bytes, trusted)``: trusted when the file has not changed since the
    process started, so that the module this process imported from it holds these bytes."""
    st = os.stat(path)
    key = (path, *_signature(st))
    state = _file_states.get(key)
    if state is None:
        data = Path(path).read_bytes()
        steady = _signature(os.stat(path)) == key[1:]  # not written to while it was read
        mtime = st.st_mtime_ns
        margin = _COARSE_MARGIN_NS if mtime % 1_000_000_000 == 0 else _MARGIN_NS
        sha1 = hashlib.sha1(data).hexdigest()
        trusted = steady and (_generated(path, sha1) or mtime + margin < _STARTED_NS)
        state = (sha1, trusted)
        if steady:
            _file_states[key] = state
    return state


def _sources(modules) -> tuple:
    """``(digest, {path: sha1}, trusted)`` of ``modules`` and every own module they reach."""
    digest = hashlib.sha1()
    hashes, trusted = {}, True
    for name, path in sorted(module_files(modules).items()):
        sha1, ok = _file_state(path)
        hashes[path] = sha1
        trusted = trusted and ok
        digest.update(f"{name}\0{sha1}\0".encode())  # not the path: a copied cache stays valid
    return digest.hexdigest()[:20], hashes, trusted


def source_digest(modules) -> str:
    """A hash of the source of ``modules`` and of every own module they reach (``module_files``)."""
    return _sources(modules)[0]


def _unchanged(hashes: dict, reread: bool = False) -> bool:
    """Whether every file of ``hashes`` (``{path: sha1}``) is trusted and holds those bytes still:
    by its ``stat`` (hashed again only when that changed), or with ``reread`` read again now."""
    for path, sha1 in hashes.items():
        try:
            if reread:
                same = hashlib.sha1(Path(path).read_bytes()).hexdigest() == sha1
            else:
                same = _file_state(path) == (sha1, True)
        except OSError:
            return False
        if not same:
            return False
    return True


_module_sources: dict = {}


def _sources_of(module) -> tuple:
    """``_sources([module])``, remembered while the module's namespace does not grow and its files
    do not change (every cached function of a module asks for it as the module is imported)."""
    key = (module.__name__, len(vars(module)))
    found = _module_sources.get(key)
    if found is None or not (found[2] and _unchanged(found[1])):
        found = _module_sources[key] = _sources([module])
    return found


# ----------------------------------------------------------------------------- Numba's cache
class _PackageCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """Numba cache locator for plume_multi's files, generated drivers and the user's own models:
    ``CACHE_DIR/numba/<subpath>``, valid while no source the function can reach has changed."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._module = sys.modules.get(py_func.__module__)
        path = Path(py_file).resolve()
        try:
            sub = Path("package") / path.parent.relative_to(PACKAGE_DIR)
        except ValueError:
            try:
                sub = Path(path.parent.relative_to(CACHE_DIR))
            except ValueError:  # a user's module: one folder per source folder
                sub = Path("user") / hashlib.sha1(str(path.parent).encode()).hexdigest()[:16]
        self._cache_path = str(CACHE_DIR / "numba" / sub)

    def get_cache_path(self):
        return self._cache_path

    def get_source_stamp(self):
        stamp = super().get_source_stamp()
        self.hashes, self.trusted = {}, True
        if self._module is None:
            return stamp
        digest, self.hashes, self.trusted = _sources_of(self._module)
        if not self.trusted:  # a source edited since the process started: matches no index
            return ("edited since this process started", uuid.uuid4().hex)
        # code that refers to its callees' (numba_link) and code that copies them are kept apart
        return ("sources", stamp, digest, "references" if numba_link.installed() else "copies")

    @classmethod
    def from_function(cls, py_func, py_file):
        if CACHE_DIR is None or not os.path.exists(py_file):
            return None
        return super().from_function(py_func, py_file)


_IMPL = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # renamed in Numba 0.61
if _PackageCacheLocator not in _IMPL._locator_classes:
    _IMPL._locator_classes.insert(0, _PackageCacheLocator)


class _CheckedCacheFile(caching.IndexDataCacheFile):
    """Numba's index and data files for this package's caches, stored atomically (module doc):
    a data file named after and holding its key, written before the index that points to it;
    nothing saved when a source changed since the key was computed."""

    def __init__(self, cache_path, filename_base, source_stamp, locator):
        super().__init__(cache_path, filename_base, source_stamp)
        self._base = filename_base
        self._locator = locator

    def _name_for(self, key) -> str:
        return f"{self._base}.{hashlib.sha1(repr((self._source_stamp, key)).encode()).hexdigest()[:16]}.nbc"

    def _read_index(self):
        """``(stamp, overloads)`` of the index as it is on disk, or None."""
        try:
            with open(self._index_path, "rb") as f:
                version = caching.pickle.load(f)
                data = f.read()
        except FileNotFoundError:
            return None
        if version != self._version:
            return None
        return caching.pickle.loads(data)

    def save(self, key, data):
        if not self._locator.trusted or not _unchanged(self._locator.hashes, reread=True):
            return  # compiled from a source that is no longer the files': kept in memory only
        name = self._name_for(key)
        self._save_data(name, (self._source_stamp, key, data))
        if not _unchanged(self._locator.hashes, reread=True):
            with contextlib.suppress(OSError):
                os.unlink(self._data_path(name))
            return
        found = self._read_index()
        overloads = {}
        if found is not None and found[0] == self._source_stamp:
            overloads = found[1]
        elif found is not None:  # an index of other sources: its code can never load again
            for old in found[1].values():
                if old.startswith(self._base + ".") and old != name:
                    with contextlib.suppress(OSError):
                        os.unlink(self._data_path(old))
        overloads[key] = name
        self._save_index(overloads)

    def load(self, key):
        if not _unchanged(self._locator.hashes):  # edited since the key was computed: compile
            return None
        name = self._load_index().get(key)
        if name is None or name != self._name_for(key):
            return None
        try:
            stored = self._load_data(name)
        except OSError:  # removed since the index was read
            return None
        if not (isinstance(stored, tuple) and len(stored) == 3 and stored[0] == self._source_stamp
                and stored[1] == key):
            return None
        return stored[2]


_numba_cache_init = caching.Cache.__init__


def _cache_init(self, py_func):
    """Numba's ``Cache.__init__``; for this package's caches, with ``_CheckedCacheFile`` and off
    when a source changed since the process started."""
    _numba_cache_init(self, py_func)
    locator = self._impl.locator
    if isinstance(locator, _PackageCacheLocator):
        file = self._cache_file
        self._cache_file = _CheckedCacheFile(self._cache_path, self._impl.filename_base, file._source_stamp, locator)
        if not locator.trusted:
            self.disable()


caching.Cache.__init__ = _cache_init

# ----------------------------------------------------------------------------- a cache that fails
_warned = False
_in_memory = 0  # > 0 while code that must not be cached is compiled (a driver that has no file)


def cache_failed(where, exc: BaseException) -> None:
    """Say once per process that the cache failed (``where``: the file or folder) and that the
    process goes on compiling in memory."""
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(f"plume_multi: the cache failed ({where}: {type(exc).__name__}: {exc}); what it cannot save "
                      f"or load is compiled in memory for this process. Free some space, or set PLUME_MULTI_CACHE_DIR "
                      "to another folder.", RuntimeWarning, stacklevel=3)


@contextlib.contextmanager
def compiled_in_memory():
    """Within it, ``njit`` does not ask Numba to cache (for code exec'd from memory)."""
    global _in_memory
    _in_memory += 1
    try:
        yield
    finally:
        _in_memory -= 1


_numba_guard = caching.Cache._guard_against_spurious_io_errors


@contextlib.contextmanager
def _guard(cache):
    """Numba's guard around loading and saving a cached function, for this package's caches: a
    failure is reported once and swallowed (``load_overload`` then returns None: Numba compiles;
    ``save_overload`` keeps the compiled code in memory). For every cache: code referring to a callee
    this process holds under another symbol (``numba_link.StaleReference``) is not an error: the
    function compiles again, and the next save replaces the stored code."""
    ours = isinstance(getattr(cache._impl, "locator", None), _PackageCacheLocator)
    try:
        if ours:
            yield
        else:
            with _numba_guard(cache):
                yield
    except numba_link.StaleReference:
        return
    except Exception as exc:  # a full disk, a truncated or corrupt file: the cache is an optimisation
        if not ours:
            raise
        index = getattr(cache._cache_file, "_index_path", cache.cache_path)
        cache_failed(index, exc)
        if not isinstance(exc, OSError):  # a corrupt index: remove it, so the next save writes a good one
            with contextlib.suppress(OSError):
                os.unlink(index)


caching.Cache._guard_against_spurious_io_errors = _guard


def njit(*args, **kwargs):
    """``numba.njit`` with ``cache=True`` unless no cache folder is writable (see the module doc), and
    no C wrapper: Numba compiles one for every function, for calls through a first-class function
    type, which no kernel of the package makes (values holding functions cost a step 20 %:
    ``engine/api.py``); a cold puff row compiled 5 % sooner without them (side by side, both ways).
    A kernel passed as a first-class function would need ``no_cfunc_wrapper=False``.

    A kernel compiled with ``no_cpython_wrapper=True`` (called from compiled code only) raises a
    ``ValidationError`` when called from Python: Numba would call the Python entry point it did not
    build, and the interpreter crashed."""
    kwargs["cache"] = CACHING and not _in_memory and kwargs.get("cache", True)
    kwargs.setdefault("no_cfunc_wrapper", True)
    compiled = numba.njit(*args, **kwargs)
    if not kwargs.get("no_cpython_wrapper"):
        return compiled
    if isinstance(compiled, numba.core.registry.CPUDispatcher):
        return _compiled_only(compiled)
    return lambda fn: _compiled_only(compiled(fn))


class _CompiledOnly(numba.core.registry.CPUDispatcher):
    """A Numba dispatcher of a function compiled with no Python entry point: a call from Python
    raises instead of crashing; compiled code calls it as any other."""

    def __call__(self, *args, **kwargs):
        from ..errors import ValidationError

        name = f"{self.py_func.__module__}.{self.py_func.__qualname__}"
        raise ValidationError(f"{name}: called from Python; it is compiled to be called from compiled code only "
                              f"(no Python entry point). Call it from an njit function, or {name}.py_func(...) "
                              "to run its Python source")


def _compiled_only(dispatcher):
    dispatcher.__class__ = _CompiledOnly
    return dispatcher


# ----------------------------------------------------------------------------- pruning
_LEGACY = re.compile(r"^numba[0-9.]+-py[0-9]+-[0-9a-f]{16}$")


def prune(min_age_s: float = 3600.0) -> list:
    """Remove cache folders no current source can use: the per-package-version folders of
    earlier releases (``numba<v>-py<v>-<hash>``), generated drivers whose model files no longer
    exist, and compiled code of drivers that are gone (when older than ``min_age_s``: another
    process may be writing a new one). Returns the removed paths. ``assemble`` runs it once per
    process."""
    import time

    removed = []
    if CACHE_ROOT is not None and CACHE_ROOT.is_dir():
        for entry in CACHE_ROOT.iterdir():
            if entry.is_dir() and _LEGACY.match(entry.name):
                shutil.rmtree(entry, ignore_errors=True)
                removed.append(entry)
    if CACHE_DIR is None:
        return removed
    drivers = CACHE_DIR / "drivers"
    if drivers.is_dir():
        for path in drivers.glob("plume_multi_driver_*.py"):
            try:
                head = path.read_text().split("\n", 40)[:40]
            except OSError:
                continue
            files = [line[len("# source: "):] for line in head if line.startswith("# source: ")]
            if files and not all(os.path.exists(f) for f in files):
                path.unlink(missing_ok=True)
                removed.append(path)
        compiled = CACHE_DIR / "numba" / "drivers"
        if compiled.is_dir():
            alive = {p.stem for p in drivers.glob("plume_multi_driver_*.py")}
            now = time.time()
            for path in compiled.iterdir():
                try:
                    old = now - path.stat().st_mtime > min_age_s
                except OSError:
                    continue
                if old and path.name.split(".", 1)[0] not in alive:
                    path.unlink(missing_ok=True)
                    removed.append(path)
    return removed
