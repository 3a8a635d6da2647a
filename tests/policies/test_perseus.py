"""policies.Perseus: the solver against a plain NumPy Perseus, monotone values, determinism, decisions,
files (ours and otto-benchmark's), the 1-D figure of otto, and where the policy plugs in."""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

from plume_multi import Simulator, evaluate
from plume_multi.errors import ValidationError
from plume_multi.models.plumes.poisson_hits import WindyPoissonHits
from plume_multi.policies import Infotaxis, Perseus, Team
from plume_multi.scenarios import poisson_search

sys.path.insert(0, str(Path(__file__).resolve().parent))
import perseus_reference as ref  # noqa: E402

OTTO_1D_MEAN = 7.15  # otto's README: the optimal policy of its 1-D default (L = 2, R dt = 2)


def _problem(kind):
    """(scenario, moves (K, 3)) of a small POMDP of each dimension."""
    if kind == "1d":
        sc = poisson_search(2.0, 2.0, dims=1, grid_size=9)
    elif kind == "2d":
        sc = poisson_search(1.0, 1.0, grid_size=5)
    else:
        sc = poisson_search(1.0, 1.0, dims=3, grid_size=3)
    moves = np.zeros((len(sc.moves()), 3), dtype=np.int64)
    moves[:, :sc.moves().shape[1]] = sc.moves()
    return sc, moves


def _points(sc, moves, n, seed=1):
    b3, c3 = ref.random_points(sc.plume, moves, n, seed)
    dims = 3 if sc.plume.dims == 3 else 2
    return b3.reshape((n,) + sc.plume.shape), c3[:, :dims]


def _lik3(plume):
    shape3 = (1,) * (3 - len(plume.shape)) + tuple(plume.shape)
    return np.asarray(plume.centred_likelihood).reshape((plume.n_hits,) + tuple(2 * s - 1 for s in shape3))


def _values(policy, beliefs, cells):
    policy.decide(beliefs, cells)
    return policy.scores.max(axis=1)


# ------------------------------------------------------------------------------------ the solver
@pytest.mark.parametrize("kind", ["1d", "2d", "3d"])
def test_solver_matches_a_numpy_perseus_vector_for_vector(kind):
    sc, moves = _problem(kind)
    n = {"1d": 16, "2d": 14, "3d": 8}[kind]
    beliefs, cells = _points(sc, moves, n)
    iterations = 4
    got = Perseus.solve(sc, points=(beliefs, cells), iterations=iterations, tol=0.0, seed=5)
    shape3 = (1,) * (3 - len(sc.plume.shape)) + tuple(sc.plume.shape)
    c3 = np.zeros((n, 3), dtype=np.int64)
    c3[:, :cells.shape[1]] = cells
    alphas, actions, means = ref.solve(beliefs.reshape((n,) + shape3), c3, moves, _lik3(sc.plume), got.discount,
                                       got.report.iterations, seed=5)
    assert got.report.iterations >= 2  # the stages compared are real ones
    assert got.actions.tolist() == actions.tolist()
    assert got.alphas.reshape(alphas.shape).tobytes() == alphas.tobytes()
    assert list(got.report.lower) == means


def test_values_of_the_points_never_decrease():
    sc, moves = _problem("2d")
    beliefs, cells = _points(sc, moves, 30, seed=4)
    before = None
    lowers = []
    for iterations in range(1, 7):
        pol = Perseus.solve(sc, points=(beliefs, cells), iterations=iterations, tol=0.0, seed=2)
        now = _values(pol, beliefs, cells)
        if before is not None:
            assert np.all(now >= before)
        before = now
        lowers = pol.report.lower
    assert np.all(np.diff(lowers) >= 0.0)
    assert lowers[-1] > lowers[0] + 1.0  # it does improve
    assert pol.report.upper >= lowers[-1]  # the QMDP bound lies above


