"""Pursuit: the Poisson-hit search of a target that moves."""

from __future__ import annotations

from ..task import Protocol, Task

__all__ = ["TASKS", "random_walk_pursuit"]


def random_walk_pursuit():
    """``poisson_search(1.0, 2.0, source_motion=RandomWalk(speed=0.5, persistence=10))``: 19 x 19
    cells, a target stepping one cell along its heading half the steps, turning every 10 steps on
    average."""
    from ...models.sources import RandomWalk  # here: the registry builds no scenario
    from ...scenarios import poisson_search

    return poisson_search(1.0, 2.0, source_motion=RandomWalk(speed=0.5, persistence=10.0))


TASKS = (
    Task(
        id="pursuit/poisson-random-walk-v0",
        scenario_factory=random_walk_pursuit,
        protocol=Protocol(episodes=1000, max_steps=300),
        card=("The 19 x 19 Poisson-hit search (lambda = 1 cell, R dt = 2; one searcher from the centre) with a "
              "target that moves: at each step it takes one cell along its heading with probability 0.5 and "
              "turns to a new cardinal heading with probability 1/10, reflecting at the edges. The hits "
              "follow the target where it is; the belief sensor predicts its walk before each update (a "
              "Bayes filter), and the belief searchers decide one step ahead. Success: standing on the "
              "target's cell within 300 steps."),
        references=("Vergassola, Villermaux & Shraiman, Nature 445, 406 (2007)",
                    "Loisy & Eloy, Proc. R. Soc. A 478, 20220118 (2022)",
                    "Thrun, Burgard & Fox, Probabilistic Robotics, MIT Press (2005) (the Bayes filter of a "
                    "moving target)"),
        baselines=("infotaxis", "space-aware-infotaxis", "greedy", "random"),
    ),
)
