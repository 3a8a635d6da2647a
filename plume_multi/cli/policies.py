"""``--policy``: the built-in policies by name, mixed teams (``infotaxis,greedy``) and
``MODULE:NAME`` (see ``POLICY_HELP``)."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from pathlib import Path

from .. import files
from ..errors import ValidationError
from ..policies.named import NAMED, NAMES
from . import UsageError

__all__ = ["BUILTIN_POLICIES", "load_policy", "policy_for_evaluate"]

BUILTIN_POLICIES = NAMES


# The built-ins live in the library (the benchmark runs them too); a refusal becomes a UsageError in _made.
BUILTIN = NAMED


def _made(factory, scenario, seed: int, name: str):
    """``factory(scenario, seed)``, a model's refusal as a ``UsageError`` naming ``--policy``."""
    try:
        return factory(scenario, seed)
    except ValidationError as exc:
        raise UsageError(f"--policy {name}: {exc}") from None


def _import_target(module_name: str):
    if module_name.endswith(".py"):
        try:  # read through the checked opener (a FIFO named x.py would block an import), then run
            source = files.read_bytes(module_name, "--policy", "a path to a .py file")
        except ValidationError as exc:
            raise UsageError(str(exc)) from None
        path = Path(module_name)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        try:
            exec(compile(source, str(path), "exec"), module.__dict__)
        except Exception as exc:
            raise UsageError(f"--policy: importing {module_name!r} failed: {type(exc).__name__}: {exc}") from exc
        return module
    # A console script does not put the current folder on sys.path; users expect it there.
    added = os.getcwd() not in sys.path
    if added:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise UsageError(
                f"--policy: cannot import module {module_name!r} ({exc}); expected a module importable "
                "from the current folder or the installed packages, or a path to a .py file"
            ) from exc
        raise UsageError(f"--policy: importing {module_name!r} failed: {type(exc).__name__}: {exc}") from exc
    except Exception as exc:  # the user's module itself failed to import: say so in one line
        raise UsageError(f"--policy: importing {module_name!r} failed: {type(exc).__name__}: {exc}") from exc
    finally:
        if added:
            sys.path.remove(os.getcwd())


def _is_factory(obj) -> bool:
    if inspect.isclass(obj):
        return True
    try:
        return "scenario" in inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return False


def _call_factory(factory, scenario, seed: int):
    offered = {"scenario": scenario, "n_actions": None if scenario.continuous else scenario.n_actions, "seed": seed}
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return factory()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return factory(**offered)
    return factory(**{k: v for k, v in offered.items() if k in params})


def _user_object(spec: str):
    """The attribute ``MODULE:NAME`` names, checked to be callable."""
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"--policy: got {spec!r}; expected one of {', '.join(BUILTIN_POLICIES)} (or a "
                         "comma-separated list of them, one per agent), or MODULE:NAME")
    obj = _import_target(module_name)
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"--policy: {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise UsageError(f"--policy: {spec!r} is a {type(obj).__name__}, not a callable policy or factory")
    return obj


def _user_policy(spec: str, scenario, seed: int):
    obj = _user_object(spec)
    if not _is_factory(obj):
        return obj
    try:
        policy = _call_factory(obj, scenario, seed)
    except Exception as exc:
        raise UsageError(
            f"--policy: calling the factory {spec!r} failed: {type(exc).__name__}: {exc} (a factory is called "
            "with those of scenario=, n_actions=, seed= it accepts; see `plume-multi render --help`)"
        ) from exc
    if not (callable(policy) or callable(getattr(policy, "act", None))):
        raise UsageError(f"--policy: the factory {spec!r} returned a {type(policy).__name__}, not a callable policy")
    return policy


def _team_names(spec: str, scenario) -> list | None:
    """The names of a comma-separated team, one per agent (cycled), or None for one policy."""
    if "," not in spec:
        return None
    names = [name.strip() for name in spec.split(",")]
    unknown = [name for name in names if name not in BUILTIN]
    if unknown:
        raise UsageError(f"--policy: got {unknown[0]!r} in the team {spec!r}; expected names among "
                         f"{', '.join(BUILTIN_POLICIES)}")
    return [names[n % len(names)] for n in range(scenario.n_agents)]


def _is_policy_file(spec: str) -> bool:
    """``spec`` names a trained policy's file (``plume-multi train`` writes ``PREFIX.pt``) or a
    solved one (``Perseus.save``'s ``.npz``)."""
    return spec.endswith((".pt", ".npz"))


def _solved(spec: str, scenario):
    """The ``Perseus`` policy in the file ``spec``, checked against ``scenario``."""
    from ..policies.perseus import Perseus

    try:
        policy = Perseus.load(spec)
        policy.check_scenario(scenario, f"--policy {spec}")
    except ValidationError as exc:
        raise UsageError(f"--policy: {exc}") from None
    return policy


def _learned(spec: str, scenario):
    """The ``LearnedPolicy`` in the file ``spec``, checked against ``scenario``'s observation and
    actions."""
    try:
        from ..training import load_policy as load_learned
    except ImportError as exc:
        raise UsageError(f"--policy {spec}: a trained policy needs torch: pip install 'plume-multi[train]'") from exc
    try:
        policy = load_learned(spec)
    except ValidationError as exc:
        raise UsageError(f"--policy: {exc}") from None
    if policy.observation_layout != list(scenario.observation_layout):
        raise UsageError(f"--policy {spec}: trained on the observation {policy.observation_layout}; this scenario "
                         f"gives {list(scenario.observation_layout)} (use the scenario it was trained on)")
    trained_continuous = policy.network.n_actions == 0
    if trained_continuous != scenario.continuous or (
            not scenario.continuous and policy.network.n_actions != scenario.n_actions):
        raise UsageError(f"--policy {spec}: its actions do not fit the body {scenario.action_model.name}")
    return policy


def load_policy(spec: str, scenario, seed: int = 0):
    """The policy named by ``spec`` (a built-in name, a comma-separated team of them, a trained
    policy's ``FILE.pt``, a solved ``Perseus``'s ``FILE.npz``, or ``MODULE:NAME``; see
    ``POLICY_HELP``), made for ``scenario``: a callable ``obs -> actions`` or
    an object with ``act(simulator)``.

    Raises:
        UsageError: the spec is malformed, names nothing importable, not a callable, or a policy
            that cannot act in ``scenario``.
    """
    from ..policies import Team

    if _is_policy_file(spec):
        return _solved(spec, scenario) if spec.endswith(".npz") else _learned(spec, scenario)
    team = _team_names(spec, scenario)
    if team is not None:
        made = {name: _made(BUILTIN[name], scenario, seed, name) for name in dict.fromkeys(team)}
        return Team([made[name] for name in team])
    if spec in BUILTIN:
        return _made(BUILTIN[spec], scenario, seed, spec)
    return _user_policy(spec, scenario, seed)


def policy_for_evaluate(spec: str, scenario, seed: int = 0):
    """What ``plume_multi.evaluate`` takes for ``spec``: the factory of a built-in (made per chunk
    of worlds, with that chunk's seed), a list of them for a team, or ``MODULE:NAME``'s object.
    Checked against ``scenario`` first (``load_policy``), so that a bad spec fails before the run."""
    loaded = load_policy(spec, scenario, seed)
    if _is_policy_file(spec):
        return loaded  # evaluate runs a copy of it in each chunk of worlds
    team = _team_names(spec, scenario)
    if team is not None:
        return [BUILTIN[name] for name in team]
    if spec in BUILTIN:
        return BUILTIN[spec]
    return _user_object(spec)
