"""Puff plumes: a searcher flying up a turbulent plume of odour puffs in a meandering wind."""

from __future__ import annotations

import functools

from ..task import Protocol, Task

__all__ = ["TASKS", "puff_search"]

SPIN_UP = 3000  # plume steps (30 s) before each episode, so the plume fills the domain


def puff_search(**wind) -> Scenario:
    """The puff plume of ``examples/surge_cast.py``: pompy's default plume on 200 x 100 cells
    (cells of 0.25 length units, dt 0.01 s, 30 s of spin-up), a searcher that flies
    (``Continuous``, 0.2 cells per step, turns of 30 degrees at most) with a concentration sensor,
    two antennae 30 degrees off its heading and a wind sensor, starting 12-25 length units downwind."""
    from ...models.bodies import Continuous  # here: the registry builds no scenario
    from ...models.plumes import Puffs, Wind
    from ...models.sensors import Antennae, Concentration
    from ...models.sensors import Wind as WindSensor
    from ...scenario import Scenario

    return Scenario(
        grid_size=(200, 100), plume=Puffs(source=(10, 50), wind=Wind(**wind), spin_up_steps=SPIN_UP),
        action_model=Continuous(max_speed=0.2, max_turn_degrees=30.0),
        sensors=(Concentration(), Antennae(angles=(30.0, -30.0), distance=1.0), WindSensor()),
        goal_radius=4.0, start_region=((60, 35), (110, 65)))


REFERENCES = ("Farrell, Murlis, Long, Li & Carde, Filament-based atmospheric dispersion model to achieve short "
              "time-scale structure of odor plumes, Environmental Fluid Mechanics 2, 143 (2002) (pompy's model)",
              "Kennedy & Marsh, Pheromone-regulated anemotaxis in flying moths, Science 184, 999 (1974); "
              "Kennedy, Zigzagging and casting as a programmed response to wind-borne odour: a review, "
              "Physiological Entomology 8, 109 (1983) (surge and cast)",
              "Singh, van Breugel, Rao & Brunton, Emergent behaviour and neural dynamics in artificial agents "
              "tracking odour plumes, Nature Machine Intelligence 5, 58 (2023) (the wind regimes)")
CARD = ("One searcher flies up a plume of odour puffs released at (10, 50) on a 200 x 100 grid and carried by "
        "a meandering wind along +x (Farrell et al.'s filament model, as pompy computes it; 30 s of spin-up "
        "before each episode). It starts 12-25 length units downwind, flies at 0.2 cells per step turning "
        "at most 30 degrees a step, and senses the concentration at its position and at two antennae, and "
        "the wind. Success: within 4 cells of the source in {steps} steps. {regime}")

REGIMES = {
    "constant": "The wind keeps its mean direction (Singh et al.'s constant regime).",
    "switch-once": ("The wind turns once by 45 degrees, 0-30 s before the episode begins (Singh et al.'s "
                    "switch-once regime: the plume the searcher meets still bends)."),
    "switch-many": ("Every 3 +- 0.3 s the wind takes a new direction, drawn from N(0, 30 degrees) clipped to "
                    "+-60 degrees (Singh et al.'s switch-many regime)."),
    "sparse": ("The wind keeps its direction but puffs are released at 0.4 times the rate (Singh et al.'s "
               "sparse regime: long blanks between whiffs)."),
}


def _regime(regime: str) -> Task:
    return Task(
        id=f"puffs/{regime}-v0",
        scenario_factory=functools.partial(puff_search, regime=regime),
        # 250 episodes: a success rate within +-6 points (Wilson 95 %); each world runs 3000 spin-up
        # steps and, failing, 2000 more, so the four regimes x three baselines take 330 s of the
        # benchmark table (1422 s), and would take twice that at 500
        protocol=Protocol(episodes=250, max_steps=2000),
        card=CARD.format(steps=2000, regime=REGIMES[regime]),
        references=REFERENCES,
        baselines=("random", "gradient", "surge-cast"),
    )


TASKS = tuple(_regime(regime) for regime in REGIMES)
