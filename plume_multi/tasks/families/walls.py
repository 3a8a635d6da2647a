"""Walls: a plume search among solid cells."""

from __future__ import annotations

import numpy as np

from ..task import Protocol, Task

__all__ = ["TASKS", "baffles", "baffled_search"]

SIZE = (48, 32)  # (width, height)
SOURCE = (42, 16)


def baffles() -> np.ndarray:
    """``(32, 48)`` bool mask, True where solid: three walls across the grid, at x = 12, 24 and 34,
    leaving a gap of 10 cells at the top, the bottom and the top again (a zigzag corridor)."""
    w, h = SIZE
    mask = np.zeros((h, w), dtype=np.bool_)
    mask[0:22, 12] = True   # gap at the top (y 22..31)
    mask[10:32, 24] = True  # gap at the bottom (y 0..9)
    mask[0:22, 34] = True
    return mask


def baffled_search() -> Scenario:
    """The plume-following searcher of ``following/gaussian-random-source-v0`` among ``baffles()``,
    the source fixed at (42, 16) behind the last wall, starts drawn on free cells."""
    from ...models.plumes import Gaussian  # here: the registry builds no scenario
    from ...models.sensors import Antennae, Concentration
    from ...scenario import Scenario

    return Scenario(grid_size=SIZE, plume=Gaussian(source=SOURCE, sigma=10.0), walls=baffles(),
                    sensors=(Concentration(), Antennae(angles=(90.0, 0.0, 270.0, 180.0), distance=1.0)))


TASKS = (
    Task(
        id="walls/gaussian-baffles-v0",
        scenario_factory=baffled_search,
        protocol=Protocol(episodes=1000, max_steps=400),
        card=("One searcher on a 48 x 32 grid crossed by three walls (at x = 12, 24 and 34, each leaving a "
              "10-cell gap at alternate ends: a zigzag corridor) looks for the source of a static Gaussian "
              "plume (spread 10 cells) at (42, 16), behind the last wall. The plume spreads as if the walls "
              "were not there, but nothing is sensed inside a wall and no move enters one: climbing the "
              "gradient leads into walls, and the way round goes down it. It senses the concentration at "
              "its cell and at the four cells next to it, not its position; starts are drawn on free cells; "
              "cardinal moves; success is reaching the source within 400 steps."),
        references=("Berg & Brown, Nature 239, 500 (1972) (gradient climbing)",
                    "Reddy, Murthy & Vergassola, Olfactory sensing and navigation in turbulent environments, "
                    "Annu. Rev. Condens. Matter Phys. 13, 191 (2022) (search among obstacles)"),
        baselines=("random", "gradient", "infotaxis", "space-aware-infotaxis", "greedy"),
    ),
)