def test_same_vectors_whatever_the_thread_count():
    sc, moves = _problem("2d")
    beliefs, cells = _points(sc, moves, 40, seed=6)
    old = numba.get_num_threads()
    try:
        runs = []
        for threads in (1, old):
            numba.set_num_threads(threads)
            pol = Perseus.solve(sc, points=(beliefs, cells), iterations=5, seed=9)
            runs.append((pol.alphas.copy(), pol.actions.copy(), pol.decide(beliefs, cells), pol.scores.copy()))
    finally:
        numba.set_num_threads(old)
    for a, b in zip(runs[0], runs[1]):
        assert a.tobytes() == b.tobytes()


def test_sampled_points_are_deterministic_and_met_in_episodes():
    from plume_multi.policies.perseus_solve import sample_points

    sc = poisson_search(1.0, 1.0, grid_size=7, max_steps=40)
    b1, c1 = sample_points(sc, 60, explore="random", seed=3)
    b2, c2 = sample_points(sc, 60, explore="random", seed=3)
    assert b1.tobytes() == b2.tobytes() and c1.tobytes() == c2.tobytes()
    assert b1.shape == (60, 7, 7) and np.allclose(b1.sum(axis=(1, 2)), 1.0)
    assert b1[np.arange(60), c1[:, 1], c1[:, 0]].max() == 0.0  # no mass on the agent's own cell
    assert (c1[0] == sc.plume.start).all()  # the first point: after the first hit, at the start
    assert len({(b.tobytes(), c.tobytes()) for b, c in zip(b1, c1)}) == 60


# ------------------------------------------------------------------------------------ decisions
@pytest.mark.parametrize("kind", ["2d", "3d"])
def test_decisions_equal_the_reference_for_agents_groups_and_inactive_ones(kind):
    """Alone, in teams sharing a belief (``groups``) and with inactive agents, in 2-D and 3-D."""
    sc, moves = _problem(kind)
    beliefs, cells = _points(sc, moves, 30, seed=7)
    pol = Perseus.solve(sc, points=(beliefs, cells), iterations=4, seed=1)
    shape3 = (1,) * (3 - len(sc.plume.shape)) + tuple(sc.plume.shape)
    alphas = list(pol.alphas.reshape((-1,) + (1,) * (4 - pol.alphas.ndim) + pol.alphas.shape[1:]))
    acts = pol.actions
    b3 = beliefs.reshape((30,) + shape3)
    c3 = np.zeros((30, 3), dtype=np.int64)
    c3[:, :cells.shape[1]] = cells
    want = [acts[ref.best(b3[i], tuple(c3[i]), alphas, acts, moves)[1]] for i in range(30)]
    assert pol.decide(beliefs, cells).tolist() == want
    # a team of 3 sharing each belief: every agent on its group's belief
    cells3 = np.repeat(cells[:10], 3, axis=0)
    got = pol.decide(beliefs[:10], cells3, groups=3)
    assert got.tolist() == np.repeat(want[:10], 3).tolist()
    active = np.ones(30, dtype=bool)
    active[::2] = False
    got = pol.decide(beliefs, cells, active=active)
    assert got[1::2].tolist() == want[1::2] and (got[::2] == 0).all()
    assert np.isneginf(pol.scores[::2]).all()


def test_moves_off_the_grid_are_never_chosen():
    sc, moves = _problem("2d")
    beliefs, cells = _points(sc, moves, 30, seed=8)
    pol = Perseus.solve(sc, points=(beliefs, cells), iterations=3, seed=1)
    corner = np.zeros((4, 2), dtype=np.int64)
    corner[1] = (4, 4)
    corner[2] = (0, 4)
    corner[3] = (4, 0)
    b = np.full((4, 5, 5), 1.0 / 24)
    for i, (x, y) in enumerate(corner):
        b[i, y, x] = 0.0
    acts = pol.decide(b, corner)
    new = corner + sc.moves()[acts]
    assert ((new >= 0) & (new < 5)).all()
    assert np.isneginf(pol.scores[0, 2]) and np.isneginf(pol.scores[0, 3])  # DOWN and LEFT from (0, 0)


# ------------------------------------------------------------------------------------ files
def _small_policy():
    sc, moves = _problem("2d")
    beliefs, cells = _points(sc, moves, 20, seed=2)
    return Perseus.solve(sc, points=(beliefs, cells), iterations=3, seed=0), beliefs, cells


