"""The engine in 3-D: scenarios, start cells, every 3-D model against its plain reference, determinism,
snapshots, and what 3-D refuses.

Three compiled combinations (numbers vary, kinds do not; each costs 5-18 s of CPU to compile):

* table: ``Gaussian(source="random")`` + ``Moore`` (the table body: ``Cardinal`` runs the same
  compiled functions with another table) + ``Concentration``, ``Position``, ``History`` and
  ``Neighbours`` (``sensor_set_3d``), several agents;
* continuous: a fixed-source ``Gaussian`` (its ``(D, H, W)`` field, read trilinearly) +
  ``Continuous`` + the sensors that read at the float position (``Concentration``, ``Position``,
  ``Binary``, ``Wind``: three components with noise) + ``StepPenalty``, several agents; its
  ``validate()`` (the recomputed observations) too;
* the 3-D default scenario ``Scenario(grid_size=(W, H, D))``: fixed source read at cells, one agent
  (also the README's example and the benchmark's row), and its threaded step.
"""

import json

import numba
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from models_reference import NaiveSim, random_actions
from simulator_reference import counter_starts, numpy_starts
from plume_multi import Scenario, Simulator, plumes, rewards, sensors
from plume_multi import bodies as A
from plume_multi.errors import ValidationError
from plume_multi.scenario import scenario_from_metadata


def sensor_set_3d(k=1):
    """The table body's sensors. Columns: 0 concentration, 1-3 position, 4-6 concentration
    history, then 3k neighbours. (``Binary``, 4 s more to compile here, is the continuous body's.)"""
    return (sensors.Concentration(), sensors.Position(), sensors.History(sensors.Concentration(), steps=3),
            sensors.Neighbours(k))


def point_sensors(threshold=0.5, noise_std=0.0):
    """The continuous body's sensors: columns 0 concentration, 1-3 position, 4 detection, 5-7 wind."""
    return (sensors.Concentration(), sensors.Position(), sensors.Binary(threshold), sensors.Wind(noise_std))


@st.composite
def scenarios_3d(draw, body_kind, max_side=7, max_agents=4):
    w, h, d = (draw(st.integers(1, max_side)) for _ in range(3))
    n = draw(st.integers(2, max_agents))
    if body_kind == "table":
        body = A.Moore()
        plume = plumes.Gaussian(source="random", sigma=draw(st.floats(0.3, 10.0)))
    else:
        body = A.Continuous(max_speed=draw(st.floats(0.1, 3.0)))
        source = draw(st.one_of(st.none(), st.tuples(st.integers(0, w - 1), st.integers(0, h - 1),
                                                     st.integers(0, d - 1))))
        plume = plumes.Gaussian(source=source, sigma=draw(st.floats(0.3, 10.0)),
                                wind=(draw(st.floats(-2, 2)), 0.0, draw(st.floats(-2, 2))))
    region = None
    if draw(st.booleans()):
        corners = [sorted((draw(st.integers(0, s - 1)), draw(st.integers(0, s - 1)))) for s in (w, h, d)]
        region = (tuple(c[0] for c in corners), tuple(c[1] for c in corners))
    # the reward is a kind of its own (each compiles its driver): the table body with SparseGoal,
    # the continuous body with StepPenalty's drawn values
    reward = rewards.SparseGoal() if body_kind == "table" else \
        rewards.StepPenalty(draw(st.floats(-5, 5)), draw(st.floats(0, 1)))
    chosen = sensor_set_3d(draw(st.integers(1, n - 1))) if body_kind == "table" else \
        point_sensors(draw(st.floats(0.0, 1.0)), draw(st.sampled_from([0.0, 0.5])))
    return Scenario(grid_size=(w, h, d), plume=plume, n_agents=n, action_model=body, sensors=chosen,
                    goal_radius=draw(st.sampled_from([1e-45, 1.0, 1.5, 2.5])), max_steps=draw(st.integers(1, 12)),
                    reward=reward, start_region=region)


def continuous_actions(sc, rows, steps, seed):
    """Velocities partly longer than max_speed (the clip) and partly outside the box."""
    rng = np.random.default_rng(seed)
    return [rng.uniform(-2.0, 2.0, (rows, 3)) * sc.action_model.max_speed for _ in range(steps)]


def actions_for(sc, num_worlds, steps, seed):
    if sc.continuous:
        return continuous_actions(sc, num_worlds * sc.n_agents, steps, seed)
    return random_actions(sc, num_worlds, steps, seed)


