"""The ``plume-multi`` command.

    plume-multi demo   [...]   the README's demo: 64 searchers, results table and a picture
    plume-multi bench  [...]   the engine benchmark table
    plume-multi render [...]   run a policy on a scenario, write a PNG of the trajectories and a GIF

``plume-multi COMMAND --help`` tells each command's options. ``main(argv)`` returns the exit code
(0 success, 2 failure, 130 interrupted) and never calls ``sys.exit`` itself. Every failure is one
line on stderr, ``plume-multi COMMAND: error: ...``; output paths are checked before the work starts.
Progress bars (tqdm) go to stderr, update in place on a terminal and stay quiet otherwise.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import math
import os
import sys
from pathlib import Path

import numpy as np
from tqdm import tqdm

from . import __version__
from .errors import PlumeError, RenderingError, ValidationError

__all__ = ["main", "load_policy", "ArgumentParser", "check_writable", "progress_bar"]

PROG = "plume-multi"
# Commands whose options belong to another module's own ``main(argv)``.
DELEGATES = {
    "demo": ("plume_multi.demo", "the README's demo: a multi-agent search, a results table and a picture"),
    "bench": ("plume_multi.benchmark", "the engine benchmark table (agent-steps per second)"),
}
BUILTIN_POLICIES = ("random", "gradient")
# Scenario fields and the flags that set them, so a Scenario error names the flag.
_SCENARIO_FLAGS = {"grid_size": "--grid", "source_location": "--source", "sigma": "--sigma", "n_agents": "--agents",
                   "max_steps": "--steps", "goal_radius": "--goal-radius", "n_neighbours": "--neighbours"}
MAX_FRAMES = 300  # movie frames when --every is not given: long runs are subsampled to this

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
Example: --policy plume_multi.policies:GradientClimber"""


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
    render = sub.add_parser(
        "render",
        help="run a policy on a scenario and write a PNG of the trajectories and a GIF of the search",
        description="Run a policy on one world of a scenario until every agent has finished or the step\n"
                    "limit is reached; write a PNG of all trajectories and a movie of the search.",
        epilog=POLICY_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    g = render.add_argument_group("policy")
    g.add_argument("--policy", default="gradient", metavar="POLICY",
                   help="random, gradient or MODULE:NAME (see below; default gradient)")
    g.add_argument("--seed", type=int, default=0, metavar="S", help="seeds the start positions and the policy (default 0)")
    g = render.add_argument_group("scenario")
    g.add_argument("--agents", type=int, default=16, metavar="N", help="searchers in the world (default 16)")
    g.add_argument("--grid", type=int, nargs=2, default=(128, 128), metavar=("WIDTH", "HEIGHT"),
                   help="grid size in cells (default 128 128)")
    g.add_argument("--source", type=int, nargs=2, default=None, metavar=("X", "Y"),
                   help="source cell (default the centre)")
    g.add_argument("--sigma", type=float, default=12.0, metavar="S", help="plume spread in cells (default 12)")
    g.add_argument("--steps", type=int, default=500, metavar="N", help="step limit of the episode (default 500)")
    g.add_argument("--goal-radius", type=float, default=None, metavar="R",
                   help="distance to the source that counts as found (default: the source cell only)")
    g.add_argument("--action-model", choices=("cardinal", "moore"), default="cardinal",
                   help="4 moves, or 8 moves + stay (default cardinal)")
    g.add_argument("--neighbours", type=int, default=0, metavar="K",
                   help="each agent also senses its K nearest agents (default 0)")
    g.add_argument("--team", action="store_true", help="the first arrival ends the search for all")
    g = render.add_argument_group("output")
    g.add_argument("--png", default="plume_render.png", metavar="PATH",
                   help="trajectory picture (default plume_render.png)")
    g.add_argument("--movie", default="plume_render.gif", metavar="PATH",
                   help="movie, .gif (or .mp4 with imageio-ffmpeg) (default plume_render.gif)")
    g.add_argument("--no-movie", action="store_true", help="write the PNG only")
    g.add_argument("--fps", type=float, default=15.0, metavar="F", help="movie frames per second (default 15)")
    g.add_argument("--every", type=int, default=None, metavar="K",
                   help=f"one movie frame every K steps (default: at most {MAX_FRAMES} frames)")
    g.add_argument("--trail", type=int, default=12, metavar="K", help="steps of trail behind each agent in the movie (default 12)")
    g.add_argument("--scale", type=int, default=None, metavar="S",
                   help="movie pixels per cell (default: at least 256 pixels on the longer side)")
    g.add_argument("--quiet", action="store_true", help="no progress bar")
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
    offered = {"scenario": scenario, "n_actions": scenario.n_actions, "seed": seed}
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
    from .policies import GradientClimber, RandomPolicy

    if spec == "random":
        return RandomPolicy(scenario.n_actions, seed=seed)
    if spec == "gradient":
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


def _check_actions(actions, spec: str, n_agents: int, n_actions: int) -> np.ndarray:
    arr = np.asarray(actions)
    expected = f"{n_agents} integer actions in 0..{n_actions - 1}, shape ({n_agents},)"
    if arr.dtype.kind not in "iu" or arr.shape != (n_agents,):
        raise PlumeError(f"policy {spec!r} returned shape {arr.shape} dtype {arr.dtype}; expected {expected}")
    if arr.size and (arr.min() < 0 or arr.max() >= n_actions):
        raise PlumeError(f"policy {spec!r} returned actions in {arr.min()}..{arr.max()}; expected {expected}")
    return arr.astype(np.int64, copy=False)


# ----------------------------------------------------------------------------------------- render
def _check_output(path: str, suffixes: tuple, option: str) -> Path:
    p = Path(path)
    if p.suffix.lower() not in suffixes:
        raise UsageError(f"{option}: got {path!r}; expected a file name ending in {' or '.join(suffixes)}")
    return check_writable(p, option)


def _check_extras(want_movie: bool) -> None:
    """Fail before the run, not after it, when an optional extra is missing."""
    from .recording import MOVIE_EXTRA, VIZ_EXTRA

    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise RenderingError(f"the PNG needs matplotlib: {VIZ_EXTRA}") from exc
    if want_movie:
        try:
            import imageio  # noqa: F401
        except ImportError as exc:
            raise RenderingError(f"the movie needs imageio: {MOVIE_EXTRA}; or pass --no-movie") from exc


def _render(args) -> int:
    from .recording import TrajectoryRecorder
    from .scenario import Scenario
    from .simulator import MAX_SEED, Simulator

    for name in ("agents", "steps"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name}: got {getattr(args, name)}; expected an integer >= 1")
    if not 0 <= args.seed <= MAX_SEED:
        raise UsageError(f"--seed: got {args.seed}; expected an integer in 0..{MAX_SEED}")
    if args.every is not None and args.every < 1:
        raise UsageError(f"--every: got {args.every}; expected an integer >= 1")
    if args.trail < 0:
        raise UsageError(f"--trail: got {args.trail}; expected an integer >= 0")
    if args.scale is not None and not 1 <= args.scale <= 64:
        raise UsageError(f"--scale: got {args.scale}; expected an integer in 1..64")
    if not (0 < args.fps <= 100):
        raise UsageError(f"--fps: got {args.fps}; expected a number with 0 < fps <= 100")
    png = _check_output(args.png, (".png",), "--png")
    movie = None if args.no_movie else _check_output(args.movie, (".gif", ".mp4"), "--movie")

    kwargs = dict(grid_size=tuple(args.grid), source_location=None if args.source is None else tuple(args.source),
                  sigma=args.sigma, n_agents=args.agents, max_steps=args.steps, action_model=args.action_model,
                  n_neighbours=args.neighbours, team=args.team)
    if args.goal_radius is not None:
        kwargs["goal_radius"] = args.goal_radius
    try:
        scenario = Scenario(**kwargs)
    except ValidationError as exc:
        message = str(exc)
        field = message.split(":")[0].removeprefix("Scenario.")
        flag = _SCENARIO_FLAGS.get(field)
        raise UsageError(f"{flag} ({message})" if flag else message) from exc
    _check_extras(movie is not None)
    policy = load_policy(args.policy, scenario, seed=args.seed)

    sim = Simulator(scenario, num_worlds=1, autoreset="disabled")
    obs = sim.reset(seed=args.seed)
    recorder = TrajectoryRecorder.from_simulator(sim)
    n = scenario.n_agents
    w, h = scenario.grid_size
    print(f"{args.policy}: {n} agent{'s' if n != 1 else ''} on a {w}x{h} grid, source at "
          f"{scenario.source_location}, at most {scenario.max_steps} steps (seed {args.seed})")
    steps = 0
    with progress_bar(scenario.max_steps, "render", quiet=args.quiet) as bar:
        for steps in range(1, scenario.max_steps + 1):
            try:
                raw = policy(obs.copy())
            except Exception as exc:  # the user's policy failed: say so in one line
                raise PlumeError(f"policy {args.policy!r} raised {type(exc).__name__}: {exc}") from exc
            obs, _, _, _ = sim.step(_check_actions(raw, args.policy, n, scenario.n_actions))
            recorder.record()
            bar.set_postfix_str(f"finished {n - int(sim.active.sum())}/{n}", refresh=False)
            bar.update()
            if not sim.active.any():
                break

    finished = ~sim.active
    lengths = sim.episode_length[finished]
    line = f"after {steps} step{'s' if steps != 1 else ''}: {int(finished.sum())}/{n} agents finished"
    if finished.any():
        line += f" (mean {lengths.mean():.1f} steps to finish)"
    print(line)

    png.parent.mkdir(parents=True, exist_ok=True)
    recorder.save_png(png)
    print(f"wrote {png}")
    if movie is not None:
        movie.parent.mkdir(parents=True, exist_ok=True)
        every = args.every if args.every is not None else max(1, math.ceil(steps / (MAX_FRAMES - 1)))
        total = steps // every + 1 + (1 if steps % every else 0)
        with progress_bar(total, "movie", quiet=args.quiet, unit="frame") as bar:
            recorder.save_movie(movie, fps=args.fps, trail=args.trail, scale=args.scale, every=every,
                                progress=lambda k, _total: bar.update(k - bar.n))
        print(f"wrote {movie} ({total} frames, one every {every} step{'s' if every != 1 else ''})")
    return 0


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
    return _one_line_errors(f"{PROG} {args.command}", lambda: _render(args))


if __name__ == "__main__":
    raise SystemExit(main())
