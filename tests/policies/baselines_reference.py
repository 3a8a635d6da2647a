"""Plain references of the policies of observations (``policies.RandomPolicy``, ``RandomBoxPolicy``,
``GradientClimber``, ``SurgeCast``): one row at a time in Python floats, written from their
docstrings, independently of their vectorized code.

Each reference owns a ``numpy.random.Generator`` seeded as the policy's and takes the same draws in
the same order (the policies' documented use of their generator: one batch of draws per call), so
that the actions can be compared bit for bit; everything done with the draws is plain per-row
Python (``math`` trigonometry, comparisons, loops).

``references(policy)`` gives the reference of a policy built with the same arguments.
"""

from __future__ import annotations

import math

import numpy as np

FAR = 10 ** 6  # SurgeCast's "steps since the last whiff" before any whiff (written out on purpose)


def _wrap(degrees: float) -> float:
    """Degrees into [-180, 180)."""
    return (degrees + 180.0) % 360.0 - 180.0


class RandomRef:
    """``RandomPolicy(n_actions, seed)``: each row a uniform action in ``0..n_actions - 1``, the rows
    drawn in order by one call of the generator's ``integers``."""

    def __init__(self, n_actions, seed):
        self.n = n_actions
        self.rng = np.random.default_rng(seed)

    def reset(self, mask=None):
        pass

    def __call__(self, obs):
        draws = self.rng.integers(0, self.n, size=len(obs), dtype=np.int64)
        return np.array([int(a) for a in draws], np.int64)


class RandomBoxRef:
    """``RandomBoxPolicy(low, high, seed)``: entry ``(r, j)`` is ``low[j] + (high[j] - low[j]) u``,
    ``u`` the generator's uniforms in [0, 1) drawn row-major."""

    def __init__(self, low, high, seed):
        self.low = [float(v) for v in low]
        self.high = [float(v) for v in high]
        self.rng = np.random.default_rng(seed)

    def reset(self, mask=None):
        pass

    def __call__(self, obs):
        k = len(self.low)
        u = self.rng.random((len(obs), k))
        return np.array([[self.low[j] + (self.high[j] - self.low[j]) * float(u[r, j]) for j in range(k)]
                         for r in range(len(obs))], np.float64).reshape(len(obs), k)


class ClimberRef:
    """``GradientClimber``: per row, the last concentration (float32, -1 at first); a row turns when
    its concentration is not above the last one, or when its exploring uniform is below
    ``explore``. A grid body keeps a move index (first drawn for every row) and the turning rows
    draw new ones, in row order; a 2-D continuous body flies ``(max_speed, 0)``, or
    ``(max_speed, angle)`` when it turns, the angles uniform in ``[-max_turn, max_turn]`` drawn for
    every row."""

    def __init__(self, n_actions, explore, seed, flight=None):
        self.n = n_actions
        self.explore = explore
        self.flight = flight  # (max_speed, max_turn_degrees)
        self.rng = np.random.default_rng(seed)
        self.last = None
        self.heading = None

    def reset(self, mask=None):
        if mask is None or self.last is None:
            self.last = None
            return
        for r, forget in enumerate(mask):
            if forget:
                self.last[r] = np.float32(-1.0)

    def __call__(self, obs):
        m = len(obs)
        if self.last is None or len(self.last) != m:
            self.last = [np.float32(-1.0)] * m
            self.heading = [int(a) for a in self.rng.integers(0, self.n, size=m, dtype=np.int64)]
        explore = self.rng.random(m)
        turn = []
        for r in range(m):
            conc = obs[r][0]
            turn.append(bool(conc <= self.last[r]) or float(explore[r]) < self.explore)
            self.last[r] = np.float32(conc)
        if self.flight is not None:
            speed, max_turn = self.flight
            u = self.rng.random(m)  # Generator.uniform(a, b) is a + (b - a) u
            return np.array([[speed, -max_turn + (max_turn + max_turn) * float(u[r]) if turn[r] else 0.0]
                             for r in range(m)], np.float64)
        new = iter(int(a) for a in self.rng.integers(0, self.n, size=sum(turn), dtype=np.int64))
        for r in range(m):
            if turn[r]:
                self.heading[r] = next(new)
        return np.array(self.heading, np.int64)