def compare(sc, num_worlds, seed, steps, action_seed, validate=False):
    """Step a Simulator and the plain reference side by side; everything equal, bit for bit (and,
    with ``validate``, ``Simulator.validate()`` empty after each step)."""
    sim = Simulator(sc, num_worlds=num_worlds)
    ref = NaiveSim(sc, num_worlds)
    np.testing.assert_array_equal(sim.reset(seed=seed), ref.reset(seed), err_msg="reset")
    check_state(sim, ref, "reset")
    for k, a in enumerate(actions_for(sc, num_worlds, steps, action_seed)):
        got = sim.step(a)
        want = ref.step(a)
        for g, e in zip(got, want):
            np.testing.assert_array_equal(g, e, err_msg=f"step {k + 1}")
        check_state(sim, ref, f"step {k + 1}")
        if validate:
            assert sim.validate() == [], f"step {k + 1}"
    return sim


def check_state(sim, ref, where):
    np.testing.assert_array_equal(sim.positions, ref.pos, err_msg=where)
    np.testing.assert_array_equal(sim.active, ref.active, err_msg=where)
    np.testing.assert_array_equal(sim.sources, ref.sources, err_msg=where)
    assert sim.positions.shape == (sim.total_agents, 3)
    assert ((sim.positions >= 0) & (sim.positions < np.array(sim.scenario.grid_size))).all(), where
    if sim.scenario.continuous:
        np.testing.assert_array_equal(sim.model_state("body.xyz"), ref.xy, err_msg=where)


# --------------------------------------------------------------------------- the scenario (no compile)
def test_a_triple_grid_makes_a_3d_scenario_that_round_trips_through_json():
    sc = Scenario(grid_size=(9, 7, 5), n_agents=2, start_region=((1, 0, 2), (8, 6, 4)),
                  action_model=A.Continuous(max_speed=2.0), sensors=(sensors.Position(), sensors.Neighbours(1)))
    assert sc.dims == 3 and (sc.width, sc.height, sc.depth) == (9, 7, 5)
    assert sc.source_location == (4, 3, 2)  # the centre
    assert sc.observation_layout == ["x", "y", "z", "neighbour_0_dx", "neighbour_0_dy", "neighbour_0_dz"]
    low, high = sc.action_bounds()
    assert low.tolist() == [-2.0] * 3 and high.tolist() == [2.0] * 3
    again = scenario_from_metadata(json.loads(json.dumps(sc.metadata())))
    assert again == sc and again.metadata() == sc.metadata()
    fixed = Scenario(grid_size=(9, 7, 5), n_agents=2, start_positions=((0, 1, 2), (8, 6, 4)), source_location=(1, 1, 1))
    assert scenario_from_metadata(json.loads(json.dumps(fixed.metadata()))) == fixed
    assert Scenario().dims == 2 and Scenario().depth == 1
    assert Scenario(grid_size=(3, 3, 3)).n_actions == 6 and Scenario(grid_size=(3, 3, 3), action_model="moore").n_actions == 27
    assert Scenario(grid_size=(3, 3, 3)).moves().shape == (6, 3)


@pytest.mark.parametrize("kwargs, message", [
    (dict(action_model=A.Oriented()), r"Oriented is 2-D only; the scenario is 3-D \(grid_size=\(6, 5, 4\)\)"),
    (dict(action_model=A.RunTumble()), "RunTumble is 2-D only"),
    (dict(sensors=(sensors.Antennae(),)), r"Antennae is 2-D only; the scenario is 3-D \(grid_size=\(6, 5, 4\)\)"),
    (dict(sensors=(sensors.Heading(),)), "Heading is 2-D only"),
    (dict(sensors=(sensors.History(sensors.Antennae()),)), "Antennae is 2-D only"),
    (dict(plume=plumes.Movie(np.zeros((2, 5, 6), np.float32), source=(1, 1))),
     r"Movie.frames: got frames \(T, H, W\) of shape \(2, 5, 6\); expected volumes \(T, D, H, W\) to run in the 3-D"),
    (dict(plume=plumes.PoissonHits(1.0, 2.0)), r"PoissonHits.dims: got 2; expected 3 to run in the 3-D scenario of "
                                                r"grid_size=\(6, 5, 4\)"),
    (dict(plume=plumes.WindyPoissonHits()), r"WindyPoissonHits is 2-D only; the scenario is 3-D"),
    (dict(sensors=(sensors.Hits(),)), "Hits.plume: .* expected a Poisson-hit plume"),
    (dict(sensors=(sensors.Belief(),)), "Belief.plume: .* expected a Poisson-hit plume"),
    (dict(source_location=(1, 2)), r"Scenario.source_location: got \(1, 2\); expected \(x, y, z\)"),
    (dict(plume=plumes.Gaussian(source=(1, 2, 4))), r"Gaussian.source: got \(1, 2, 4\); expected a cell \(x, y, z\) inside the 6x5x4"),
    (dict(start_positions=((1, 2),)), r"Scenario.start_positions: .* triples \(x, y, z\)"),
    (dict(start_positions=((1, 2, 4),)), r"Scenario.start_positions: .* inside the 6x5x4 grid"),
    (dict(start_region=((0, 0, 0), (1, 1, 4))), r"Scenario.start_region: .* 0 <= z0 <= z1 < 4"),
])
def test_3d_refuses_2d_only_models_and_bad_cells_by_name(kwargs, message):
    with pytest.raises(ValidationError, match=message):
        Scenario(grid_size=(6, 5, 4), **kwargs)


