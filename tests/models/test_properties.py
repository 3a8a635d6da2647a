"""Properties of every model that need no reference: bounds, determinism, world independence,
threads, snapshots and validation, over the fixed combinations of tests/models_reference.py."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from plume_multi import Simulator, bodies, plumes, sensors
from plume_multi.errors import ValidationError

from models_reference import COMBOS, TABLE_BODY, random_actions, run, scenarios, simple_scenario

IDS = ["-".join(c) for c in COMBOS]


def assert_runs_equal(a, b):
    assert len(a) == len(b)
    for k, (x, y) in enumerate(zip(a, b)):
        for u, v in zip(x[:5], y[:5]):
            np.testing.assert_array_equal(u, v, err_msg=f"step {k + 1}")
        assert x[5].keys() == y[5].keys()
        for name in x[5]:
            np.testing.assert_array_equal(x[5][name], y[5][name], err_msg=f"step {k + 1} {name}")


# ----------------------------------------------------------------------------- bounds
EXTREME_BODIES = {
    "table": st.just(TABLE_BODY()),  # one table body: see models_reference.TABLE_BODY
    "oriented": st.builds(bodies.Oriented, turn_degrees=st.floats(0.01, 180.0), step=st.integers(1, 2048),
                          initial_heading=st.one_of(st.none(), st.floats(-1e6, 1e6))),
    "run_tumble": st.builds(bodies.RunTumble, step=st.integers(1, 2048),
                            initial_heading=st.one_of(st.none(), st.floats(-1e6, 1e6))),
    "continuous": st.builds(bodies.Continuous, max_speed=st.floats(0.01, 2048.0),
                            max_turn_degrees=st.floats(0.0, 180.0),
                            initial_heading=st.one_of(st.none(), st.floats(-1e6, 1e6))),
}


@pytest.mark.parametrize("plume_kind, body_kind", COMBOS, ids=IDS)
@given(data=st.data(), seed=st.integers(0, 2**40), action_seed=st.integers(0, 2**32 - 1))
def test_agents_stay_in_bounds_and_headings_in_0_360(plume_kind, body_kind, data, seed, action_seed):
    sc = data.draw(scenarios(plume_kind, body_kind, max_side=40))
    sc = sc.replace(action_model=data.draw(EXTREME_BODIES[body_kind]), max_steps=data.draw(st.integers(1, 30)))
    sim = Simulator(sc, num_worlds=2)
    sim.reset(seed=seed)
    w, h = sc.grid_size
    for a in random_actions(sc, 2, 30, action_seed):
        sim.step(a)
        pos = sim.positions
        assert ((pos >= 0) & (pos < np.array([w, h]))).all()
        if sc.action_model.oriented:
            hd = sim.model_state("body.heading")
            assert ((hd >= 0.0) & (hd < 360.0)).all()
        if sc.continuous:
            xy = sim.model_state("body.xy")
            assert ((xy >= 0.0) & (xy <= np.array([w - 1, h - 1]))).all()
            np.testing.assert_array_equal(np.floor(xy + 0.5).astype(np.int32), pos)
        assert sim.validate() == []


@pytest.mark.parametrize("cls", [bodies.Oriented, bodies.RunTumble, bodies.Continuous])
@pytest.mark.parametrize("given_heading, wrapped", [(-1e-300, 0.0), (-1e-14, 0.0), (360.0, 0.0), (-90.0, 270.0),
                                                    (725.0, 5.0), (0.0, 0.0)])
def test_initial_heading_is_wrapped_into_0_360(cls, given_heading, wrapped):
    # -1e-300 % 360.0 is 360.0 in floating point: the model must still give a heading < 360
    assert cls(initial_heading=given_heading).initial_heading == wrapped


# ----------------------------------------------------------------------------- determinism
@pytest.mark.parametrize("plume_kind, body_kind", COMBOS, ids=IDS)
def test_same_seed_same_results(plume_kind, body_kind):
    sc = simple_scenario(plume_kind, body_kind)
    acts = random_actions(sc, 3, 25, 11)
    runs = []
    for _ in range(2):
        sim = Simulator(sc, num_worlds=3)
        sim.reset(seed=123)
        runs.append(run(sim, acts))
    assert_runs_equal(*runs)
    other = Simulator(sc, num_worlds=3)
    other.reset(seed=124)
    assert not all(np.array_equal(x[0], y[0]) for x, y in zip(runs[0], run(other, acts)))


@pytest.mark.parametrize("plume_kind, body_kind", [("gaussian", "run_tumble"), ("movie", "oriented"),
                                                   ("movie", "continuous")], ids=lambda v: str(v))
def test_world_i_is_world_0_of_seed_plus_i(plume_kind, body_kind):
    """Random sources, random movie starts, random headings, tumbles and wind noise of world i
    seeded s are those of world 0 seeded s + i, across autoresets."""
    sc = simple_scenario(plume_kind, body_kind, noise_std=0.7, max_steps=6, goal_radius=2.0)
    B, N, seed = 4, sc.n_agents, 1000
    acts = random_actions(sc, B, 20, 5)
    if not sc.continuous:  # plenty of tumbles
        acts = [np.where(np.arange(a.size) % 2 == 0, 1, a) for a in acts]
    whole = Simulator(sc, num_worlds=B)
    whole.reset(seed=seed)
    got = run(whole, acts)
    for b in range(B):
        rows = slice(b * N, (b + 1) * N)
        alone = Simulator(sc, num_worlds=1)
        alone.reset(seed=seed + b)
        ref = run(alone, [a[rows] for a in acts])
        for k, (x, y) in enumerate(zip(got, ref)):
            for u, v in zip(x[:5], y[:5]):
                np.testing.assert_array_equal(u[rows], v, err_msg=f"world {b} step {k + 1}")
            for name, arr in y[5].items():
                mine = x[5][name]
                part = mine[rows] if mine.shape[0] == B * N else mine[b:b + 1]
                np.testing.assert_array_equal(part, arr, err_msg=f"world {b} step {k + 1} {name}")


@pytest.mark.parametrize("plume_kind, body_kind", [("gaussian", "run_tumble")], ids=lambda v: str(v))
def test_parallel_run_equals_serial_run(plume_kind, body_kind):
    """Random sources, tumbles and wind noise, on threads (one combination: the parallel driver
    is the same template for every combination; two sensors that draw, not the whole set, since
    the serial and threaded drivers of the whole set cost 20 s each to compile)."""
    sc = simple_scenario(plume_kind, body_kind, max_steps=7, goal_radius=1.5)
    sc = sc.replace(sensors=(sensors.Concentration(), sensors.Wind(0.5)))
    acts = random_actions(sc, 9, 20, 8)
    runs = []
    for parallel in (False, True):
        sim = Simulator(sc, num_worlds=9, parallel=parallel)
        assert sim.parallel is parallel
        sim.reset(seed=77)
        runs.append(run(sim, acts))
    assert_runs_equal(*runs)


# ----------------------------------------------------------------------------- snapshots
MODEL_KEYS = {"table": set(), "oriented": {"model:body.heading"}, "run_tumble": {"model:body.heading"},
              "continuous": {"model:body.heading", "model:body.xy"}}


@pytest.mark.parametrize("plume_kind, body_kind", COMBOS, ids=IDS)
def test_snapshot_restore_continues_bit_for_bit(plume_kind, body_kind, tmp_path):
    sc = simple_scenario(plume_kind, body_kind, max_steps=8, goal_radius=1.5)
    acts = random_actions(sc, 3, 30, 4)
    sim = Simulator(sc, num_worlds=3)
    sim.reset(seed=9)
    run(sim, acts[:13])
    snap = sim.snapshot()
    expected_keys = MODEL_KEYS[body_kind] | {"model:plume.source" if plume_kind == "gaussian" else "model:plume.start"}
    assert expected_keys <= set(snap)
    np.savez(tmp_path / "snap.npz", **snap)
    after = run(sim, acts[13:])
    fresh = Simulator(sc, num_worlds=3)
    with np.load(tmp_path / "snap.npz") as saved:
        fresh.restore(saved)
    assert_runs_equal(after, run(fresh, acts[13:]))
    sim.restore(snap)  # and back in the first one
    assert_runs_equal(after, run(sim, acts[13:]))


# ----------------------------------------------------------------------------- validate
@pytest.mark.parametrize("body_kind", ["oriented", "run_tumble", "continuous"])
@pytest.mark.parametrize("bad", [360.5, -0.5, np.nan, 1e9])
def test_validate_catches_a_corrupted_heading(body_kind, bad):
    sim = Simulator(simple_scenario("movie" if body_kind == "oriented" else "gaussian", body_kind), num_worlds=2)
    sim.reset(seed=1)
    run(sim, random_actions(sim.scenario, 2, 5, 1))
    assert sim.validate() == []
    sim.state.models["body.heading"][4] = bad
    problems = sim.validate()
    assert problems and any("body.heading" in p for p in problems)
    snap = sim.snapshot()
    with pytest.raises(ValidationError, match="body.heading"):
        Simulator(sim.scenario, num_worlds=2).restore(snap)


@pytest.mark.parametrize("bad", [5, -1, 99])
def test_validate_catches_a_movie_clock_out_of_range(bad):
    sim = Simulator(simple_scenario("movie", "oriented", frames=5), num_worlds=3)
    sim.reset(seed=2)
    run(sim, random_actions(sim.scenario, 3, 4, 2))
    assert sim.validate() == []
    sim.state.models["plume.start"][1] = bad
    problems = sim.validate()
    assert problems and any("plume.start" in p for p in problems)


def test_validate_catches_a_random_source_off_the_grid_and_a_float_position_off_the_grid():
    sim = Simulator(simple_scenario("gaussian", "continuous", grid=(11, 7)), num_worlds=2)
    sim.reset(seed=3)
    assert sim.validate() == []
    sim.state.models["plume.source"][0, 0] = -1.0
    assert any("plume.source" in p for p in sim.validate())
    sim.reset(seed=3)
    sim.state.models["body.xy"][2, 1] = 6.5  # y beyond H - 1 = 6 (though within W - 1 = 10): the grid's own shape
    assert any("body.xy (Continuous.xy)" in p for p in sim.validate())
    sim.reset(seed=3)
    sim.state.models["body.xy"][2, 0] = 10.5  # x beyond W - 1
    assert any("body.xy" in p for p in sim.validate())
    sim.reset(seed=3)
    sim.state.models["plume.source"][1] = (2.5, 1.0)  # a random source is a cell
    assert any("plume.source (Gaussian.source)" in p and "whole numbers" in p for p in sim.validate())
    sim.reset(seed=3)
    sim.state.models["plume.source"][1] = (3.0, 7.0)  # y beyond H - 1
    assert any("plume.source" in p for p in sim.validate())


def test_random_sources_are_cells_drawn_per_world_and_episode():
    sc = simple_scenario("gaussian", "table", source="random", grid=(13, 5))
    sim = Simulator(sc, num_worlds=64)
    sim.reset(seed=0)
    src = sim.sources
    assert src.shape == (64, 2)
    assert (src == np.floor(src)).all() and (src[:, 0] < 13).all() and (src[:, 1] < 5).all() and (src >= 0).all()
    assert len({tuple(s) for s in src}) > 20  # 65 cells, 64 worlds: distinct worlds, distinct sources
    first = src.copy()
    sim.reset()  # next episode of every world: new sources
    assert not np.array_equal(first, sim.sources)
    sim.reset(seed=0)
    np.testing.assert_array_equal(first, sim.sources)
    assert plumes.Gaussian(source="random").fixed_source() is None


# ----------------------------------------------------------------------------- the grid's edges
# Issue 23, item 11: a point within half a cell of the grid reads its edge cell (the cell covers
# [i - 1/2, i + 1/2]); x = -5.5e-16, an antenna's rounding on the left edge, is such a point.
EDGES = {  # heading along the edge, from its first corner; antenna angle -90 points out of the grid
    "bottom": (0.0, (0, 0)), "right": (90.0, (10, 0)), "top": (180.0, (10, 6)), "left": (270.0, (0, 6)),
}


@pytest.mark.parametrize("edge", EDGES)
@pytest.mark.parametrize("distance, reads", [(0.4, "edge"), (0.5, "edge"), (0.6, "zero")])
def test_agents_walking_along_every_edge_read_it_within_half_a_cell(edge, distance, reads):
    from models_reference import NaiveSim, sensor_set

    heading, corner = EDGES[edge]
    # the history antenna looks along the heading + 0 from 3 cells: on the left edge (heading 270)
    # it reads x = 3 cos(270 deg) = -5.5e-16, which must count as on the grid
    sc = simple_scenario("gaussian", "continuous", source=(5, 3), grid=(11, 7)).replace(
        plume=plumes.Gaussian(source=(5, 3), sigma=20.0), n_agents=2, start_positions=(corner, (5, 3)),
        action_model=bodies.Continuous(max_speed=1.0, initial_heading=heading),
        sensors=sensor_set(angles=(90.0, -90.0), distance=distance, history_angle=0.0, history_distance=3.0))
    sim, ref = Simulator(sc), NaiveSim(sc)
    obs, expected = sim.reset(seed=0), ref.reset(0)
    steps = 6 if edge in ("left", "right") else 10
    for step in range(steps + 1):
        np.testing.assert_array_equal(obs, expected, err_msg=f"{edge}, step {step}")
        x, y = sim.model_state("body.xy")[0]
        assert (x in (0.0, 10.0)) or (y in (0.0, 6.0)), (x, y)  # still on its edge
        outward = obs[0, 7]
        if reads == "edge":
            assert outward > 0 and outward == ref.conc_at(0, min(max(x, 0.0), 10.0), min(max(y, 0.0), 6.0))
        else:
            assert outward == 0.0
        if edge == "left" and y >= 3.0:
            assert obs[0, 14] == ref.conc_at(0, 0.0, y - 3.0) > 0  # the point (-5.5e-16, y - 3)
        obs, *_ = sim.step(np.array([[1.0, 0.0], [0.0, 0.0]]))
        expected = ref.step(np.array([[1.0, 0.0], [0.0, 0.0]]))[0]


def test_a_history_out_of_its_sensors_bounds_is_refused():
    """History keeps its memory in the observation (not recomputable): its columns must lie within
    the wrapped sensor's bounds, or validate() reports them and restore refuses them."""
    sim = Simulator(simple_scenario("gaussian", "table", grid=(11, 7)), num_worlds=2)
    sim.reset(seed=4)
    run(sim, random_actions(sim.scenario, 2, 3, 4))
    assert sim.validate() == []
    snap = sim.snapshot()
    snap["obs"][1, 10] = 1.5  # the oldest concentration of the history, in [0, 1]
    with pytest.raises(ValidationError, match=r"obs: 1 rows whose History columns are outside the sensor's bounds "
                                              r"\[0, 1\] \(first: row 1\)"):
        sim.restore(snap)
