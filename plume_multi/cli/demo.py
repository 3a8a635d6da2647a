"""The demo: 64 searchers in one plume, using only what they sense.

Each agent climbs the concentration it senses (run-and-tumble: keep going while it rises, turn
at random when it falls). The demo compares that rule with random walkers on the same starts,
then runs the same search in many worlds at once to show what the engine does per second, and
writes a picture of the trajectories.

    plume-multi demo [--agents 64] [--steps 1000] [--seed 0] [--worlds 256] [--out demo_output]
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from . import ArgumentParser, UsageError, check_writable, progress_bar
from ..policies import GradientClimber, RandomPolicy
from ..scenario import Scenario
from ..simulator import Simulator


def search(scenario: Scenario, policy, *, num_worlds: int = 1, seed: int = 0, progress=None,
           trajectory: list | None = None) -> dict:
    """Run one episode in every world (no autoreset) until all agents found the source or time ran out.

    ``progress``: an optional tqdm bar, advanced by one per step and by the steps left when the
    search ends early (so a bar over several searches ends full).

    Returns found (agents that reached the source), agents, mean_steps (mean steps to the source
    of those that did), steps (steps run), seconds, and agent_steps_per_s (engine + policy).
    """
    sim = Simulator(scenario, num_worlds, autoreset="disabled")
    obs = sim.reset(seed=seed)
    if trajectory is not None:
        trajectory.append(sim.positions.copy())
    start = time.perf_counter()
    steps = 0
    for steps in range(1, scenario.max_steps + 1):
        obs, _, _, _ = sim.step(policy(obs))
        if trajectory is not None:
            trajectory.append(sim.positions.copy())
        if progress is not None:
            progress.set_postfix_str(f"found {int((~sim.active).sum())}/{sim.total_agents}", refresh=False)
            progress.update()
        if not sim.active.any():
            break
    seconds = time.perf_counter() - start
    if progress is not None:
        progress.update(scenario.max_steps - steps)
    found = ~sim.active
    return {
        "found": int(found.sum()),
        "agents": sim.total_agents,
        "mean_steps": float(sim.episode_length[found].mean()) if found.any() else float("nan"),
        "steps": steps,
        "seconds": seconds,
        "agent_steps_per_s": sim.total_agents * steps / seconds,
        "final_active": sim.active.copy(),
    }


def _compile_kernels(scenario: Scenario, quiet: bool) -> None:
    """Run one tiny step so Numba compiles (or loads its cache) before anything is timed."""
    start = time.perf_counter()
    sim = Simulator(scenario.replace(n_agents=1, n_neighbours=0), 1, autoreset="disabled")
    sim.reset(seed=0)
    sim.step(np.zeros(1, np.int64))
    seconds = time.perf_counter() - start
    if seconds > 1 and not quiet:
        print(f"(compiled the kernels in {seconds:.0f} s; Numba caches them, so later runs start at once)")


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(prog="plume-multi demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=64, help="searchers in the shared field (default 64)")
    parser.add_argument("--steps", type=int, default=1000, help="step limit of the episode (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the start positions and the policies")
    parser.add_argument("--worlds", type=int, default=256, help="worlds in the batched throughput run (default 256)")
    parser.add_argument("--out", default="demo_output", help="folder for the picture (default demo_output)")
    parser.add_argument("--no-picture", action="store_true", help="do not write the picture")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    for name in ("agents", "steps", "worlds"):
        if getattr(args, name) < 1:
            parser.error(f"--{name}: got {getattr(args, name)}; expected an integer >= 1")
    if not 0 <= args.seed <= 2**31 - 1:
        parser.error(f"--seed: got {args.seed}; expected an integer in 0..{2**31 - 1}")
    if not args.no_picture:  # fail before the run, not after it
        try:
            check_writable(Path(args.out) / "demo.png", "--out")
        except UsageError as exc:
            parser.error(str(exc))

    scenario = Scenario(n_agents=args.agents, max_steps=args.steps)
    w, h = scenario.grid_size
    print(f"{args.agents} agents search a {w}x{h} plume (sigma {scenario.sigma}) for the source at "
          f"{scenario.source_location}, at most {args.steps} steps.")
    _compile_kernels(scenario, quiet=args.quiet)
    trajectory: list = []
    results = {}
    # One bar over the three searches (each counts its step limit).
    with progress_bar(3 * args.steps, "demo", quiet=args.quiet) as bar:
        for name, policy in (("gradient climbing", GradientClimber(seed=args.seed)),
                             ("random walk", RandomPolicy(seed=args.seed))):
            bar.set_description(name, refresh=False)
            results[name] = search(scenario, policy, seed=args.seed, progress=bar,
                                   trajectory=trajectory if name == "gradient climbing" else None)
        bar.set_description(f"{args.worlds} worlds", refresh=False)
        batched = search(scenario, GradientClimber(seed=args.seed), num_worlds=args.worlds, seed=args.seed,
                         progress=bar)

    rows = [["policy", "worlds", "found the source", "mean steps to find it", "agent-steps/s"]]
    for name, r in (*results.items(), ("gradient climbing", batched)):
        worlds = str(r["agents"] // args.agents)
        rows.append([name, worlds, f"{r['found']}/{r['agents']}", (f"{r['mean_steps']:.1f}" if r["found"] else "-"),
                     f"{r['agent_steps_per_s'] / 1e6:.2f} M"])
    print()
    print(_table(rows))
    print("\n(agent-steps/s includes the Python policy; `plume-multi bench` measures the engine alone.)")

    if not args.no_picture:
        path = _write_picture(scenario, trajectory, results["gradient climbing"]["final_active"], Path(args.out))
        if path is not None:
            print(f"\nPicture of the gradient-climbing trajectories: {path}")
    return 0


def _write_picture(scenario: Scenario, trajectory: list, final_active, out: Path):
    """PNG of every trajectory over the field (matplotlib, the ``viz`` extra); None without it."""
    try:
        from ..viz.recording import save_trajectory_png
    except ImportError:
        return None
    out.mkdir(parents=True, exist_ok=True)
    path = out / "demo.png"
    save_trajectory_png(path, Simulator(scenario).field, np.stack(trajectory), source=scenario.source_location,
                        active=final_active)
    return path


if __name__ == "__main__":
    raise SystemExit(main())
