"""``SurgeCast``: surge upwind on a whiff, cast crosswind when the odour is lost (moth flight)."""

from __future__ import annotations

import numpy as np

from ..models.base import Need
from ..checks import check_int, check_real, shown
from ..errors import ValidationError

__all__ = ["SurgeCast", "ODOUR_COLUMNS"]

# Observation columns read as odour: the largest of an agent's readings is compared with the threshold.
ODOUR_COLUMNS = ("concentration", "detection", "hits")  # and every "antenna_<j>"
FAR = 10 ** 6  # "steps since the last whiff" before any whiff


def _wrap(degrees):
    return (degrees + 180.0) % 360.0 - 180.0


def _steerable() -> tuple:
    from ..models.bodies import Cardinal, Continuous, Oriented

    return Cardinal, Continuous, Oriented  # Moore is a Cardinal (RunTumble tumbles at random)


def _odour_sensors() -> tuple:
    from ..models.sensors import Antennae, Binary, Concentration, Hits

    return Antennae, Binary, Concentration, Hits


class SurgeCast:
    """The surge-and-cast rule, after Kennedy's and Baker's descriptions of moth flight, for every
    agent at once (a callable ``obs (M, D) -> actions``, with per-row memory).

    * A whiff (an odour reading above ``threshold``) starts a surge: head upwind, and (oriented
      bodies with ``sensors.Antennae``) ``steer`` degrees towards the side whose antennae smell
      more, for ``surge`` steps after the last whiff.
    * Without one, cast: head ``cast_angle`` degrees off upwind (crosswind and a little upwind),
      on one side, then the other; the first leg lasts ``cast`` steps, each later one a quarter
      longer, up to twice the first.

    What it reads (by the names of ``scenario.observation_layout``):

    * odour, at least one of: ``sensors.Concentration`` (``concentration``), ``Antennae``
      (``antenna_<j>``), ``Binary`` (``detection``), ``Hits`` (``hits``): the largest is the reading;
    * upwind: ``sensors.Wind`` (in the body's frame for bodies with a heading, else the grid's), or,
      without one, ``upwind=`` (degrees, grid frame, where the wind comes from); bodies with a
      heading then also need ``sensors.Heading`` to turn it into their own frame.

    What it does per body: ``Continuous`` flies at ``max_speed`` and turns toward the chosen
    direction (clipped to ``max_turn_degrees``); ``Oriented`` goes forward when the direction is
    within half a turn of its heading, else turns toward it; ``Cardinal`` / ``Moore`` take the
    move closest in angle to the direction (ties to the lowest action). ``RunTumble`` cannot turn
    to a chosen direction and is refused, as are scenarios missing what is listed above: a
    ``ValidationError`` at construction naming what is missing.

    Args:
        scenario: the ``Scenario`` whose observations the policy reads.
        threshold: odour reading above which a whiff counts (units of the plume's concentration).
        surge: steps of surge after a whiff, >= 1.
        cast: steps of the first casting leg, >= 1.
        cast_angle: degrees off upwind when casting, in [0, 180].
        steer: degrees toward the antenna side that smells more during a whiff, in [0, 180]
            (on an ``Oriented`` body keep it under half a turn, or the agent turns on the spot).
        upwind: None (read ``sensors.Wind``) or the grid-frame direction, degrees (0 = +x,
            90 = +y), the wind comes from; when given it is used even beside a wind sensor.
        seed: draws each agent's first casting side.

    Example:
        >>> from plume_multi import Scenario, Simulator, bodies, sensors
        >>> sc = Scenario(action_model=bodies.Oriented(turn_degrees=45), sensors=(sensors.Concentration(),
        ...               sensors.Wind(), sensors.Heading()), n_agents=4)
        >>> policy = SurgeCast(sc, threshold=0.3)
    """

    # what it works with (plume_multi.capabilities); its wind (a sensor or upwind=) is checked at construction
    dimensions = (2,)  # directions in the plane: upwind and crosswind angles
    needs = (Need("body", lambda body: issubclass(body, _steerable()), "a body it can steer (Continuous, Oriented, "
                  "Cardinal, Moore)", "it turns to a chosen direction"),
             Need("sensor", lambda sensor: issubclass(sensor, _odour_sensors()), "an odour reading (sensors."
                  "Concentration, Antennae, Binary or Hits)", "a whiff starts a surge"))

    def __init__(self, scenario, *, threshold: float = 0.5, surge: int = 60, cast: int = 80,
                 cast_angle: float = 75.0, steer: float = 15.0, upwind: float | None = None, seed: int = 0):
        from ..models.bodies import Continuous, Oriented, RunTumble
        from ..models.sensors import Antennae
        from ..scenario import Scenario

        if not isinstance(scenario, Scenario):
            raise ValidationError(f"SurgeCast.scenario: got {shown(scenario, typed=True)}; expected a plume_multi.Scenario")
        self.threshold = check_real("SurgeCast", "threshold", threshold)
        self.surge = check_int("SurgeCast", "surge", surge, 1, 2**31 - 1)
        self.cast = check_int("SurgeCast", "cast", cast, 1, 2**31 - 1)
        self.cast_angle = check_real("SurgeCast", "cast_angle", cast_angle, 0.0, 180.0)
        self.steer = check_real("SurgeCast", "steer", steer, 0.0, 180.0)
        self.upwind = None if upwind is None else check_real("SurgeCast", "upwind", upwind, -1e6, 1e6)
        self.seed = seed
        self.scenario = scenario
        body = scenario.action_model
        layout = scenario.observation_layout
        col = {name: k for k, name in enumerate(layout)}
        self._odour = [k for k, name in enumerate(layout) if name in ODOUR_COLUMNS or name.startswith("antenna_")]
        if not self._odour:
            raise ValidationError(f"SurgeCast: the scenario's sensors {[s.name for s in scenario.sensors]} give no "
                                  "odour reading; expected one of sensors.Concentration, Antennae, Binary or Hits")
        if isinstance(body, RunTumble):
            raise ValidationError(f"SurgeCast: the body {body.name} cannot turn to a chosen direction (it runs, or "
                                  "tumbles at random); expected Continuous, Oriented, Cardinal or Moore")
        if isinstance(body, Continuous):
            self._mode = "continuous"
        elif isinstance(body, Oriented):
            self._mode = "oriented"
        elif hasattr(body, "moves") and not body.oriented:
            self._mode = "moves"
            moves = np.asarray(scenario.moves(), dtype=np.float64)
            self._move_dirs = moves / np.maximum(np.hypot(moves[:, 0], moves[:, 1]), 1e-300)[:, None]
            self._still = ~np.any(moves != 0, axis=1)  # "stay": never a direction
        else:
            raise ValidationError(f"SurgeCast: the body {body.name} is not one it can steer; expected Continuous, "
                                  "Oriented, Cardinal or Moore")
        self._oriented = self._mode != "moves"
        wind = ("wind_forward", "wind_left") if self._oriented else ("wind_u", "wind_v")
        self._wind = [col[w] for w in wind] if all(w in col for w in wind) else None
        self._heading = [col["heading_cos"], col["heading_sin"]] if "heading_cos" in col else None
        if self.upwind is None and self._wind is None:
            raise ValidationError("SurgeCast: the scenario has no sensors.Wind to tell upwind; add one, or pass "
                                  "upwind=DEGREES (the grid-frame direction the wind comes from)")
        if self.upwind is not None and self._oriented and self._heading is None:
            raise ValidationError(f"SurgeCast: upwind={self.upwind:g} is in the grid's frame and the body {body.name} "
                                  "steers in its own: add sensors.Heading() to the scenario (or use sensors.Wind())")
        # steering toward the stronger side: sin of each antenna's angle (left positive), bodies with a heading
        self._antennae, self._sides = [], []
        if self._oriented:
            for sensor in scenario.sensors:
                if isinstance(sensor, Antennae):
                    for j, angle in enumerate(sensor.angles):
                        self._antennae.append(col[f"antenna_{j}"])
                        self._sides.append(np.sin(np.radians(angle)))
        self._sides = np.array(self._sides)
        self._memory = None

    def reset(self, mask=None) -> None:
        """Forget the whiffs and casts of every row, or of the rows where ``mask`` (M,) is True
        (each keeps its casting side)."""
        if self._memory is None:
            return
        rows = slice(None) if mask is None else np.asarray(mask, dtype=np.bool_)
        self._memory["since_hit"][rows] = FAR
        self._memory["cast_left"][rows] = self.cast
        self._memory["flips"][rows] = 0

    def _fresh(self, m: int) -> dict:
        return {"since_hit": np.full(m, FAR), "side": np.random.default_rng(self.seed).choice([-1.0, 1.0], m),
                "cast_left": np.full(m, self.cast), "flips": np.zeros(m, dtype=np.int64)}

    def _upwind(self, obs: np.ndarray) -> np.ndarray:
        """Upwind, degrees: relative to the heading (bodies with one) or in the grid's frame."""
        if self.upwind is not None:
            if not self._oriented:
                return np.full(len(obs), self.upwind)
            heading = np.degrees(np.arctan2(obs[:, self._heading[1]], obs[:, self._heading[0]]))
            return _wrap(self.upwind - heading)
        return np.degrees(np.arctan2(-obs[:, self._wind[1]], -obs[:, self._wind[0]]))

    def __call__(self, obs) -> np.ndarray:
        """Actions of the M rows of ``obs`` ``(M, D)``: ``(M, 2)`` float64 ``(speed, turn)`` for
        ``Continuous``, else ``(M,)`` int64."""
        obs = np.asarray(obs, dtype=np.float64)
        d = len(self.scenario.observation_layout)
        if obs.ndim != 2 or obs.shape[1] != d:
            raise ValidationError(f"SurgeCast: obs has shape {obs.shape}; expected (M, {d}), the scenario's layout")
        m = obs.shape[0]
        if self._memory is None or len(self._memory["side"]) != m:
            self._memory = self._fresh(m)
        mem = self._memory
        hit = obs[:, self._odour].max(axis=1) > self.threshold
        mem["since_hit"] = np.where(hit, 0, mem["since_hit"] + 1)
        surging = mem["since_hit"] < self.surge
        mem["cast_left"] -= 1
        flip = ~surging & (mem["cast_left"] <= 0)
        mem["side"] = np.where(flip, -mem["side"], mem["side"])
        mem["flips"] = np.where(surging, 0, mem["flips"] + flip)
        # each leg of a cast a little longer than the last, up to twice the first
        mem["cast_left"] = np.where(surging | flip, self.cast + (self.cast * np.minimum(mem["flips"], 4)) // 4,
                                    mem["cast_left"])
        steer = 0.0
        if len(self._antennae):
            lean = obs[:, self._antennae] @ self._sides  # > 0: the left side smells more
            steer = np.where(hit, self.steer * np.sign(lean), 0.0)
        upwind = self._upwind(obs)
        target = np.where(surging, upwind + steer, upwind + mem["side"] * self.cast_angle)
        return self._actions(_wrap(target))

    def _actions(self, target: np.ndarray):
        body = self.scenario.action_model
        if self._mode == "continuous":
            turn = np.clip(target, -body.max_turn_degrees, body.max_turn_degrees)
            return np.stack([np.full(len(turn), body.max_speed), turn], axis=1)
        if self._mode == "oriented":
            ahead = np.abs(target) <= body.turn_degrees / 2
            return np.where(ahead, 0, np.where(target > 0, 1, 2)).astype(np.int64)
        rad = np.radians(target)
        cos = np.cos(rad)[:, None] * self._move_dirs[:, 0] + np.sin(rad)[:, None] * self._move_dirs[:, 1]
        cos[:, self._still] = -np.inf
        return np.argmax(cos, axis=1).astype(np.int64)
