"""Evaluate a policy on many seeded episodes at once, locally or sharded across Ray tasks.

``evaluate(policy, scenario, episodes, seed)`` runs episode ``e`` (0-based) as a world of a
``Simulator(scenario, num_worlds, autoreset="disabled")`` reset with seed ``seed + e``: the worlds are
taken in chunks of ``num_worlds`` consecutive episodes, each chunk reset with the seed of its first
episode (world ``i`` of a simulator reset with ``s`` is seeded ``s + i``). A chunk steps until every
world is done (all agents arrived, or ``max_steps``), recording when each agent arrived.

``sweep(policy, base_scenario, grid, episodes, seed)`` evaluates every combination of a grid of
``Scenario`` fields and writes one table (CSV; Parquet too when pyarrow is installed) and a plot.

The policy protocol (also ``plume-multi eval --policy``):

* an object with ``act(simulator) -> actions`` (``policies.Infotaxis``: it reads the beliefs in the
  simulator's state);
* a callable ``policy(obs) -> actions``: ``obs`` ``(B*N, D)`` float32 (row ``b * N + n`` is agent
  ``n`` of world ``b``), ``actions`` ``(B*N,)`` integers. Each chunk runs a deep copy of it, so a
  stateful policy starts every chunk from the same state;
* or a factory: a class, or a function with a ``scenario`` and/or ``simulator`` parameter. It is
  called once per chunk (one simulator each) with those of ``scenario=``, ``simulator=``,
  ``n_actions=``, ``seed=`` (the chunk's seed) that it accepts, and returns the callable policy;
* or a trainer's model: a Stable-Baselines3 model, a torch module, an RLlib module or algorithm
  (``integrations.trained.as_policy`` makes it a policy of observations, single or multi-agent);
* or one policy per agent of a world (a mixed team): a list of ``N`` policies, a mapping
  ``{agent index: policy}`` or a ``policies.Team``, each member any of the above (factories are
  made per chunk, the others copied per chunk).

A chunk depends only on its first episode and its size, so the result for a seed is the same
whatever the executor and the number of Ray tasks, bit for bit. It does not depend on
``num_worlds`` either when the policy acts on each row alone (a deterministic function of that
row's observations so far); a policy drawing from one generator for all rows (``RandomPolicy``,
``GradientClimber``) sees different draws when the chunks change.

``plume_multi.evaluate`` is this module's ``evaluate``, which also carries ``sweep``,
``EvaluationResult`` and ``SweepResult`` (``plume_multi.evaluate.sweep(...)``).
"""

from __future__ import annotations

import contextlib
import copy
import csv
import dataclasses
import inspect
import itertools
import json
import math
import numbers
import sys
import types
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import capabilities, files
from .checks import check_arguments, is_int, shown
from .errors import PlumeError, RenderingError, ValidationError
from .integrations.trained import as_policy
from .scenario import Scenario
from .simulator import MAX_SEED, Simulator

__all__ = ["evaluate", "sweep", "plot_results", "EvaluationResult", "SweepResult", "EXECUTORS", "UNTIL"]

EXECUTORS = ("local", "ray")
UNTIL = ("first", "all")  # search time: until the first agent arrives, or until all have
DEFAULT_CHUNK = 1024  # worlds per simulator when num_worlds is None
PERCENTILES = (5, 25, 50, 75, 95)
Z95 = 1.959963984540054  # two-sided 95 % normal quantile
VIZ_EXTRA = "pip install 'plume-multi[viz]' (or pip install matplotlib)"
RAY_EXTRA = "pip install 'plume-multi[rllib]' (or pip install 'ray[default]')"


