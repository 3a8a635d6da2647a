"""Searchers after sources that move: a picture of two run-and-tumble sources and the agents' tracks.

A Gaussian plume of two sources, drawn anywhere at the reset and each running and tumbling
(``plumes.Gaussian(source="random", n_sources=2, source_motion=sources.RandomWalk(...))``: the
concentration is the sum of the two plumes, clipped to 1); gradient
climbers (``policies.GradientClimber``) chase them, and an agent stops on the first source it
reaches. The picture: the plume at the last step, each source's track (a white line from a hollow
circle to a red star), each agent's path in its own colour. Needs the ``viz`` extra (matplotlib).

    python examples/moving_sources.py [--agents 12] [--steps 300] [--seed 1] [--png docs/moving_sources.png]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from plume_multi import Scenario, Simulator, plumes, sources
from plume_multi.policies import GradientClimber


def run(agents: int, steps: int, seed: int, size=(96, 72)):
    """Source tracks ``(T + 1, K, 2)``, agent tracks ``(T + 1, N, 2)``, the last field, arrivals."""
    w, h = size
    plume = plumes.Gaussian(source="random", n_sources=2, sigma=8.0,
                            source_motion=sources.RandomWalk(speed=0.35, persistence=40.0))
    sim = Simulator(Scenario(grid_size=size, plume=plume, n_agents=agents, max_steps=steps, goal_radius=1.5),
                    autoreset="disabled")
    obs = sim.reset(seed=seed)
    policy = GradientClimber(seed=seed)
    src, pos = [sim.source_positions[0].copy()], [sim.positions.copy()]
    for _ in range(steps):
        obs, reward, terminated, truncated = sim.step(policy(obs))
        src.append(sim.source_positions[0].copy())
        pos.append(sim.positions.copy())
        if terminated.all():
            break
    return np.array(src), np.array(pos), sim.plume_image(0), sim.state.terminated.copy(), sim.sources_found[0]


def draw(path: Path, src, pos, field, arrived, found) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from plume_multi.viz.render import agent_colours

    h, w = field.shape
    fig, ax = plt.subplots(figsize=(7.2, 7.2 * h / w + 0.5), dpi=110)
    ax.imshow(field, origin="lower", cmap="viridis", vmin=0.0, vmax=1.0, extent=(-0.5, w - 0.5, -0.5, h - 0.5))
    colours = agent_colours(pos.shape[1]) / 255.0
    for n in range(pos.shape[1]):
        ax.plot(pos[:, n, 0], pos[:, n, 1], color=colours[n], lw=1.0, alpha=0.9)
        ax.plot(*pos[0, n], "o", mfc="none", mec=colours[n], ms=5)
        ax.plot(*pos[-1, n], "D" if arrived[n] else "o", color="white" if arrived[n] else colours[n], ms=4)
    for k in range(src.shape[1]):
        ax.plot(src[:, k, 0], src[:, k, 1], color="white", lw=2.0)
        ax.plot(*src[0, k], "o", mfc="none", mec="white", ms=9, mew=2)
        ax.plot(*src[-1, k], "*", color="red", ms=15, mec="white")
    ax.set_xlim(-0.5, w - 0.5)
    ax.set_ylim(-0.5, h - 0.5)
    ax.set_title(f"Two run-and-tumble sources over {len(src) - 1} steps: {int(arrived.sum())} of {pos.shape[1]} "
                 f"searchers reached one; sources found: {int(found.sum())} of {len(found)}", fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=12)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--png", type=Path, default=Path("moving_sources.png"))
    args = parser.parse_args(argv)
    src, pos, field, arrived, found = run(args.agents, args.steps, args.seed)
    travelled = np.linalg.norm(np.diff(src, axis=0), axis=2).sum(axis=0)
    print(f"{args.agents} searchers, {len(src) - 1} steps: {int(arrived.sum())} reached a source; "
          f"the sources travelled {', '.join(f'{d:.0f}' for d in travelled)} cells")
    draw(args.png, src, pos, field, arrived, found)
    print(f"picture: {args.png}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
