"""``plumes.Gaussian`` of several, drawn or moving sources in the engine: against the plain
reference of ``sources_reference.py``, team episodes, determinism, snapshots and validation.

Two compiled combinations serve the file (a table body, Concentration + Position, several agents):
fixed sources that do not move (their summed field shared) and drawn sources that run and tumble
(evaluated where sensors read); one more for a single drifting source.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plume_multi import Scenario, Simulator, ValidationError, plumes, sources
from plume_multi.engine import assemble
from sources_reference import NaiveSourcesWorld


def _fixed(cells, **kw):
    return plumes.Gaussian(source=cells, sigma=kw.pop("sigma", 3.0), **kw)


def _walking(k, **kw):
    return plumes.Gaussian(source="random", n_sources=k, sigma=kw.pop("sigma", 3.0),
                           source_motion=kw.pop("motion", sources.RandomWalk(speed=0.7, persistence=4.0)), **kw)


@st.composite
def scenarios(draw):
    w, h = draw(st.integers(2, 12)), draw(st.integers(2, 12))
    k = draw(st.integers(2, 4))
    if draw(st.booleans()):
        cells = [(draw(st.integers(0, w - 1)), draw(st.integers(0, h - 1))) for _ in range(k)]
        plume = _fixed(cells, sigma=draw(st.floats(0.5, 8.0)))
    else:
        walk = sources.RandomWalk(speed=draw(st.floats(0.0, 2.0)), persistence=draw(st.floats(1.0, 20.0)))
        plume = _walking(k, sigma=draw(st.floats(0.5, 8.0)), motion=walk)
    return Scenario(grid_size=(w, h), plume=plume, n_agents=draw(st.integers(2, 4)), team=draw(st.booleans()),
                    goal_radius=draw(st.sampled_from([1e-45, 1.0, 1.5, 2.5])), max_steps=draw(st.integers(3, 12)),
                    action_model="moore")


def _against_reference(sc, num_worlds, steps, seed, action_seed=0):
    sim = Simulator(sc, num_worlds=num_worlds)
    worlds = [NaiveSourcesWorld(sc) for _ in range(num_worlds)]
    obs = sim.reset(seed=seed)
    for b, world in enumerate(worlds):
        world.reset(seed + b)
    rng = np.random.default_rng(action_seed)
    n = sc.n_agents
    for t in range(steps + 1):
        if t:
            actions = rng.integers(0, sc.n_actions, sim.total_agents)
            obs, reward, terminated, truncated = sim.step(actions)
            for b, world in enumerate(worlds):
                world.step(actions[b * n:(b + 1) * n])
        for b, world in enumerate(worlds):
            rows = slice(b * n, (b + 1) * n)
            np.testing.assert_array_equal(sim.source_positions[b], np.array(world.xy), err_msg=f"step {t}")
            np.testing.assert_array_equal(obs[rows], world.obs, err_msg=f"step {t} world {b}")
            np.testing.assert_array_equal(sim.positions[rows], np.array(world.pos), err_msg=f"step {t}")
            if t:
                np.testing.assert_array_equal(reward[rows], np.array(world.reward, np.float32))
                np.testing.assert_array_equal(terminated[rows], world.terminated)
                np.testing.assert_array_equal(truncated[rows], world.truncated)
            if not world.done:  # a world that ended is reset at the next step; its record is the last
                np.testing.assert_array_equal(sim.sources_found[b], world.found)
    return sim


@given(sc=scenarios(), seed=st.integers(0, 2**31), action_seed=st.integers(0, 2**31))
@settings(max_examples=20)
def test_several_sources_match_the_reference(sc, seed, action_seed):
    _against_reference(sc, num_worlds=2, steps=2 * sc.max_steps + 1, seed=seed, action_seed=action_seed)


def test_one_drifting_source_matches_the_reference():
    sc = Scenario(grid_size=(9, 7), plume=plumes.Gaussian(source=(2, 3), sigma=2.0,
                                                          source_motion=sources.Drift(velocity=(0.75, -0.4))),
                  n_agents=3, goal_radius=1.2, max_steps=20, action_model="moore")
    sim = _against_reference(sc, num_worlds=3, steps=45, seed=11)
    assert sim.sources_found.shape == (3, 1)


def test_one_source_compiles_the_one_source_driver():
    """A plume of one source (fixed or moving) gets the driver without ``reach``: the same text as
    before several sources existed, so the same compiled code."""
    one = Simulator(Scenario(grid_size=(9, 7), n_agents=2))
    several = Simulator(Scenario(grid_size=(9, 7), n_agents=2, plume=_fixed([(1, 1), (5, 5)])))
    one_text, several_text = assemble.source(one._layout), assemble.source(several._layout)
    assert "plume_reach" not in one_text and "plume_reach" in several_text
    distance = "squared_distance(point, src) <= goal_d2"
    assert distance in one_text and distance not in several_text


def test_a_team_ends_when_every_source_is_found():
    """Two sources, three agents: the first to reach a source stops with the goal reward; reaching
    a found source again counts no more; when the second is found, every agent still searching
    stops with the goal reward too."""
    sc = Scenario(grid_size=(9, 1), plume=_fixed([(2, 0), (7, 0)]), n_agents=3, team=True, max_steps=50,
                  start_positions=((1, 0), (3, 0), (5, 0)))
    sim = Simulator(sc, num_worlds=1, autoreset="disabled")
    sim.reset(seed=0)
    up, right, left = 0, 1, 3  # up: clamped into the one-row grid, the agent stays
    _, reward, terminated, _ = sim.step(np.array([right, up, up]))  # agent 0 reaches (2, 0)
    assert reward.tolist() == [1.0, 0.0, 0.0] and terminated.tolist() == [True, False, False]
    assert sim.sources_found.tolist() == [[True, False]]
    _, reward, terminated, _ = sim.step(np.array([up, left, right]))  # agent 1 onto the found source: nothing
    assert reward.tolist() == [0.0, 0.0, 0.0] and terminated.tolist() == [True, False, False]
    _, reward, terminated, _ = sim.step(np.array([up, up, right]))  # agent 2 reaches (7, 0): all done
    assert reward.tolist() == [0.0, 1.0, 1.0] and terminated.tolist() == [True, True, True]
    assert sim.sources_found.tolist() == [[True, True]] and sim.state.world_done.tolist() == [True]


def test_without_a_team_any_source_ends_an_agent():
    sc = Scenario(grid_size=(9, 1), plume=_fixed([(2, 0), (7, 0)]), n_agents=2, max_steps=50,
                  start_positions=((1, 0), (3, 0)))
    sim = Simulator(sc, num_worlds=1, autoreset="disabled")
    sim.reset(seed=0)
    _, reward, terminated, _ = sim.step(np.array([1, 3]))  # both onto (2, 0)
    assert reward.tolist() == [1.0, 1.0] and terminated.tolist() == [True, True]
    assert sim.sources_found.tolist() == [[True, False]]


def test_threads_batch_splits_and_snapshots_give_the_same_numbers():
    sc = Scenario(grid_size=(20, 15), plume=_walking(3), n_agents=4, max_steps=30, team=True)
    actions = [np.random.default_rng(t).integers(0, 4, 8 * 4) for t in range(40)]

    def run(sim, acts):
        out = []
        for a in acts:
            obs, reward, terminated, _ = sim.step(a)
            out.append((obs.copy(), reward.copy(), terminated.copy(), sim.source_positions.copy()))
        return out

    serial = Simulator(sc, num_worlds=8, parallel=False)
    serial.reset(seed=5)
    threaded = Simulator(sc, num_worlds=8, parallel=True)
    threaded.reset(seed=5)
    first, second = Simulator(sc, num_worlds=5, parallel=False), Simulator(sc, num_worlds=3, parallel=False)
    first.reset(seed=5)
    second.reset(seed=10)
    a, b = run(serial, actions[:20]), run(threaded, actions[:20])
    split = [tuple(np.concatenate([x, y]) for x, y in zip(p, q))
             for p, q in zip(run(first, [x[:20] for x in actions[:20]]), run(second, [x[20:] for x in actions[:20]]))]
    snap = serial.snapshot()
    rest = run(serial, actions[20:])
    restored = Simulator(sc, num_worlds=8, parallel=False)
    restored.restore(snap)
    again = run(restored, actions[20:])
    for x, y, z in zip(a, b, split):
        for p, q, r in zip(x, y, z):
            np.testing.assert_array_equal(p, q)
            np.testing.assert_array_equal(p, r)
    for x, y in zip(rest, again):
        for p, q in zip(x, y):
            np.testing.assert_array_equal(p, q)
    assert serial.validate() == [] and restored.validate() == []
    assert np.ptp(np.array([s[3] for s in rest]), axis=0).max() > 0  # the sources did move


def test_a_corrupt_source_state_is_reported_and_refused():
    sim = Simulator(Scenario(grid_size=(20, 15), plume=_walking(3), n_agents=4), num_worlds=2)
    sim.reset(seed=0)
    snap = sim.snapshot()
    snap["model:plume.source"] = snap["model:plume.source"].copy()
    snap["model:plume.source"][1, 2, 0] = np.nan
    with pytest.raises(ValidationError, match="plume.source"):
        sim.restore(snap)
    snap["model:plume.source"] = sim.snapshot()["model:plume.source"].copy()
    snap["model:plume.source"][0, 0, 1] = 15.0  # beyond the grid's last row, 14
    with pytest.raises(ValidationError, match=r"plume.source \(Gaussian.source\): 1 rows above"):
        sim.restore(snap)
    assert sim.validate() == []  # nothing changed


BAD = [
    (lambda: plumes.Gaussian(source=[(1, 2), (3,)]), "Gaussian.source"),
    (lambda: plumes.Gaussian(source=[(1, 2), (3.5, 1)]), "Gaussian.source"),
    (lambda: plumes.Gaussian(source=[(1, 2)] * 17), "Gaussian.source"),
    (lambda: plumes.Gaussian(source=[]), "Gaussian.source"),
    (lambda: plumes.Gaussian(source=(1, 2), n_sources=2), "Gaussian.n_sources"),
    (lambda: plumes.Gaussian(source="random", n_sources=0), "Gaussian.n_sources"),
    (lambda: plumes.Gaussian(source="random", n_sources=True), "Gaussian.n_sources"),
    (lambda: plumes.Gaussian(source_motion="drift"), "Gaussian.source_motion"),
    (lambda: plumes.Gaussian(source_motion=plumes.Gaussian()), "Gaussian.source_motion"),
    (lambda: Scenario(grid_size=(10, 10), plume=plumes.Gaussian(source=[(1, 2), (10, 3)])), "Gaussian.source"),
    (lambda: Scenario(grid_size=(10, 10), plume=plumes.Gaussian(
        source_motion=sources.Waypoints(points=((1, 1), (12, 3))))), "Gaussian.source_motion"),
]


@pytest.mark.parametrize("factory, field", BAD)
def test_bad_sources_are_refused_naming_the_field(factory, field):
    with pytest.raises(ValidationError, match=field.replace(".", r"\.")):
        factory()


def test_metadata_rebuilds_several_moving_sources():
    from plume_multi.scenario import scenario_from_metadata

    sc = Scenario(grid_size=(12, 9), plume=plumes.Gaussian(source=[(1, 2), (5, 6)], sigma=2.0,
                                                          source_motion=sources.Drift(velocity=(0.5, 0.25))))
    assert scenario_from_metadata(sc.metadata()) == sc
    assert "source_motion" not in plumes.Gaussian().metadata()  # one fixed source: as before
    assert sc.goal_d2() == sc.goal_radius ** 2 and math.isclose(Scenario().goal_d2(), 0.0)