# ----------------------------------------------------------------------------------------- result
@dataclasses.dataclass(frozen=True)
class EvaluationResult:
    """Per-episode outcomes of ``evaluate`` and their statistics.

    Attributes:
        scenario: the ``Scenario`` evaluated.
        seed: episode ``e`` was seeded ``seed + e``.
        until: ``"first"`` (search time = steps until the first agent arrives) or ``"all"``.
            Search times are in steps; ``search_seconds`` and ``summary()`` give seconds too when
            the scenario knows its ``step_duration``.
        arrival_time: ``(E, N)`` int32, the step at which each agent reached the source (in team
            mode: the step the team's first arrival ended its search), -1 if it never did.
        episode_length: ``(E,)`` int32, steps until the episode ended (every agent arrived, or
            ``max_steps``).
    """

    scenario: Scenario
    seed: int
    until: str
    arrival_time: np.ndarray
    episode_length: np.ndarray

    # ---------------------------------------------------------------- per episode
    @property
    def episodes(self) -> int:
        return int(self.arrival_time.shape[0])

    @property
    def episode_seed(self) -> np.ndarray:
        """``(E,)`` int64: the seed of each episode, ``seed + e``."""
        return self.seed + np.arange(self.episodes, dtype=np.int64)

    @property
    def success(self) -> np.ndarray:
        """``(E,)`` bool: the first agent (``until="first"``) or every agent (``"all"``) arrived."""
        return self.success_first if self.until == "first" else self.success_all

    @property
    def success_first(self) -> np.ndarray:
        """``(E,)`` bool: an agent (the first to arrive) reached the source."""
        return (self.arrival_time >= 0).any(axis=1)

    @property
    def success_all(self) -> np.ndarray:
        """``(E,)`` bool: every searcher reached the source (in team mode: the team's first arrival
        ended every searcher's search)."""
        return (self.arrival_time >= 0).all(axis=1)

    @property
    def arrival_rate(self) -> float:
        """Share of all searchers (E x N) that reached the source."""
        return float((self.arrival_time >= 0).mean())

    @property
    def search_time(self) -> np.ndarray:
        """``(E,)`` float64 steps until success (see ``until``); NaN where the episode failed."""
        t = np.where(self.arrival_time >= 0, self.arrival_time, np.iinfo(np.int32).max).astype(np.float64)
        time = t.min(axis=1) if self.until == "first" else np.where(self.arrival_time >= 0, t, np.inf).max(axis=1)
        return np.where(self.success, time, np.nan)

    @property
    def search_seconds(self) -> np.ndarray:
        """``(E,)`` float64 seconds until success (``search_time`` times the scenario's
        ``step_duration``); NaN where the episode failed. ``ValidationError`` when the scenario
        does not know how long a step lasts."""
        return self.scenario.units.seconds(self.search_time)

    # ---------------------------------------------------------------- statistics
    @property
    def success_rate(self) -> float:
        return float(self.success.mean())

    def success_interval(self) -> tuple[float, float]:
        """95 % Wilson score interval of the success rate."""
        n = self.episodes
        p = self.success_rate
        centre = (p + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
        half = Z95 / (1 + Z95**2 / n) * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n))
        return max(0.0, centre - half), min(1.0, centre + half)

    @property
    def mean(self) -> float:
        """Mean search time of the successful episodes, in steps (NaN if none succeeded)."""
        t = self.search_time[self.success]
        return float(t.mean()) if t.size else math.nan

    def mean_interval(self) -> tuple[float, float]:
        """95 % normal interval of ``mean`` (``mean ± 1.96 s / sqrt(n)``; NaN with fewer than 2). A
        search time is never negative, so neither is the interval: with few, spread successes the
        normal interval's low end would fall below 0, and it is cut at 0 (the true mean lies above)."""
        t = self.search_time[self.success]
        if t.size < 2:
            return math.nan, math.nan
        half = Z95 * float(t.std(ddof=1)) / math.sqrt(t.size)
        return max(0.0, self.mean - half), self.mean + half

    def percentiles(self, q=PERCENTILES) -> dict:
        """``{q: steps}``: percentiles of the search time of the successful episodes."""
        t = self.search_time[self.success]
        return {int(k) if float(k).is_integer() else float(k): (float(np.percentile(t, k)) if t.size else math.nan)
                for k in q}

    def cdf(self) -> tuple[np.ndarray, np.ndarray]:
        """The arrival-time CDF: ``(steps, fraction)``, ``steps`` = 0..max_steps (int64) and
        ``fraction[k]`` the share of all episodes that succeeded within ``steps[k]`` steps
        (it ends at the success rate)."""
        steps = np.arange(self.scenario.max_steps + 1, dtype=np.int64)
        t = np.sort(self.search_time[self.success])
        return steps, np.searchsorted(t, steps, side="right") / self.episodes

    def summary(self) -> dict:
        """The scalar statistics, JSON-able."""
        lo, hi = self.success_interval()
        mlo, mhi = self.mean_interval()
        out = {"episodes": self.episodes, "seed": self.seed, "until": self.until, "n_agents": self.scenario.n_agents,
               "success_rate": self.success_rate, "success_rate_ci95_low": lo, "success_rate_ci95_high": hi,
               "success_rate_first": float(self.success_first.mean()),
               "success_rate_all": float(self.success_all.mean()), "searchers_arrived": self.arrival_rate,
               "mean_search_time": self.mean, "mean_search_time_ci95_low": mlo, "mean_search_time_ci95_high": mhi,
               "mean_episode_length": float(self.episode_length.mean())}
        out.update({f"p{k}_search_time": v for k, v in self.percentiles().items()})
        if self.scenario.step_duration is not None:  # the same times in seconds
            out.update(step_duration=self.scenario.step_duration,
                       mean_search_seconds=self.scenario.units.seconds(self.mean))
        return out

    # ---------------------------------------------------------------- output
    def to_csv(self, path) -> Path:
        """One row per episode: episode, seed, success, search_time (empty if failed),
        episode_length, arrival_0..arrival_{N-1} (-1 = never)."""
        path = out_path(path, ".csv", "EvaluationResult.to_csv")
        n = self.arrival_time.shape[1]
        with files.writing(path, "EvaluationResult.to_csv", "a .csv file name", newline="") as f:
            w = csv.writer(f)
            w.writerow(["episode", "seed", "success", "search_time", "episode_length",
                        *[f"arrival_{k}" for k in range(n)]])
            for e, (s, ok, t, length) in enumerate(zip(self.episode_seed, self.success, self.search_time,
                                                       self.episode_length)):
                w.writerow([e, int(s), int(ok), "" if math.isnan(t) else int(t), int(length),
                            *self.arrival_time[e].tolist()])
        return path

    def to_json(self, path) -> Path:
        """``{"scenario", "summary", "episodes": {...per-episode lists}, "cdf"}`` (NaN written as null)."""
        path = out_path(path, ".json", "EvaluationResult.to_json")
        steps, frac = self.cdf()
        doc = {
            "scenario": _jsonable(self.scenario.metadata()),
            "summary": _jsonable(self.summary()),
            "episodes": {"seed": self.episode_seed.tolist(), "success": self.success.tolist(),
                         "search_time": _jsonable(self.search_time.tolist()),
                         "episode_length": self.episode_length.tolist(),
                         "arrival_time": self.arrival_time.tolist()},
            "cdf": {"steps": steps.tolist(), "fraction": frac.tolist()},
        }
        return files.write_text(path, json.dumps(doc, indent=1), "EvaluationResult.to_json", "a .json file name")

    def plot(self, path, title: str | None = None, *, others=(), labels=None) -> Path:
        """PNG of the search times: their histogram (several results: each mean with its 95 %
        interval) and the arrival-time CDF over the steps the data span; ``others``: more
        results drawn beside this one (``plot_results([self, *others], path, labels, title)``)."""
        return plot_results([self, *others], path, labels=labels, title=title)


