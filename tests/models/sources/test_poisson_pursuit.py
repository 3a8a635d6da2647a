"""A ``PoissonHits`` target that moves (``source_motion=sources.RandomWalk(...)``): its track against
the motion's plain reference, the belief's Bayes filter (prediction, then update) against a plain
reference, the policies deciding on the belief one step ahead, snapshots, validation.

One compiled combination serves the file: ``scenarios.poisson_search`` of one agent with a
run-and-tumble target (the pursuit table's, ``benchmarks/pursuit.py``).
"""

import numpy as np
import pytest

import poisson_reference as nv
from plume_multi import Simulator, ValidationError, plumes, sources
from plume_multi.engine.jit import njit
from plume_multi.models.plumes.poisson_hits import kernels as kp
from plume_multi.models.plumes.poisson_hits.moving import predicted
from plume_multi.models.sources.motion import predict_belief
from plume_multi.policies import Greedy, Infotaxis
from plume_multi.scenarios import poisson_search
from sources_reference import MotionRef

WALK = sources.RandomWalk(speed=0.6, persistence=4.0)


def predict_reference(p, speed):
    """The walk with no memory, one cell at a time: stay with 1 - s, each neighbour s / 4 (a step
    off the grid stays), summed per cell as the docstring orders it."""
    h, w = p.shape
    q = 0.25 * speed
    out = np.empty_like(p)
    for y in range(h):
        for x in range(w):
            total = (1.0 - speed) * p[y, x]
            total += q * p[y - 1, x] if y > 0 else 0.0
            total += q * p[y, x - 1] if x > 0 else 0.0
            total += q * p[y + 1, x] if y < h - 1 else 0.0
            total += q * p[y, x + 1] if x < w - 1 else 0.0
            blocked = (y == h - 1) + (x == w - 1) + (y == 0) + (x == 0)
            out[y, x] = total + blocked * q * p[y, x]
    return out


@njit
def _predict(M, beliefs, scratch):
    for g in range(beliefs.shape[0]):
        predict_belief(M, beliefs[g], scratch[g])


def test_the_prediction_is_the_plain_reference_in_numpy_and_compiled():
    rng = np.random.default_rng(0)
    beliefs = rng.random((3, 7, 5)) ** 4
    beliefs[1, 3, :] = 0.0
    beliefs /= beliefs.sum(axis=(1, 2), keepdims=True)
    want = np.array([predict_reference(b, WALK.speed) for b in beliefs])
    np.testing.assert_array_equal(WALK.predicted(beliefs), want)
    got = beliefs.copy()
    _predict(WALK.record(), got, np.zeros_like(got))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(want.sum(axis=(1, 2)), 1.0, rtol=1e-13)  # mass is kept


def _scenario(**kw):
    return poisson_search(1.0, 2.0, max_steps=kw.pop("max_steps", 60), source_motion=kw.pop("motion", WALK), **kw)


def test_the_target_walks_as_the_reference_and_the_belief_follows_it():
    """Per world: the target's cells against ``MotionRef`` on cells (from where it was drawn), the
    hits, and the belief after each step: the reference's prediction, then its Bayes update."""
    sc = _scenario(team=False)
    plume = sc.plume
    sim = Simulator(sc, num_worlds=4, autoreset="disabled")
    obs = sim.reset(seed=3)
    like = nv.Likelihood(plume.shape, 1.0, 2.0, 2, plume.n_hits)
    h, w = plume.shape
    ref = MotionRef(WALK, lattice=True)
    xy = [[list(sim.model_state("plume.source")[b])] for b in range(4)]
    state = [[[0.0]] for _ in range(4)]
    for b in range(4):
        ref.start(xy[b], state[b], 0, 3 + b, 0)
    beliefs = [sim.model_state("sensor1.belief")[b].copy() for b in range(4)]
    rng = np.random.default_rng(1)
    moved = 0
    for t in range(1, 40):
        active = sim.state.active.copy()
        _, _, terminated, _ = sim.step(rng.integers(0, 4, 4))
        for b in range(4):
            before = list(xy[b][0])
            ref.move(xy[b], state[b], 0, t, w, h, 3 + b, 0)
            moved += xy[b][0] != before
            np.testing.assert_array_equal(sim.model_state("plume.source")[b], xy[b][0], err_msg=f"step {t}")
            if not active[b] or terminated[b]:
                continue
            x, y = sim.state.pos[b]
            sx, sy = (int(c) for c in xy[b][0])
            hit = kp.draw_hit(np.uint64(kp.rng.stream_key(3 + b, 0, kp.STREAM_HITS)), t, 0, plume.centred_likelihood,
                              (int(sx - x), int(sy - y)))
            assert sim.state.obs[b, 0] == hit
            beliefs[b] = nv.update(predict_reference(beliefs[b], WALK.speed), like(hit, x, y), x, y)
            np.testing.assert_allclose(sim.model_state("sensor1.belief")[b], beliefs[b], rtol=1e-9, atol=1e-15)
            assert beliefs[b][sy, sx] > 0  # the filter never rules the target out
    assert moved > 20 and sim.validate() == []


