"""plume_multi.evaluate (plume_multi.evaluation): seeded episodes as parallel worlds, statistics, files, sweeps, the CLI.

Tests marked ``ray`` run in .venv-ray (``make test``); the others everywhere.
"""

import csv
import json
import math
import os

os.environ.setdefault("MPLBACKEND", "Agg")

import gymnasium
import numpy as np
import pytest

import plume_multi
from plume_multi import Scenario, ValidationError
from plume_multi.cli import main as cli_main
from plume_multi.errors import PlumeError
from plume_multi.evaluation import EvaluationResult, evaluate, sweep
from plume_multi.policies import GradientClimber


class RowClimber:
    """A deterministic policy acting on each row alone: keep heading while the concentration
    rises, else (and at one step in ten) turn to a direction hashed from the cell and the step."""

    def __init__(self, scenario):
        self.n_actions = scenario.n_actions
        self.last = None

    def __call__(self, obs):
        if self.last is None:
            self.last = np.full(len(obs), -1.0, dtype=np.float32)
            self.heading = np.zeros(len(obs), dtype=np.int64)
            self.t = 0
        self.t += 1
        worse = obs[:, 0] <= self.last
        cell = (np.rint(obs[:, 1] * 1009).astype(np.uint64) << np.uint64(20)) + np.rint(obs[:, 2] * 2003).astype(np.uint64)
        mixed = (cell + np.uint64(self.t)) * np.uint64(0x9E3779B97F4A7C15)  # wraps: a cheap hash
        turn = worse | ((mixed >> np.uint64(20)) % np.uint64(10) == 0)  # and one turn in ten anyway
        self.heading[turn] = ((mixed >> np.uint64(40)) % np.uint64(self.n_actions)).astype(np.int64)[turn]
        self.last = obs[:, 0].copy()
        return self.heading.copy()


SCENARIO = Scenario(grid_size=(24, 17), sigma=5.0, max_steps=80, n_agents=3)


def test_the_result_for_a_seed_does_not_depend_on_the_number_of_worlds_at_once():
    results = [evaluate(RowClimber, SCENARIO, 70, seed=11, num_worlds=b, progress=False) for b in (1, 7, 64)]
    for other in results[1:]:
        np.testing.assert_array_equal(other.arrival_time, results[0].arrival_time)
        np.testing.assert_array_equal(other.episode_length, results[0].episode_length)
    r = results[0]
    assert r.arrival_time.shape == (70, 3) and r.arrival_time.dtype == np.int32
    assert 0 < r.success_rate < 1  # the scenario is neither trivial nor hopeless for this policy
    np.testing.assert_array_equal(r.episode_seed, 11 + np.arange(70))


def test_single_agent_episodes_match_a_plain_gymnasium_loop():
    """Reference: PlumeSearchEnv (compact observation) reset with seed + e, stepped one by one."""
    scenario = Scenario(grid_size=(24, 17), sigma=5.0, max_steps=60)
    result = evaluate(RowClimber, scenario, 12, seed=3, num_worlds=5, progress=False)
    for e in range(12):
        env = gymnasium.make("plume_multi:PlumeSearchCompact-v0", grid_size=(24, 17), sigma=5.0, max_steps=60)
        obs, _ = env.reset(seed=3 + e)
        policy = RowClimber(scenario)
        arrival, length = -1, 60
        for t in range(1, 61):
            obs, reward, terminated, truncated, _ = env.step(int(policy(obs[None])[0]))
            if terminated:
                arrival, length = t, t
                break
        assert result.arrival_time[e, 0] == arrival, e
        assert result.episode_length[e] == length, e
    assert 0 < result.success.sum() < 12  # both kinds of episode are compared


