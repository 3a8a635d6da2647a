"""Plume following: a Gaussian plume whose source is drawn anew at every episode."""

from __future__ import annotations

from ..task import Protocol, Task

__all__ = ["TASKS"]


def plume_following():
    """``scenarios.plume_following()`` (imported on first use: the registry builds no scenario)."""
    from ...scenarios import plume_following as make

    return make()


TASKS = (
    Task(
        id="following/gaussian-random-source-v0",
        scenario_factory=plume_following,
        protocol=Protocol(episodes=1000, max_steps=200),
        card=("One searcher on a 32 x 32 grid follows a static Gaussian plume (spread 8 cells) to its source, "
              "drawn uniformly at random at every episode, as is the start cell. It senses the concentration "
              "at its cell and at the four neighbouring cells, not where it is: no map helps, the policy must "
              "climb the plume. Cardinal moves; success is reaching the source within 200 steps "
              "(scenarios.plume_following). The task the learned baselines (PPO with an MLP or a GRU, "
              "plume_multi.train) are trained on, the chemotaxis setting of gradient climbing."),
        references=("Berg & Brown, Chemotaxis in Escherichia coli analysed by three-dimensional tracking, "
                    "Nature 239, 500 (1972)",
                    "Vergassola, Villermaux & Shraiman, 'Infotaxis' as a strategy for searching without "
                    "gradients, Nature 445, 406 (2007) (the gradient-climbing regime it contrasts with)"),
        baselines=("random", "gradient", "infotaxis", "space-aware-infotaxis", "greedy", "perseus"),
    ),
)