def _label_of(result: EvaluationResult) -> str:
    sc = result.scenario
    return f"{sc.n_agents} agent{'s' if sc.n_agents != 1 else ''}{', team' if sc.team else ''}"


def plot_results(results, path, labels=None, title: str | None = None) -> Path:
    """One PNG comparing ``EvaluationResult``s (policies, team sizes, scenarios).

    Left: the distribution of the search times of the successful episodes: a histogram for one
    result; for several, a violin per result (a dot per episode when there are too few to draw
    one) with its mean and 95 % interval and its median. Right: the arrival-time CDFs (the ECDF of
    the search times over all episodes, ending at the success rate), over the steps the data span
    (to the last arrival, not ``max_steps``). What success means is written on the figure: the
    search time is each result's ``until`` ("first arrival": the first agent's; "every searcher":
    the last one's), and with several searchers the other kind is drawn dashed; the legend, below
    the panels, gives both success rates. A result with no success is said so where its
    distribution would be.

    Args:
        results: ``EvaluationResult``s (one at least).
        path: the ``.png`` file to write.
        labels: one per result (default: the number of agents and the team mode).
        title: the figure's title (default: the first result's scenario).
    """
    results = list(results) if isinstance(results, (list, tuple)) else [results]
    if not results or not all(isinstance(r, EvaluationResult) for r in results):
        raise ValidationError(f"results: got {results!r}; expected one or more EvaluationResult")
    if labels is None:
        labels = [_label_of(r) for r in results]
    labels = [str(label) for label in labels]
    if len(labels) != len(results):
        raise ValidationError(f"labels: got {len(labels)} for {len(results)} results; expected one per result")
    plt = pyplot()
    path = out_path(path, ".png", "plot_results")
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.6))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    span = 0
    for k, (r, label) in enumerate(zip(results, labels)):
        colour = colours[k % len(colours)]
        arrived = r.arrival_time[r.arrival_time >= 0]
        span = max(span, int(arrived.max()) if arrived.size else 0)
        _draw_distribution(ax1, r, k, colour, several=len(results) > 1)
        both = f"{r.episodes} episodes, first arrival {r.success_first.mean():.1%}"
        if r.scenario.n_agents > 1:
            both += f", every searcher {r.success_all.mean():.1%}"
        for until, style in (("first", "-"), ("all", "--")):
            if until != r.until and r.scenario.n_agents == 1:
                continue
            other = r if until == r.until else dataclasses.replace(r, until=until)
            steps, frac = other.cdf()
            ax2.step(steps, frac, where="post", color=colour, ls=style if until != r.until else "-",
                     label=f"{label}: {both}" if until == r.until else None)
    if len(results) > 1:
        ax1.set_xticks(range(len(results)), labels, rotation=20 if len(results) > 3 else 0,
                       ha="right" if len(results) > 3 else "center")
        ax1.set_xlim(-0.6, len(results) - 0.4)
        ax1.set_ylabel(f"steps until {' / '.join(sorted({_UNTIL_WORDS[r.until] for r in results}))}")
        ax1.set_title("successful episodes: mean with 95 % interval, median (white)", fontsize="medium")
    cap = max(r.scenario.max_steps for r in results)
    span = span or cap  # nobody arrived: the whole episode
    if len(results) > 1:
        ax1.set_ylim(0, ax1.get_ylim()[1] if span < cap or any(r.success.any() for r in results) else cap)
    else:
        ax1.set_ylim(bottom=0)
    ax2.set_xlim(0, span * 1.05 + 1)
    ax2.set_ylim(0, 1.02)
    ax2.set_xlabel("steps")
    ax2.set_ylabel("share of episodes found")
    words = " / ".join(sorted({_UNTIL_WORDS[r.until] for r in results}))
    others = " / ".join(sorted({_UNTIL_WORDS["all" if r.until == "first" else "first"] for r in results
                                if r.scenario.n_agents > 1}))
    ax2.set_title(f"solid: success = {words}" + (f"; dashed: {others}" if others else ""), fontsize="medium")
    # below the panels, never over a curve
    ax2.legend(fontsize="small", loc="upper right", bbox_to_anchor=(1.0, -0.14), frameon=False)
    fig.suptitle(title or describe_scenario(results[0].scenario))
    fig.tight_layout()
    with files.writing(path, "plot_results", "a .png file name", text=False) as f:
        fig.savefig(f, dpi=100, format="png", bbox_inches="tight")
    plt.close(fig)
    return path


