"""``plumes.Puffs`` of several and moving sources: every puff released where its source is when it
is released, against a plain Python reference (a steady wind and no centre-line noise, so that a
puff's path is its release point plus the wind); arrival at any source; validation."""

import math

import numpy as np
import pytest

from plume_multi import Scenario, Simulator, ValidationError, sources
from plume_multi.models.plumes import PuffPlume, Puffs, Wind
from models_reference import stream_key, uniform
from sources_reference import MotionRef

STREAM_PUFFS = 0x428A2F98  # physics.STREAM_PUFFS, written out on purpose
GRID = (100, 50)  # cells of 0.5 over pompy's default region


def poisson(key, a, b, mean):
    """``engine.rng.poisson``: inversion of the uniform at counters ``(a, b)``."""
    u = uniform(key, a, b)
    k, p = 0, math.exp(-mean)
    s = p
    while u > s and k < 10000:
        k += 1
        p *= mean / k
        s += p
        if p == 0.0 and s < u:
            break
    return k


class PuffWorldRef:
    """One world of a ``Puffs`` with a constant wind ``(u, v)`` and ``centre_rel_diff_scale=0``:
    puffs ``[x, y, z, r^2]`` (physical), sources in cells, moved by the plume's source motion."""

    def __init__(self, config: Puffs, grid, seed, episode=0, moving=True):
        self.c = c = config
        self.w, self.h = grid
        self.cell = c.resolved_cell_size(grid)
        (self.x0, self.x1), (self.y0, self.y1) = c.region
        self.seed, self.episode = seed, episode
        self.key = stream_key(seed, episode, STREAM_PUFFS)
        self.xy = [list(map(float, s)) for s in c.cells()]
        self.motion = MotionRef(c.source_motion) if moving else None
        self.state = [[0.0] * c.source_motion.state_width() for _ in self.xy]
        self.puffs, self.clock, self.t = [], 0, 0
        for j in range(len(self.xy)):
            self.release(j, c.init_num_puffs)
        for _ in range(c.spin_up_steps):
            self.advance()
        if self.motion is not None:
            for k in range(len(self.xy)):
                self.motion.start(self.xy, self.state, k, seed, episode)

    def release(self, j, count):
        x = self.x0 + (self.xy[j][0] + 0.5) * self.cell
        y = self.y0 + (self.xy[j][1] + 0.5) * self.cell
        self.puffs += [[x, y, 0.0, self.c.puff_init_rad ** 2] for _ in range(count)]

    def advance(self):
        c = self.c
        for j in range(len(self.xy)):
            if len(self.puffs) < c.max_num_puffs:
                count = poisson(self.key, self.clock, 16 + j, c.puff_release_rate * c.dt)
                self.release(j, min(count, c.max_num_puffs - len(self.puffs)))
        u, v = c.wind
        kept = []
        for x, y, z, r2 in self.puffs:
            x, y = x + (u + 0.0) * c.dt, y + (v + 0.0) * c.dt
            if self.x0 <= x <= self.x1 and self.y0 <= y <= self.y1:
                kept.append([x, y, z, r2 + c.puff_spread_rate * c.dt])
        self.puffs = kept
        self.clock += 1

    def step(self):
        """An engine step: the sources move, then the plume advances."""
        self.t += 1
        for k in range(len(self.xy)):
            self.motion.move(self.xy, self.state, k, self.t, self.w, self.h, self.seed, self.episode)
        self.advance()


def _puffs(**kw):
    return Puffs(source=kw.pop("source", [(10, 20), (30.5, 31)]), wind=kw.pop("wind", (1.5, -0.25)),
                 centre_rel_diff_scale=0.0, puff_release_rate=kw.pop("rate", 30.0), max_num_puffs=400, **kw)


def _assert_same(puffs, ref, what):
    np.testing.assert_array_equal(puffs, np.array(ref.puffs).reshape(-1, 4), err_msg=what)