class SurgeCastRef:
    """``SurgeCast``, row by row (its class docstring): the odour reading is the largest of the odour
    columns; a whiff (reading > threshold) restarts the count of steps since the last one; a row
    surges while that count is below ``surge`` (head upwind, ``steer`` degrees toward the antenna
    side that smells more during a whiff), else casts ``cast_angle`` degrees off upwind on its side,
    the side flipping when a leg's steps run out, each leg ``cast + cast * min(flips, 4) // 4``
    steps. The first sides: ``default_rng(seed).choice([-1, 1], M)``."""

    def __init__(self, policy):
        p = policy  # read its settings and the columns it found by name (not its rule)
        self.threshold, self.surge, self.cast = p.threshold, p.surge, p.cast
        self.cast_angle, self.steer, self.upwind, self.seed = p.cast_angle, p.steer, p.upwind, p.seed
        self.body = p.scenario.action_model
        layout = p.scenario.observation_layout
        col = {name: k for k, name in enumerate(layout)}
        self.odour = [k for k, name in enumerate(layout)
                      if name in ("concentration", "detection", "hits") or name.startswith("antenna_")]
        self.mode = "continuous" if self.body.continuous else ("oriented" if self.body.oriented else "moves")
        wind = ("wind_u", "wind_v") if self.mode == "moves" else ("wind_forward", "wind_left")
        self.wind = [col[w] for w in wind] if all(w in col for w in wind) else None
        self.heading = [col["heading_cos"], col["heading_sin"]] if "heading_cos" in col else None
        self.antennae = []  # (column, sin of its angle: left positive)
        if self.mode != "moves":
            for sensor in p.scenario.sensors:
                for j, angle in enumerate(getattr(sensor, "angles", ()) if sensor.name == "Antennae" else ()):
                    self.antennae.append((col[f"antenna_{j}"], math.sin(math.radians(angle))))
        self.moves = [tuple(float(c) for c in mv) for mv in p.scenario.moves()] if self.mode == "moves" else None
        self.rows = None

    def reset(self, mask=None):
        if self.rows is None:
            return
        for r, row in enumerate(self.rows):
            if mask is None or mask[r]:
                row.update(since=FAR, left=self.cast, flips=0)

    def _upwind(self, o):
        if self.upwind is not None:
            if self.mode == "moves":
                return self.upwind
            return _wrap(self.upwind - math.degrees(math.atan2(o[self.heading[1]], o[self.heading[0]])))
        return math.degrees(math.atan2(-o[self.wind[1]], -o[self.wind[0]]))

    def _action(self, target):
        body = self.body
        if self.mode == "continuous":
            return (float(body.max_speed), min(max(target, -body.max_turn_degrees), body.max_turn_degrees))
        if self.mode == "oriented":
            return 0 if abs(target) <= body.turn_degrees / 2 else (1 if target > 0 else 2)
        rad = math.radians(target)
        best, best_cos = None, -math.inf
        for a, (dx, dy) in enumerate(self.moves):
            if dx == 0.0 and dy == 0.0:
                continue  # "stay" is never a direction
            norm = math.hypot(dx, dy)
            cos = math.cos(rad) * (dx / norm) + math.sin(rad) * (dy / norm)
            if cos > best_cos:  # ties to the lowest action
                best, best_cos = a, cos
        return best

    def __call__(self, obs):
        obs = np.asarray(obs, np.float64)
        if self.rows is None or len(self.rows) != len(obs):
            sides = np.random.default_rng(self.seed).choice([-1.0, 1.0], len(obs))
            self.rows = [dict(since=FAR, side=float(s), left=self.cast, flips=0) for s in sides]
        out = []
        for o, row in zip(obs.tolist(), self.rows):
            hit = max(o[k] for k in self.odour) > self.threshold
            row["since"] = 0 if hit else row["since"] + 1
            surging = row["since"] < self.surge
            row["left"] -= 1
            flip = not surging and row["left"] <= 0
            if flip:
                row["side"] = -row["side"]
            row["flips"] = 0 if surging else row["flips"] + flip
            if surging or flip:
                row["left"] = self.cast + (self.cast * min(row["flips"], 4)) // 4
            steer = 0.0
            if self.antennae and hit:
                lean = 0.0
                for k, side in self.antennae:
                    lean += o[k] * side
                steer = self.steer * ((lean > 0) - (lean < 0))
            upwind = self._upwind(o)
            target = upwind + steer if surging else upwind + row["side"] * self.cast_angle
            out.append(self._action(_wrap(target)))
        return np.array(out, np.float64 if self.mode == "continuous" else np.int64)


def references(policy, seed):
    """The reference of ``policy`` (built with generator seed ``seed``)."""
    from plume_multi import policies

    if isinstance(policy, policies.RandomPolicy):
        return RandomRef(policy.n_actions, seed)
    if isinstance(policy, policies.RandomBoxPolicy):
        return RandomBoxRef(policy.low, policy.high, seed)
    if isinstance(policy, policies.GradientClimber):
        return ClimberRef(policy.n_actions, policy.explore, seed, policy._flight)
    if isinstance(policy, policies.SurgeCast):
        return SurgeCastRef(policy)
    raise NotImplementedError(f"no plain reference for {type(policy).__name__} in baselines_reference.py")