def _draw_distribution(ax, result: EvaluationResult, k: int, colour, *, several: bool) -> None:
    """The search times of ``result``'s successful episodes on ``ax``: a histogram (one result)
    or, at ``x = k``, a violin with the mean, its 95 % interval and the median; a note when no
    episode succeeded."""
    t = result.search_time[result.success]
    never = f"never found the source\n(0 of {result.episodes} episodes)"
    if not several:
        ax.set_xlabel(f"steps until {_UNTIL_WORDS[result.until]}")
        ax.set_ylabel("episodes")
        if not t.size:
            ax.text(0.5, 0.5, never, transform=ax.transAxes, ha="center", va="center", color="0.3")
            ax.set_xlim(0, result.scenario.max_steps)
            return
        ax.hist(t, bins=min(50, max(5, int(np.sqrt(t.size)))), color=colour)
        ax.axvline(result.mean, color="k", ls="--")
        ax.set_title(f"mean {result.mean:.1f} steps (dashed line), {t.size} successful episode{'s' if t.size != 1 else ''}",
                     fontsize="medium")
        return
    if not t.size:
        ax.text(k, 0.5, never, transform=ax.get_xaxis_transform(), ha="center", va="center", color="0.3",
                fontsize="small")
        return
    if t.size >= 3 and np.ptp(t) > 0:
        parts = ax.violinplot([t], positions=[k], widths=0.8, showextrema=False)
        for body in parts["bodies"]:
            body.set_facecolor(colour)
            body.set_alpha(0.45)
    else:  # too few, or all equal, for a density: the episodes themselves
        ax.scatter(np.full(t.size, k), t, color=colour, s=12, zorder=2)
    low, high = result.mean_interval()
    ax.errorbar([k], [result.mean], yerr=None if t.size < 2 else [[result.mean - low], [high - result.mean]],
                fmt="o", color="k", capsize=4, zorder=3)
    ax.scatter([k], [float(np.median(t))], marker="o", s=14, color="white", edgecolors="k", zorder=4)


_UNTIL_WORDS = {"first": "the first arrival", "all": "every searcher's arrival"}


def describe_scenario(scenario: Scenario) -> str:
    """The scenario in words (a figure's title): agents, grid, plume, body, steps, team, walls."""
    grid = "x".join(str(side) for side in scenario.grid_size)
    plume = scenario.plume
    if scenario.sigma is not None:
        what = f"{plume.name} (sigma {scenario.sigma:g})"
    else:
        what = plume.name
    return (f"{scenario.n_agents} agent{'s' if scenario.n_agents != 1 else ''}, {grid} grid, {what}, "
            f"{scenario.action_model.name}, {scenario.max_steps} steps{', team' if scenario.team else ''}"
            f"{', among walls' if scenario.walls is not None else ''}")


def _jsonable(value):
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def out_path(path, suffix: str, owner: str = "path") -> Path:
    """``path`` when it is a file name ending in ``suffix`` that can be written (``files.check_output``:
    its missing folders are made); a ``ValidationError`` naming ``owner`` otherwise. Shared by the
    modules that write results (stats, tasks)."""
    expected = f"a file name ending in {suffix}"
    p = files.check_path(path, owner, expected)
    if p.suffix.lower() != suffix:
        raise ValidationError(f"{owner}: got {shown(str(path), 120)}; expected {expected}")
    return files.check_output(p, owner, expected)


def pyplot():
    """``matplotlib.pyplot`` (on the Agg backend unless pyplot is loaded already), or
    ``RenderingError`` saying what to install; shared by the modules that draw plots."""
    try:
        import matplotlib

        if "matplotlib.pyplot" not in sys.modules:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise RenderingError(f"plots need matplotlib: {VIZ_EXTRA}") from exc
    return plt


# ----------------------------------------------------------------------------------------- running
def _is_factory(obj) -> bool:
    if inspect.isclass(obj):
        return True
    try:
        params = inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return False
    return "scenario" in params or "simulator" in params


def _made(policy, scenario: Scenario, simulator: Simulator, seed: int):
    """The policy object of one chunk: the factory's product, or a deep copy of ``policy``."""
    if not _is_factory(policy):
        return copy.deepcopy(policy)
    offered = {"scenario": scenario, "simulator": simulator,
               "n_actions": None if scenario.continuous else scenario.n_actions, "seed": seed}
    try:
        params = inspect.signature(policy).parameters
    except (TypeError, ValueError):
        params = {}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return policy(**offered)
    return policy(**{k: v for k, v in offered.items() if k in params})


def _wants_simulator(policy) -> bool:
    """True when making ``policy`` needs the chunk's simulator (a factory with that parameter)."""
    from .policies.team import Team

    if isinstance(policy, Team):
        return any(_wants_simulator(member) for member in policy.members)
    if not _is_factory(policy):
        return False
    try:
        params = inspect.signature(policy).parameters
    except (TypeError, ValueError):
        return False
    return "simulator" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def _make_policy(policy, scenario: Scenario, simulator: Simulator | None, seed: int):
    """The policy object of one chunk (a team's members made one by one: a member serving several
    agents is made once)."""
    from .policies.team import Team

    if isinstance(policy, Team):
        made = {}
        for member in policy.members:
            if id(member) not in made:
                made[id(member)] = _made(member, scenario, simulator, seed)
        return Team([made[id(member)] for member in policy.members], team_rule=policy.team_rule)
    return _made(policy, scenario, simulator, seed)


