"""Plume following: a Gaussian plume whose source is drawn anew at every episode."""

from __future__ import annotations

from ...models.plumes import Gaussian
from ...models.sensors import Antennae, Concentration
from ...scenario import Scenario
from ..task import Protocol, Task

__all__ = ["TASKS", "gaussian_random_source"]


def gaussian_random_source() -> Scenario:
    """32 x 32 cells, ``Gaussian(source="random", sigma=8)``; the searcher senses the
    concentration at its cell and at the four cells next to it (in the order of the cardinal
    moves), not its position; cardinal moves."""
    return Scenario(grid_size=(32, 32), plume=Gaussian(source="random", sigma=8.0),
                    sensors=(Concentration(), Antennae(angles=(90.0, 0.0, 270.0, 180.0), distance=1.0)))


TASKS = (
    Task(
        id="following/gaussian-random-source-v0",
        scenario_factory=gaussian_random_source,
        protocol=Protocol(episodes=1000, max_steps=200),
        card=("One searcher on a 32 x 32 grid follows a static Gaussian plume (spread 8 cells) to its source, "
              "drawn uniformly at random at every episode, as is the start cell. It senses the concentration "
              "at its cell and at the four neighbouring cells, not where it is: no map helps, the policy must "
              "climb the plume. Cardinal moves; success is reaching the source within 200 steps. The "
              "plume-following task of the learned baselines (PPO with an MLP or a GRU), the chemotaxis "
              "setting of gradient climbing and run-and-tumble."),
        references=("Berg & Brown, Chemotaxis in Escherichia coli analysed by three-dimensional tracking, "
                    "Nature 239, 500 (1972)",
                    "Vergassola, Villermaux & Shraiman, 'Infotaxis' as a strategy for searching without "
                    "gradients, Nature 445, 406 (2007) (the gradient-climbing regime it contrasts with)"),
        baselines=("random", "gradient"),
    ),
)
