"""Issue 20's scene: a world with walls, two moving sources and a switching wind runs in every
front-end (``Simulator``, ``parallel_env``, ``vector_env``, ``multi_agent_vector_env``), and its
picture shows all of it.

Tiny (a 32 x 16 grid, 200 puffs): the puff plume among walls with a run-and-tumble motion, two
agents per world (``Simulator``, ``parallel_env``, ``multi_agent_vector_env`` share that compiled
step; ``vector_env``'s one agent per world is the other), as ``examples/walls.py``'s scene at a
larger size. ``PlumeSearchEnv`` is the single-agent contract of an open grid: it takes no walls.
"""

import dataclasses
import math

import numpy as np
import pytest

from sources_reference import MotionRef
from plume_multi import Scenario, Simulator, ValidationError, plumes, sources
from plume_multi import multi_agent_vector_env, parallel_env, vector_env
from plume_multi.viz.render import SOURCE_COLOUR, WALL_COLOUR, WIND_COLOUR, cell_centre_pixel, marker_radius, render_frame
from plume_multi.viz.scene import world_overlays

W, H = 32, 16


def _walls() -> np.ndarray:
    walls = np.zeros((H, W), bool)
    walls[2:14, 7] = True  # a wall three cells from the sources: they run into it
    walls[:10, 16] = True  # a partition open at the top
    walls[6, 22:28] = True  # a shelf
    return walls


WALLS = _walls()
PLUME = plumes.Puffs(source=[(4, 4), (4, 11)], region=((0.0, 16.0), (0.0, 8.0)),
                     source_motion=sources.RandomWalk(speed=0.6, persistence=4.0),
                     wind=plumes.Wind(u=3.0, regime="switch-many", switch_every=0.1, switch_jitter=0.02, grid=(5, 5)),
                     puff_release_rate=100.0, puff_init_rad=0.3, puff_spread_rate=0.02, conc_scale=0.05,
                     init_num_puffs=5, max_num_puffs=200)
OPTIONS = dict(grid_size=(W, H), plume=PLUME, walls=WALLS, goal_radius=0.5)


def _solid(xy) -> bool:
    x, y = (math.floor(c + 0.5) for c in xy)
    return bool(WALLS[y, x])


def _puff_cells(sim, b) -> np.ndarray:
    """``(n, 2)`` cells of world ``b``'s live puffs (physical positions in the region)."""
    puffs = sim.model_state("plume.puffs")[b, :int(sim.model_state("plume.n_live")[b]), :2]
    cell = 16.0 / W
    return np.floor(puffs / cell).astype(int)


