"""Walls (``Scenario(walls=...)``): the scenario's checks and JSON, the compiled pieces against their
plain references (the mask draw, start cells on free cells, a continuous body's stop at a face, the
plume readers inside walls), and two compiled combinations against ``NaiveSim``:

* 2-D: the default scenario among walls (``Gaussian`` + ``Cardinal``/``Moore`` + ``Concentration``,
  ``Position``, one agent per world): also the README's example and the benchmark's row
  (``benchmarks/walls.py``);
* 3-D: a fixed-source ``Gaussian`` + ``Continuous`` + ``Concentration``, ``Position``,
  ``Neighbours``, several agents (the 3-D stop at a face, start draws in a box, neighbours that
  ignore walls).
"""

import json
import math

import numba
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from models_reference import NaiveSim
from simulator_reference import (counter_free_starts, counter_starts, numpy_free_starts, numpy_starts, stop_at_walls,
                                 wall_mask_index)
from plume_multi import Scenario, Simulator, bodies, plumes, sensors
from plume_multi.engine.walls import stop_at_walls as engine_stop
from plume_multi.errors import ValidationError
from plume_multi.scenario import scenario_from_metadata
from plume_multi.walls import Walls, mask_index


def corridor():
    """A 9 x 7 grid with a wall at x = 3 but for a gap at y = 0 (the default source, the centre
    (4, 3), is free)."""
    mask = np.zeros((7, 9), bool)
    mask[1:, 3] = True
    return mask


# --------------------------------------------------------------------------- the scenario (no compile)
def test_one_mask_or_several_make_walls_that_round_trip_through_json():
    mask = corridor()
    sc = Scenario(grid_size=(9, 7), walls=mask)
    assert isinstance(sc.walls, Walls) and sc.walls.n_masks == 1 and sc.walls.shape == (7, 9)
    assert (sc.walls.mask(0) == mask).all() and not sc.walls.masks.flags.writeable
    other = np.zeros_like(mask)
    other[0, :5] = True
    several = Scenario(grid_size=(9, 7), walls=[mask, other], n_agents=2)
    assert several.walls.n_masks == 2
    for scenario in (sc, several, Scenario(grid_size=(5, 4, 3), walls=np.zeros((3, 4, 5), bool) | (
            np.arange(5) == 0))):
        text = json.dumps(scenario.metadata())
        again = scenario_from_metadata(json.loads(text))
        assert again == scenario and again.walls == scenario.walls
        assert (again.walls.masks == scenario.walls.masks).all()
    # packed: a 256 x 256 mask is a few hundred characters, not 65,536 booleans
    big = np.zeros((256, 256), bool)
    big[::7] = True
    assert len(json.dumps(Scenario(grid_size=(256, 256), walls=big, source_location=(0, 1)).metadata())) < 2000
    assert Scenario(grid_size=(9, 7)).walls is None and Scenario(grid_size=(9, 7)).metadata()["walls"] is None


@pytest.mark.parametrize("walls, match", [
    (np.zeros((7, 9), np.int64), "dtype int64"),
    (np.zeros((9, 7), bool), r"shape \(9, 7\)"),
    (np.ones((7, 9), bool), "mask 0 is solid everywhere"),
    ([np.zeros((7, 9), bool), np.zeros((7, 8), bool)], "different shapes"),
    ([], "shape"),
    ("walls.npy", "str"),
    (True, "bool"),
])
def test_bad_masks_are_refused_naming_scenario_walls(walls, match):
    with pytest.raises(ValidationError, match=f"Scenario.walls: .*{match}"):
        Scenario(grid_size=(9, 7), walls=walls)


