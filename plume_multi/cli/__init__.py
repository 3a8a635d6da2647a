"""The ``plume-multi`` command.

    plume-multi demo   [...]   the README's demo: 64 searchers, results table and a picture
    plume-multi bench  [...]   the engine benchmark table
    plume-multi render [...]   run a policy on a scenario, write a PNG of the trajectories and a GIF
    plume-multi eval   [...]   evaluate a policy on many seeded episodes: statistics, CSV, JSON, PNG

``plume-multi COMMAND --help`` tells each command's options. ``main(argv)`` returns the exit code
(0 success, 2 failure, 130 interrupted) and never calls ``sys.exit`` itself. Every failure is one
line on stderr, ``plume-multi COMMAND: error: ...``; output paths are checked before the work starts.
Progress bars (tqdm) go to stderr, update in place on a terminal and stay quiet otherwise.

This module holds ``main`` and what the commands share (``ArgumentParser``, ``UsageError``,
``check_writable``, ``progress_bar``, ``load_policy``, ``parse_model``); each command is a module
of this package: ``demo``, ``bench`` (each with its own ``main(argv)``), ``render`` and
``evaluate`` (``plume-multi eval``; each with ``add_parser(sub)`` and ``run(args)``).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import os
import sys
from pathlib import Path

from tqdm import tqdm

from .. import __version__
from ..errors import PlumeError, RenderingError, ValidationError

__all__ = ["main", "load_policy", "parse_model", "ArgumentParser", "check_writable", "progress_bar"]

PROG = "plume-multi"
# Commands whose options belong to another module's own ``main(argv)``.
DELEGATES = {
    "demo": ("plume_multi.cli.demo", "the README's demo: a multi-agent search, a results table and a picture"),
    "bench": ("plume_multi.cli.bench", "the engine benchmark table (agent-steps per second)"),
}
BUILTIN_POLICIES = ("random", "gradient")
# Scenario fields and the flags that set them, so a Scenario error names the flag.
_SCENARIO_FLAGS = {"grid_size": "--grid", "source_location": "--source", "sigma": "--sigma", "n_agents": "--agents",
                   "max_steps": "--steps", "goal_radius": "--goal-radius", "n_neighbours": "--neighbours",
                   "plume": "--plume", "action_model": "--body", "sensors": "--sensors", "reward": "--reward",
                   "Gaussian.source": "--plume", "Movie.source": "--plume", "Antennae": "--sensors",
                   "Neighbours.k": "--sensors"}

POLICY_HELP = """\
POLICY is `random`, `gradient` (run-and-tumble on the sensed concentration) or MODULE:NAME, where
MODULE is a module importable from the current folder or the installed packages (or a path to a
.py file) and NAME an attribute of it. What NAME is decides how it is used:
  * a factory: a class, or a function with a parameter named `scenario`. It is called once with
    those of the keywords scenario=<Scenario>, n_actions=<int>, seed=<int> that it accepts, and
    what it returns is the policy;
  * anything else callable is the policy itself.
A policy is called every step with obs, an (N, D) float32 array (one row per agent:
[concentration, x/(w-1), y/(h-1), then 2 numbers per sensed neighbour]), and returns N integer
actions (0 UP, 1 RIGHT, 2 DOWN, 3 LEFT for the cardinal action model).
Example: --policy plume_multi.policies:GradientClimber
`random` works with every body (uniform in a continuous body's box); `gradient` needs a
cardinal or moore body.

MODELS: --plume, --body, --sensors and --reward take NAME or NAME:KEY=VALUE,KEY=VALUE, NAME a
model of plume_multi.models (plume: gaussian, movie; body: cardinal, moore, oriented, run_tumble,
continuous; sensors: concentration, position, heading, binary, antennae, wind, neighbours;
reward: sparse_goal, step_penalty) and each VALUE a Python literal (a bare word is a string; a
comma-separated tail continues the value: source=10,20 is (10, 20)). Movie's `path` is its
`frames`. Examples:
  --plume gaussian:sigma=8,source=random   --plume movie:path=frames.npy,source=10,20
  --body oriented:turn_degrees=45   --sensors concentration antennae:distance=2 wind heading
  --reward step_penalty:step_penalty=0.01
--scenario FILE.json instead gives the whole scenario as Scenario.metadata() writes it, e.g.
  {"plume": {"model": "Gaussian", "sigma": 8}, "action_model": {"model": "Oriented"},
   "sensors": [{"model": "Concentration"}, {"model": "Antennae"}], "n_agents": 8}
(flags given beside it, such as --agents or --steps, override the file)."""


class UsageError(Exception):
    """A bad command-line argument: reported as ``plume-multi CMD: error: ...``, exit code 2."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse, with errors in one line: ``PROG: error: MESSAGE (see PROG --help)``, exit code 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def check_writable(path, option: str) -> Path:
    """Make sure ``path`` can be written, before any work: create its missing folders and open it
    for appending (a file that did not exist is removed again). Raises ``UsageError`` naming
    ``option`` otherwise."""
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"{option}: {str(path)!r} is a folder; expected a file name")
    existed = p.exists()
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        with open(p, "ab"):
            pass
    except OSError as exc:
        raise UsageError(f"{option}: cannot write {str(path)!r}: {exc.strerror or exc}") from None
    if not existed:
        p.unlink()
    return p