def _as_callable(made, simulator: Simulator, given):
    """``made`` as ``obs -> actions``: an object with ``act(simulator)`` (a policy that reads the
    simulator's state, such as ``policies.Infotaxis``) bound to the chunk's simulator; else a
    callable as it is."""
    if callable(getattr(made, "act", None)):
        return lambda obs: made.act(simulator)
    if callable(made):
        return made
    raise ValidationError(f"policy: {given!r} gave a {type(made).__name__}; expected a callable obs -> actions "
                          "or an object with act(simulator)")


def _run_chunk(policy, scenario: Scenario, seed: int, first: int, count: int, on_done=None, on_phase=None):
    """Episodes ``first .. first+count-1`` as ``count`` worlds of one simulator.

    ``on_done(k)`` is told each time ``k`` more episodes have ended; ``on_phase(text)`` what the
    chunk is doing before its first step ("preparing the step", "compiling the step for ..."
    while Numba compiles, "warming up the plume", then "episodes").
    Returns ``(arrival_time (count, N) int32, episode_length (count,) int32)``.
    """
    from .engine.compile import reporting

    chunk_seed = seed + first
    say = on_phase if on_phase is not None else (lambda text: None)
    # a policy that refuses the scenario does so before the simulator compiles anything
    made = None if _wants_simulator(policy) else _make_policy(policy, scenario, None, chunk_seed)
    say("preparing the step")
    with reporting(say) if on_phase is not None else contextlib.nullcontext():
        sim = Simulator(scenario, count, autoreset="disabled")
    made = _make_policy(policy, scenario, sim, chunk_seed) if made is None else made
    act = _as_callable(made, sim, policy)
    # A policy of observations gets its own copy (it may keep it, or write to it); one that acts on the
    # simulator never sees them, and a belief's observations are large (13,042 floats an agent in
    # otto's windy cases): not copying them saves 44 % of space-aware infotaxis' time there
    private = not callable(getattr(made, "act", None))
    if getattr(scenario.plume, "spin_up_steps", 0):  # a puff plume runs its spin-up at reset
        say("warming up the plume")
    obs = sim.reset(seed=chunk_seed)
    say("episodes")
    n = scenario.n_agents
    arrival = np.full(count * n, -1, dtype=np.int32)
    length = np.full(count, scenario.max_steps, dtype=np.int32)
    active = sim.active  # a live view
    was_active = active.copy()
    world_was_on = np.ones(count, dtype=np.bool_)
    for t in range(1, scenario.max_steps + 1):
        try:
            actions = act(obs.copy() if private else obs)
        except Exception as exc:
            raise PlumeError(f"policy {policy!r} raised {type(exc).__name__}: {exc}") from exc
        try:
            obs, _, _, _ = sim.step(actions)
        except ValidationError as exc:
            raise ValidationError(f"policy {policy!r} returned invalid actions: {exc}") from exc
        # An agent that stops being active has reached the source (or its team has): a world
        # ends only when every agent has, or at max_steps, when this loop ends too.
        arrival[was_active & ~active] = t
        world_on = active.reshape(count, n).any(axis=1)
        ended = world_was_on & ~world_on
        length[ended] = t
        if on_done is not None and ended.any():
            on_done(int(ended.sum()))
        if not world_on.any():
            break
        was_active[:] = active
        world_was_on = world_on
    if on_done is not None and world_on.any():
        on_done(int(world_on.sum()))  # truncated at max_steps
    return arrival.reshape(count, n), length


def _run_chunks(policy, scenario: Scenario, seed: int, chunks, on_done=None, on_phase=None):
    """Run ``chunks`` (a list of ``(first, count)``) one after the other; concatenate the results."""
    arrivals, lengths = [], []
    for first, count in chunks:
        a, length = _run_chunk(policy, scenario, seed, first, count, on_done, on_phase)
        arrivals.append(a)
        lengths.append(length)
    return np.concatenate(arrivals), np.concatenate(lengths)


def _check_int(name: str, value, low: int, high: int | None = None) -> int:
    if not is_int(value) or value < low \
            or (high is not None and value > high):
        rule = f"an integer >= {low}" if high is None else f"an integer in {low}..{high}"
        raise ValidationError(f"{name}: got {value!r}; expected {rule}")
    return int(value)


def as_scenario(scenario) -> Scenario:
    """``scenario`` itself, or the ``Scenario`` of a dict of its fields; anything else refused."""
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, dict):
        check_arguments(Scenario, (), scenario)  # an unknown field is our error naming it, not a TypeError
        return Scenario(**scenario)
    raise ValidationError(f"scenario: got {type(scenario).__name__}; expected a plume_multi.Scenario or a dict of its fields")


def _progress_bar(total: int, enabled: bool, desc: str):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="episode", disable=not enabled, leave=False, dynamic_ncols=True)