def test_impossible_combinations_are_refused():
    mask = corridor()
    solid_centre = mask.copy()
    solid_centre[3, 4] = True
    with pytest.raises(ValidationError, match=r"Scenario.walls: .*source \(4, 3\).*solid in mask 1"):
        Scenario(grid_size=(9, 7), walls=[mask, solid_centre])
    with pytest.raises(ValidationError, match=r"Scenario.start_positions: .*agent 1's \(3, 2\) is solid in mask 0"):
        Scenario(grid_size=(9, 7), walls=mask, n_agents=2, start_positions=((0, 0), (3, 2)))
    with pytest.raises(ValidationError, match=r"Scenario.walls: .*free cell in the start region.*mask 0 has none"):
        Scenario(grid_size=(9, 7), walls=mask, start_region=((3, 1), (3, 6)))
    with pytest.raises(ValidationError, match="Gaussian: draws a source in each world and episode or moves it"):
        Scenario(grid_size=(9, 7), walls=mask, plume=plumes.Gaussian(source="random"))
    frames = np.zeros((2, 7, 9), np.float32)
    with pytest.raises(ValidationError, match=r"Scenario.walls: .*Movie plume's source \(3.2, 4.4\) \(cell \(3, 4\)\)"):
        Scenario(walls=mask, plume=plumes.Movie(frames, source=(3.2, 4.4)))


def test_walls_json_refuses_what_is_not_its_encoding():
    meta = Scenario(grid_size=(9, 7), walls=corridor()).metadata()
    for bad, match in ((dict(meta["walls"], data="not base64!"), "not packbits-zlib-base64"),
                       (dict(meta["walls"], shape=[2, 7, 9]), "holds 64 cells; expected 126 cells"),
                       (dict(meta["walls"], shape=[1, 7, 10]), r"shape \(7, 10\); expected masks of shape .* \(7, 9\)"),
                       (dict(meta["walls"], encoding="npy"), "expected None or a dict"),
                       ([[True]], "expected None or a dict")):
        with pytest.raises(ValidationError, match=f"Scenario.walls: .*{match}"):
            scenario_from_metadata(dict(meta, walls=bad))


# --------------------------------------------------------------------------- compiled pieces
def test_the_mask_draw_is_the_reference_and_uses_every_mask():
    seen = set()
    for seed in (0, 1, 7, 2**40, 2**63 - 1):
        for episode in (0, 1, 5, 2**31):
            for k in (1, 2, 3, 7):
                got = mask_index(seed, episode, k)
                assert got == wall_mask_index(seed, episode, k)
                assert 0 <= got < k
                seen.add((k, got))
    assert {g for k, g in seen if k == 3} == {0, 1, 2}


@settings(max_examples=20)
@given(seed=st.integers(0, 2**63 - 1), episode=st.integers(1, 2**40), n=st.integers(1, 5),
       sizes=st.tuples(st.integers(1, 6), st.integers(1, 6)) | st.tuples(st.integers(1, 4), st.integers(1, 4),
                                                                        st.integers(1, 4)),
       density=st.floats(0.0, 0.9), mask_seed=st.integers(0, 2**32 - 1))
def test_start_cells_among_walls_are_the_reference_draws(seed, episode, n, sizes, density, mask_seed):
    """Drawn again, whole, while solid; with no solid cell, exactly the draws without walls."""
    from plume_multi.engine.rng import counter_cells, pcg64_cells
    from plume_multi.engine.walls import counter_free_cells, pcg64_free_cells

    dims = len(sizes)
    origin = (1,) * dims
    wall = np.random.default_rng(mask_seed).random(tuple(s + 2 for s in reversed(sizes))) < density
    wall[tuple(reversed(origin))] = False  # a free cell in the box
    out = np.zeros((n, dims), np.int32)
    pcg64_free_cells(np.int64(seed), n, (origin, sizes), (wall[None], 0), out, 0)
    assert [tuple(r) for r in out.tolist()] == numpy_free_starts(seed, n, sizes, origin, wall)
    counter_free_cells(np.int64(seed), np.int64(episode), n, (origin, sizes), (wall[None], 0), out, 0)
    assert [tuple(r) for r in out.tolist()] == counter_free_starts(seed, episode, n, sizes, origin, wall)
    assert not any(wall[tuple(reversed(c))] for c in out.tolist())
    open_wall = np.zeros_like(wall)
    plain = np.zeros((n, dims), np.int32)
    pcg64_free_cells(np.int64(seed), n, ((0,) * dims, sizes), (open_wall[None], 0), out, 0)
    pcg64_cells(np.int64(seed), n, sizes, plain, 0)
    assert (out == plain).all() and [tuple(r) for r in plain.tolist()] == numpy_starts(seed, n, *sizes)
    counter_free_cells(np.int64(seed), np.int64(episode), n, ((0,) * dims, sizes), (open_wall[None], 0), out, 0)
    counter_cells(np.int64(seed), np.int64(episode), n, sizes, plain, 0)
    assert (out == plain).all() and [tuple(r) for r in plain.tolist()] == counter_starts(seed, episode, n, *sizes)


