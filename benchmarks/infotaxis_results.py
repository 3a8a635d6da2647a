#!/usr/bin/env python
"""Search times of infotaxis on Poisson hits: the tables of docs/turbulent-search.md.

    python benchmarks/infotaxis_results.py [--episodes 6400] [--max-steps 1000] [--quick]

* policies: mean steps to find the source ± 95 % interval, infotaxis and space-aware
  infotaxis, at (lambda_over_dx, R_dt) = (1, 2), (2, 2), (3, 2) (domains 19, 37, 53 cells).
* teams: 1, 2, 4, 8 searchers starting together on the 19x19 domain: one shared belief with the
  "believer" rule (each agent, in order, assumes the earlier ones get their most likely hit), the
  same belief with no coordination ("independent"), and separate beliefs (no pooling).

Episodes are seeds 0..episodes-1 (episode 0 of each), so every row is reproducible exactly.
"""

from __future__ import annotations

import argparse
import time

from plume_multi.policies.infotaxis import run_search
from plume_multi.models.plumes.poisson_hits import PoissonHits

DOMAINS = ((1.0, 2.0), (2.0, 2.0), (3.0, 2.0))
TEAM_SIZES = (1, 2, 4, 8)
TEAM_MODES = (("shared, believer", True, "believer"), ("shared, independent", True, "independent"),
              ("separate beliefs", False, "independent"))


def _cell(res) -> str:
    return f"{res.mean:.2f} ± {res.ci95:.2f}"


def policy_table(episodes: int, max_steps: int, domains=DOMAINS):
    """Yields the lines of the table, each as soon as it is measured."""
    yield "| L | R_dt | domain | infotaxis | space-aware infotaxis | not found (inf. / s.-a.) | wall s |"
    yield "|---|---|---|---|---|---|---|"
    for L, I in domains:
        plume = PoissonHits(L, I)
        t = time.perf_counter()
        a = run_search(plume, episodes, max_steps=max_steps)
        b = run_search(plume, episodes, space_aware=True, max_steps=max_steps)
        yield (f"| {L:g} | {I:g} | {plume.grid_size}x{plume.grid_size} | {_cell(a)} | {_cell(b)} | "
               f"{a.n_capped} / {b.n_capped} | {time.perf_counter() - t:.0f} |")


def team_table(episodes: int, max_steps: int, sizes=TEAM_SIZES, domain=DOMAINS[0]):
    """Yields the lines of the table, each as soon as it is measured."""
    plume = PoissonHits(*domain)
    head = " | ".join(name for name, _, _ in TEAM_MODES)
    yield f"| agents | {head} |"
    yield "|---" * (len(TEAM_MODES) + 1) + "|"
    for n in sizes:
        cells = []
        for _, shared, rule in TEAM_MODES:
            if n == 1 and cells:
                cells.append(cells[0])  # one agent: the three modes are the same search
                continue
            res = run_search(plume, episodes, team_size=n, shared=shared, team_rule=rule, max_steps=max_steps)
            cells.append(_cell(res) + (f" ({res.n_capped} not found)" if res.n_capped else ""))
        yield f"| {n} | " + " | ".join(cells) + " |"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=6400)
    parser.add_argument("--max-steps", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="tiny sizes: checks that every table still runs")
    args = parser.parse_args(argv)
    if args.episodes < 2 or args.max_steps < 1:
        parser.error("--episodes must be >= 2 and --max-steps >= 1")
    episodes = 8 if args.quick else args.episodes
    domains = DOMAINS[:1] if args.quick else DOMAINS
    sizes = TEAM_SIZES[:2] if args.quick else TEAM_SIZES
    print(f"## Mean search time (steps), {episodes} episodes each, cap {args.max_steps} steps\n", flush=True)
    for line in policy_table(episodes, args.max_steps, domains):
        print(line, flush=True)
    print(f"\n## Teams on the {PoissonHits(*DOMAINS[0]).grid_size}x{PoissonHits(*DOMAINS[0]).grid_size} domain "
          f"(L=1, R_dt=2), infotaxis, {episodes} episodes each: steps until the first agent finds the source\n",
          flush=True)
    for line in team_table(episodes, args.max_steps, sizes):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