def test_the_policies_decide_on_the_belief_one_step_ahead():
    sc = _scenario()
    sim = Simulator(sc, num_worlds=6, autoreset="disabled")
    sim.reset(seed=7)
    sim.step(Infotaxis().act(sim))
    beliefs = sim.model_state("sensor1.belief")
    ahead = predicted(sc.plume, beliefs)
    assert not np.array_equal(ahead, beliefs)
    pos, active = sim.state.pos, sim.state.active
    np.testing.assert_array_equal(Infotaxis().act(sim), Infotaxis().decide(ahead, pos, groups=1, plume=sc.plume,
                                                                            active=active))
    np.testing.assert_array_equal(Greedy().act(sim), Greedy().decide(ahead, pos, groups=1, plume=sc.plume,
                                                                      active=active))


def test_infotaxis_catches_a_target_that_turns_often():
    sc = _scenario(motion=sources.RandomWalk(speed=0.5, persistence=1.0), max_steps=200)
    sim = Simulator(sc, num_worlds=64, autoreset="disabled")
    sim.reset(seed=0)
    policy = Infotaxis()
    for _ in range(200):
        _, _, terminated, truncated = sim.step(policy.act(sim))
        if (terminated | truncated).all():
            break
    assert terminated.mean() > 0.8


def test_snapshots_carry_the_target_and_its_motion():
    sim = Simulator(_scenario(), num_worlds=3)
    sim.reset(seed=2)
    policy = Infotaxis()
    for _ in range(4):
        sim.step(policy.act(sim))
    snap = sim.snapshot()
    assert {"model:plume.motion", "model:sensor1.scratch"} <= set(snap)
    later = [sim.step(policy.act(sim))[0].copy() for _ in range(6)]
    sim.restore(snap)
    again = [sim.step(policy.act(sim))[0].copy() for _ in range(6)]
    np.testing.assert_array_equal(np.array(later), np.array(again))


@pytest.mark.parametrize("motion", [sources.Drift(velocity=(0.5, 0.0)), sources.Waypoints(points=((1, 1),)),
                                    sources.RandomWalk(speed=1.5), "walk"])
def test_a_target_moves_on_cells_or_is_refused(motion):
    with pytest.raises(ValidationError, match=r"PoissonHits\.source_motion"):
        plumes.PoissonHits(1.0, 2.0, source_motion=motion)


def test_metadata_of_a_moving_target():
    assert "source_motion" not in plumes.PoissonHits(1.0, 2.0).metadata()
    assert plumes.PoissonHits(1.0, 2.0, source_motion=WALK).metadata()["source_motion"]["model"] == "RandomWalk"


def test_the_pursuit_table_runs_tiny(capsys):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "benchmarks" / "pursuit.py"
    spec = importlib.util.spec_from_file_location("pursuit_script", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "| persistence (steps) | infotaxis caught" in out and out.count("\n| 1 |") + out.count("\n| 30 |") == 2
