"""Vectorized baseline searchers: functions of observations only (what the agents sense).

Each policy maps ``obs`` (M, D) float32 to actions (M,) int64 for M agents at once, keeping its
own per-agent memory in arrays. They serve the demo, the benchmarks and as baselines for RL.
"""

from __future__ import annotations

import numpy as np

from ..checks import check_real, is_int
from ..errors import ValidationError

__all__ = ["RandomPolicy", "RandomBoxPolicy", "GradientClimber"]


class RandomPolicy:
    """Uniformly random actions."""

    def __init__(self, n_actions: int = 4, seed=None):
        self.n_actions = int(n_actions)
        self.rng = np.random.default_rng(seed)

    def reset(self, mask=None) -> None:
        """No memory to clear."""

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return self.rng.integers(0, self.n_actions, size=len(obs), dtype=np.int64)


class RandomBoxPolicy:
    """Uniformly random continuous actions: each row uniform in ``[low, high]`` (e.g. a
    ``Continuous`` body's ``(speed, turn)`` box); returns ``(M, len(low))`` float64."""

    def __init__(self, low, high, seed=None):
        self.low = np.asarray(low, dtype=np.float64)
        self.high = np.asarray(high, dtype=np.float64)
        if self.low.shape != self.high.shape or self.low.ndim != 1 or not (self.low <= self.high).all():
            raise ValueError(f"low, high: got {self.low} and {self.high}; expected 1-d arrays with low <= high")
        self.rng = np.random.default_rng(seed)

    def reset(self, mask=None) -> None:
        """No memory to clear."""

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return self.rng.uniform(self.low, self.high, size=(len(obs), len(self.low)))


class GradientClimber:
    """Run-and-tumble chemotaxis on the sensed concentration (column 0 of the observation).

    Each agent keeps moving in its current direction while the concentration it senses rises;
    when it falls (or stays flat), it turns to a random direction. With probability ``explore``
    it turns at random anyway, so it does not get stuck against a wall.

    On a 2-D ``Continuous`` body (``scenario=`` given) the same rule flies: ``(max_speed, 0)``
    (straight on) while the concentration rises, a turn drawn uniformly in
    ``[-max_turn_degrees, max_turn_degrees]`` when it does not (or with probability ``explore``);
    actions are then ``(M, 2)`` float64. A 3-D continuous body (velocities) is refused.

    Args:
        n_actions: size of the action set (4 for ``"cardinal"``), >= 2.
        explore: probability of a random turn at each step.
        seed: seeds the policy's own generator.
        scenario: optional; the scenario it acts in, whose body's discrete moves it picks among
            (``n_actions`` is then taken from it), or whose 2-D continuous body it flies.
    """

    def __init__(self, n_actions: int | None = 4, explore: float = 0.1, seed=None, *, scenario=None):
        self._flight = None  # (max_speed, max_turn_degrees) on a continuous body
        if scenario is not None:
            body = scenario.action_model
            if body.continuous:
                if scenario.dims != 2:
                    raise ValidationError(
                        f"GradientClimber: the scenario's body {body.name} takes 3-D velocities; GradientClimber "
                        "turns a 2-D continuous body or picks among a grid body's discrete moves: use "
                        "policies.RandomBoxPolicy for this one")
                self._flight = (float(body.max_speed), float(body.max_turn_degrees))
                n_actions = 2
            else:
                n_actions = body.n_actions
        if not is_int(n_actions) or n_actions < 2:
            raise ValidationError(f"GradientClimber.n_actions: got {n_actions!r}; expected an integer >= 2 (the "
                                  "discrete moves of a grid body; a continuous body has none)")
        self.n_actions = int(n_actions)
        self.explore = check_real("GradientClimber", "explore", explore, 0.0, 1.0)
        self.rng = np.random.default_rng(seed)
        self._last = None
        self._heading = None

    def reset(self, mask=None) -> None:
        """Forget the memory of all agents, or of those where ``mask`` (M,) is True."""
        if mask is None or self._last is None:
            self._last = None
            return
        self._last[mask] = -1.0

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        conc = np.asarray(obs)[:, 0]
        m = len(conc)
        if self._last is None or len(self._last) != m:
            self._last = np.full(m, -1.0, dtype=np.float32)
            self._heading = self.rng.integers(0, self.n_actions, size=m, dtype=np.int64)
        worse = conc <= self._last
        turn = worse | (self.rng.random(m) < self.explore)
        self._last[:] = conc
        if self._flight is not None:
            speed, max_turn = self._flight
            angle = np.where(turn, self.rng.uniform(-max_turn, max_turn, size=m), 0.0)
            return np.stack([np.full(m, speed), angle], axis=1)
        self._heading[turn] = self.rng.integers(0, self.n_actions, size=int(turn.sum()), dtype=np.int64)
        return self._heading.copy()
