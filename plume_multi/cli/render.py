"""``plume-multi render``: run a policy on one world of a scenario until every agent has finished or
the step limit; write a PNG of all trajectories and a movie of the search."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from ..errors import PlumeError, ValidationError
from . import (_SCENARIO_FLAGS, POLICY_HELP, UsageError, _check_extras, check_writable, load_policy, parse_model,
               progress_bar)

MAX_FRAMES = 300  # movie frames when --every is not given: long runs are subsampled to this


def add_parser(sub) -> None:
    """Add the ``render`` command to the subparsers ``sub``."""
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


def _check_output(path: str, suffixes: tuple, option: str) -> Path:
    p = Path(path)
    if p.suffix.lower() not in suffixes:
        raise UsageError(f"{option}: got {path!r}; expected a file name ending in {' or '.join(suffixes)}")
    return check_writable(p, option)


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


def run(args) -> int:
    """``plume-multi render``: the run, the PNG and the movie."""
    from ..simulator import MAX_SEED, Simulator
    from ..viz.recording import TrajectoryRecorder

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

