"""Record a search: a PNG of the trajectories and a movie (GIF, or MP4 with imageio-ffmpeg).

Two ways:
1. ``TrajectoryRecorder`` on a ``Simulator``: it keeps positions only and draws the frames (with
   trails) when the movie is written; it also draws the trajectory picture.
2. Any env made with ``render_mode="rgb_array"``: collect ``env.render()`` frames and pass them
   to ``write_movie``.
Needs the extras: pip install 'plume-multi[viz,movie]'.

    python examples/record_movie.py [--agents 12] [--size 96 64] [--steps 300] [--out recordings]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from plume_multi import Scenario, Simulator, parallel_env
from plume_multi.policies import GradientClimber
from plume_multi.viz.recording import TrajectoryRecorder, write_movie


def record_simulator(scenario: Scenario, out: Path, seed: int, movie_suffix: str) -> list[Path]:
    sim = Simulator(scenario, autoreset="disabled")  # one episode: no autoreset
    obs = sim.reset(seed=seed)
    recorder = TrajectoryRecorder.from_simulator(sim)
    policy = GradientClimber(scenario.n_actions, seed=seed)
    for _ in range(scenario.max_steps):
        obs, reward, terminated, truncated = sim.step(policy(obs))
        recorder.record()
        if not sim.active.any():
            break
    return [recorder.save_png(out / "search.png"),
            recorder.save_movie(out / f"search{movie_suffix}", fps=20, trail=16)]


def record_env(scenario: Scenario, out: Path, seed: int) -> Path:
    env = parallel_env(n_agents=scenario.n_agents, grid_size=scenario.grid_size,
                       max_cycles=scenario.max_steps, render_mode="rgb_array")
    env.reset(seed=seed)
    frames = [env.render()]
    while env.agents:
        env.step({agent: env.action_space(agent).sample() for agent in env.agents})  # random walkers
        frames.append(env.render())
    env.close()
    return write_movie(out / "parallel_env.gif", frames, fps=20)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=12)
    parser.add_argument("--size", type=int, nargs=2, default=(96, 64), metavar=("WIDTH", "HEIGHT"))
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("recordings"), help="output folder (default recordings)")
    parser.add_argument("--mp4", action="store_true", help="write MP4 instead of GIF (needs imageio-ffmpeg)")
    args = parser.parse_args(argv)

    args.out.mkdir(parents=True, exist_ok=True)
    scenario = Scenario(n_agents=args.agents, grid_size=tuple(args.size), max_steps=args.steps)
    written = record_simulator(scenario, args.out, args.seed, ".mp4" if args.mp4 else ".gif")
    written.append(record_env(scenario, args.out, args.seed))
    for path in written:
        print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