@numba.njit
def _stop(masks, k, x0, y0, x1, y1):
    (x, y), hit = engine_stop(masks, k, (x0, y0), (x1, y1))
    return x, y, hit


@numba.njit
def _stop3(masks, k, x0, y0, z0, x1, y1, z1):
    (x, y, z), hit = engine_stop(masks, k, (x0, y0, z0), (x1, y1, z1))
    return x, y, z, hit


def _stop2(wall, *points):
    """The compiled stop with ``wall`` as mask 1 of two (the other all solid: the index matters)."""
    return _stop(np.stack([np.ones_like(wall), wall]), 1, *points)


def _free_point(rng, wall):
    """A float point of a free cell, anywhere in its span."""
    free = np.argwhere(~wall)
    cell = free[rng.integers(len(free))][::-1]
    return tuple(float(np.clip(c + rng.uniform(-0.5, 0.5), 0.0, side - 1)) for c, side in
                 zip(cell, wall.shape[::-1]))


@settings(max_examples=40)
@given(dims=st.sampled_from([2, 3]), shape_seed=st.integers(0, 2**32 - 1), density=st.floats(0.0, 0.6),
       snap=st.booleans())
def test_a_continuous_body_stops_at_the_first_solid_face_as_the_reference(dims, shape_seed, density, snap):
    rng = np.random.default_rng(shape_seed)
    shape = tuple(rng.integers(1, 7, dims))
    wall = rng.random(shape) < density
    wall.flat[rng.integers(wall.size)] = False
    for _ in range(20):
        start = _free_point(rng, wall)
        end = tuple(float(np.clip(c + rng.uniform(-4, 4), 0.0, side - 1)) for c, side in zip(start, shape[::-1]))
        if snap:  # through cell corners and along faces: the ties
            start = tuple(float(round(c)) for c in start)
            end = tuple(float(np.clip(round(c * 2) / 2, 0.0, side - 1)) for c, side in zip(end, shape[::-1]))
            if wall[tuple(math.floor(c + 0.5) for c in reversed(start))]:
                continue
        got = (_stop2(wall, *start, *end) if dims == 2 else
               _stop3(np.stack([np.ones_like(wall), wall]), 1, *start, *end))
        point, hit = stop_at_walls(wall, start, end)
        assert tuple(got[:-1]) == point and got[-1] == hit, (start, end)
        cell = tuple(math.floor(c + 0.5) for c in point)
        assert not wall[tuple(reversed(cell))], (start, end, point)
        if not hit:
            assert point == end


def test_a_path_into_a_wall_stops_on_its_face():
    wall = np.zeros((3, 5), bool)
    wall[:, 3] = True
    x, y, hit = _stop2(wall, 1.0, 1.0, 4.0, 1.6)  # enters cell 3 at x = 2.5, t = 1.5 / 3
    assert hit and x == np.nextafter(2.5, -np.inf) and y == 1.0 + (1.5 / 3.0) * (1.6 - 1.0)
    x, y, hit = _stop2(wall, 1.0, 1.0, 4.0, 2.0)  # through the corner (2.5, 1.5): x first, y kept in row 1
    assert hit and (x, y) == (np.nextafter(2.5, -np.inf), np.nextafter(1.5, -np.inf))
    x, y, hit = _stop2(wall, 4.0, 0.0, 0.0, 0.0)  # leaving cell 4 downward: its face 3.5 belongs to it
    assert hit and (x, y) == (3.5, 0.0)
    assert _stop2(wall, 0.0, 0.0, 2.0, 2.0) == (2.0, 2.0, False)