def evaluate(policy, scenario, episodes: int, seed: int = 0, *, num_worlds: int | None = None,
             executor: str = "local", progress: bool = True, until: str = "first",
             tasks: int | None = None) -> EvaluationResult:
    """Run ``episodes`` seeded episodes of ``scenario`` under ``policy``; return their outcomes.

    Args:
        policy: a built-in's name (``"random"``, ``"gradient"``, ``"surge-cast"``,
            ``"infotaxis"``, ``"space-aware-infotaxis"``, ``"greedy"``: ``policies.named``, as
            ``plume-multi eval --policy`` takes them; ``"infotaxis,greedy"``: a team, agent ``n``
            running the ``(n mod k)``-th name), a callable ``obs (B*N, D) float32 -> actions
            (B*N,) int``, an object with ``act(simulator)``, or a factory of one (a class, or a
            function with a ``scenario`` and/or ``simulator`` parameter); or one policy per agent
            of a world (a list, a mapping ``{agent index: policy}`` or a ``policies.Team``, names
            among them); see the module docstring.
        scenario: a ``Scenario`` (or a dict of its fields).
        episodes: E >= 1 episodes; episode ``e`` starts as ``Simulator.reset(seed=seed + e)``
            starts world 0 (so as ``PlumeSearchEnv().reset(seed=seed + e)`` for one agent).
        seed: the seed of episode 0.
        num_worlds: worlds run at once in one simulator (the chunk size); default
            ``min(episodes, 1024)``, whatever the executor, so both give the same result. Ray
            runs one chunk per task at most: take ``num_worlds <= episodes / tasks`` to use them all.
        executor: ``"local"`` (this process) or ``"ray"``: the chunks are shared out among Ray
            tasks, each running its chunks one after the other. Uses the running Ray instance,
            else ``ray.init()`` (which joins ``RAY_ADDRESS`` when set, else starts a local one).
        progress: a tqdm bar over the episodes (on stderr), advanced as episodes end (locally)
            or as Ray tasks complete; locally its label says what runs before the episodes
            (compiling the step, warming up the plume).
        until: ``"first"``: an episode succeeds when its first agent arrives; ``"all"``: when
            every agent has.
        tasks: Ray tasks (default: one per chunk, at most twice the cluster's CPUs). The result
            does not depend on it.

    Returns:
        An ``EvaluationResult``.

    Raises:
        ValidationError: a bad argument (before anything runs), or a policy returning bad actions.
        PlumeError: the policy raised.
    """
    scenario = as_scenario(scenario)
    episodes = _check_int("episodes", episodes, 1)
    seed = _check_int("seed", seed, 0, MAX_SEED - episodes + 1)
    num_worlds = min(episodes, DEFAULT_CHUNK) if num_worlds is None else _check_int("num_worlds", num_worlds, 1)
    if executor not in EXECUTORS:
        raise ValidationError(f"executor: got {executor!r}; expected one of {list(EXECUTORS)}")
    if until not in UNTIL:
        raise ValidationError(f"until: got {until!r}; expected one of {list(UNTIL)}")
    if tasks is not None:
        tasks = _check_int("tasks", tasks, 1)
    from .policies.perseus_named import progress_shown

    with progress_shown(progress):  # the named Perseus solves here (its own bar): quiet with the rest
        policy = _team_of(as_policy(_by_name(policy, scenario)), scenario)
        if not callable(policy):
            raise ValidationError(f"policy: got a {type(policy).__name__}; expected a callable policy or a factory "
                                  "of one")
        capabilities.check(scenario, policy)  # the policy's declarations against the scenario, before compiling
        scenario = scenario_for(policy, scenario)  # a Bayesian searcher's Belief sensor (a likelihood of the plume)
        _check_fit(policy, scenario)  # then the values a policy object holds (Perseus: the plume it was solved for)
    chunks = [(first, min(num_worlds, episodes - first)) for first in range(0, episodes, num_worlds)]
    with _progress_bar(episodes, progress, "evaluate") as bar:
        if executor == "local":
            # the bar says what happens before the first episode ends (a plume's spin-up, a compile)
            phase = (lambda text: bar.set_description_str(f"evaluate: {text}")) if progress else None
            arrival, length = _run_chunks(policy, scenario, seed, chunks, on_done=bar.update, on_phase=phase)
        else:
            arrival, length = _run_ray(policy, scenario, seed, chunks, tasks, bar)
    return EvaluationResult(scenario, seed, until, arrival, length)


def scenario_for(policy, scenario: Scenario) -> Scenario:
    """``scenario`` as ``policy`` acts in it: each policy object (or team member) with
    ``scenario_for`` (``policies.Infotaxis``, ``Greedy``, and their factories by name,
    ``policies.named``: a ``sensors.Belief`` following a likelihood of the plume) makes it so, in
    turn; others leave it as it is."""
    from .policies.team import Team

    for member in policy.members if isinstance(policy, Team) else (policy,):
        prepare = getattr(member, "scenario_for", None)
        if callable(prepare) and not isinstance(member, type):  # a policy object, or a built-in's factory
            scenario = prepare(scenario)
    return scenario


