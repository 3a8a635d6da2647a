"""The ``plume-multi`` command.

    plume-multi demo   [...]   the README's demo: 64 searchers, results table and a picture
    plume-multi bench  [...]   the engine benchmark table
    plume-multi render [...]   run a policy on a scenario, write a PNG of the trajectories and a GIF
    plume-multi eval   [...]   evaluate a policy on many seeded episodes: statistics, CSV, JSON, PNG
    plume-multi compare [...]  several policies on the same seeded episodes: a table, CSV and PNG
    plume-multi train  [...]   train a learned baseline (PPO, MLP or GRU) on a scenario: a policy file
    plume-multi benchmark list | run TASK --policy NAME | table   the benchmark's tasks and table

``plume-multi COMMAND --help`` tells each command's options. ``main(argv)`` returns the exit code
(0 success, 2 failure, 130 interrupted) and never calls ``sys.exit`` itself. Every failure is one
line on stderr, ``plume-multi COMMAND: error: ...``; output paths are checked before the work starts.
Progress bars (tqdm) go to stderr, update in place on a terminal and stay quiet otherwise.

This module holds ``main`` and what the commands share (``ArgumentParser``, ``UsageError``,
``check_writable``, ``progress_bar``, ``parse_model``; ``load_policy`` from ``policies``, the scenario
flags in ``scenario_flags``); each command is a module of this package: ``demo``, ``bench`` (each
with its own ``main(argv)``), ``render``, ``evaluate`` (``plume-multi eval``), ``compare``,
``train`` and ``benchmark`` (each with ``add_parser(sub)`` and ``run(args)``).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import os
import sys
import tempfile
from pathlib import Path

from tqdm import tqdm

from .. import __version__
from ..checks import shown
from ..errors import PlumeError, RenderingError, ValidationError

__all__ = ["main", "load_policy", "parse_model", "ArgumentParser", "check_writable", "progress_bar"]

PROG = "plume-multi"
# Commands whose options belong to another module's own ``main(argv)``.
DELEGATES = {
    "demo": ("plume_multi.cli.demo", "the README's demo: a multi-agent search, a results table and a picture"),
    "bench": ("plume_multi.cli.bench", "the engine benchmark table (agent-steps per second)"),
}
# Scenario fields and the flags that set them, so a Scenario error names the flag.
SCENARIO_FLAGS = {"grid_size": "--grid", "source_location": "--source", "sigma": "--sigma", "n_agents": "--agents",
                   "max_steps": "--steps", "goal_radius": "--goal-radius", "n_neighbours": "--neighbours",
                   "plume": "--plume", "action_model": "--body", "sensors": "--sensors", "reward": "--reward",
                   "Gaussian.source": "--plume", "Movie.source": "--plume", "Antennae": "--sensors",
                   "Neighbours.k": "--sensors", "walls": "--walls"}

POLICY_HELP = """\
POLICY is a built-in name, a comma-separated list of them, FILE.pt, FILE.npz or MODULE:NAME. Built-ins:
  random                 uniform actions (in a continuous body's box); every body
  gradient               run-and-tumble on the sensed concentration; cardinal, moore or 2-D continuous bodies
  surge-cast             surge upwind on a whiff, cast crosswind without one (policies.SurgeCast):
                         an odour sensor and a wind sensor; continuous, oriented, cardinal, moore
  infotaxis              infotaxis on the Poisson-hit belief (policies.Infotaxis)
  space-aware-infotaxis  space-aware infotaxis (Loisy & Eloy 2022)
  greedy                 move toward the most likely source (policies.Greedy)
The last three need a Poisson-hit plume and a Belief sensor: --scenario poisson_search:... or otto_benchmark:...
A list such as infotaxis,greedy is a mixed team (policies.Team): agent n of each world runs the
(n mod k)-th of the k names; with --team (or poisson_search's default) they share one belief.
FILE.pt: a policy trained by `plume-multi train` (PPO; greedy), on a scenario with the same
observation columns and actions.
FILE.npz: a quasi-optimal policy solved by policies.Perseus.solve and saved (Perseus.save), on a
scenario with the plume and moves it was solved for.
MODULE:NAME: MODULE is a module importable from the current folder or the installed packages (or
a path to a .py file) and NAME an attribute of it. What NAME is decides how it is used:
  * a factory: a class, or a function with a parameter named `scenario`. It is called once with
    those of the keywords scenario=<Scenario>, n_actions=<int>, seed=<int> that it accepts, and
    what it returns is the policy;
  * anything else callable is the policy itself (an object with act(simulator) is called so).
A policy is called every step with obs, an (N, D) float32 array (one row per agent, the columns
of the sensors in order: by default [concentration, x/(w-1), y/(h-1), then 2 numbers per sensed
neighbour]), and returns N actions (0 UP, 1 RIGHT, 2 DOWN, 3 LEFT for the cardinal body).
Example: --policy plume_multi.policies:GradientClimber

MODELS: --plume, --body, --sensors and --reward take NAME or NAME:KEY=VALUE,KEY=VALUE, NAME a
model of plume_multi.models (plume: gaussian, movie, puffs, poisson_hits, windy_poisson_hits;
body: cardinal, moore, oriented, run_tumble, continuous; sensors: concentration, position, heading,
binary, antennae, wind, neighbours, history, hits, belief; reward: sparse_goal, step_penalty) and each VALUE a
Python literal (a bare word is a string; a comma-separated tail continues the value:
source=10,20 is (10, 20)). Movie's `path` is its `frames`. Examples:
  --plume gaussian:sigma=8,source=random   --plume movie:path=frames.npy,source=10,20
  --plume puffs:source=10,50,spin_up_steps=500 --grid 200 100 --body continuous:max_speed=0.2
  --body oriented:turn_degrees=45   --sensors concentration antennae:distance=2 wind heading
  --reward step_penalty:step_penalty=0.01
--scenario gives the whole scenario instead: a named one, poisson_search[:KEY=VALUE,...] (the
infotaxis POMDP of plume_multi.scenarios.poisson_search, e.g. poisson_search:lambda_over_dx=2,R_dt=2)
or otto_benchmark:case=NAME (a case of otto-benchmark, e.g. otto_benchmark:case=windy-low-detections;
--agents, --steps and --team are passed to them), or FILE.json as Scenario.metadata() writes it, e.g.
  {"plume": {"model": "Gaussian", "sigma": 8}, "action_model": {"model": "Oriented"},
   "sensors": [{"model": "Concentration"}, {"model": "Antennae"}], "n_agents": 8}
(flags given beside a file, such as --agents or --steps, override it)."""


class UsageError(Exception):
    """A bad command-line argument: reported as ``plume-multi CMD: error: ...``, exit code 2."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse, with errors in one line: ``PROG: error: MESSAGE (see PROG --help)``, exit code 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def check_writable(path, option: str) -> Path:
    """Make sure ``path`` can be written, before any work and leaving no trace: it is not a folder,
    and either it is a writable file or its nearest existing folder lets us create what is missing
    (the folders are created when the file is written; a temporary file made and removed there
    proves it where permissions alone do not, as for root or in /proc). Raises ``UsageError``
    naming ``option`` otherwise."""
    p = Path(path)
    try:
        _check_writable(p, str(path), option)
    except (OSError, ValueError) as exc:  # a name the file system refuses (too long, a NUL)
        raise UsageError(f"{option}: cannot write {shown(str(path), 120)}: {getattr(exc, 'strerror', None) or exc}; "
                         "expected a path that can be written") from None
    return p


def _check_writable(p: Path, path: str, option: str) -> None:
    if p.is_dir():
        raise UsageError(f"{option}: {path!r} is a folder; expected a file name")
    if p.exists():
        if not os.access(p, os.W_OK):
            raise UsageError(f"{option}: cannot write {path!r}: permission denied")
        return
    parent = p.absolute().parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise UsageError(f"{option}: cannot write {path!r}: {str(parent)!r} is a file, not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{option}: cannot write {path!r}: permission denied in {str(parent)!r}")
    try:
        tempfile.TemporaryFile(dir=parent).close()
    except OSError as exc:
        raise UsageError(f"{option}: cannot write {path!r}: nothing can be created in {str(parent)!r} "
                         f"({exc.strerror or exc})") from None


def output_paths(prefix: str, suffixes, option: str) -> list:
    """``PREFIX + suffix`` for each of ``suffixes``, each checked by ``check_writable`` before any
    work; ``UsageError`` naming ``option`` when the prefix does not end in a file name ('', '.')."""
    p = Path(prefix)
    if not prefix or "\0" in prefix or p.name in ("", ".", ".."):
        raise UsageError(f"{option}: got {shown(prefix, 120)}; expected a path prefix ending in a file name (writes "
                         f"{', '.join('PREFIX' + s for s in suffixes)})")
    return [check_writable(p.with_name(p.name + suffix), option) for suffix in suffixes]


def parse_options(pairs) -> dict:
    """``--option KEY=VALUE`` pairs as a dict: each value a Python literal where it reads as one,
    else the text as given."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--option: got {pair!r}; expected KEY=VALUE")
        try:
            out[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            out[key] = value
    return out


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
    from . import benchmark, compare, evaluate, render, train

    render.add_parser(sub)
    evaluate.add_parser(sub)
    compare.add_parser(sub)
    train.add_parser(sub)
    benchmark.add_parser(sub)
    return parser


# ----------------------------------------------------------------------------------------- shared checks
def check_extras(want_movie: bool) -> None:
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
    from . import benchmark, compare, evaluate, render, train

    run = {"eval": evaluate.run, "compare": compare.run, "train": train.run,
           "benchmark": benchmark.run}.get(args.command, render.run)
    return _one_line_errors(f"{PROG} {args.command}", lambda: run(args))


from .policies import load_policy  # noqa: E402  (it imports UsageError from above)
