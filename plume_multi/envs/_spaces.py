"""Gymnasium spaces of a scenario, shared by the front-ends."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from ..scenario import Scenario

__all__ = ["action_space", "observation_box", "has_move_table", "MODEL_OPTIONS"]

# Scenario keywords every front-end passes through as they are.
MODEL_OPTIONS = ("plume", "sensors", "reward", "start_region", "walls")


def action_space(sc: Scenario) -> spaces.Space:
    """``Discrete(K)`` for grid bodies (K in the scenario's dimension: 6 for ``Cardinal`` in 3-D),
    ``Box(low, high, float32)`` for a continuous one (``(speed, turn)``; in 3-D ``(vx, vy, vz)``)."""
    if sc.continuous:
        low, high = sc.action_bounds()
        return spaces.Box(low, high, dtype=np.float32)
    return spaces.Discrete(sc.n_actions)


def observation_box(sc: Scenario) -> spaces.Box:
    """The per-agent observation: the sensors' columns with their bounds."""
    low, high = sc.observation_bounds()
    return spaces.Box(low, high, dtype=np.float32)


def has_move_table(sc: Scenario) -> bool:
    """The body moves by a displacement table (cardinal, moore): action masks are exact."""
    return hasattr(sc.action_model, "moves")
