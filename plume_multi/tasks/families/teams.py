"""Teams of searchers on the Poisson-hit search, uniform and mixed."""

from __future__ import annotations

import functools

from ..task import Protocol, Task

__all__ = ["TASKS", "team_search", "SIZES"]

SIZES = (2, 4, 8)
PARTNER = "greedy"  # the fixed teammates of a mixed team
BELIEF_BASELINES = ("infotaxis", "space-aware-infotaxis", "greedy", "random", "perseus")


def team_search(n_agents: int):
    """``poisson_search(3.0, 2.0, n_agents=n_agents, team=True)``: 53 x 53 cells (otto-benchmark's
    isotropic-53x53 plume), every searcher at the centre, one belief pooled over the team, the first
    arrival ends the search."""
    from ...scenarios import poisson_search  # here: the registry builds no scenario

    return poisson_search(3.0, 2.0, n_agents=n_agents, team=True)


REFERENCES = ("Vergassola, Villermaux & Shraiman, Nature 445, 406 (2007)",
              "Masson, Bailly Bechet & Vergassola, Chasing information to search in random environments, "
              "J. Phys. A: Math. Theor. 42, 434009 (2009) (cooperative infotaxis)",
              "Loisy & Eloy, Searching for a source without gradients: how good is infotaxis and how to beat it, "
              "Proc. R. Soc. A 478, 20220118 (2022)")


def _uniform(n: int) -> Task:
    return Task(
        id=f"teams/uniform-{n}-v0",
        scenario_factory=functools.partial(team_search, n),
        protocol=Protocol(episodes=1000, max_steps=1000),
        card=(f"{n} searchers start together at the centre of the 53 x 53 Poisson-hit search (at distance r "
              "from the source a searcher's hits per step are Poisson with mean R dt K0(r/lambda)/ln(2 lambda), "
              "lambda = 3 cells, R dt = 2, the plume of otto-benchmark's isotropic-53x53 case; the source uniform over the other cells) and pool their "
              "hits into one posterior of the source's cell. Every searcher runs the evaluated policy; the "
              "first to reach the source ends the search (1000 steps at most). Success and time are the "
              "first arrival's."),
        references=REFERENCES,
        baselines=BELIEF_BASELINES,
    )


def _mixed(n: int) -> Task:
    partners = tuple((k, PARTNER) for k in range(1, n, 2))
    return Task(
        id=f"teams/mixed-{n}-v0",
        scenario_factory=functools.partial(team_search, n),
        protocol=Protocol(episodes=1000, max_steps=1000),
        card=(f"The team search of teams/uniform-{n}-v0, with half the team fixed: the searchers of odd "
              f"index (1, 3, ...) move greedily toward the most likely source cell of the shared belief, and "
              f"the evaluated policy drives the searchers of even index (0, 2, ...). They decide in index "
              "order, each on the shared belief updated as if the earlier ones had moved and received their "
              "most likely hits: how well a policy plays with teammates it does not control. The first "
              "arrival ends the search (1000 steps at most)."),
        references=REFERENCES,
        baselines=BELIEF_BASELINES,
        partners=partners,
    )


TASKS = tuple(_uniform(n) for n in SIZES) + tuple(_mixed(n) for n in SIZES)