def test_save_load_round_trip(tmp_path):
    pol, beliefs, cells = _small_policy()
    path = pol.save(tmp_path / "policy.npz")
    back = Perseus.load(path)
    assert back.alphas.tobytes() == pol.alphas.tobytes()
    assert back.actions.tolist() == pol.actions.tolist()
    assert back.scenario.metadata() == pol.scenario.metadata()
    assert back.discount == pol.discount and back.report == pol.report
    assert back.decide(beliefs, cells).tolist() == pol.decide(beliefs, cells).tolist()
    assert not list(tmp_path.glob(".*.tmp"))  # written through a temporary file, moved into place


def _rewrite(path, **members):
    """The .npz at ``path`` with some members replaced (None: removed)."""
    with np.load(path, allow_pickle=False) as data:
        content = {k: data[k] for k in data.files}
    for k, v in members.items():
        if v is None:
            content.pop(k)
        else:
            content[k] = v
    np.savez(path, **content)


def _record(path):
    with np.load(path, allow_pickle=False) as data:
        return json.loads(str(data["record"]))


@pytest.mark.parametrize("case", ["not zip", "extra member", "missing member", "object array", "nan", "shape",
                                  "action range", "record json", "record keys", "format", "scenario", "report",
                                  "float actions", "bomb"])