def _check_fit(policy, scenario: Scenario) -> None:
    """A policy (or team member) with ``check_scenario(scenario)`` (``policies.Perseus``: alpha
    vectors solved for one plume) refuses a scenario it cannot act in, before anything compiles."""
    from .policies.team import Team

    for member in policy.members if isinstance(policy, Team) else (policy,):
        check = getattr(member, "check_scenario", None)
        if callable(check) and not _is_factory(member):
            check(scenario)


def _by_name(policy, scenario: Scenario):
    """``policy`` with every built-in's name replaced by its factory (``policies.named``): a name,
    a comma-separated team of names (agent ``n`` runs the ``(n mod k)``-th), or names inside a list
    or mapping of one policy per agent. Each named policy is made for ``scenario`` once here, so
    that one that cannot act in it is refused, with its reason, before anything compiles."""
    from .policies.named import NAMED, NAMES

    def factory(name: str):
        if name not in NAMED:
            raise ValidationError(f"policy: got {name!r}; expected one of {list(NAMES)} (or a comma-separated team "
                                  "of them), or a policy object, class or factory")
        NAMED[name](scenario, 0)  # the policy's own refusal, now
        return NAMED[name]

    if isinstance(policy, str):
        names = [part.strip() for part in policy.split(",")]
        if len(names) == 1:
            return factory(names[0])
        return [factory(names[n % len(names)]) for n in range(scenario.n_agents)]
    if isinstance(policy, (list, tuple)):
        return [factory(member) if isinstance(member, str) else member for member in policy]
    if isinstance(policy, Mapping):
        return {key: factory(member) if isinstance(member, str) else member for key, member in policy.items()}
    return policy


def _team_of(policy, scenario: Scenario):
    """A list or mapping of policies as a ``policies.Team``, checked against the scenario's agents."""
    from .policies.team import Team

    if isinstance(policy, (list, tuple, Mapping)):
        policy = Team(policy)
    if isinstance(policy, Team) and policy.n_agents != scenario.n_agents:
        raise ValidationError(f"policy: got {policy.n_agents} policies (one per agent) for worlds of "
                              f"{scenario.n_agents} agents; expected {scenario.n_agents}")
    return policy


def check_policy(policy, scenario: Scenario) -> None:
    """Refuse, before anything compiles, a policy (as ``evaluate`` takes it: built-ins' names
    resolved, one per agent made a team) that cannot run on ``scenario``: ``capabilities.check``."""
    capabilities.check(scenario, _team_of(_by_name(policy, scenario), scenario))