def _shows_the_scene(frame, sources_xy, scale):
    """The frame shows the walls (grey), a red cross at each source and the wind's arrow."""
    walls = (frame == WALL_COLOUR).all(axis=2).sum()
    assert walls >= 0.8 * WALLS.sum() * scale * scale, walls
    r = marker_radius(W, H, scale) + 1
    for x, y in sources_xy:
        row, col = cell_centre_pixel(int(round(x)), int(round(y)), H, scale)
        arms = [frame[min(row + r, H * scale - 1), col], frame[max(row - r, 0), col],
                frame[row, min(col + r, W * scale - 1)], frame[row, max(col - r, 0)]]
        assert sum((a == SOURCE_COLOUR).all() for a in arms) >= 3, (x, y)
    assert (frame[: H * scale // 3, 2 * W * scale // 3:] == WIND_COLOUR).all(axis=2).any()  # top right


def test_the_scene_moves_its_sources_among_the_walls_as_the_reference():
    """Sources move as their motion's plain reference, a move into a solid cell refused (the
    source stays); puffs never end a step in a solid cell; the wind switches; the picture shows
    walls, both sources and the wind; snapshot and restore continue the same run."""
    sc = Scenario(n_agents=2, max_steps=500, **OPTIONS)
    sim = Simulator(sc, num_worlds=2, autoreset="disabled")
    sim.reset(seed=5)
    ref = MotionRef(PLUME.source_motion)
    xy = [[list(map(float, c)) for c in PLUME.cells()] for _ in range(2)]
    state = [[[0.0] for _ in range(2)] for _ in range(2)]
    for b in range(2):
        for k in range(2):
            ref.start(xy[b], state[b], k, 5 + b, 0)
    rng = np.random.default_rng(0)
    refused = 0
    for t in range(1, 41):
        sim.step(rng.integers(0, 4, 4))
        for b in range(2):
            for k in range(2):
                before = list(xy[b][k])
                ref.move(xy[b], state[b], k, t, W, H, 5 + b, 0)
                if _solid(xy[b][k]):
                    xy[b][k] = before
                    refused += 1
            assert sim.source_positions[b].tolist() == xy[b], (t, b)
            cells = _puff_cells(sim, b)
            assert not WALLS[cells[:, 1], cells[:, 0]].any(), (t, b)
        if t == 20:
            snap = sim.snapshot()
            after = []
        if t > 20:
            after.append(sim.source_positions.copy())
    assert refused > 0  # the sources did run into the wall
    assert (sim.model_state("plume.switches") > 0).all()  # the wind switched in every world
    turns = sim.model_state("plume.turn")[:, 0]
    assert len(set(turns.tolist())) == 2 and (turns != 0).all()
    sim.restore(snap)
    rng2 = np.random.default_rng(0)
    [rng2.integers(0, 4, 4) for _ in range(20)]  # the actions of the first 20 steps, again
    for want in after:
        sim.step(rng2.integers(0, 4, 4))
        np.testing.assert_array_equal(sim.source_positions, want)

    scene = world_overlays(sim, 1)
    assert scene["source"] == tuple(tuple(int(round(c)) for c in s) for s in sim.source_positions[1])
    frame = render_frame(scene.pop("field"), scale=4, **scene)
    _shows_the_scene(frame, sim.source_positions[1], 4)


def test_the_scene_runs_in_every_front_end_and_each_picture_shows_it():
    rng = np.random.default_rng(1)
    env = parallel_env(n_agents=2, max_cycles=30, render_mode="rgb_array", **OPTIONS)
    env.reset(seed=3)
    for _ in range(10):
        env.step({a: int(rng.integers(0, 4)) for a in env.agents})
    sim = env.unwrapped._sim
    assert sim.scenario.walls is not None and sim.scenario.plume.source_count() == 2
    _shows_the_scene(env.render(), sim.source_positions[0], env.render().shape[0] // H)

    for env in (multi_agent_vector_env(num_worlds=2, n_agents=2, render_mode="rgb_array", **OPTIONS),
                vector_env(2, render_mode="rgb_array", **OPTIONS)):
        env.reset(seed=7)
        for _ in range(10):
            env.step(rng.integers(0, 4, env.num_envs))
            masks = env.action_masks()
            cells = env._sim.positions[:, None, :] + env.scenario.moves()[None]
            inside = ((cells >= 0) & (cells < (W, H))).all(axis=2)
            into_walls = inside & WALLS[cells[..., 1].clip(0, H - 1), cells[..., 0].clip(0, W - 1)]
            assert not (masks & into_walls)[env._sim.active].any()  # no move into a wall is allowed
        frames = env.render()
        assert len(frames) == 2
        for b, frame in enumerate(frames):
            _shows_the_scene(frame, env._sim.source_positions[b], frame.shape[0] // H)
        env.close()


def test_a_source_starting_in_a_wall_is_refused_naming_it():
    with pytest.raises(ValidationError, match=r"Puffs\.source: got source 1 at \(7\.0, 11\.0\) \(cell \(7, 11\)\), "
                                              r"which is solid in wall mask 0"):
        Scenario(**{**OPTIONS, "plume": dataclasses.replace(PLUME, source=[(4, 4), (7, 11)])})
    several = plumes.Gaussian(source=[(4, 4), (7, 5)], sigma=3.0)
    with pytest.raises(ValidationError, match=r"Gaussian\.source: got source 1 at \(7, 5\)"):
        Scenario(grid_size=(W, H), plume=several, walls=WALLS)
    moving = plumes.Gaussian(source=[(4, 4), (4, 11)], sigma=3.0, source_motion=sources.Drift(velocity=(0.5, 0.0)))
    with pytest.raises(ValidationError, match="Gaussian: draws a source in each world and episode or moves it"):
        Scenario(grid_size=(W, H), plume=moving, walls=WALLS)
