"""Vectorized baseline searchers: functions of observations only (what the agents sense).

Each policy maps ``obs`` (M, D) float32 to actions (M,) int64 for M agents at once, keeping its
own per-agent memory in arrays. They serve the demo, the benchmarks and as baselines for RL.
"""

from __future__ import annotations

import numpy as np

from ..models.base import Need
from ..checks import check_int, check_real, check_seed, fail, is_int, shown
from ..errors import ValidationError

__all__ = ["RandomPolicy", "RandomBoxPolicy", "GradientClimber"]

MAX_ACTIONS = 2**31 - 1
MAX_SEED = 2**63 - 1
BOX_LIMIT = 1e300  # a box's bounds: their difference must stay finite for the draws


def _generator(owner: str, seed) -> np.random.Generator:
    """The policy's own generator: ``seed`` None or an integer in ``0..2**63 - 1``."""
    return np.random.default_rng(check_seed(seed, max_seed=MAX_SEED, name=f"{owner}.seed"))


def _observations(owner: str, obs) -> np.ndarray:
    """``obs`` as a ``(M, D)`` real array, ``D >= 1`` (one row per agent), or our error."""
    arr = obs if isinstance(obs, np.ndarray) else None
    if arr is None:
        try:
            arr = np.asarray(obs)
        except (TypeError, ValueError):
            arr = None
    if arr is None or arr.ndim != 2 or arr.shape[1] < 1 or arr.dtype.kind not in "iuf":
        got = f"an array of shape {arr.shape} dtype {arr.dtype}" if arr is not None else shown(obs, typed=True)
        raise ValidationError(f"{owner}: obs: got {got}; expected a real (M, D) array, one row of D >= 1 "
                              "observation columns per agent")
    return arr


class RandomPolicy:
    """Uniformly random actions.

    Args:
        n_actions: the number of discrete actions, an integer >= 1; actions are drawn in
            ``0..n_actions - 1``.
        seed: ``None`` or an integer in ``0..2**63 - 1``: seeds the policy's own generator.
    """

    # what it works with (plume_multi.capabilities): every grid body, anywhere
    dimensions = (2, 3)
    needs = (Need("body", lambda body: not body.continuous, "a grid body (discrete actions)",
                  "it draws action indices; policies.RandomBoxPolicy draws a continuous body's"),)

    def __init__(self, n_actions: int = 4, seed=None):
        self.n_actions = check_int("RandomPolicy", "n_actions", n_actions, 1, MAX_ACTIONS)
        self.rng = _generator("RandomPolicy", seed)

    def reset(self, mask=None) -> None:
        """No memory to clear."""

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        m = _observations("RandomPolicy", obs).shape[0]
        return self.rng.integers(0, self.n_actions, size=m, dtype=np.int64)


def _bound(name: str, value) -> np.ndarray:
    expected = f"a 1-D sequence of finite numbers within +-{BOX_LIMIT:g} (one per action column)"
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        fail("RandomBoxPolicy", name, value, expected)
    if arr.ndim != 1 or arr.size < 1 or arr.dtype.kind not in "iuf":
        fail("RandomBoxPolicy", name, value, expected)
    arr = arr.astype(np.float64)
    if not (np.isfinite(arr).all() and (np.abs(arr) <= BOX_LIMIT).all()):
        fail("RandomBoxPolicy", name, value, expected)
    return arr


class RandomBoxPolicy:
    """Uniformly random continuous actions: each row uniform in ``[low, high]`` (e.g. a
    ``Continuous`` body's ``(speed, turn)`` box); returns ``(M, len(low))`` float64.

    Args:
        low, high: 1-D sequences of the same length of finite numbers (within +-1e300), with
            ``low <= high`` entry by entry.
        seed: ``None`` or an integer in ``0..2**63 - 1``.
    """

    dimensions = (2, 3)
    needs = (Need("body", "continuous", "a continuous body", "it draws points of a box of actions"),)

    def __init__(self, low, high, seed=None):
        self.low = _bound("low", low)
        self.high = _bound("high", high)
        if self.low.shape != self.high.shape:
            fail("RandomBoxPolicy", "high", high, f"{self.low.size} numbers, as many as low {self.low.tolist()}")
        if not (self.low <= self.high).all():
            fail("RandomBoxPolicy", "high", high, f"numbers >= low {self.low.tolist()}, entry by entry")
        self.rng = _generator("RandomBoxPolicy", seed)

    def reset(self, mask=None) -> None:
        """No memory to clear."""

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        m = _observations("RandomBoxPolicy", obs).shape[0]
        return self.rng.uniform(self.low, self.high, size=(m, len(self.low)))


def _directions() -> tuple:
    from ..models.bodies import Cardinal, Continuous

    return Cardinal, Continuous  # Moore is a Cardinal


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

    dimensions = (2, 3)  # a 3-D continuous body (velocities) is refused at construction
    needs = (Need("body", lambda body: issubclass(body, _directions()),
                  "a body of cardinal or moore moves, or a continuous one", "it keeps or turns a direction"),)

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
        self.rng = _generator("GradientClimber", seed)
        self._last = None
        self._heading = None

    def reset(self, mask=None) -> None:
        """Forget the memory of all agents, or of those where ``mask`` (M,) is True."""
        if mask is None or self._last is None:
            self._last = None
            return
        self._last[mask] = -1.0

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """Actions for ``obs`` ``(M, D)``, a real array whose column 0 (the concentration) is finite."""
        conc = _observations("GradientClimber", obs)[:, 0]
        if not np.isfinite(conc).all():
            row = int(np.flatnonzero(~np.isfinite(conc))[0])
            raise ValidationError(f"GradientClimber: obs[{row}, 0]: got {float(conc[row])!r}; expected a finite concentration "
                                  "in column 0 of every row (a NaN compares as 'worse' and turns the agent at random)")
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