def progress_bar(total: int, desc: str, *, quiet: bool = False, unit: str = "step") -> tqdm:
    """A tqdm bar on stderr: redrawn in place on a terminal, silent when stderr is not one (CI
    logs) or with ``quiet``."""
    return tqdm(total=total, desc=desc, unit=unit, disable=True if quiet else None, file=sys.stderr,
                dynamic_ncols=True)


# ----------------------------------------------------------------------------------------- parser
def _build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog=PROG,
        description="Odor-plume search for many agents at once.",
        epilog="Run `plume-multi COMMAND --help` for the options of each command.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands", parser_class=ArgumentParser)
    for name, (_, text) in DELEGATES.items():
        sub.add_parser(name, help=text, add_help=False)  # parsed by the delegate itself
    from . import evaluate, render

    render.add_parser(sub)
    evaluate.add_parser(sub)
    return parser


# ----------------------------------------------------------------------------------------- policies
def _import_target(module_name: str):
    if module_name.endswith(".py"):
        path = Path(module_name)
        if not path.is_file():
            raise UsageError(f"--policy: the file {module_name!r} does not exist")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
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


def load_policy(spec: str, scenario, seed: int = 0):
    """The policy named by ``spec`` (``random``, ``gradient`` or ``MODULE:NAME``; see ``POLICY_HELP``).

    Raises:
        UsageError: the spec is malformed, names nothing importable, or not a callable.
    """
    from ..policies import GradientClimber, RandomBoxPolicy, RandomPolicy

    if spec == "random":
        if scenario.continuous:
            body = scenario.action_model
            return RandomBoxPolicy(body.low, body.high, seed=seed)
        return RandomPolicy(scenario.n_actions, seed=seed)
    if spec == "gradient":
        from ..models.bodies import Cardinal, Moore

        if not isinstance(scenario.action_model, (Cardinal, Moore)):
            raise UsageError(f"--policy: gradient turns to a random one of the cardinal or moore moves; the body "
                             f"{scenario.action_model.name} has other actions: use --policy random or MODULE:NAME")
        return GradientClimber(scenario.n_actions, seed=seed)
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"--policy: got {spec!r}; expected {', '.join(BUILTIN_POLICIES)} or MODULE:NAME")
    module = _import_target(module_name)
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"--policy: {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise UsageError(f"--policy: {spec!r} is a {type(obj).__name__}, not a callable policy or factory")
    if _is_factory(obj):
        try:
            policy = _call_factory(obj, scenario, seed)
        except Exception as exc:
            raise UsageError(
                f"--policy: calling the factory {spec!r} failed: {type(exc).__name__}: {exc} (a factory is called "
                "with those of scenario=, n_actions=, seed= it accepts; see `plume-multi render --help`)"
            ) from exc
        if not callable(policy):
            raise UsageError(f"--policy: the factory {spec!r} returned a {type(policy).__name__}, not a callable policy")
        return policy
    return obj