def test_arrivals_agree_with_a_simulator_stepped_by_hand():
    sim = plume_multi.Simulator(SCENARIO, num_worlds=1, autoreset="disabled")
    obs = sim.reset(seed=25)
    policy = RowClimber(SCENARIO)
    arrival = np.full(3, -1)
    for t in range(1, SCENARIO.max_steps + 1):
        before = sim.active.copy()
        obs, _, terminated, _ = sim.step(policy(obs.copy()))
        arrival[before & terminated] = t
    result = evaluate(RowClimber, SCENARIO, 30, seed=0, num_worlds=8, progress=False)
    np.testing.assert_array_equal(result.arrival_time[25], arrival)
    ended = arrival.max() if (arrival >= 0).all() else SCENARIO.max_steps
    assert result.episode_length[25] == ended


def test_team_mode_ends_every_searcher_at_the_first_arrival():
    scenario = Scenario(grid_size=(24, 17), sigma=5.0, max_steps=80, n_agents=4, team=True)
    first = evaluate(RowClimber, scenario, 40, seed=1, num_worlds=9, progress=False)
    every = evaluate(RowClimber, scenario, 40, seed=1, num_worlds=40, progress=False, until="all")
    arrived = first.arrival_time >= 0
    assert arrived.any()
    assert (arrived.all(axis=1) | ~arrived.any(axis=1)).all()  # all of a world, or none
    assert (first.arrival_time == first.arrival_time[:, :1]).all()
    np.testing.assert_array_equal(first.success, every.success)
    np.testing.assert_array_equal(first.search_time, every.search_time)
    np.testing.assert_array_equal(first.episode_length[first.success], first.search_time[first.success])


def _result(arrivals, max_steps=10, until="first"):
    scenario = Scenario(grid_size=(8, 8), n_agents=len(arrivals[0]), max_steps=max_steps)
    arrivals = np.array(arrivals, dtype=np.int32)
    length = np.where((arrivals >= 0).all(axis=1), arrivals.max(axis=1), max_steps).astype(np.int32)
    return EvaluationResult(scenario, 100, until, arrivals, length)


def test_statistics_by_hand():
    r = _result([[3, -1], [-1, -1], [5, 2], [9, 9], [-1, 4]])
    np.testing.assert_array_equal(r.success, [True, False, True, True, True])
    np.testing.assert_array_equal(r.search_time, [3, np.nan, 2, 9, 4])
    assert r.success_rate == 0.8
    assert r.mean == pytest.approx(4.5)
    lo, hi = r.mean_interval()
    half = 1.959963984540054 * np.std([3, 2, 9, 4], ddof=1) / 2
    assert (lo, hi) == pytest.approx((4.5 - half, 4.5 + half))
    assert r.percentiles((50,)) == {50: pytest.approx(3.5)}
    steps, frac = r.cdf()
    np.testing.assert_array_equal(steps, np.arange(11))
    np.testing.assert_allclose(frac, [0, 0, .2, .4, .6, .6, .6, .6, .6, .8, .8])
    # Wilson interval for 4 of 5 (z = 1.96): about 0.376..0.964
    assert r.success_interval() == pytest.approx((0.3755, 0.9638), abs=1e-3)


def test_the_mean_interval_of_few_spread_successes_never_goes_below_zero():
    r = _result([[1], [1], [1], [200]], max_steps=300)
    half = 1.959963984540054 * np.std([1, 1, 1, 200], ddof=1) / 2
    assert r.mean - half < 0                                  # the normal interval's low end, uncut
    assert r.mean_interval() == pytest.approx((0.0, r.mean + half))
    r_all = _result([[3, -1], [-1, -1], [5, 2], [9, 9], [-1, 4]], until="all")
    np.testing.assert_array_equal(r_all.success, [False, False, True, True, False])
    np.testing.assert_array_equal(r_all.search_time, [np.nan, np.nan, 5, 9, np.nan])
    none = _result([[-1], [-1]])
    assert none.success_rate == 0 and math.isnan(none.mean) and math.isnan(none.percentiles()[50])