def test_several_fixed_sources_release_their_own_puffs():
    config = _puffs(source=[(10, 20), (30.5, 31), (80, 5)], init_num_puffs=2, spin_up_steps=7)
    plume = PuffPlume(config, GRID, num_worlds=2)
    plume.reset(seed=9)
    refs = [PuffWorldRef(config, GRID, 9 + b, moving=False) for b in range(2)]
    for step in range(120):
        for b, ref in enumerate(refs):
            _assert_same(plume.puffs(b), ref, f"step {step} world {b}")
        plume.step()
        for ref in refs:
            ref.advance()
    assert plume.state.n_live.min() > 100


def test_moving_sources_release_where_they_are_and_are_found():
    """Two sources travelling a loop of waypoints in the engine: the puffs of the reference whose
    sources moved as the motion's reference moves them; the source cells the plume reports; an
    agent that comes within reach of either source finds it."""
    path = sources.Waypoints(points=((60, 10), (60, 40), (20, 40)), speed=0.8, loop=True)
    config = _puffs(source_motion=path, spin_up_steps=5)
    sc = Scenario(grid_size=GRID, plume=config, n_agents=2, max_steps=10_000, goal_radius=6.0,
                  start_region=((20, 20), (40, 40)))
    sim = Simulator(sc, num_worlds=2, parallel=False, autoreset="disabled")
    sim.reset(seed=21)
    refs = [PuffWorldRef(config, GRID, 21 + b) for b in range(2)]
    rng = np.random.default_rng(0)
    for step in range(60):
        for b, ref in enumerate(refs):
            live = sim.model_state("plume.n_live")[b]
            _assert_same(sim.model_state("plume.puffs")[b, :live], ref, f"step {step} world {b}")
            np.testing.assert_array_equal(sim.source_positions[b], np.array(ref.xy))
        was_active = sim.active.copy()
        _, reward, terminated, _ = sim.step(rng.integers(0, 4, sim.total_agents))
        for ref in refs:
            ref.step()
        near = np.hypot(*(sim.source_positions.repeat(2, axis=0) - sim.positions[:, None, :]).transpose(2, 0, 1))
        arrived = was_active & terminated
        assert (near[arrived].min(axis=1) <= 6.0).all() and (near[~terminated].min(axis=1) > 6.0).all()
        assert (reward[arrived] == 1.0).all()
    assert np.abs(sim.source_positions - np.array(config.cells())).max() > 2  # they went somewhere
    assert sim.state.terminated.any() and sim.sources_found.any()


BAD = [
    (lambda: Puffs(source=[(1, 2), (3,)]), "Puffs.source"),
    (lambda: Puffs(source=[(1, 2)] * 17), "Puffs.source"),
    (lambda: Puffs(source=[(1, 2), (math.nan, 3)]), "Puffs.source"),
    (lambda: Puffs(source=(1, 2), source_motion="walk"), "Puffs.source_motion"),
    (lambda: Puffs(source=[(1, 2), (3, 4)], init_num_puffs=600, max_num_puffs=1000), "Puffs.init_num_puffs"),
    (lambda: Scenario(grid_size=GRID, plume=Puffs(source=[(1, 2), (300, 4)])), "Puffs.source"),
    (lambda: Scenario(grid_size=GRID, plume=Puffs(source=(1, 2), source_motion=sources.Waypoints(points=((150, 3),)))),
     "Puffs.source_motion"),
]


@pytest.mark.parametrize("factory, field", BAD)
def test_bad_sources_name_the_field(factory, field):
    with pytest.raises(ValidationError, match=field.replace(".", r"\.")):
        factory()


def test_metadata_names_every_source_and_the_motion():
    meta = _puffs(source_motion=sources.Drift(velocity=(0.5, 0.0)), wind=Wind(regime="sparse")).metadata()
    assert meta["source"] == [[10.0, 20.0], [30.5, 31.0]]
    assert meta["source_motion"]["model"] == "Drift" and meta["wind"]["regime"] == "sparse"
    assert "source_motion" not in Puffs(source=(1, 2)).metadata()
