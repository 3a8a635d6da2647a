"""otto-benchmark's four cases, and the 3-D Poisson-hit search."""

from __future__ import annotations

import functools

from ..task import Protocol, Task

__all__ = ["TASKS", "poisson_search_3d"]

BASELINES = ("infotaxis", "space-aware-infotaxis", "greedy", "random", "perseus")
REFERENCES = ("Loisy & Heinonen, Deep reinforcement learning for the olfactory search POMDP: a quantitative "
              "benchmark, Eur. Phys. J. E 46, 17 (2023) (otto-benchmark)",
              "Loisy & Eloy, Searching for a source without gradients: how good is infotaxis and how to beat it, "
              "Proc. R. Soc. A 478, 20220118 (2022) (otto; space-aware infotaxis)",
              "Vergassola, Villermaux & Shraiman, 'Infotaxis' as a strategy for searching without gradients, "
              "Nature 445, 406 (2007)")
WHAT = {
    "isotropic-19x19": "isotropic Poisson hits on 19 x 19 cells (lambda = 1 cell, R dt = 1, 3 hit values)",
    "isotropic-53x53": "isotropic Poisson hits on 53 x 53 cells (lambda = 3 cells, R dt = 2, 4 hit values)",
    "windy-medium-detections": ("hits in a mean wind on 81 x 41 cells (R = 2.5, V = 2, tau = 150), the searcher "
                                "starting at (65, 20), downwind of most sources"),
    "windy-low-detections": ("hits in a mean wind on 81 x 41 cells (R = 0.25: ten times fewer detections, V = 2, "
                             "tau = 150), the searcher starting at (65, 20)"),
}


# Each case's step cap, otto-benchmark's STOP_t: scenarios.otto_benchmark_max_steps of the case's plume
# (tests/tasks/test_registry.py checks them). Written out because computing them builds the plume
# (SciPy's Poisson law on its domain), which ``import plume_multi``, reading the registry, must not.
STOP_T = {"isotropic-19x19": 642, "isotropic-53x53": 2188, "windy-medium-detections": 10000,
          "windy-low-detections": 10000}


def _otto_scenario(case: str):
    """``scenarios.otto_benchmark(case)`` (imported on first use: the registry builds no scenario)."""
    from ...scenarios import otto_benchmark

    return otto_benchmark(case)


def _otto(case: str) -> Task:
    cap = STOP_T[case]
    return Task(
        id=f"otto/{case}-v0",
        scenario_factory=functools.partial(_otto_scenario, case),
        protocol=Protocol(episodes=1000, max_steps=cap),
        card=(f"otto-benchmark's {case} case, its POMDP exactly: {WHAT[case]}. One searcher, cardinal moves; "
              "each episode's source is drawn from the belief after the first hit (otto-benchmark's draw), "
              "and the searcher observes the hits of each step and carries the Bayesian posterior of the "
              f"source's cell. Success: stepping onto the source within {cap} steps (the case's STOP_t). "
              "Scored here on the engine's episodes (first arrival, failures at the cap), not with otto's "
              "stopping rules on the posterior (policies.infotaxis.run_search with "
              "scenarios.otto_benchmark_protocol reproduces those)."),
        references=REFERENCES,
        baselines=BASELINES,
    )


def poisson_search_3d():
    """``poisson_search(1.0, 2.0, dims=3)``: isotropic Poisson hits in a cube, the searcher at its centre."""
    from ...scenarios import poisson_search

    return poisson_search(1.0, 2.0, dims=3)


TASKS = tuple(_otto(case) for case in STOP_T) + (
    Task(
        id="otto/isotropic-3d-v0",
        scenario_factory=poisson_search_3d,
        protocol=Protocol(episodes=1000, max_steps=1000),
        card=("The infotaxis POMDP in three dimensions: a source in a cube of cells, hits per step Poisson with "
              "the 3-D mean law of Vergassola et al. (lambda = 1 cell, R dt = 2), the searcher starting at the "
              "centre and moving to one of its six face neighbours; it observes its hits and carries the "
              "posterior over the cube. Success: stepping onto the source within 1000 steps."),
        references=REFERENCES,
        baselines=BASELINES,
    ),
)
