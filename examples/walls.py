#!/usr/bin/env python
"""Searchers among walls: the pictures of the docs' walls page.

    python examples/walls.py --out docs      # docs/walls.png, docs/walls-scene.png (2-D), docs/walls-3d.png

2-D: three worlds of the default scenario (a 96 x 64 Gaussian plume, ``Cardinal`` moves,
``Concentration`` + ``Position``) among walls, each world drawing one of two floor plans per
episode. One searcher per world runs and tumbles on the concentration it reads: it keeps its
direction while the reading does not drop and it moves, else it draws a new one (a move into a
wall is refused: the searcher stays where it was). The picture is the front-ends' own ``render_frame`` with each searcher's whole
path as its trail, walls in grey.

The scene (``--out``'s walls-scene.png): a puff plume of two sources that run and tumble
(``sources.RandomWalk``) in a wind that switches direction every second
(``plumes.Wind(regime="switch-many")``), among a partition and a shelf; puffs reflect off the walls
and a source's move into a wall is refused. Two searchers run and tumble on what they smell. The
picture is the front-ends' own frame (``render()``: walls, both sources where they are, the wind's
arrow, the searchers and their last steps) at three times.

3-D: two searchers with a continuous body (``bodies.Continuous``, velocities) in a 24 x 16 x 12
volume with a floor slab and a pillar, heading for the source with some noise: each stops at the
face of the first solid cell on its way. The picture is ``render_volume``'s three views (slices
through the source), walls in grey.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from plume_multi import Scenario, Simulator, bodies, plumes, sensors, sources
from plume_multi.viz.recording import TrajectoryRecorder
from plume_multi.viz.render import render_frame
from plume_multi.viz.volume import render_volume

GAP = np.full((1, 1, 3), 20, np.uint8)


def floor_plans(width: int, height: int) -> list:
    """Two ``(height, width)`` masks, the source (the centre) free: a room around the source with a
    door on its right side; a corridor wall with doors."""
    x0, x1, y0, y1 = width // 3, 2 * width // 3, height // 4, 3 * height // 4
    door = max(2, height // 8)
    room = np.zeros((height, width), bool)
    room[y0, x0:x1 + 1] = room[y1, x0:x1 + 1] = True
    room[y0:y1 + 1, x0] = room[y0:y1 + 1, x1] = True
    room[y0 + 1:y0 + 1 + door, x1] = False
    corridor = np.zeros((height, width), bool)
    corridor[y0, :x1] = True
    corridor[y0:, x1] = True
    corridor[y0, width // 8:width // 8 + door] = False
    corridor[y1:y1 + door, x1] = False
    return [room, corridor]


def run_and_tumble(sim: Simulator, steps: int, seed: int) -> list:
    """Each world's recorder (every agent's path), until every agent finds a source or ``steps``
    pass."""
    rng = np.random.default_rng(seed)
    obs = sim.reset(seed=seed)
    rows = sim.total_agents
    recorders = [TrajectoryRecorder.from_simulator(sim, b) for b in range(sim.num_worlds)]
    action = rng.integers(0, 4, rows)
    last, before = obs[:, 0].copy(), sim.positions.copy()
    for _ in range(steps):
        tumble = (obs[:, 0] < last) | (sim.positions == before).all(axis=1)  # worse, or a wall
        action = np.where(tumble, rng.integers(0, 4, rows), action)
        last, before = obs[:, 0].copy(), sim.positions.copy()
        obs, _, _, _ = sim.step(action)
        for rec in recorders:
            rec.record()
        if not sim.active.any():
            break
    return recorders


def picture_2d(size, steps: int, seed: int, scale: int) -> np.ndarray:
    w, h = size
    sim = Simulator(Scenario(grid_size=(w, h), sigma=w / 6, walls=floor_plans(w, h), max_steps=steps + 1),
                    num_worlds=3, autoreset="disabled")
    panels = []
    for b, rec in enumerate(run_and_tumble(sim, steps, seed)):
        trail = rec.positions
        panels.append(render_frame(sim.plume_image(b), trail[-1], source=rec.source, active=rec.active[-1],
                                   trails=trail[:-1] if len(trail) > 1 else None, scale=scale, walls=rec.walls))
        panels.append(np.broadcast_to(GAP, (panels[-1].shape[0], 2 * scale, 3)))
    return np.concatenate(panels[:-1], axis=1)


def scene(size=(96, 48), max_steps: int = 1000) -> Scenario:
    """Walls, two moving sources and a switching wind: a ``size`` grid (2:1) over a 48 x 24 m
    region, a partition open at the top and a shelf; puffs from two run-and-tumble sources in a
    wind that turns every second; two searchers. The same scene runs in every front-end
    (``parallel_env(plume=..., walls=...)``, ``vector_env``, ``multi_agent_vector_env``)."""
    w, h = size
    walls = np.zeros((h, w), bool)
    walls[: 5 * h // 8, w // 2] = True  # a partition, open at the top
    walls[3 * h // 8:3 * h // 8 + max(1, h // 16), 5 * w // 8:5 * w // 6] = True  # a shelf
    plume = plumes.Puffs(source=[(w // 8, 2 * h // 7), (w // 8, 5 * h // 7)], region=((0.0, 48.0), (0.0, 24.0)),
                         source_motion=sources.RandomWalk(speed=0.03, persistence=100.0),
                         wind=plumes.Wind(u=4.0, regime="switch-many", switch_every=1.0, switch_jitter=0.1),
                         puff_release_rate=60.0, puff_init_rad=0.3, puff_spread_rate=0.02, conc_scale=0.05,
                         spin_up_steps=300)
    return Scenario(grid_size=size, plume=plume, n_agents=2, walls=walls, max_steps=max_steps, goal_radius=2.0)


def picture_scene(size, steps: int, seed: int, scale: int) -> np.ndarray:
    sim = Simulator(scene(size, steps + 1), num_worlds=1, autoreset="disabled")
    (rec,) = run_and_tumble(sim, steps, seed)
    last = len(rec) - 1
    panels = []
    for t in (last // 3, 2 * last // 3, last):
        panels.append(rec.frame(t, trail=40, scale=scale))
        panels.append(np.broadcast_to(GAP, (panels[-1].shape[0], 2 * scale, 3)))
    return np.concatenate(panels[:-1], axis=1)


def picture_3d(steps: int, seed: int, scale: int) -> np.ndarray:
    w, h, d = 24, 16, 12
    walls = np.zeros((d, h, w), bool)
    walls[4, 2:14, 4:20] = True  # a floor slab with the source above it
    walls[:, 6:9, 14:16] = True  # a pillar
    sc = Scenario(grid_size=(w, h, d), plume=plumes.Gaussian(source=(12, 8, 8), sigma=5.0), n_agents=2,
                  action_model=bodies.Continuous(max_speed=1.0),
                  sensors=(sensors.Concentration(), sensors.Position(), sensors.Neighbours(1)), walls=walls,
                  start_positions=((10, 9, 1), (21, 4, 2)), max_steps=steps + 1, goal_radius=1.0)
    sim = Simulator(sc, autoreset="disabled")
    sim.reset(seed=seed)
    rng = np.random.default_rng(seed)
    path = [sim.positions.copy()]
    for _ in range(steps):
        toward = sim.sources[0] - sim.model_state("body.xyz")
        sim.step(toward / np.linalg.norm(toward, axis=1, keepdims=True).clip(1e-9) + rng.normal(0, 0.6, (2, 3)))
        path.append(sim.positions.copy())
        if not sim.active.any():
            break
    path = np.stack(path)
    return render_volume(sim.plume_image(0), path[-1], source=(12, 8, 8), active=sim.active, trajectories=path,
                         mode="slice", at=(12, 8, 8), scale=scale, walls=walls)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, nargs=2, default=(96, 64), metavar=("W", "H"))
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--scale", type=int, default=4, help="pixels per cell")
    parser.add_argument("--out", default=".", help="folder of walls.png, walls-scene.png and walls-3d.png")
    args = parser.parse_args(argv)
    import imageio.v3 as iio

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    iio.imwrite(out / "walls.png", picture_2d(tuple(args.size), args.steps, args.seed, args.scale))
    print(f"wrote {out / 'walls.png'}")
    w, h = args.size
    iio.imwrite(out / "walls-scene.png", picture_scene((w, w // 2), args.steps, args.seed, args.scale))
    print(f"wrote {out / 'walls-scene.png'}")
    iio.imwrite(out / "walls-3d.png", picture_3d(max(1, args.steps // 8), args.seed, args.scale * 2))
    print(f"wrote {out / 'walls-3d.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