def test_crafted_files_raise_our_error(tmp_path, case):
    pol, _, _ = _small_policy()
    path = pol.save(tmp_path / "p.npz")
    record = _record(path)
    if case == "not zip":
        path.write_bytes(b"hello")
    elif case == "extra member":
        _rewrite(path, extra=np.zeros(3))
    elif case == "missing member":
        _rewrite(path, actions=None)
    elif case == "object array":  # a member NumPy would need pickle for
        _rewrite(path, actions=np.array([{"a": 1}] * len(pol.actions), dtype=object))
    elif case == "nan":
        a = pol.alphas.copy()
        a[0, 0, 0] = np.nan
        _rewrite(path, alphas=a)
    elif case == "shape":
        _rewrite(path, alphas=np.zeros((3, 4, 4)))
    elif case == "action range":
        _rewrite(path, actions=np.full(len(pol.actions), 7))
    elif case == "record json":
        _rewrite(path, record=np.array("{not json"))
    elif case == "record keys":
        _rewrite(path, record=np.array(json.dumps({**record, "extra": 1})))
    elif case == "format":
        _rewrite(path, record=np.array(json.dumps({**record, "version": 99})))
    elif case == "scenario":
        _rewrite(path, record=np.array(json.dumps({**record, "scenario": {"n_agents": -4}})))
    elif case == "report":
        _rewrite(path, record=np.array(json.dumps({**record, "report": {**record["report"], "lower": ["x"]}})))
    elif case == "float actions":
        _rewrite(path, actions=pol.actions.astype(np.float64))
    elif case == "bomb":  # a member that claims more than it holds
        raw = path.read_bytes()
        path.write_bytes(raw[:len(raw) // 2])
    with pytest.raises(ValidationError, match="Perseus.load"):
        Perseus.load(path)


def test_load_refuses_paths_that_are_not_files(tmp_path):
    with pytest.raises(ValidationError, match="Perseus.load"):
        Perseus.load(tmp_path)
    with pytest.raises(ValidationError, match="Perseus.load"):
        Perseus.load(tmp_path / "missing.npz")


def _as_otto(pol):
    """``pol`` in otto-benchmark's converted format: alphas indexed (agent - source) mod (2n-1), x
    first; otto's actions (0: x-1, 1: x+1, 2: y-1, 3: y+1)."""
    moves = pol.moves
    otto_action = {(-1, 0): 0, (1, 0): 1, (0, -1): 2, (0, 1): 3}
    alphas = []
    for a in pol.alphas:  # [dy + H-1, dx + W-1] -> [(-dx) mod Mx, (-dy) mod My]
        my, mx = a.shape
        out = np.empty((mx, my))
        for iy in range(my):
            for ix in range(mx):
                dx, dy = ix - (mx - 1) // 2, iy - (my - 1) // 2
                out[(-dx) % mx, (-dy) % my] = a[iy, ix]
        alphas.append(out)
    return {"solver": "Perseus", "alphas": alphas, "actions": [otto_action[tuple(moves[a])] for a in pol.actions],
            "discount": 0.98, "shaping": "D", "shaping_coef": 0.1}


def test_load_otto_reads_the_converted_format(tmp_path):
    pol, beliefs, cells = _small_policy()
    path = tmp_path / "case_perseus.pkl"
    with open(path, "wb") as f:
        pickle.dump(_as_otto(pol), f, pickle.HIGHEST_PROTOCOL)
    back = Perseus.load_otto(path, pol.scenario)
    np.testing.assert_array_equal(back.alphas, pol.alphas)
    assert back.actions.tolist() == pol.actions.tolist()
    assert back.decide(beliefs, cells).tolist() == pol.decide(beliefs, cells).tolist()


class _Boom:
    def __reduce__(self):
        return (Path.touch, (Path(_Boom.target),))


def test_load_otto_refuses_other_objects_and_bad_content(tmp_path):
    pol, _, _ = _small_policy()
    target = tmp_path / "touched"
    _Boom.target = str(target)
    bad = tmp_path / "bad.pkl"
    bad.write_bytes(pickle.dumps({"alphas": [_Boom()], "actions": [0]}))
    with pytest.raises(ValidationError, match="load_otto"):
        Perseus.load_otto(bad, pol.scenario)
    assert not target.exists()  # nothing ran
    content = _as_otto(pol)
    for broken in ({**content, "actions": [9] * len(content["actions"])},
                   {**content, "alphas": [a[:-1] for a in content["alphas"]]},
                   {**content, "discount": 1.5}, {"alphas": []}, [1, 2]):
        bad.write_bytes(pickle.dumps(broken))
        with pytest.raises(ValidationError, match="load_otto"):
            Perseus.load_otto(bad, pol.scenario)
    bad.write_bytes(b"\x80\x05garbage")
    with pytest.raises(ValidationError, match="load_otto"):
        Perseus.load_otto(bad, pol.scenario)


# ------------------------------------------------------------------------------------ otto's 1-D figure
def test_one_dimensional_mean_arrival_time_matches_otto():
    """otto's 1-D default (L = 2, R dt = 2, the 33-cell domain): its README gives ~7.15 steps for
    the optimal policy (infotaxis: ~13). Solved here on 400 points, scored on 3000 episodes of the
    engine (the source drawn from the first belief: the same mean as otto's Bayesian protocol)."""
    sc = poisson_search(2.0, 2.0, dims=1, max_steps=132)
    pol = Perseus.solve(sc, beliefs=400, iterations=200, seed=0)
    assert pol.report.stopped == "converged"
    r = evaluate(pol, sc, 3000, seed=10, progress=False)
    s = r.summary()
    assert s["success_rate"] == 1.0
    assert s["mean_search_time_ci95_low"] <= OTTO_1D_MEAN <= s["mean_search_time_ci95_high"]


# ------------------------------------------------------------------------------------ where it plugs in
@pytest.fixture(scope="module")
def solved():
    sc = poisson_search(1.0, 1.0, grid_size=7, max_steps=60)
    return Perseus.solve(sc, beliefs=80, iterations=8, seed=0, explore="random"), sc


def test_evaluate_front_ends_and_teams_accept_it(solved):
    from plume_multi import parallel_env

    pol, sc = solved
    r = evaluate(pol, sc, 40, progress=False)
    assert r.summary()["success_rate"] > 0.5
    team = sc.replace(n_agents=2, team=True, start_positions=(sc.plume.start,) * 2)
    sim = Simulator(team, num_worlds=3)
    sim.reset(seed=1)
    alone = pol.act(sim)
    mixed = Team([pol, Infotaxis()]).act(sim)
    assert mixed[0::2].tolist() == alone[0::2].tolist()
    env = parallel_env(n_agents=1, grid_size=sc.grid_size, plume=sc.plume, sensors=sc.sensors,
                       start_positions=sc.start_positions, max_cycles=sc.max_steps)
    env.reset(seed=2)
    actions = pol.act(env)
    assert set(actions) == set(env.agents)


def test_scenarios_it_does_not_solve_are_refused_up_front(solved):
    from plume_multi.models.sources import RandomWalk

    pol, sc = solved
    other = poisson_search(1.0, 2.0, grid_size=7)
    with pytest.raises(ValidationError, match="plume the alpha vectors were solved for"):
        evaluate(pol, other, 4, progress=False)
    with pytest.raises(ValidationError, match="moves the alpha vectors"):
        pol.check_scenario(sc.replace(action_model="moore"))
    walls = np.zeros((7, 7), dtype=bool)
    walls[0, 0] = True
    with pytest.raises(ValidationError, match="walls"):
        Perseus.solve(sc.replace(walls=walls), beliefs=5)
    with pytest.raises(ValidationError, match="target moves"):
        Perseus.solve(poisson_search(1.0, 1.0, grid_size=7, source_motion=RandomWalk(speed=0.5)), beliefs=5)
    with pytest.raises(ValidationError, match="goal_radius"):
        Perseus.solve(sc.replace(goal_radius=1.5), beliefs=5)
    with pytest.raises(ValidationError, match="Poisson-hit plume"):  # no closed form and no Belief's likelihood
        Perseus(pol.alphas, pol.actions, __import__("plume_multi.scenarios", fromlist=["x"]).plume_following())


@pytest.mark.parametrize("kwargs", [dict(beliefs=0), dict(beliefs=True), dict(discount=1.0), dict(discount=float("nan")),
                                    dict(iterations=0), dict(seconds=-1.0), dict(explore="nope"), dict(epsilon=2.0),
                                    dict(keep=0.0), dict(seed=-1), dict(points=(np.zeros((2, 7, 7)),
                                                                              np.zeros((2, 2), int))),
                                    dict(points=(np.full((1, 7, 7), 1 / 49), np.array([[9, 9]])))])
def test_bad_arguments_raise_our_error(kwargs):
    sc = poisson_search(1.0, 1.0, grid_size=7)
    with pytest.raises(ValidationError, match="Perseus.solve"):
        Perseus.solve(sc, **kwargs)


def test_constructor_checks_its_arrays():
    sc = poisson_search(1.0, 1.0, grid_size=5)
    good = np.zeros((2, 9, 9))
    Perseus(good, [0, 1], sc)
    for alphas, actions in ((np.zeros((2, 8, 9)), [0, 1]), (good, [0]), (good, [0, 4]), (good, [0.5, 1.0]),
                            (np.full((2, 9, 9), np.inf), [0, 1]), ("x", [0])):
        with pytest.raises(ValidationError, match="Perseus"):
            Perseus(alphas, actions, sc)
    with pytest.raises(ValidationError, match="discount"):
        Perseus(good, [0, 1], sc, discount=0.0)


def test_windy_plume_is_solved_too():
    plume = WindyPoissonHits(R_bar=2.5, grid_size=(9, 5), start=(6, 2))
    from plume_multi.scenario import Scenario
    from plume_multi.models.sensors import Belief, Hits

    sc = Scenario(plume=plume, start_positions=(plume.start,), sensors=(Hits(), Belief()), max_steps=50)
    pol = Perseus.solve(sc, beliefs=60, iterations=10, seed=0)
    assert pol.report.lower[-1] > pol.report.lower[0]
    r = evaluate(pol, sc, 40, progress=False)
    assert r.summary()["success_rate"] > 0.5


def test_cli_runs_a_saved_policy_and_refuses_another_plume(solved, tmp_path, capsys):
    from plume_multi.cli import main

    pol, _ = solved
    path = str(pol.save(tmp_path / "solved.npz"))
    common = ["--policy", path, "--episodes", "12", "--no-plot", "--quiet", "--out", str(tmp_path / "out")]
    assert main(["eval", "--scenario", "poisson_search:lambda_over_dx=1,R_dt=1,grid_size=7", *common]) == 0
    assert "12 episodes" in capsys.readouterr().out
    assert main(["eval", "--scenario", "poisson_search:lambda_over_dx=1,R_dt=2,grid_size=7", *common]) == 2
    assert "plume the alpha vectors were solved for" in capsys.readouterr().err


def test_solving_goes_on_from_a_policy_and_never_loses_value():
    sc, moves = _problem("2d")
    beliefs, cells = _points(sc, moves, 30, seed=11)
    first = Perseus.solve(sc, points=(beliefs, cells), iterations=3, seed=1)
    more = Perseus.solve(sc, points=(beliefs, cells), iterations=3, seed=2, start=first)
    assert more.report.lower[0] == first.report.lower[-1]  # it starts where the first stopped
    assert np.all(_values(more, beliefs, cells) >= _values(first, beliefs, cells))
    assert more.report.lower[-1] > first.report.lower[-1]
    with pytest.raises(ValidationError, match="discount"):
        Perseus.solve(sc, points=(beliefs, cells), iterations=1, discount=0.9, start=first)
    with pytest.raises(ValidationError, match="start"):
        Perseus.solve(sc, points=(beliefs, cells), iterations=1, start="first")


def test_the_declared_capabilities_are_what_it_accepts_and_refuses():
    from plume_multi.models.sensors import Belief, Hits
    from plume_multi.models.sources import RandomWalk
    from plume_multi.policies.perseus import fit_problem
    from plume_multi.scenario import Scenario

    caps = Perseus.CAPABILITIES
    plumes = {"PoissonHits": lambda d: poisson_search(1.0, 1.0, dims=d, grid_size=5).plume,
              "WindyPoissonHits": lambda d: WindyPoissonHits(R_bar=2.5, grid_size=(9, 5), start=(6, 2))}
    assert set(plumes) <= set(caps["plumes"])  # the closed forms; the others through a likelihood
    for name, dims in caps["plumes"].items():
        if name not in plumes:  # its problem holds, and asks for a Belief of a likelihood (solve calibrates one)
            from plume_multi.models import plumes as family

            grid = {2: (10, 5), 3: (5, 5, 3)}  # (the puffs region is twice as wide as high)
            for d in dims:
                sc = Scenario(grid_size=grid[d], plume=getattr(family, name)(source=(2,) * d))
                assert fit_problem(sc, model=False) is None and "sensors.Belief(likelihood" in fit_problem(sc), name
            continue
        for d in dims:
            plume = plumes[name](d)
            assert plume.dims == d
            sc = Scenario(plume=plume, start_positions=(plume.start,), sensors=(Hits(), Belief()))
            for body in caps["bodies"]:
                assert fit_problem(sc.replace(action_model=body)) is None, (name, d, body)
    sc = poisson_search(1.0, 1.0, grid_size=5)
    assert caps["walls"] is False
    with pytest.raises(ValidationError, match="wall"):  # (the Poisson-hit plumes refuse walls themselves today)
        Perseus.solve(sc.replace(walls=np.eye(5, dtype=bool)), beliefs=5)
    assert caps["moving_source"] is False and "target moves" in fit_problem(sc.replace(
        plume=poisson_search(1.0, 1.0, grid_size=5, source_motion=RandomWalk(speed=0.5)).plume))
    assert caps["goal_radius"] is False and "goal_radius" in fit_problem(sc.replace(goal_radius=1.5))


def test_benchmark_runs_a_saved_policy_on_its_task_and_refuses_another(tmp_path, capsys):
    from plume_multi import tasks
    from plume_multi.cli import main
    from plume_multi.cli.policies import policy_for_evaluate

    task = tasks.make("otto/isotropic-19x19-v0")
    pol = Perseus.solve(task.scenario(), beliefs=20, iterations=2, seed=0, explore="random")
    path = str(pol.save(tmp_path / "otto19.npz"))
    loaded = policy_for_evaluate(path, task.scenario())  # what `benchmark run TASK --policy FILE.npz` runs
    assert isinstance(loaded, Perseus) and np.array_equal(loaded.alphas, pol.alphas)
    result = tasks.evaluate(task, loaded, 3, max_steps=40, progress=False)
    assert result.reduced and result.evaluation.arrival_time.shape == (3, 1)
    assert main(["benchmark", "run", "otto/isotropic-53x53-v0", "--policy", path, "--episodes", "3",
                 "--out", str(tmp_path / "rows"), "--quiet"]) == 2
    assert "plume the alpha vectors were solved for" in capsys.readouterr().err