def test_every_reader_reads_zero_inside_a_wall_and_the_plume_elsewhere():
    """``sample_cell``, ``sample_at``, ``wind_at`` (and the 3-D ones) of a ``WalledPlumeView``."""
    from plume_multi.engine import api
    from plume_multi.scenario import ModelContext

    @numba.njit
    def read2(view, walled, ix, iy, x, y):
        u, v = api.wind_at(walled, x, y)
        u0, v0 = api.wind_at(view, x, y)
        return (api.sample_cell(walled, ix, iy), api.sample_cell(view, ix, iy), api.sample_at(walled, x, y),
                api.sample_at(view, x, y), u, v, u0, v0)

    @numba.njit
    def read3(view, walled, ix, iy, iz, x, y, z):
        u, v, w = api.wind_at3(walled, x, y, z)
        return (api.sample_cell3(walled, ix, iy, iz), api.sample_cell3(view, ix, iy, iz),
                api.sample_at3(walled, x, y, z), api.sample_at3(view, x, y, z), u, v, w)

    for grid in ((9, 7), (5, 4, 3)):
        mask = np.zeros(tuple(reversed(grid)), bool)
        mask[(slice(None),) * (len(grid) - 1) + (0,)] = True  # the plane x = 0
        sc = Scenario(grid_size=grid, walls=mask, plume=plumes.Gaussian(sigma=2.0, wind=(0.5, -1.0)))
        ctx = ModelContext(sc)
        ctx.field = sc.plume.field(sc.grid_size)
        params = sc.plume.params(ctx)
        api.register_plume(params, sc.plume.kernels_for(len(grid)), "Gaussian", len(grid))
        state = sc.plume.state_tuple({})
        view = api.PlumeView(params, state, 0)
        walled = api.WalledPlumeView(params, state, 0, np.stack([~mask, mask]), 1)
        rng = np.random.default_rng(1)
        for _ in range(50):
            cell = [int(rng.integers(n)) for n in grid]
            point = [float(rng.uniform(-0.7, n - 0.3)) for n in grid]
            inside = mask[tuple(reversed(cell))]
            point_cell = [math.floor(c + 0.5) for c in point]
            point_inside = all(0 <= c < n for c, n in zip(point_cell, grid)) and mask[tuple(reversed(point_cell))]
            if len(grid) == 2:
                sc_w, sc_0, sa_w, sa_0, u, v, u0, v0 = read2(view, walled, *cell, *point)
                wind = (u, v)
                assert (u0, v0) == (0.5, -1.0)
            else:
                sc_w, sc_0, sa_w, sa_0, u, v, w = read3(view, walled, *cell, *point)
                wind = (u, v, w)
            assert sc_w == (0.0 if inside else sc_0) and (sc_0 > 0.0)
            assert sa_w == (0.0 if point_inside else sa_0)
            assert wind == ((0.0,) * len(grid) if point_inside else (0.5, -1.0, 0.0)[:len(grid)])


# --------------------------------------------------------------------------- 2-D: the default scenario among walls
@st.composite
def masks(draw, grid, keep, count=None):
    """``count`` (drawn: 1..3) random masks of the grid, the cells of ``keep`` free in each."""
    k = count or draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    density = draw(st.floats(0.0, 0.7))
    out = rng.random((k, *reversed(grid))) < density
    for cell in keep:
        out[(slice(None), *reversed(cell))] = False
    return out if k > 1 or draw(st.booleans()) else out[0]