def _run_ray(policy, scenario, seed, chunks, tasks, bar):
    try:
        import ray
    except ImportError as exc:
        raise PlumeError(f"executor='ray' needs Ray: {RAY_EXTRA}") from exc
    if not ray.is_initialized():
        ray.init(logging_level="ERROR", log_to_driver=False)
    if tasks is None:
        cpus = int(ray.cluster_resources().get("CPU", 1))
        tasks = max(1, min(len(chunks), 2 * cpus))
    tasks = min(tasks, len(chunks))
    # contiguous groups of chunks, as even as possible
    bounds = np.linspace(0, len(chunks), tasks + 1).round().astype(int)
    groups = [chunks[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    run = ray.remote(num_cpus=1)(_run_chunks)
    policy_ref = ray.put(policy)
    refs = [run.remote(policy_ref, scenario, seed, group) for group in groups]
    sizes = {ref: sum(count for _, count in group) for ref, group in zip(refs, groups)}
    done = {}
    pending = list(refs)
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        for ref in ready:
            done[ref] = ray.get(ref)
            bar.update(sizes[ref])
    arrival = np.concatenate([done[ref][0] for ref in refs])
    length = np.concatenate([done[ref][1] for ref in refs])
    return arrival, length


# ----------------------------------------------------------------------------------------- sweep
@dataclasses.dataclass(frozen=True)
class SweepResult:
    """``rows``: one dict per grid point (its fields, then ``EvaluationResult.summary()``);
    ``results``: the ``EvaluationResult`` of each, in the same order; ``paths``: files written."""

    rows: list
    results: list
    paths: dict


def _grid_points(base: Scenario, grid: dict):
    if not isinstance(grid, dict) or not grid:
        raise ValidationError(f"grid: got {grid!r}; expected a non-empty dict {{Scenario field: [values]}}")
    fields = {f.name for f in dataclasses.fields(Scenario)}
    for key, values in grid.items():
        if key not in fields:
            raise ValidationError(f"grid: unknown Scenario field {key!r}; expected some of {sorted(fields)}")
        # a list, tuple or 1-D array, in the user's order: a dict's keys, a set's order or a
        # generator's single pass would sweep values nobody listed
        listed = isinstance(values, (list, tuple)) or (isinstance(values, np.ndarray) and values.ndim == 1)
        if not listed or len(values) == 0:
            raise ValidationError(f"grid[{key!r}]: got {shown(values, 200, typed=True)}; expected a non-empty list "
                                  "(or tuple, or 1-D array) of values")
    keys = list(grid)
    points = []
    for combo in itertools.product(*(list(grid[k]) for k in keys)):
        values = {k: tuple(v) if isinstance(v, list) else v for k, v in zip(keys, combo)}
        points.append((values, base.replace(**values)))  # validated here, before any run
    return points


def _cell(value):
    if isinstance(value, tuple):
        return "x".join(str(v) for v in value)
    return value


def sweep(policy, base_scenario, grid: dict, episodes: int, seed: int = 0, *, num_worlds: int | None = None,
          executor: str = "local", until: str = "first", out="sweep_output/sweep", progress: bool = True,
          tasks: int | None = None) -> SweepResult:
    """Evaluate ``policy`` at every combination of ``grid`` over ``base_scenario``.

    Args:
        policy: as for ``evaluate``.
        base_scenario: the ``Scenario`` whose fields ``grid`` varies.
        grid: ``{field: [values, ...]}``, e.g. ``{"n_agents": [1, 4, 16], "sigma": [4.0, 8.0]}``;
            every combination (``itertools.product``, in the dict's order) is one evaluation.
        episodes, seed, num_worlds, executor, until, tasks: as for ``evaluate``; every grid point
            uses the same episode seeds.
        out: path prefix of the files written: ``out.csv`` (one row per grid point),
            ``out.parquet`` when pyarrow is installed, ``out.png`` (success rate and mean search
            time against the first grid field, one line per combination of the others) when
            matplotlib is; ``None`` writes nothing.

    Returns:
        A ``SweepResult``.
    """
    base = as_scenario(base_scenario)
    points = _grid_points(base, grid)
    for _, scenario in points:  # every point's refusal before the first runs
        capabilities.check(scenario, _team_of(_by_name(policy, scenario), scenario))
    expected = "None or a path prefix ending in a file name (PREFIX.csv, .parquet and .png are written)"
    if out is not None:  # before the work: a path that cannot be written would lose it
        outputs = dict(zip(("csv", "parquet", "png"), files.outputs(out, [".csv", ".parquet", ".png"], "sweep.out",
                                                                    expected)))
    keys = list(grid)
    rows, results = [], []
    from tqdm.auto import tqdm

    for values, scenario in tqdm(points, desc="sweep", unit="point", disable=not progress, leave=False):
        result = evaluate(policy, scenario, episodes, seed, num_worlds=num_worlds, executor=executor,
                          progress=progress, until=until, tasks=tasks)
        rows.append({**{k: _cell(v) for k, v in values.items()}, **result.summary()})
        results.append(result)
    paths = {}
    if out is not None:  # each file whole or not at all
        paths["csv"] = outputs["csv"]
        with files.writing(paths["csv"], "sweep.out", expected, newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            pass
        else:
            paths["parquet"] = outputs["parquet"]
            with files.writing(paths["parquet"], "sweep.out", expected, text=False) as f:
                pq.write_table(pa.Table.from_pylist(rows), f)
        try:
            plt = pyplot()
        except RenderingError:
            pass
        else:
            paths["png"] = outputs["png"]
            with files.writing(paths["png"], "sweep.out", expected, text=False) as f:
                _plot_sweep(plt, rows, keys, f)
    return SweepResult(rows, results, paths)


def _plot_sweep(plt, rows, keys, path):
    x_key, others = keys[0], keys[1:]
    xs = list(dict.fromkeys(row[x_key] for row in rows))
    numeric = all(isinstance(x, numbers.Real) for x in xs)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for label in dict.fromkeys(tuple(row[k] for k in others) for row in rows):
        sel = [row for row in rows if tuple(row[k] for k in others) == label]
        x = [row[x_key] for row in sel] if numeric else [xs.index(row[x_key]) for row in sel]
        name = ", ".join(f"{k}={v}" for k, v in zip(others, label)) or None
        rate = np.array([row["success_rate"] for row in sel])
        lo = np.array([row["success_rate_ci95_low"] for row in sel])
        hi = np.array([row["success_rate_ci95_high"] for row in sel])
        ax1.errorbar(x, rate, yerr=[rate - lo, hi - rate], marker="o", capsize=3, label=name)
        mean = np.array([row["mean_search_time"] for row in sel], dtype=float)
        mlo = np.array([row["mean_search_time_ci95_low"] for row in sel], dtype=float)
        mhi = np.array([row["mean_search_time_ci95_high"] for row in sel], dtype=float)
        ax2.errorbar(x, mean, yerr=[np.nan_to_num(mean - mlo), np.nan_to_num(mhi - mean)], marker="o", capsize=3,
                     label=name)
    for ax in (ax1, ax2):
        ax.set_xlabel(x_key)
        if not numeric:
            ax.set_xticks(range(len(xs)), [str(x) for x in xs])
        if others:
            ax.legend(fontsize="small")
    ax1.set_ylabel("success rate (95 % interval)")
    ax1.set_ylim(0, 1.02)
    ax2.set_ylabel("mean search time, steps (95 % interval)")
    fig.tight_layout()
    fig.savefig(path, dpi=100, format="png")
    plt.close(fig)


# ``plume_multi.evaluate`` is the function when reached through ``plume_multi``'s lazy attributes,
# and this module once the deprecated ``import plume_multi.evaluate`` (this module's old name) has
# bound it there; both are callable and both reach ``sweep`` and ``EvaluationResult``.
class _CallableModule(types.ModuleType):
    def __call__(self, *args, **kwargs):
        return evaluate(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
evaluate.sweep = sweep
evaluate.evaluate = evaluate
evaluate.EvaluationResult = EvaluationResult
evaluate.SweepResult = SweepResult
evaluate.plot_results = plot_results
