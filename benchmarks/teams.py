#!/usr/bin/env python
"""Mixed teams on the Poisson search: steps until the first agent finds the source, uniform teams
of infotaxis, space-aware infotaxis and greedy searchers against mixed ones (the table of docs/turbulent-search.md).

    python benchmarks/teams.py [--episodes 6400] [--sizes 2 4 8] [--dims 2] [--max-steps 1000]
                               [--plume poisson|puffs] [--png teams.png] [--quick]

Every team shares one belief (``scenarios.poisson_search(1.0, 2.0, n_agents=N, team=True)``: the
19x19 domain of L = 1, R_dt = 2, all agents starting at the centre) and decides in agent order by
the believer rule (``policies.Team``): agent ``n`` runs the ``(n mod k)``-th policy of its team's
list. Episode ``e`` is seeded ``e`` for every team, so every team meets the same sources and the
teams are compared pairwise: the last lines give, per team size, the best mixed team against the
best uniform one, and the pairing of Piro et al. (2025) (explorers and exploiters, infotaxis +
greedy, against space-aware infotaxis, which balances both in each agent), each with the 95 %
interval of the paired difference: whether their ordering (heterogeneous teams beat homogeneous
ones) holds here.

``--dims 3`` runs the same table in 3-D: ``poisson_search(1.0, 2.0, dims=3, ...)``, otto's 3-D hit
law on its 19x19x19 cube, the six moves of ``Cardinal``, greedy and infotaxis deciding on the
shared posterior volume.

``--plume puffs`` runs it on correlated hits: a small puff plume (``puff_search``: ``Puffs`` on
40 x 20 cells of 0.25 length units, the source at (3, 10), the mean wind along +x, 300 spin-up
steps; each agent starting on a cell drawn in the downwind box (24..36, 4..16), the team spread
over it; ``Cardinal`` moves, one cell a step; success within 1 cell of the source), each searcher following the likelihood calibrated from that plume
(``calibrate(scenario)``: one threshold, any odour a detection; cached), the team sharing one
belief. A hit there is a puff passing, seen by the agents near it at once: the hits of a team
are correlated, as in Piro et al.'s turbulence and unlike the independent Poisson hits.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from tqdm.auto import tqdm

from plume_multi import evaluate
from plume_multi.policies import Greedy, Infotaxis, Team
from plume_multi.scenarios import poisson_search

Z95 = 1.959963984540054
SIZES = (2, 4, 8)
# each maker takes the likelihood the searcher follows (None: the Poisson plume's own)
MAKERS = {"infotaxis": lambda lik: Infotaxis(likelihood=lik),
          "space-aware": lambda lik: Infotaxis(space_aware=True, likelihood=lik),
          "greedy": lambda lik: Greedy(likelihood=lik)}
PLUMES = ("poisson", "puffs")
PUFF_GRID, PUFF_SOURCE, PUFF_STARTS = (40, 20), (3.0, 10.0), ((24, 4), (36, 16))
UNIFORM = {"infotaxis": ("infotaxis",), "space-aware infotaxis": ("space-aware",), "greedy": ("greedy",)}
MIXED = {"infotaxis + greedy": ("infotaxis", "greedy"), "space-aware + greedy": ("space-aware", "greedy"),
         "infotaxis + space-aware": ("infotaxis", "space-aware"),
         "infotaxis + space-aware + greedy": ("infotaxis", "space-aware", "greedy")}


def team(names, n_agents: int, likelihood=None) -> Team:
    """Agent ``n`` runs ``names[n % len(names)]`` (one policy object per name), following
    ``likelihood`` (None: the Poisson plume's closed form)."""
    made = {name: MAKERS[name](likelihood) for name in names}
    return Team([made[names[n % len(names)]] for n in range(n_agents)])


def puff_search(n_agents: int, max_steps: int) -> Scenario:
    """The small puff search of ``--plume puffs`` (module docstring): a team of ``n_agents`` sharing
    one belief (the sensor its searchers' ``scenario_for`` adds)."""
    from plume_multi import Scenario
    from plume_multi.models import bodies, plumes, sensors

    return Scenario(grid_size=PUFF_GRID, plume=plumes.Puffs(source=PUFF_SOURCE, cell_size=0.25, spin_up_steps=300),
                    action_model=bodies.Cardinal(), sensors=(sensors.Concentration(),), n_agents=n_agents, team=True,
                    start_region=PUFF_STARTS, goal_radius=1.0, max_steps=max_steps)


def puff_likelihood():
    """The likelihood calibrated from the small puff plume (the default budget; cached on disk)."""
    from plume_multi.calibration import calibrate

    return calibrate(puff_search(1, 1), progress=False)


def times(result) -> np.ndarray:
    """Steps to the first arrival per episode, a capped episode counting ``max_steps``."""
    return np.where(result.success, result.search_time, result.scenario.max_steps)


def _cell(t: np.ndarray, found: float) -> str:
    half = Z95 * t.std(ddof=1) / math.sqrt(len(t))
    capped = round((1 - found) * len(t))  # a count: a share of 1 in 6400 would print as 0.0 %
    return f"{t.mean():.2f} ± {half:.2f}" + (f" ({capped} capped)" if capped else "")


def measure(episodes: int, sizes, dims: int, max_steps: int, progress: bool = True, plume: str = "poisson") -> dict:
    """``{(team name, size): steps (E,)}`` and the success rates, for every team of ``UNIFORM`` and
    ``MIXED`` at every size, on the Poisson search or (``plume="puffs"``, 2-D) the small puff one."""
    out, found = {}, {}
    lik = puff_likelihood() if plume == "puffs" else None
    # a team of k kinds needs k agents at least (below, it is one of the smaller teams)
    jobs = [(name, names, n) for n in sizes for name, names in {**UNIFORM, **MIXED}.items() if len(names) <= n]
    for name, names, n in tqdm(jobs, desc="teams", unit="team", disable=not progress):
        if plume == "puffs":
            sc = puff_search(n, max_steps)
        else:
            sc = poisson_search(1.0, 2.0, dims=dims, n_agents=n, team=True, max_steps=max_steps)
        result = evaluate(team(names, n, lik), sc, episodes, seed=0, progress=False)
        out[name, n], found[name, n] = times(result), result.success_rate
    return {"times": out, "found": found}


def table(data: dict, sizes) -> list:
    """Markdown: one row per team, one column per size; the best of each column in bold."""
    t, found = data["times"], data["found"]
    lines = ["| team (agents cycle through) | " + " | ".join(f"{n} agents" for n in sizes) + " |",
             "|---" * (len(sizes) + 1) + "|"]
    best = {n: min((name for name, size in t if size == n), key=lambda name: t[name, n].mean()) for n in sizes}
    for kind, teams in (("uniform", UNIFORM), ("mixed", MIXED)):
        for name in teams:
            cells = []
            for n in sizes:
                if (name, n) not in t:
                    cells.append("—")
                    continue
                cell = _cell(t[name, n], found[name, n])
                cells.append(f"**{cell}**" if best[n] == name else cell)
            lines.append(f"| {kind}: {name} | " + " | ".join(cells) + " |")
    return lines


def verdict(data: dict, sizes) -> list:
    """Per size: the best mixed team against the best uniform one, and Piro et al.'s pairing
    (explorers and exploiters, infotaxis + greedy, against space-aware infotaxis, which balances
    both in each agent), each difference paired over the same sources."""
    t = data["times"]
    lines = []
    for n in sizes:
        u = min(UNIFORM, key=lambda name: t[name, n].mean())
        m = min((name for name in MIXED if (name, n) in t), key=lambda name: t[name, n].mean())
        for what, a, b in (("best mixed", m, u), ("Piro et al.'s pairing", "infotaxis + greedy",
                                                   "space-aware infotaxis")):
            d = t[a, n] - t[b, n]  # same episode seeds, so the same sources: a paired difference
            half = Z95 * d.std(ddof=1) / math.sqrt(len(d))
            if d.mean() + half < 0:
                word = "the mixed team is faster"
            elif d.mean() - half > 0:
                word = "the uniform team is faster"
            else:
                word = "no difference resolved"
            lines.append(f"- {n} agents, {what}: {a} minus {b}: {d.mean():+.2f} ± {half:.2f} steps (paired): {word}")
    return lines


def figure(data: dict, sizes, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for kind, teams, style in (("uniform", UNIFORM, "-o"), ("mixed", MIXED, "--s")):
        for name in teams:
            at = [n for n in sizes if (name, n) in data["times"]]
            t = [data["times"][name, n] for n in at]
            mean = [x.mean() for x in t]
            half = [Z95 * x.std(ddof=1) / math.sqrt(len(x)) for x in t]
            ax.errorbar(at, mean, yerr=half, fmt=style, capsize=3, label=f"{kind}: {name}")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes, [str(n) for n in sizes])
    ax.set_xlabel("agents sharing one belief")
    ax.set_ylabel("steps to the first arrival (95 % interval)")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=6400)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--dims", type=int, choices=(2, 3), default=2)
    parser.add_argument("--max-steps", type=int, default=1000)
    parser.add_argument("--plume", choices=PLUMES, default="poisson",
                        help="puffs: correlated hits, a small puff plume with a calibrated likelihood (2-D)")
    parser.add_argument("--png", default=None, help="also draw the table (mean against team size)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: checks that the table still runs")
    args = parser.parse_args(argv)
    if args.episodes < 2 or args.max_steps < 1 or min(args.sizes) < 1:
        parser.error("--episodes must be >= 2, --max-steps and --sizes >= 1")
    if args.plume == "puffs" and args.dims != 2:
        parser.error("--plume puffs is 2-D (--dims 2)")
    episodes = 6 if args.quick else args.episodes
    sizes = tuple(args.sizes[:2] if args.quick else args.sizes)
    max_steps = 60 if args.quick else args.max_steps
    if args.plume == "puffs":
        same = "plumes and starts"
        what = (f"{PUFF_GRID[0]}x{PUFF_GRID[1]} puff plume (correlated hits; source {PUFF_SOURCE}, starts drawn in "
                f"{PUFF_STARTS}), calibrated likelihood")
    else:
        sc = poisson_search(1.0, 2.0, dims=args.dims, max_steps=max_steps)
        same = "sources"
        what = f"{'x'.join(str(s) for s in sc.grid_size)} domain (L=1, R_dt=2, {args.dims}-D)"
    started = time.perf_counter()
    data = measure(episodes, sizes, args.dims, max_steps, progress=not args.quick, plume=args.plume)
    print(f"## Steps until the first agent finds the source, {what}, one shared "
          f"belief, believer rule; {episodes} episodes per cell (seeds 0..{episodes - 1}, the same {same} for "
          f"every team), mean ± 95 % interval, cap {max_steps} steps (a capped episode counts the cap)\n")
    for line in table(data, sizes):
        print(line)
    print()
    for line in verdict(data, sizes):
        print(line)
    print(f"\n({time.perf_counter() - started:.0f} s)")
    if args.png:
        figure(data, sizes, args.png)
        print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