# ----------------------------------------------------------------------------------------- shared checks
def _check_extras(want_movie: bool) -> None:
    """Fail before the run, not after it, when an optional extra is missing."""
    from ..viz.recording import MOVIE_EXTRA, VIZ_EXTRA

    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise RenderingError(f"the PNG needs matplotlib: {VIZ_EXTRA}") from exc
    if want_movie:
        try:
            import imageio  # noqa: F401
        except ImportError as exc:
            raise RenderingError(f"the movie needs imageio: {MOVIE_EXTRA}; or pass --no-movie") from exc


def parse_model(spec: str, family: str, flag: str):
    """The model of ``family`` that ``spec`` (``NAME`` or ``NAME:KEY=VALUE,...``) names.

    Values are Python literals (``ast.literal_eval``); a value that is not one is a string; a
    comma-separated part without ``=`` continues the previous value (``source=10,20``).

    Raises:
        UsageError: naming ``flag``: an unknown model or parameter, a malformed spec or a bad value.
    """
    import ast
    import dataclasses

    from ..models.registry import model_class, model_names

    name, _, rest = spec.partition(":")
    try:
        cls = model_class(family, name.strip())
    except ValidationError:
        raise UsageError(f"{flag}: got {name!r}; expected one of {model_names(family)}") from None
    parts = []
    for piece in rest.split(",") if rest.strip() else []:
        if "=" in piece:
            parts.append(list(piece.split("=", 1)))
        elif parts:
            parts[-1][1] += "," + piece
        else:
            raise UsageError(f"{flag}: got {spec!r}; expected {name}:KEY=VALUE,KEY=VALUE")
    kwargs = {}
    aliases = {"path": "frames"} if cls.__name__ == "Movie" else {}
    fields = {f.name for f in dataclasses.fields(cls)}
    for key, text in parts:
        key = aliases.get(key.strip(), key.strip())
        if key not in fields:
            raise UsageError(f"{flag}: {cls.__name__} has no parameter {key!r}; expected some of {sorted(fields)}")
        if key in kwargs:
            raise UsageError(f"{flag}: the parameter {key!r} is given twice")
        try:
            value = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            value = text.strip()
        kwargs[key] = list(value) if isinstance(value, tuple) and key == "angles" else value
    try:
        return cls(**kwargs)
    except ValidationError as exc:
        raise UsageError(f"{flag}: {exc}") from None


# ----------------------------------------------------------------------------------------- main
def _delegate(command: str, argv: list[str]) -> int:
    module_name, _ = DELEGATES[command]
    prefix = f"{PROG} {command}"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        print(f"{prefix}: error: this installation has no {module_name}", file=sys.stderr)
        return 2
    return _one_line_errors(prefix, lambda: _exit_code(lambda: module.main(argv)))


def _one_line_errors(prefix: str, run) -> int:
    """``run()``, with every failure reported in one line on stderr and exit code 2."""
    try:
        return run()
    except UsageError as exc:
        print(f"{prefix}: error: {exc}", file=sys.stderr)
    except PlumeError as exc:
        print(f"{prefix}: error: {exc}", file=sys.stderr)
    except KeyboardInterrupt:
        print(f"\n{prefix}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # anything else: still one line, never a traceback
        print(f"{prefix}: error: {type(exc).__name__}: {exc}", file=sys.stderr)
    return 2


def _exit_code(run) -> int:
    """Run ``run()`` and turn its result or ``SystemExit`` (argparse's way out) into an exit code."""
    try:
        code = run()
    except SystemExit as exc:
        code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # SystemExit("message") means: print it, exit 2 (a failure)
    return 2


def main(argv: list[str] | None = None) -> int:
    """Run ``plume-multi`` with ``argv`` (default ``sys.argv[1:]``); return the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in DELEGATES:
        return _delegate(argv[0], argv[1:])
    parser = _build_parser()
    holder = {}

    def parse():
        holder["args"] = parser.parse_args(argv)

    code = _exit_code(parse)
    if "args" not in holder:
        return code
    args = holder["args"]
    if args.command is None:
        print(f"{PROG}: error: no command given; expected one of {', '.join([*DELEGATES, 'render'])} "
              f"(see {PROG} --help)", file=sys.stderr)
        return 2
    from . import evaluate, render

    run = evaluate.run if args.command == "eval" else render.run
    return _one_line_errors(f"{PROG} {args.command}", lambda: run(args))