@st.composite
def scenarios_2d(draw):
    w, h = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    source = (draw(st.integers(0, w - 1)), draw(st.integers(0, h - 1)))
    body = draw(st.sampled_from([bodies.Cardinal(), bodies.Moore()]))
    region = None
    if draw(st.booleans()):
        x0, x1 = sorted((draw(st.integers(0, w - 1)), draw(st.integers(0, w - 1))))
        y0, y1 = sorted((draw(st.integers(0, h - 1)), draw(st.integers(0, h - 1))))
        region = ((x0, y0), (x1, y1))
    keep = [source, region[0] if region else (draw(st.integers(0, w - 1)), draw(st.integers(0, h - 1)))]
    return Scenario(grid_size=(w, h), source_location=source, sigma=draw(st.floats(0.5, 10.0)), action_model=body,
                    walls=draw(masks((w, h), keep)), start_region=region, max_steps=draw(st.integers(1, 12)),
                    goal_radius=draw(st.sampled_from([1e-45, 1.0, 1.5])))


def compare(sc, num_worlds, seed, actions, validate=True):
    """A Simulator and NaiveSim side by side: everything equal, bit for bit."""
    sim = Simulator(sc, num_worlds=num_worlds)
    ref = NaiveSim(sc, num_worlds)
    np.testing.assert_array_equal(sim.reset(seed=seed), ref.reset(seed), err_msg="reset")
    check_state(sim, ref, "reset")
    for k, a in enumerate(actions):
        got, want = sim.step(a), ref.step(a)
        for g, e in zip(got, want):
            np.testing.assert_array_equal(g, e, err_msg=f"step {k + 1}")
        check_state(sim, ref, f"step {k + 1}")
        if validate:
            assert sim.validate() == [], f"step {k + 1}"
    return sim, ref


