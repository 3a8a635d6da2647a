"""Old import paths, kept for one release.

Modules that moved are listed in ``OLD_TO_NEW`` (old dotted name -> new dotted name).
``import plume_multi.render``, ``from plume_multi import render``, a pickle or a Ray task naming
``plume_multi.wrappers.single.PlumeSearchEnv``: each still works, warns ``DeprecationWarning``
once per old name (naming the new path), and gives the NEW module object itself, so
``plume_multi.render.render_frame is plume_multi.viz.render.render_frame``.

``plume_multi/__init__.py`` installs the finder (``install()``) and resolves old attribute names
(``plume_multi.render``) through the same table. ``import plume_multi`` alone warns nothing.

``when_imported(library, hook)`` runs ``hook()`` once a library has been imported (at once if it
is): ``import plume_multi`` registers its Gymnasium and PettingZoo ids without importing those
libraries itself (Gymnasium alone costs about a sixth of ``import numpy, numba``), whoever imports
them and whenever. A second finder, first on ``sys.meta_path``, finds the library with the finders
after it and wraps its loader for that one import; the module, its file and, after the import, its
``__loader__`` are the library's own.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import sys
import warnings

__all__ = ["OLD_TO_NEW", "deprecation_message", "install", "when_imported"]

# Old dotted module name -> its new home. Extend it when a module moves; remove an entry one
# release after the move.
OLD_TO_NEW: dict[str, str] = {
    "plume_multi.render": "plume_multi.viz.render",
    "plume_multi.captions": "plume_multi.viz.captions",
    "plume_multi.scene": "plume_multi.viz.scene",
    "plume_multi.recording": "plume_multi.viz.recording",
    "plume_multi.wrappers": "plume_multi.envs",
    "plume_multi.wrappers.single": "plume_multi.envs.single",
    "plume_multi.wrappers.components": "plume_multi.envs.components",
    "plume_multi.wrappers.sb3": "plume_multi.integrations.sb3",
    "plume_multi._registration": "plume_multi.envs.registration",
    "plume_multi.rllib": "plume_multi.integrations.rllib",
    "plume_multi.infotaxis": "plume_multi.policies.infotaxis",
    "plume_multi.presets": "plume_multi.scenarios",
    "plume_multi.evaluate": "plume_multi.evaluation",
    "plume_multi.scenario_io": "plume_multi.scenario",
    "plume_multi.demo": "plume_multi.cli.demo",
    "plume_multi.benchmark": "plume_multi.cli.bench",
    "plume_multi.kernels": "plume_multi.engine",
    "plume_multi.kernels.jit": "plume_multi.engine.jit",
    "plume_multi.kernels.rng": "plume_multi.engine.rng",
    "plume_multi.kernels.assemble": "plume_multi.engine.assemble",
    "plume_multi.kernels.engine": "plume_multi.engine.shared",
    "plume_multi.kernels.poisson": "plume_multi.models.plumes.poisson_hits.kernels",
    "plume_multi.kernels.puffs": "plume_multi.models.plumes.puffs.physics",
    "plume_multi.models.actions": "plume_multi.models.bodies",
    "plume_multi.models.actions.cardinal": "plume_multi.models.bodies.cardinal",
    "plume_multi.models.actions.moore": "plume_multi.models.bodies.moore",
    "plume_multi.models.actions.oriented": "plume_multi.models.bodies.oriented",
    "plume_multi.models.actions.run_tumble": "plume_multi.models.bodies.run_tumble",
    "plume_multi.models.actions.continuous": "plume_multi.models.bodies.continuous",
    "plume_multi.models.actions.table": "plume_multi.models.bodies.table",
}


def deprecation_message(old: str) -> str:
    return f"{old} is deprecated; import {OLD_TO_NEW[old]} (removed in the next release)"


_HERE = os.path.dirname(os.path.abspath(__file__))
_INTERNAL_FILES = {os.path.abspath(__file__), os.path.join(_HERE, "__init__.py")}
_IMPORTLIB_DIR = os.path.dirname(os.path.abspath(importlib.__file__))


def _bootstrap(filename: str) -> bool:
    return "importlib" in filename and "_bootstrap" in filename  # as the warnings module tells them


def _internal(filename: str) -> bool:
    """A frame of the import machinery, of this module or of ``plume_multi/__init__.py``."""
    if filename.startswith("<frozen importlib"):
        return True
    path = os.path.abspath(filename)
    return path in _INTERNAL_FILES or os.path.dirname(path) == _IMPORTLIB_DIR


def _warn(old: str) -> None:
    """Warn about ``old``, attributed to the first frame outside the import machinery (the user's
    ``import`` line), so the default filters show it where it is written."""
    level, frame = 1, sys._getframe(0)
    while frame is not None and _internal(frame.f_code.co_filename):
        frame = frame.f_back
        # warnings.warn itself passes over importlib._bootstrap frames when it counts stacklevel
        if frame is not None and not _bootstrap(frame.f_code.co_filename):
            level += 1
    warnings.warn(deprecation_message(old), DeprecationWarning, stacklevel=level)


class _OldPathFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old names of ``OLD_TO_NEW`` and loads each as its new module."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in OLD_TO_NEW:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec):
        return None  # a placeholder: exec_module puts the new module in its place

    def exec_module(self, module) -> None:
        old = module.__name__
        new = importlib.import_module(OLD_TO_NEW[old])
        _warn(old)
        # The import system returns what sys.modules holds after exec_module, and binds that to
        # the parent's attribute: the new module itself, its own __spec__ and __name__ untouched.
        sys.modules[old] = new


_FINDER = _OldPathFinder()


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _OldPathFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _FINDER)


# ----------------------------------------------------------------------------- after an import
class _ThenLoader(importlib.abc.Loader):
    """The library's loader, running ``hook()`` after the module has executed."""

    def __init__(self, loader, hook):
        self._loader, self._hook = loader, hook

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        module.__loader__ = module.__spec__.loader = self._loader  # the library's own, from now on
        self._hook()

    def __getattr__(self, name):  # get_source, is_package, get_resource_reader, ...
        return getattr(self._loader, name)


class _AfterImportFinder(importlib.abc.MetaPathFinder):
    def __init__(self):
        self.hooks: dict = {}

    def find_spec(self, fullname, path, target=None):
        hooks = self.hooks.get(fullname)
        if not hooks:
            return None
        others = sys.meta_path[sys.meta_path.index(self) + 1:] if self in sys.meta_path else []
        for finder in others:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        del self.hooks[fullname]

        def run_all():
            for hook in hooks:
                hook()

        spec.loader = _ThenLoader(spec.loader, run_all)
        return spec


_AFTER_IMPORT = _AfterImportFinder()


def when_imported(module: str, hook) -> None:
    """Call ``hook()`` now if ``module`` (a top-level name) is imported, else once it is."""
    if module in sys.modules:
        hook()
        return
    _AFTER_IMPORT.hooks.setdefault(module, []).append(hook)
    if _AFTER_IMPORT not in sys.meta_path:
        sys.meta_path.insert(0, _AFTER_IMPORT)