@pytest.mark.parametrize("grid", [(4, 4, 0), (4, 4, 4, 4), (2048, 2048, 64), (4, 4, 4.0)])
def test_bad_3d_grids_are_refused(grid):
    with pytest.raises(ValidationError, match="Scenario.grid_size"):
        Scenario(grid_size=grid)


def test_3d_parameters_of_the_models_are_checked():
    with pytest.raises(ValidationError, match=r"Gaussian.wind: .*\(u, v, w\) needs a 3-D grid"):
        Scenario(plume=plumes.Gaussian(wind=(1.0, 0.0, 0.5)))
    with pytest.raises(ValidationError, match=r"Gaussian.source: got \(1, 2, 3\); expected a cell \(x, y\)"):
        Scenario(grid_size=(8, 8), plume=plumes.Gaussian(source=(1, 2, 3)))
    with pytest.raises(ValidationError, match="Gaussian.wind"):
        plumes.Gaussian(wind=(1.0, 2.0, 3.0, 4.0))
    with pytest.raises(ValidationError, match="Neighbours.k"):
        Scenario(grid_size=(4, 4, 4), n_agents=2, sensors=(sensors.Neighbours(2),))
    with pytest.raises(ValidationError, match="field: got shape"):
        Simulator(Scenario(grid_size=(4, 3, 2)), field=np.zeros((3, 4)))


# --------------------------------------------------------------------------- against the references
@given(data=st.data(), num_worlds=st.integers(1, 3), seed=st.integers(0, 2**40),
       action_seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 16))
def test_table_body_random_source_matches_reference(data, num_worlds, seed, action_seed, steps):
    compare(data.draw(scenarios_3d("table")), num_worlds, seed, steps, action_seed)


@given(data=st.data(), num_worlds=st.integers(1, 3), seed=st.integers(0, 2**40),
       action_seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 16))
def test_continuous_body_fixed_source_matches_reference(data, num_worlds, seed, action_seed, steps):
    compare(data.draw(scenarios_3d("continuous")), num_worlds, seed, steps, action_seed, validate=True)


@settings(max_examples=10)
@given(w=st.integers(1, 9), h=st.integers(1, 9), d=st.integers(1, 9), seed=st.integers(0, 2**40),
       action_seed=st.integers(0, 2**32 - 1))
def test_default_3d_scenario_matches_reference(w, h, d, seed, action_seed):
    sc = Scenario(grid_size=(w, h, d), max_steps=6, sigma=2.0)
    assert sc.action_model == A.Cardinal() and sc.observation_layout == ["concentration", "x", "y", "z"]
    compare(sc, 3, seed, 14, action_seed)


def test_start_cells_in_3d_are_numpy_default_rng_draws_then_the_counter_stream():
    """Episode 0: default_rng(seed) draws integers(0, W), integers(0, H), integers(0, D), agent by
    agent; later episodes: the counter-based stream, three draws per agent."""
    sc = Scenario(grid_size=(7, 5, 3), n_agents=4, plume=plumes.Gaussian(source="random"), action_model=A.Moore(),
                  sensors=sensor_set_3d(k=2), max_steps=1)
    sim = Simulator(sc, num_worlds=3)
    sim.reset(seed=11)
    for b in range(3):
        assert sim.positions[b * 4:(b + 1) * 4].tolist() == [list(c) for c in numpy_starts(11 + b, 4, 7, 5, 3)]
    sim.step(np.zeros(12, np.int64))  # max_steps 1: every world ends
    sim.step(np.zeros(12, np.int64))  # ... and starts episode 1
    for b in range(3):
        assert sim.positions[b * 4:(b + 1) * 4].tolist() == [list(c) for c in counter_starts(11 + b, 1, 4, 7, 5, 3)]


