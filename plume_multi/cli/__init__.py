"""The ``plume-multi`` command.

    plume-multi demo   [...]   the README's demo: 64 searchers, results table and a picture
    plume-multi bench  [...]   the engine benchmark table
    plume-multi render [...]   run a policy on a scenario, write a PNG of the trajectories and a GIF
    plume-multi eval   [...]   evaluate a policy on many seeded episodes: statistics, CSV, JSON, PNG

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
    g.add_argument("--scenario", default=None, metavar="FILE.json",
                   help="the whole scenario from a JSON file (Scenario.metadata()'s shape; see below)")
    g.add_argument("--agents", type=int, default=None, metavar="N", help="searchers in the world (default 16)")
    g.add_argument("--grid", type=int, nargs=2, default=None, metavar=("WIDTH", "HEIGHT"),
                   help="grid size in cells (default 128 128, or a movie's own size)")
    g.add_argument("--source", type=int, nargs=2, default=None, metavar=("X", "Y"),
                   help="source cell of the default plume (default the centre)")
    g.add_argument("--sigma", type=float, default=None, metavar="S",
                   help="spread of the default plume in cells (default 12)")
    g.add_argument("--steps", type=int, default=None, metavar="N", help="step limit of the episode (default 500)")
    g.add_argument("--goal-radius", type=float, default=None, metavar="R",
                   help="distance to the source that counts as found (default: the source cell only)")
    g.add_argument("--action-model", choices=("cardinal", "moore"), default=None,
                   help="4 moves, or 8 moves + stay (default cardinal; --body takes any body)")
    g.add_argument("--plume", default=None, metavar="MODEL", help="plume model, e.g. gaussian:sigma=8,source=random")
    g.add_argument("--body", default=None, metavar="MODEL", help="body (action model), e.g. oriented:turn_degrees=45")
    g.add_argument("--sensors", nargs="+", default=None, metavar="MODEL",
                   help="the sensors, in order, e.g. concentration antennae:distance=2 wind heading")
    g.add_argument("--reward", default=None, metavar="MODEL", help="reward model, e.g. step_penalty:step_penalty=0.01")
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
    ev = sub.add_parser(
        "eval",
        help="evaluate a policy on many seeded episodes: statistics, CSV, JSON and a plot",
        description="Run EPISODES episodes of a scenario (episode e seeded SEED + e) as parallel worlds, until\n"
                    "every agent has arrived or the step limit; write per-episode results (CSV, JSON) and a\n"
                    "plot of the search-time distribution (PNG).",
        epilog=POLICY_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    g = ev.add_argument_group("evaluation")
    g.add_argument("--policy", default="gradient", metavar="POLICY", help="random, gradient or MODULE:NAME (default gradient)")
    g.add_argument("--episodes", type=int, default=1000, metavar="E", help="episodes (default 1000)")
    g.add_argument("--seed", type=int, default=0, metavar="S", help="episode e is seeded S + e (default 0)")
    g.add_argument("--worlds", type=int, default=None, metavar="B", help="worlds run at once (default min(E, 1024))")
    g.add_argument("--until", choices=("first", "all"), default="first",
                   help="search time: until the first agent arrives, or all (default first)")
    g.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help="shard the episodes across Ray tasks; ADDRESS of a running cluster (default: "
                        "RAY_ADDRESS, else a local Ray)")
    g.add_argument("--tasks", type=int, default=None, metavar="T", help="Ray tasks (default: 2 per cluster CPU)")
    g = ev.add_argument_group("scenario")
    g.add_argument("--agents", type=int, default=1, metavar="N", help="searchers per world (default 1)")
    g.add_argument("--grid", type=int, nargs=2, default=(128, 128), metavar=("WIDTH", "HEIGHT"),
                   help="grid size in cells (default 128 128)")
    g.add_argument("--source", type=int, nargs=2, default=None, metavar=("X", "Y"), help="source cell (default the centre)")
    g.add_argument("--sigma", type=float, default=12.0, metavar="S", help="plume spread in cells (default 12)")
    g.add_argument("--steps", type=int, default=1000, metavar="N", help="step limit of an episode (default 1000)")
    g.add_argument("--goal-radius", type=float, default=None, metavar="R", help="distance that counts as found")
    g.add_argument("--action-model", choices=("cardinal", "moore"), default="cardinal")
    g.add_argument("--neighbours", type=int, default=0, metavar="K", help="each agent senses its K nearest agents")
    g.add_argument("--team", action="store_true", help="the first arrival ends the search for all")
    g = ev.add_argument_group("output")
    g.add_argument("--out", default="eval_output/eval", metavar="PREFIX",
                   help="writes PREFIX.csv, PREFIX.json, PREFIX.png (default eval_output/eval)")
    g.add_argument("--no-plot", action="store_true", help="no PNG (matplotlib not needed)")
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
        from ..models.actions import Cardinal, Moore

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


def _check_actions(actions, spec: str, n_agents: int, n_actions: int | None) -> np.ndarray:
    arr = np.asarray(actions)
    if n_actions is None:  # a continuous body: (speed, turn) rows, clipped by the body
        expected = f"{n_agents} rows of 2 finite numbers, shape ({n_agents}, 2)"
        if arr.dtype.kind not in "fiu" or arr.shape != (n_agents, 2) or not np.isfinite(arr).all():
            raise PlumeError(f"policy {spec!r} returned shape {arr.shape} dtype {arr.dtype}; expected {expected}")
        return arr.astype(np.float64, copy=False)
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


def _scenario(args):
    """The scenario the flags describe (or ``--scenario``'s file, with the flags given beside it)."""
    from ..scenario import Scenario

    models = {"plume": args.plume, "action_model": args.body, "reward": args.reward}
    if args.scenario is not None:
        given = [flag for flag, value in (("--plume", args.plume), ("--body", args.body), ("--sensors", args.sensors),
                                          ("--reward", args.reward), ("--source", args.source),
                                          ("--sigma", args.sigma), ("--action-model", args.action_model)) if value]
        if given:
            raise UsageError(f"{given[0]}: got it with --scenario; the scenario file gives the models (edit it, or "
                             "leave --scenario out)")
        from ..scenario import load_scenario

        try:
            scenario = load_scenario(args.scenario)
        except ValidationError as exc:
            raise UsageError(f"--scenario: {exc}") from None
        changes = {field: value for field, value in (
            ("grid_size", None if args.grid is None else tuple(args.grid)), ("n_agents", args.agents),
            ("max_steps", args.steps), ("goal_radius", args.goal_radius),
            ("n_neighbours", args.neighbours or None), ("team", args.team or None)) if value is not None}
        return _scenario_errors(lambda: scenario.replace(**changes) if changes else scenario)
    if args.body is not None and args.action_model is not None:
        raise UsageError("--body: got it with --action-model; give one of them")
    if args.plume is not None:
        for flag, value in (("--sigma", args.sigma), ("--source", args.source)):
            if value is not None:
                raise UsageError(f"{flag}: got it with --plume; give the plume's parameters in --plume "
                                 "(e.g. gaussian:sigma=8,source=10,20)")
    kwargs = dict(grid_size=None if args.grid is None else tuple(args.grid),
                  source_location=None if args.source is None else tuple(args.source), sigma=args.sigma,
                  n_agents=16 if args.agents is None else args.agents,
                  max_steps=500 if args.steps is None else args.steps,
                  action_model=args.action_model or "cardinal", n_neighbours=args.neighbours, team=args.team)
    families = {"plume": "plume", "action_model": "action", "reward": "reward"}
    flags = {"plume": "--plume", "action_model": "--body", "reward": "--reward"}
    for key, spec in models.items():
        if spec is not None:
            kwargs[key] = parse_model(spec, families[key], flags[key])
    if args.sensors is not None:
        kwargs["sensors"] = tuple(parse_model(spec, "sensor", "--sensors") for spec in args.sensors)
    if args.goal_radius is not None:
        kwargs["goal_radius"] = args.goal_radius
    return _scenario_errors(lambda: Scenario(**kwargs))


def _scenario_errors(build):
    """``build()``, with a Scenario error turned into a UsageError naming its flag."""
    try:
        return build()
    except ValidationError as exc:
        message = str(exc)
        field = message.split(":")[0].removeprefix("Scenario.")
        flag = _SCENARIO_FLAGS.get(field)
        raise UsageError(f"{flag} ({message})" if flag else message) from exc


def _render(args) -> int:
    from ..viz.recording import TrajectoryRecorder
    from ..scenario import Scenario
    from ..simulator import MAX_SEED, Simulator

    for name in ("agents", "steps"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
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

    scenario = _scenario(args)
    _check_extras(movie is not None)
    policy = load_policy(args.policy, scenario, seed=args.seed)

    sim = Simulator(scenario, num_worlds=1, autoreset="disabled")
    obs = sim.reset(seed=args.seed)
    recorder = TrajectoryRecorder.from_simulator(sim)
    n = scenario.n_agents
    w, h = scenario.grid_size
    source = tuple(int(c) if float(c).is_integer() else float(c) for c in sim.sources[0])
    print(f"{args.policy}: {n} agent{'s' if n != 1 else ''} on a {w}x{h} grid, source at "
          f"{source}, at most {scenario.max_steps} steps (seed {args.seed})")
    steps = 0
    with progress_bar(scenario.max_steps, "render", quiet=args.quiet) as bar:
        for steps in range(1, scenario.max_steps + 1):
            try:
                raw = policy(obs.copy())
            except Exception as exc:  # the user's policy failed: say so in one line
                raise PlumeError(f"policy {args.policy!r} raised {type(exc).__name__}: {exc}") from exc
            n_actions = None if scenario.continuous else scenario.n_actions
            obs, _, _, _ = sim.step(_check_actions(raw, args.policy, n, n_actions))
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


# ----------------------------------------------------------------------------------------- eval
def _eval(args) -> int:
    """``plume-multi eval``: ``plume_multi.evaluate`` with a progress bar, then CSV, JSON and PNG."""
    from ..evaluation import evaluate
    from ..policies import GradientClimber, RandomPolicy
    from ..scenario import Scenario
    from ..simulator import MAX_SEED

    for name in ("episodes", "agents", "steps"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name}: got {getattr(args, name)}; expected an integer >= 1")
    for name in ("worlds", "tasks"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            raise UsageError(f"--{name}: got {getattr(args, name)}; expected an integer >= 1")
    if not 0 <= args.seed <= MAX_SEED - args.episodes + 1:
        raise UsageError(f"--seed: got {args.seed}; expected an integer in 0..{MAX_SEED - args.episodes + 1}")
    kwargs = dict(grid_size=tuple(args.grid), source_location=None if args.source is None else tuple(args.source),
                  sigma=args.sigma, n_agents=args.agents, max_steps=args.steps, action_model=args.action_model,
                  n_neighbours=args.neighbours, team=args.team)
    if args.goal_radius is not None:
        kwargs["goal_radius"] = args.goal_radius
    try:
        scenario = Scenario(**kwargs)
    except ValidationError as exc:
        field = str(exc).split(":")[0].removeprefix("Scenario.")
        flag = _SCENARIO_FLAGS.get(field)
        raise UsageError(f"{flag} ({exc})" if flag else str(exc)) from exc
    if not args.no_plot:
        _check_extras(False)
    # Built-ins as factories, so every chunk of worlds gets its own seeded policy; MODULE:NAME as
    # given (a factory is called per chunk, a plain policy copied per chunk).
    builtin = {"random": RandomPolicy, "gradient": GradientClimber}
    if args.policy in builtin:
        policy = builtin[args.policy]
    else:
        load_policy(args.policy, scenario, seed=args.seed)  # check it now, with the CLI's messages
        module_name, _, attr = args.policy.rpartition(":")
        policy = _import_target(module_name)
        for part in attr.split("."):
            policy = getattr(policy, part)
    executor = "local"
    if args.ray is not None:
        try:
            import ray
        except ImportError as exc:
            raise UsageError("--ray needs Ray: pip install 'plume-multi[rllib]'") from exc
        ray.init(address=args.ray or None, logging_level="ERROR", log_to_driver=False, ignore_reinit_error=True)
        executor = "ray"
    w, h = scenario.grid_size
    print(f"{args.policy}: {args.episodes} episodes of {scenario.n_agents} agent(s) on a {w}x{h} grid, at most "
          f"{scenario.max_steps} steps (seeds {args.seed}..{args.seed + args.episodes - 1}, {executor})")
    result = evaluate(policy, scenario, args.episodes, args.seed, num_worlds=args.worlds, executor=executor,
                      progress=not args.quiet, until=args.until, tasks=args.tasks)
    lo, hi = result.success_interval()
    print(f"success: {result.success_rate:.1%} (95% interval {lo:.1%}..{hi:.1%})")
    if result.success.any():
        mlo, mhi = result.mean_interval()
        pct = ", ".join(f"p{k} {v:g}" for k, v in result.percentiles().items())
        print(f"steps until {'the first' if args.until == 'first' else 'every'} arrival: mean {result.mean:.1f} "
              f"(95% interval {mlo:.1f}..{mhi:.1f}); {pct}")
    out = Path(args.out)
    for path in (result.to_csv(out.with_name(out.name + ".csv")), result.to_json(out.with_name(out.name + ".json")),
                 *(() if args.no_plot else (result.plot(out.with_name(out.name + ".png")),))):
        print(f"wrote {path}")
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
    return _one_line_errors(f"{PROG} {args.command}", lambda: _eval(args) if args.command == "eval" else _render(args))