def check_state(sim, ref, where):
    np.testing.assert_array_equal(sim.positions, ref.pos, err_msg=where)
    np.testing.assert_array_equal(sim.active, ref.active, err_msg=where)
    np.testing.assert_array_equal(sim.wall_index, ref.wall_index, err_msg=where)
    np.testing.assert_array_equal(sim.state.world_episode, ref.episode, err_msg=where)
    walls = sim.scenario.walls.masks
    for i, cell in enumerate(sim.positions.tolist()):
        assert not walls[(sim.wall_index[i // sim.n_agents], *reversed(cell))], (where, i, cell)
    if sim.scenario.continuous:
        np.testing.assert_array_equal(sim.model_state("body.xy" if sim.dims == 2 else "body.xyz"), ref.xy,
                                      err_msg=where)


@given(sc=scenarios_2d(), num_worlds=st.integers(1, 4), seed=st.integers(0, 2**40),
       action_seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 25))
def test_the_default_scenario_among_walls_matches_the_reference(sc, num_worlds, seed, action_seed, steps):
    rng = np.random.default_rng(action_seed)
    compare(sc, num_worlds, seed, [rng.integers(0, sc.n_actions, num_worlds).astype(np.int64)
                                   for _ in range(steps)])


def _maze():
    """A 12 x 8 grid with two walls; the source (9, 4) free."""
    mask = np.zeros((8, 12), bool)
    mask[0:6, 4] = True
    mask[2:8, 7] = True
    other = np.zeros((8, 12), bool)
    other[3, 0:10] = True
    return mask, other


def test_a_move_into_a_wall_is_refused_and_the_agent_stays():
    mask, _ = _maze()
    sc = Scenario(grid_size=(12, 8), walls=mask, source_location=(9, 4), start_positions=((3, 2),))
    sim = Simulator(sc)
    sim.reset(seed=0)
    sim.step(np.array([1]))  # RIGHT into (4, 2): solid
    assert sim.positions.tolist() == [[3, 2]] and sim.episode_length.tolist() == [1]
    sim.step(np.array([0]))  # UP to (3, 3): free
    assert sim.positions.tolist() == [[3, 3]]
    assert sim.validate() == []


def test_each_world_draws_its_mask_per_episode_whatever_the_batch_split():
    mask, other = _maze()
    sc = Scenario(grid_size=(12, 8), walls=[mask, other], source_location=(9, 4), max_steps=3)
    whole = Simulator(sc, num_worlds=6)
    whole.reset(seed=11)
    parts = [Simulator(sc, num_worlds=n) for n in (1, 2, 3)]
    for part, first in zip(parts, (0, 1, 3)):
        part.reset(seed=11 + first)
    rng = np.random.default_rng(0)
    indices = set()
    for _ in range(12):  # four episodes: autoreset draws each world's next mask
        a = rng.integers(0, 4, 6)
        whole.step(a)
        for part, first in zip(parts, (0, 1, 3)):
            part.step(a[first:first + part.num_worlds])
            rows = slice(first, first + part.num_worlds)
            np.testing.assert_array_equal(part.positions, whole.positions[rows])
            np.testing.assert_array_equal(part.wall_index, whole.wall_index[rows])
            np.testing.assert_array_equal(part.state.obs, whole.state.obs[rows])
        indices.update(whole.wall_index.tolist())
    assert indices == {0, 1}
    for b in range(6):
        assert (whole.wall_mask(b) == sc.walls.masks[whole.wall_index[b]]).all()


def test_threads_give_the_serial_result():
    mask, other = _maze()
    sc = Scenario(grid_size=(12, 8), walls=[mask, other], source_location=(9, 4), max_steps=5)
    serial, threaded = Simulator(sc, 64, parallel=False), Simulator(sc, 64, parallel=True)
    rng = np.random.default_rng(3)
    for sim in (serial, threaded):
        sim.reset(seed=5)
    for _ in range(15):
        a = rng.integers(0, 4, 64)
        for g, e in zip(serial.step(a), threaded.step(a)):
            np.testing.assert_array_equal(g, e)
        np.testing.assert_array_equal(serial.wall_index, threaded.wall_index)


def test_snapshot_restore_continues_and_refuses_a_mask_out_of_range_or_not_drawn():
    mask, other = _maze()
    sc = Scenario(grid_size=(12, 8), walls=[mask, other], source_location=(9, 4), max_steps=4)
    sim = Simulator(sc, num_worlds=5)
    sim.reset(seed=2)
    rng = np.random.default_rng(4)
    acts = [rng.integers(0, 4, 5) for _ in range(12)]
    for a in acts[:5]:
        sim.step(a)
    snap = sim.snapshot()
    assert snap["model:walls.index"].tolist() == sim.wall_index.tolist()
    expected = [np.array(sim.step(a)[0]) for a in acts[5:]]
    sim.restore(snap)
    for a, want in zip(acts[5:], expected):
        np.testing.assert_array_equal(sim.step(a)[0], want)
    before = sim.snapshot()
    for value, match in ((2, r"walls\.index \(Scenario\.walls\): 1 rows above 1"),
                         (-1, r"walls\.index \(Scenario\.walls\): 1 rows below 0")):
        bad = dict(snap)
        bad["model:walls.index"] = snap["model:walls.index"].copy()
        bad["model:walls.index"][3] = value
        with pytest.raises(ValidationError, match=match):
            sim.restore(bad)
    bad = dict(snap)
    bad["model:walls.index"] = 1 - snap["model:walls.index"]
    with pytest.raises(ValidationError, match="not the one their seed and episode draw"):
        sim.restore(bad)
    bad = dict(snap)
    bad["pos"] = snap["pos"].copy()
    k = int(snap["model:walls.index"][0])
    bad["pos"][0] = np.argwhere(sc.walls.masks[k])[0][::-1]
    with pytest.raises(ValidationError, match="agents inside a solid cell"):
        sim.restore(bad)
    after = sim.snapshot()
    for key in before:  # nothing changed
        assert np.array_equal(before[key], after[key]), key


# --------------------------------------------------------------------------- 3-D: a continuous body among walls
@st.composite
def scenarios_3d(draw):
    w, h, d = (draw(st.integers(1, 6)) for _ in range(3))
    n = draw(st.integers(2, 4))
    source = (draw(st.integers(0, w - 1)), draw(st.integers(0, h - 1)), draw(st.integers(0, d - 1)))
    start = (draw(st.integers(0, w - 1)), draw(st.integers(0, h - 1)), draw(st.integers(0, d - 1)))
    return Scenario(grid_size=(w, h, d), plume=plumes.Gaussian(source=source, sigma=draw(st.floats(0.5, 6.0))),
                    n_agents=n, action_model=bodies.Continuous(max_speed=draw(st.floats(0.2, 3.0))),
                    sensors=(sensors.Concentration(), sensors.Position(), sensors.Neighbours(draw(st.integers(1, n - 1)))),
                    walls=draw(masks((w, h, d), [source, start])), max_steps=draw(st.integers(1, 10)),
                    goal_radius=draw(st.sampled_from([1e-45, 1.0, 1.5])))


@given(sc=scenarios_3d(), num_worlds=st.integers(1, 3), seed=st.integers(0, 2**40),
       action_seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 15))
def test_a_continuous_body_among_3d_walls_matches_the_reference(sc, num_worlds, seed, action_seed, steps):
    rng = np.random.default_rng(action_seed)
    rows = num_worlds * sc.n_agents
    speed = sc.action_model.max_speed
    compare(sc, num_worlds, seed, [rng.uniform(-2.0, 2.0, (rows, 3)) * speed for _ in range(steps)])


# --------------------------------------------------------------------------- pictures and front-ends
def test_pictures_draw_the_walls_in_grey():
    from plume_multi.viz.render import WALL_COLOUR, render_frame
    from plume_multi.viz.volume import render_volume

    mask, _ = _maze()
    field = np.random.default_rng(0).random(mask.shape)
    plain, walled = render_frame(field, scale=2), render_frame(field, scale=2, walls=mask)
    solid = np.repeat(np.repeat(mask[::-1], 2, axis=0), 2, axis=1)
    assert (walled[solid] == WALL_COLOUR).all() and (walled[~solid] == plain[~solid]).all()
    with pytest.raises(ValidationError, match=r"walls: .*expected the field's shape \(8, 12\)"):
        render_frame(field, walls=mask.T)
    volume = np.random.default_rng(1).random((3, 8, 12))
    walls3 = np.zeros(volume.shape, bool)
    walls3[:, 2, 5] = True  # a column through every plane: solid in the x-y projection
    walls3[1, 6, 1] = True  # one cell: a third of its x-y column
    top = render_volume(volume, walls=walls3, scale=1)[:, :12]  # the x-y panel (bottom-aligned, 8 rows)
    rows = top.shape[0]
    assert (top[rows - 1 - 2, 5] == WALL_COLOUR).all()
    bare = render_volume(volume, scale=1)[:, :12]
    assert not (top[rows - 1 - 6, 1] == bare[rows - 1 - 6, 1]).all() and not (top[rows - 1 - 6, 1] == WALL_COLOUR).all()
    sliced = render_volume(volume, walls=walls3, mode="slice", at=(0, 0, 0), scale=1)[:, :12]
    assert (sliced[rows - 1 - 2, 5] == WALL_COLOUR).all() and (sliced[rows - 1 - 6, 1] != WALL_COLOUR).any()


def test_vector_env_renders_the_walls_and_masks_the_moves_into_them(tmp_path):
    from plume_multi import vector_env
    from plume_multi.viz.recording import TrajectoryRecorder
    from plume_multi.viz.render import WALL_COLOUR, render_frame
    from plume_multi.viz.scene import world_overlays

    mask, other = _maze()
    env = vector_env(4, grid_size=(12, 8), walls=[mask, other], source_location=(9, 4), render_mode="rgb_array")
    env.reset(seed=7)
    sim = env._sim
    rng = np.random.default_rng(0)
    for _ in range(10):
        masks = env.action_masks()
        for b in range(4):
            wall = sim.wall_mask(b)
            x, y = sim.positions[b]
            for k, (dx, dy) in enumerate(sim.scenario.moves()):
                nx, ny = min(max(x + dx, 0), 11), min(max(y + dy, 0), 7)
                assert masks[b, k] == (((nx, ny) != (x, y)) and not wall[ny, nx]) or sim.state.world_done[b]
        env.step(rng.integers(0, 4, 4))
    frames = env.render()
    for b, frame in enumerate(frames):
        scene = world_overlays(sim, b)
        assert (scene["walls"] == sim.wall_mask(b)).all()
        np.testing.assert_array_equal(frame, render_frame(scene.pop("field"), sim.positions[b:b + 1],
                                                          active=sim.active[b:b + 1], **scene))
        grey = (frame[sim.wall_mask(b)[::-1]] == WALL_COLOUR).all(axis=1)
        assert grey.mean() > 0.8  # the markers of the agent and the source cover a few
    sim.reset(seed=1)
    recorder = TrajectoryRecorder.from_simulator(sim, world=2)
    assert (recorder.walls == sim.wall_mask(2)).all()
    assert (recorder.frame(0)[sim.wall_mask(2)[::-1]] == WALL_COLOUR).all(axis=1).mean() > 0.8
    assert recorder.save_png(tmp_path / "walls.png").stat().st_size > 0


def test_a_3d_world_among_walls_is_drawn_with_them():
    from plume_multi.viz.volume import render_volume, world_volume_frame

    walls = np.zeros((3, 5, 6), bool)
    walls[:, 1, 1:5] = True
    sc = Scenario(grid_size=(6, 5, 3), plume=plumes.Gaussian(source=(3, 3, 1), sigma=2.0), n_agents=2,
                  action_model=bodies.Continuous(max_speed=1.0),
                  sensors=(sensors.Concentration(), sensors.Position(), sensors.Neighbours(1)), walls=walls)
    sim = Simulator(sc, num_worlds=2)
    sim.reset(seed=4)
    frame = world_volume_frame(sim, 1, mode="slice")
    want = render_volume(sim.plume_image(1), sim.positions[2:4], source=(3, 3, 1), active=sim.active[2:4],
                         mode="slice", walls=walls)
    np.testing.assert_array_equal(frame, want)
    assert not np.array_equal(frame, render_volume(sim.plume_image(1), sim.positions[2:4], source=(3, 3, 1),
                                                   active=sim.active[2:4], mode="slice"))


def test_the_walls_example_draws_both_pictures(tmp_path, capsys):
    """examples/walls.py at a tiny size (the two combinations above, and the scene's)."""
    import importlib.util
    from pathlib import Path

    import imageio.v3 as iio

    path = Path(__file__).resolve().parents[2] / "examples" / "walls.py"
    spec = importlib.util.spec_from_file_location("example_walls", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    assert example.main(["--size", "24", "16", "--steps", "30", "--scale", "2", "--out", str(tmp_path)]) == 0
    flat = iio.imread(tmp_path / "walls.png")
    assert flat.shape == (16 * 2, 3 * 24 * 2 + 2 * 2 * 2, 3)
    assert (flat == [128, 128, 128]).all(axis=2).sum() > 20  # the walls, in grey
    scene = iio.imread(tmp_path / "walls-scene.png")  # the puffs' scene (tests/models/sources/test_walls_scene.py)
    assert scene.shape == (12 * 2, 3 * 24 * 2 + 2 * 2 * 2, 3)
    assert (scene == [128, 128, 128]).all(axis=2).sum() > 20
    assert iio.imread(tmp_path / "walls-3d.png").ndim == 3
    assert "wrote" in capsys.readouterr().out
