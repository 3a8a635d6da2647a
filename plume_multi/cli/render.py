"""``plume-multi render``: run a policy on one world of a scenario until every agent has finished or
the step limit; write a PNG of all trajectories and a movie of the search."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from ..errors import PlumeError
from . import POLICY_HELP, UsageError, check_extras, check_writable, progress_bar
from .policies import load_policy
from .scenario_flags import add_scenario_arguments, scenario_from_args

MAX_FRAMES = 300  # movie frames when --every is not given: long runs are subsampled to this
DEFAULT_AGENTS, DEFAULT_STEPS = 16, 500


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
                   help="a built-in name (random, gradient, surge-cast, infotaxis, space-aware-infotaxis, greedy), "
                        "a comma-separated team of them, or MODULE:NAME (see below; default gradient)")
    g.add_argument("--seed", type=int, default=0, metavar="S", help="seeds the start positions and the policy (default 0)")
    add_scenario_arguments(render, agents=DEFAULT_AGENTS, steps=DEFAULT_STEPS)
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


def run(args) -> int:
    """``plume-multi render``: the run, the PNG and the movie."""
    from ..simulator import MAX_SEED, Simulator
    from ..viz.recording import TrajectoryRecorder

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
    # every argument is checked before anything is written (the folders of --png and --movie are
    # created only when the pictures are)
    scenario = scenario_from_args(args, agents=DEFAULT_AGENTS, steps=DEFAULT_STEPS)
    png = _check_output(args.png, (".png",), "--png")
    movie = None if args.no_movie else _check_output(args.movie, (".gif", ".mp4"), "--movie")
    check_extras(movie is not None)
    policy = load_policy(args.policy, scenario, seed=args.seed)

    sim = Simulator(scenario, num_worlds=1, autoreset="disabled")
    obs = sim.reset(seed=args.seed)
    recorder = TrajectoryRecorder.from_simulator(sim)
    n = scenario.n_agents
    grid = "x".join(str(side) for side in scenario.grid_size)  # a scenario file may be 3-D
    source = tuple(int(c) if float(c).is_integer() else float(c) for c in sim.sources[0])
    print(f"{args.policy}: {n} agent{'s' if n != 1 else ''} on a {grid} grid, source at "
          f"{source}, at most {scenario.max_steps} steps (seed {args.seed})")
    steps = 0
    with progress_bar(scenario.max_steps, "render", quiet=args.quiet) as bar:
        for steps in range(1, scenario.max_steps + 1):
            try:
                raw = policy.act(sim) if callable(getattr(policy, "act", None)) else policy(obs.copy())
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