# --------------------------------------------------------------------------- determinism and snapshots
def run_rows(sc, num_worlds, seed, acts, parallel=False):
    sim = Simulator(sc, num_worlds=num_worlds, parallel=parallel)
    sim.reset(seed=seed)
    return [tuple(np.array(x) for x in sim.step(a)) + (sim.positions.copy(),) for a in acts]


def assert_same(runs_a, runs_b):
    for step_a, step_b in zip(runs_a, runs_b, strict=True):
        for a, b in zip(step_a, step_b, strict=True):
            np.testing.assert_array_equal(a, b)


def test_3d_results_do_not_depend_on_threads_or_the_batch_split():
    """The threaded step equals the serial one (the 3-D default scenario, 70 worlds in chunks on
    threads), and worlds 2..4 of a batch equal a batch of those worlds alone (several agents with
    neighbours: the table combination)."""
    default = Scenario(grid_size=(9, 8, 7), max_steps=12, sigma=3.0)
    acts = random_actions(default, 70, 30, 4)
    serial = run_rows(default, 70, 100, acts)
    for threads in sorted({1, numba.config.NUMBA_NUM_THREADS}):
        numba.set_num_threads(threads)
        try:
            assert_same(serial, run_rows(default, 70, 100, acts, parallel=True))
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    sc = Scenario(grid_size=(9, 8, 7), n_agents=3, plume=plumes.Gaussian(source="random", sigma=3.0),
                  action_model=A.Moore(), sensors=sensor_set_3d(k=2), max_steps=7, goal_radius=1.5)
    acts = random_actions(sc, 6, 25, 4)
    whole = run_rows(sc, 6, 100, acts)
    part = run_rows(sc, 3, 102, [a[6:15] for a in acts])  # worlds 2..4, seeded 102..104: rows 6..14
    assert_same(part, [tuple(x[6:15] for x in step) for step in whole])


def snapshot_and_continue(sc, acts, split, seed, num_worlds=2):
    """Step ``acts[:split]``, snapshot, step the rest; a second simulator restored from the snapshot
    steps the rest the same, bit for bit. Returns the snapshot and the second simulator."""
    sim = Simulator(sc, num_worlds=num_worlds)
    sim.reset(seed=seed)
    for a in acts[:split]:
        sim.step(a)
    snap = sim.snapshot()
    expected = [tuple(np.array(x) for x in sim.step(a)) for a in acts[split:]]
    other = Simulator(sc, num_worlds=num_worlds)
    other.restore(snap)
    for a, want in zip(acts[split:], expected):
        for g, e in zip(other.step(a), want):
            np.testing.assert_array_equal(g, e)
    return snap, other


def test_3d_snapshot_restore_continues_bit_for_bit_and_refuses_bad_positions():
    sc = Scenario(grid_size=(6, 5, 4), n_agents=2, action_model=A.Continuous(max_speed=1.5), max_steps=9,
                  plume=plumes.Gaussian(sigma=2.0), sensors=point_sensors(), reward=rewards.StepPenalty())
    snap, other = snapshot_and_continue(sc, continuous_actions(sc, 4, 20, 1), 7, seed=3)
    assert snap["pos"].shape == (4, 3) and snap["model:body.xyz"].shape == (4, 3)
    bad = dict(snap)
    bad["pos"] = snap["pos"].copy()
    bad["pos"][1, 2] = 4  # z = depth: outside
    with pytest.raises(ValidationError, match="outside the 6x5x4 grid"):
        other.restore(bad)
    flat = dict(snap)
    flat["pos"] = snap["pos"][:, :2].copy()
    with pytest.raises(ValidationError, match=r"snapshot\['pos'\]: got shape \(4, 2\)"):
        other.restore(flat)
    with pytest.raises(ValidationError, match=r"shape \(4,\) or \(2, 2, 3\)|\(vx, vy, vz\)"):
        other.step(np.zeros((4, 2)))
    with pytest.raises(ValidationError, match=r"not finite; expected finite \(vx, vy, vz\)"):
        other.step(np.array([[0.0, np.nan, 0.0]] * 4))