def test_files(tmp_path):
    r = evaluate(RowClimber, SCENARIO, 20, seed=4, num_worlds=6, progress=False)
    with open(r.to_csv(tmp_path / "r.csv")) as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 20
    assert [int(row["seed"]) for row in rows] == list(range(4, 24))
    assert [int(row["arrival_2"]) for row in rows] == r.arrival_time[:, 2].tolist()
    assert [row["search_time"] for row in rows] == ["" if math.isnan(t) else str(int(t)) for t in r.search_time]
    doc = json.loads(r.to_json(tmp_path / "r.json").read_text())
    assert doc["summary"]["success_rate"] == r.success_rate
    assert doc["episodes"]["arrival_time"] == r.arrival_time.tolist()
    assert doc["scenario"]["grid_size"] == [24, 17]
    png = r.plot(tmp_path / "r.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValidationError, match="ending in .csv"):
        r.to_csv(tmp_path / "r.txt")


def test_a_stateful_policy_starts_every_chunk_from_the_same_state():
    climber = GradientClimber(4, seed=0)
    a = evaluate(climber, SCENARIO, 30, seed=0, num_worlds=10, progress=False)
    b = evaluate(climber, SCENARIO, 30, seed=0, num_worlds=10, progress=False)
    np.testing.assert_array_equal(a.arrival_time, b.arrival_time)
    assert climber._last is None  # the caller's object was copied, never stepped


def test_factories_get_the_chunk_seed_and_the_simulator():
    seen = []

    def factory(scenario, simulator, seed):
        seen.append((seed, simulator.num_worlds, scenario is SCENARIO))
        return lambda obs: np.zeros(len(obs), dtype=np.int64)

    evaluate(factory, SCENARIO, 10, seed=7, num_worlds=4, progress=False)
    assert seen == [(7, 4, True), (11, 4, True), (15, 2, True)]


def test_bad_arguments_and_bad_policies():
    ok = RowClimber
    for kwargs, match in [(dict(episodes=0), "episodes"), (dict(num_worlds=0), "num_worlds"),
                          (dict(executor="dask"), "executor"), (dict(until="some"), "until"),
                          (dict(seed=-1), "seed"), (dict(policy=3), "policy"), (dict(scenario="x"), "scenario")]:
        args = dict(policy=ok, scenario=SCENARIO, episodes=5, progress=False) | kwargs
        with pytest.raises(ValidationError, match=match):
            evaluate(**args)
    with pytest.raises(ValidationError, match="returned invalid actions"):
        evaluate(lambda obs: np.full(len(obs), 9), SCENARIO, 3, progress=False)
    with pytest.raises(PlumeError, match="ZeroDivisionError"):
        evaluate(lambda obs: 1 / 0, SCENARIO, 3, progress=False)


def test_module_is_callable_and_lazily_exported():
    import plume_multi.evaluation as module

    assert module.sweep is sweep
    r = module(RowClimber, SCENARIO, 4, progress=False)
    assert isinstance(r, EvaluationResult)
    assert plume_multi.EvaluationResult is EvaluationResult


def test_sweep_writes_one_table_and_equals_single_evaluations(tmp_path):
    base = Scenario(grid_size=(24, 17), sigma=5.0, max_steps=60)
    out = sweep(RowClimber, base, {"n_agents": [1, 3], "sigma": [3.0, 6.0]}, 16, seed=2, num_worlds=5,
                out=tmp_path / "s", progress=False)
    assert [(row["n_agents"], row["sigma"]) for row in out.rows] == [(1, 3.0), (1, 6.0), (3, 3.0), (3, 6.0)]
    single = evaluate(RowClimber, Scenario(grid_size=(24, 17), sigma=6.0, max_steps=60, n_agents=3), 16, seed=2,
                      num_worlds=16, progress=False)
    np.testing.assert_array_equal(out.results[3].arrival_time, single.arrival_time)
    with open(out.paths["csv"]) as f:
        table = list(csv.DictReader(f))
    assert len(table) == 4 and float(table[3]["success_rate"]) == single.success_rate
    assert out.paths["png"].read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(ValidationError, match="unknown Scenario field"):
        sweep(RowClimber, base, {"colour": [1]}, 4, progress=False, out=None)
    with pytest.raises(ValidationError, match="n_agents"):
        sweep(RowClimber, base, {"n_agents": [0]}, 4, progress=False, out=None)


def test_cli_eval(tmp_path, capsys):
    code = cli_main(["eval", "--policy", "tests.test_evaluation:RowClimber", "--episodes", "24", "--worlds", "5",
                     "--grid", "24", "17", "--sigma", "5", "--steps", "80", "--agents", "3", "--seed", "11",
                     "--out", str(tmp_path / "ev"), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    expected = evaluate(RowClimber, SCENARIO, 24, seed=11, progress=False)
    assert f"success: {expected.success_rate:.1%}" in out
    doc = json.loads((tmp_path / "ev.json").read_text())
    assert doc["episodes"]["arrival_time"] == expected.arrival_time.tolist()
    assert (tmp_path / "ev.csv").exists() and (tmp_path / "ev.png").exists()
    assert cli_main(["eval", "--episodes", "0"]) == 2
    assert "--episodes: got 0" in capsys.readouterr().err
    assert cli_main(["eval", "--agents", "2", "--neighbours", "5", "--quiet"]) == 2
    assert "--neighbours" in capsys.readouterr().err


# ----------------------------------------------------------------------------------------- Ray
@pytest.mark.ray
def test_ray_executor_equals_the_local_run_whatever_the_number_of_tasks(ray_local):
    # GradientClimber draws from one generator for all rows: equal only because the chunks are
    # the same and each chunk gets its own freshly seeded policy, whichever task runs it.
    local = evaluate(GradientClimber, SCENARIO, 45, seed=9, num_worlds=7, progress=False)
    for tasks in (1, 3, None):
        remote = evaluate(GradientClimber, SCENARIO, 45, seed=9, num_worlds=7, executor="ray", tasks=tasks,
                          progress=False)
        np.testing.assert_array_equal(remote.arrival_time, local.arrival_time)
        np.testing.assert_array_equal(remote.episode_length, local.episode_length)


@pytest.mark.ray
def test_ray_sweep_equals_the_local_sweep(ray_local, tmp_path):
    base = Scenario(grid_size=(24, 17), sigma=5.0, max_steps=60)
    grid = {"n_agents": [1, 2], "team": [False, True]}
    local = sweep(GradientClimber, base, grid, 12, seed=1, num_worlds=5, out=tmp_path / "l", progress=False)
    remote = sweep(GradientClimber, base, grid, 12, seed=1, num_worlds=5, out=tmp_path / "r", executor="ray",
                   progress=False)
    assert remote.rows == local.rows
    assert (tmp_path / "l.csv").read_text() == (tmp_path / "r.csv").read_text()
    import pyarrow.parquet as pq  # Ray's own dependency: present wherever Ray is

    table = pq.read_table(remote.paths["parquet"])
    assert table.num_rows == 4 and table.column("success_rate").to_pylist() == [r["success_rate"] for r in local.rows]


def test_progress_counts_every_episode_once_as_it_ends(capsys):
    from plume_multi.evaluation import _run_chunks

    one = Scenario(grid_size=(24, 17), sigma=5.0, max_steps=80)
    told = []
    arrival, length = _run_chunks(RowClimber, one, 0, [(0, 8), (8, 8), (16, 6)], on_done=told.append)
    assert sum(told) == 22 and len(told) > 3  # as episodes end, not once per chunk
    ref = evaluate(RowClimber, one, 22, seed=0, num_worlds=8, progress=True)
    np.testing.assert_array_equal(arrival, ref.arrival_time)
    err = capsys.readouterr().err
    assert "evaluate" in err and "/22" in err


def test_a_policy_that_reads_the_simulator_runs_by_its_act_method():
    """policies.Infotaxis decides from the beliefs in the simulator's state (act(sim)); its results
    for a seed do not depend on how many worlds run at once."""
    from plume_multi.policies import Infotaxis
    from plume_multi.scenarios import poisson_search

    sc = poisson_search(lambda_over_dx=1.0, R_dt=2.0, max_steps=200)
    a = plume_multi.evaluate(Infotaxis(), sc, episodes=24, seed=3, num_worlds=24, progress=False)
    b = plume_multi.evaluate(Infotaxis(), sc, episodes=24, seed=3, num_worlds=7, progress=False)
    np.testing.assert_array_equal(a.episode_length, b.episode_length)
    assert a.success_rate == 1.0 and 3 < a.mean < 40


# ----------------------------------------------------------------------------------------- plots, teams, refusals
def _figures(monkeypatch):
    """What each saved figure shows: its title, the CDF panel's x range, title and legend."""
    import matplotlib.figure

    seen = []
    save = matplotlib.figure.Figure.savefig

    def record(fig, *args, **kwargs):
        cdf = fig.axes[1]
        seen.append({"suptitle": fig._suptitle.get_text(), "xlim": cdf.get_xlim(), "title": cdf.get_title(),
                     "legend": [t.get_text() for t in cdf.get_legend().get_texts()],
                     "dashed": sum(line.get_linestyle() == "--" for line in cdf.get_lines())})
        return save(fig, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", record)
    return seen


def test_plots_of_every_plume_span_the_data_and_say_what_success_means(tmp_path, monkeypatch):
    from plume_multi.evaluation import plot_results
    from plume_multi.scenarios import poisson_search

    seen = _figures(monkeypatch)
    poisson = poisson_search(1.0, 2.0, n_agents=2, team=False, max_steps=1000)  # sigma is None
    arrivals = np.array([[3, 12], [7, -1], [-1, -1], [4, 5]], dtype=np.int32)
    lengths = np.array([12, 1000, 1000, 5], dtype=np.int32)
    r = EvaluationResult(poisson, 0, "first", arrivals, lengths)
    assert r.success_first.tolist() == [True, True, False, True] and r.success_all.tolist() == [True, False, False, True]
    assert r.arrival_rate == 5 / 8
    summary = r.summary()
    assert (summary["success_rate_first"], summary["success_rate_all"], summary["searchers_arrived"]) == (0.75, 0.5, 0.625)
    r.plot(tmp_path / "p.png")
    fig = seen[-1]
    assert "PoissonHits" in fig["suptitle"] and fig["xlim"][1] < 20  # the last arrival (12), not max_steps
    assert fig["title"] == "solid: success = the first arrival; dashed: every searcher's arrival" and fig["dashed"] == 1
    assert "first arrival 75.0%, every searcher 50.0%" in fig["legend"][0]
    gaussian = _result([[3, -1], [9, 9]], max_steps=500)
    plot_results([r, gaussian], tmp_path / "two.png", labels=["poisson", "gaussian"], title="two")
    fig = seen[-1]
    assert fig["suptitle"] == "two" and [t.split(":")[0] for t in fig["legend"]] == ["poisson", "gaussian"]
    assert 12 < fig["xlim"][1] < 20
    r.plot(tmp_path / "again.png", others=[gaussian], labels=["a", "b"])
    assert [t.split(":")[0] for t in seen[-1]["legend"]] == ["a", "b"]
    with pytest.raises(ValidationError, match="labels: got 1 for 2 results"):
        plot_results([r, gaussian], tmp_path / "x.png", labels=["one"])


def test_a_grid_policy_refuses_a_continuous_body_before_anything_compiles():
    from plume_multi import bodies

    continuous = Scenario(grid_size=(8, 8, 8), action_model=bodies.Continuous(), n_agents=2)
    with pytest.raises(ValidationError, match="GradientClimber: the scenario's body Continuous takes 3-D velocities"):
        evaluate(GradientClimber, continuous, 4, progress=False)
    with pytest.raises(ValidationError, match="GradientClimber.n_actions: got None"):
        GradientClimber(None)


def test_cli_eval_takes_the_models_flags_and_named_scenarios_and_policies(tmp_path, capsys):
    """eval accepts what its help lists: --plume/--body/--sensors/--reward give the same run as the
    default scenario they spell out; a named Poisson search runs a mixed team by names."""
    code = cli_main(["eval", "--policy", "tests.test_evaluation:RowClimber", "--episodes", "24", "--worlds", "5",
                     "--plume", "gaussian:sigma=5", "--grid", "24", "17", "--body", "cardinal", "--sensors",
                     "concentration", "position", "--reward", "sparse_goal", "--steps", "80", "--agents", "3",
                     "--seed", "11", "--out", str(tmp_path / "models"), "--quiet", "--no-plot"])
    assert code == 0, capsys.readouterr().err
    expected = evaluate(RowClimber, SCENARIO, 24, seed=11, progress=False)
    doc = json.loads((tmp_path / "models.json").read_text())
    assert doc["episodes"]["arrival_time"] == expected.arrival_time.tolist()
    capsys.readouterr()
    code = cli_main(["eval", "--scenario", "poisson_search:grid_size=11", "--agents", "3", "--steps", "60",
                     "--policy", "infotaxis,greedy,space-aware-infotaxis", "--episodes", "12", "--seed", "5",
                     "--out", str(tmp_path / "team"), "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0, err
    from plume_multi.policies import Greedy, Infotaxis
    from plume_multi.scenarios import poisson_search

    sc = poisson_search(1.0, 2.0, n_agents=3, max_steps=60, grid_size=11)
    mixed = evaluate([Infotaxis(), Greedy(), Infotaxis(space_aware=True)], sc, 12, seed=5, progress=False)
    assert json.loads((tmp_path / "team.json").read_text())["episodes"]["arrival_time"] == mixed.arrival_time.tolist()
    assert "PoissonHits, Cardinal, team" in out and "success = the first agent's arrival" in out
    assert "every searcher in" in out and (tmp_path / "team.png").exists()
    for argv, message in ((["--policy", "infotaxis"], "--policy infotaxis: Infotaxis.plume: got 'Gaussian'; expected a "
                                                         "Poisson-hit plume"),
                          (["--policy", "greedy,clever"], "--policy: got 'clever' in the team"),
                          (["--scenario", "poisson_search:colour=1"], "--scenario: poisson_search has no parameter"),
                          (["--scenario", "nowhere"], "--scenario: got 'nowhere'; expected a JSON file or a named"),
                          (["--scenario", "poisson_search", "--grid", "9", "9"], "--grid: got it with --scenario")):
        assert cli_main(["eval", "--quiet", "--no-plot", "--episodes", "2", *argv]) == 2
        assert message in capsys.readouterr().err


# ----------------------------------------------------------------------------------------- names, compare, phases
def test_evaluate_takes_a_builtins_name_and_a_team_of_names_as_the_cli_does():
    from plume_multi.policies.named import NAMED

    one = Scenario(grid_size=(24, 17), sigma=5.0, max_steps=40)
    by_name = evaluate("random", one, 12, seed=3, progress=False)
    by_factory = evaluate(NAMED["random"], one, 12, seed=3, progress=False)
    np.testing.assert_array_equal(by_name.arrival_time, by_factory.arrival_time)
    three = SCENARIO.replace(max_steps=30)
    team = evaluate("random,gradient", three, 6, seed=1, progress=False)
    listed = evaluate([NAMED["random"], NAMED["gradient"], NAMED["random"]], three, 6, seed=1, progress=False)
    np.testing.assert_array_equal(team.arrival_time, listed.arrival_time)
    with pytest.raises(ValidationError, match=r"policy: got 'clever'; expected one of \['random'"):
        evaluate("clever", one, 2, progress=False)
    with pytest.raises(ValidationError, match=r"Infotaxis.plume: .*\(it decides on a belief over one\)"):  # refused before compiling
        evaluate("infotaxis", one, 2, progress=False)


def test_compare_runs_every_policy_on_the_same_episodes_and_tabulates_them(tmp_path, monkeypatch):
    seen = _figures(monkeypatch)
    one = Scenario(grid_size=(24, 17), sigma=5.0, max_steps=40)

    def stay(obs):
        return np.zeros(len(obs), dtype=np.int64)

    result = plume_multi.compare(["random", "gradient", stay], one, episodes=24, seed=5, progress=False,
                                 plot=tmp_path / "c.png")
    assert [row["policy"] for row in result.rows] == ["random", "gradient", "stay"] and result.seed == 5
    alone = evaluate("gradient", one, 24, seed=5, progress=False)
    np.testing.assert_array_equal(result.results["gradient"].arrival_time, alone.arrival_time)
    row = result.rows[1]
    assert row["success_rate"] == alone.success_rate and row["mean_steps"] == alone.mean
    from plume_multi.tasks.scores import iqm, steps_of

    assert row["iqm_steps"] == iqm(steps_of(alone)) and row["iqm_low"] <= row["iqm_steps"] <= row["iqm_high"]
    table = result.table()
    assert table.count("\n") == 4 and "| gradient | " in table
    assert (tmp_path / "c.png").exists() and [t.split(":")[0] for t in seen[-1]["legend"]] == ["random", "gradient", "stay"]
    with open(result.to_csv(tmp_path / "c.csv")) as f:
        assert [r["policy"] for r in csv.DictReader(f)] == ["random", "gradient", "stay"]
    with pytest.raises(ValidationError, match="each with its own label"):
        plume_multi.compare(["random", "random"], one, episodes=2, progress=False)
    with pytest.raises(ValidationError, match="path: got"):  # before anything runs
        plume_multi.compare(["random"], one, episodes=2, progress=False, plot=tmp_path / "c.pdf")


def test_compare_on_a_task_runs_its_protocol_and_its_partners():
    from plume_multi import tasks

    result = plume_multi.compare({"uniform random": "random"}, "teams/mixed-2-v0", episodes=4, progress=False)
    direct = tasks.evaluate("teams/mixed-2-v0", "random", episodes=4, progress=False)
    np.testing.assert_array_equal(result.results["uniform random"].arrival_time, direct.evaluation.arrival_time)
    assert result.title == "teams/mixed-2-v0" and result.rows[0]["iqm_steps"] == direct.iqm_steps


def test_a_plot_says_so_where_a_policy_never_succeeded(tmp_path, monkeypatch):
    import matplotlib.figure

    texts = []
    save = matplotlib.figure.Figure.savefig
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda fig, *a, **k: (
        texts.append([t.get_text() for t in fig.axes[0].texts]), save(fig, *a, **k))[1])
    never = _result([[-1, -1], [-1, -1]], max_steps=50)
    never.plot(tmp_path / "one.png")
    from plume_multi.evaluation import plot_results

    plot_results([never, _result([[3, -1], [9, 9]], max_steps=50)], tmp_path / "two.png", labels=["a", "b"])
    assert texts == [["never found the source\n(0 of 2 episodes)"]] * 2


def test_the_progress_phases_come_before_the_episodes():
    from plume_multi import bodies, plumes, sensors
    from plume_multi.evaluation import _run_chunks
    from plume_multi.policies.named import NAMED

    said = []
    _run_chunks(NAMED["random"], SCENARIO.replace(max_steps=5), 0, [(0, 2)], on_phase=said.append)
    assert said == ["preparing the step", "episodes"]  # loaded or compiled already: no compile to report
    puffs = Scenario(grid_size=(200, 100), plume=plumes.Puffs(source=(10, 50), spin_up_steps=3),
                     action_model=bodies.Continuous(max_speed=0.2, max_turn_degrees=30),
                     sensors=(sensors.Antennae(angles=(30, -30)), sensors.Wind()), n_agents=8, max_steps=2,
                     goal_radius=4.0, start_region=((60, 35), (110, 65)))
    said.clear()
    _run_chunks(NAMED["random"], puffs, 0, [(0, 2)], on_phase=said.append)
    assert said[0] == "preparing the step" and said[-2:] == ["warming up the plume", "episodes"]
    assert all(text.startswith("compiling the step for Puffs + Continuous") for text in said[1:-2])
