"""WorldState: the current state of B worlds x N agents, as arrays, and nothing more.

A passive container: it does not step, seed or configure anything. The Simulator owns one and
the kernels write into its arrays in place. ``snapshot()`` exports it as a plain dict of arrays and
scalars, ``load()`` copies a snapshot back in (after checking all of it), ``validate()`` lists
inconsistencies.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import ValidationError

__all__ = ["WorldState", "SNAPSHOT_FORMAT", "ARRAY_FIELDS"]

SNAPSHOT_FORMAT = "plume_multi.world/2"

# name -> (dtype, shape as a function of (B, N, D)); final_* have zero rows unless SAME_STEP.
_PER_AGENT = {
    "pos": (np.int32, lambda B, N, D, dims=2: (B * N, dims)),
    "active": (np.bool_, lambda B, N, D: (B * N,)),
    "terminated": (np.bool_, lambda B, N, D: (B * N,)),
    "truncated": (np.bool_, lambda B, N, D: (B * N,)),
    "obs": (np.float32, lambda B, N, D: (B * N, D)),
    "reward": (np.float32, lambda B, N, D: (B * N,)),
    "ep_length": (np.int32, lambda B, N, D: (B * N,)),
}
_PER_WORLD = {
    "world_t": (np.int32, lambda B, N, D: (B,)),
    "world_done": (np.bool_, lambda B, N, D: (B,)),
    "world_episode": (np.int64, lambda B, N, D: (B,)),
    "world_seed": (np.int64, lambda B, N, D: (B,)),
}
_FINAL = {
    "final_obs": (np.float32, lambda B, N, D: (B * N, D)),
    "final_length": (np.int32, lambda B, N, D: (B * N,)),
}
ARRAY_FIELDS = {**_PER_AGENT, **_PER_WORLD, **_FINAL}


def _shape(name: str, shape, B: int, N: int, D: int, dims: int) -> tuple:
    """The shape of array ``name`` (positions have ``dims`` columns)."""
    return shape(B, N, D, dims) if name == "pos" else shape(B, N, D)


def rows_where(cond: np.ndarray) -> np.ndarray:
    """Indices of the rows (first axis) where ``cond`` holds anywhere."""
    if cond.ndim > 1:
        cond = cond.reshape(cond.shape[0], -1).any(axis=1) if cond.shape[0] else np.zeros(0, np.bool_)
    return np.flatnonzero(cond)


@dataclass(eq=False)
class WorldState:
    """State of ``num_worlds`` worlds of ``n_agents`` agents; agent ``n`` of world ``b`` is row ``b * N + n``.

    Arrays (all C-contiguous, mutated in place by the kernels):
        pos (BN, dims) int32: cell ``(x, y)`` of each agent (``(x, y, z)`` in a 3-D world).
        active (BN,) bool: still searching (not yet at the source).
        terminated, truncated (BN,) bool: flags returned by the last step.
        obs (BN, D) float32, reward (BN,) float32: outputs of the last step or reset.
        ep_length (BN,) int32: steps an agent has taken while active this episode.
        world_t (B,) int32: steps into the current episode. Both stop counting at 2**31 - 1
            (reachable only by stepping on past ``max_steps`` with autoreset disabled), so they
            never wrap: ``truncated`` stays True.
        world_done (B,) bool: the episode ended on the last step (``world_t >= max_steps`` or no
            agent active); under NEXT_STEP autoreset the next step resets the world, under
            SAME_STEP it has been reset already.
        world_episode (B,) int64: episodes since the world was last seeded (0 = the seeded one).
        world_seed (B,) int64: the seed the world was last reset with.
        final_obs (BN, D), final_length (BN,): under SAME_STEP autoreset, the last observation
            and length of the episodes that ended on the last step, where ``world_done`` (zero
            rows otherwise).
        models: the arrays the scenario's models keep (a movie's frame clock per world, headings,
            puffs, beliefs, ...), by name ``"<role>.<array>"``, e.g. ``"body.heading"``;
            ``model_specs`` their ``StateArray`` (shape and range), ``model_labels`` the model's
            name for each (``"Continuous.heading"``), for messages.
    """

    num_worlds: int
    n_agents: int
    obs_dim: int
    pos: np.ndarray
    active: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    obs: np.ndarray
    reward: np.ndarray
    ep_length: np.ndarray
    world_t: np.ndarray
    world_done: np.ndarray
    world_episode: np.ndarray
    world_seed: np.ndarray
    final_obs: np.ndarray
    final_length: np.ndarray
    models: dict = field(default_factory=dict)
    model_specs: dict = field(default_factory=dict)
    model_labels: dict = field(default_factory=dict)  # name -> "Model.array", for messages
    dims: int = 2  # coordinates of a position: 2, or 3 in a 3-D world

    @staticmethod
    def nbytes_needed(num_worlds: int, n_agents: int, obs_dim: int, model_specs: dict,
                      with_final: bool = False, dims: int = 2) -> int:
        """Bytes the arrays of such a state take."""
        B, N, D = num_worlds, n_agents, obs_dim
        total = 0
        for name, (dtype, shape) in ARRAY_FIELDS.items():
            if name in _FINAL and not with_final:
                continue
            total += int(np.prod(_shape(name, shape, B, N, D, dims), dtype=np.float64)) * np.dtype(dtype).itemsize
        for spec in model_specs.values():
            total += int(np.prod(spec.shape(B, N), dtype=np.float64)) * np.dtype(spec.dtype).itemsize
        return total

    @classmethod
    def allocate(cls, num_worlds: int, n_agents: int, obs_dim: int, with_final: bool = False,
                 model_specs: dict | None = None, model_labels: dict | None = None, dims: int = 2) -> "WorldState":
        """Zeroed state; ``with_final`` allocates the SAME_STEP final buffers; ``model_specs``
        maps names to the ``StateArray`` specs of the models' arrays (``model_labels`` to the
        model's name of each, for messages); ``dims``: 2, or 3 for positions ``(x, y, z)``."""
        B, N, D = num_worlds, n_agents, obs_dim
        arrays = {}
        for name, (dtype, shape) in ARRAY_FIELDS.items():
            s = _shape(name, shape, B, N, D, dims)
            if name in _FINAL and not with_final:
                s = (0,) + s[1:]
            arrays[name] = np.zeros(s, dtype=dtype)
        specs = dict(model_specs or {})
        models = {name: np.zeros(spec.shape(B, N), dtype=spec.dtype) for name, spec in specs.items()}
        return cls(num_worlds=B, n_agents=N, obs_dim=D, models=models, model_specs=specs,
                   model_labels=dict(model_labels or {}), dims=dims, **arrays)

    def _all_arrays(self) -> dict:
        out = {name: getattr(self, name) for name in ARRAY_FIELDS}
        out.update({f"model:{name}": arr for name, arr in self.models.items()})
        return out

    def nbytes_per_agent(self) -> float:
        """Bytes of state per agent, shared model parameters (fields, frames) excluded."""
        total = sum(arr.nbytes for arr in self._all_arrays().values())
        return total / (self.num_worlds * self.n_agents)

    # ------------------------------------------------------------------ snapshot / load
    def snapshot(self) -> dict:
        """A plain dict of array copies and scalars (``numpy.savez(path, **snap)`` saves it).

        Model arrays are stored under ``"model:<name>"``.
        """
        snap = {name: arr.copy() for name, arr in self._all_arrays().items()}
        snap.update(format=SNAPSHOT_FORMAT, num_worlds=self.num_worlds, n_agents=self.n_agents,
                    obs_dim=self.obs_dim)
        return snap

    def check_snapshot(self, snap) -> "WorldState":
        """Check the keys, shapes and dtypes of ``snap`` against this state; return a new
        ``WorldState`` holding copies of its arrays (for content checks). Never changes ``self``."""
        def scalar(key):
            if key not in snap:
                raise ValidationError(f"snapshot: missing key {key!r}; expected a dict made by snapshot()")
            value = snap[key]
            if isinstance(value, np.ndarray):
                if value.shape != ():
                    raise ValidationError(f"snapshot[{key!r}]: got an array of shape {value.shape}; expected a scalar")
                value = value.item()
            return value

        fmt = scalar("format")
        if fmt != SNAPSHOT_FORMAT:
            raise ValidationError(f"snapshot['format']: got {fmt!r}; expected {SNAPSHOT_FORMAT!r}")
        for key, mine in (("num_worlds", self.num_worlds), ("n_agents", self.n_agents), ("obs_dim", self.obs_dim)):
            theirs = scalar(key)
            if not isinstance(theirs, (int, np.integer)) or isinstance(theirs, bool) or int(theirs) != mine:
                raise ValidationError(f"snapshot[{key!r}]: got {theirs!r}; this simulator has {key} = {mine}")
        copies = {}
        for name, mine in self._all_arrays().items():
            if name not in snap:
                raise ValidationError(f"snapshot: missing key {name!r}; expected shape {mine.shape} dtype {mine.dtype}")
            theirs = snap[name]
            if not isinstance(theirs, np.ndarray) or theirs.shape != mine.shape or theirs.dtype != mine.dtype:
                got = (f"shape {theirs.shape} dtype {theirs.dtype}" if isinstance(theirs, np.ndarray)
                       else type(theirs).__name__)
                raise ValidationError(f"snapshot[{name!r}]: got {got}; expected shape {mine.shape} dtype {mine.dtype}")
            copies[name] = np.array(theirs, copy=True, order="C")
        extra = sorted(k for k in snap if k.startswith("model:") and k not in copies)
        if extra:
            raise ValidationError(f"snapshot: unexpected model arrays {extra}; this simulator's models keep "
                                  f"{sorted(self.models)}")
        core = {name: copies[name] for name in ARRAY_FIELDS}
        models = {name[len("model:"):]: arr for name, arr in copies.items() if name.startswith("model:")}
        return WorldState(num_worlds=self.num_worlds, n_agents=self.n_agents, obs_dim=self.obs_dim,
                          models=models, model_specs=self.model_specs, model_labels=self.model_labels,
                          dims=self.dims, **core)

    def copy_from(self, other: "WorldState") -> None:
        """Copy every array of ``other`` (same shapes) into this state's arrays, in place."""
        for name in ARRAY_FIELDS:
            np.copyto(getattr(self, name), getattr(other, name))
        for name, arr in self.models.items():
            np.copyto(arr, other.models[name])

    # ------------------------------------------------------------------ validate
    def validate(self, grid_size, max_steps: int | None = None, autoreset: str = "next_step") -> list[str]:
        """Problems found in the state (empty when consistent). Never raises.

        Checks what holds whatever the models: shapes and dtypes, positions in the grid, finite
        values, non-negative counters, flags coherent with each other and with the step counts,
        and the models' arrays within their declared ranges. ``Simulator.validate`` adds the
        checks that need the scenario (observations, rewards, seeds).
        """
        problems = []
        B, N = self.num_worlds, self.n_agents
        for name, (dtype, shape) in ARRAY_FIELDS.items():
            arr = getattr(self, name)
            expected = _shape(name, shape, B, N, self.obs_dim, len(grid_size))
            if name in _FINAL and arr.shape[0] == 0:
                expected = (0,) + expected[1:]
            if arr.dtype != dtype or arr.shape != expected:
                problems.append(f"{name}: shape {arr.shape} dtype {arr.dtype}; expected {expected} {np.dtype(dtype)}")
        for name, spec in self.model_specs.items():
            arr = self.models.get(name)
            expected = spec.shape(B, N)
            if arr is None or arr.dtype != spec.dtype or arr.shape != expected:
                got = "missing" if arr is None else f"shape {arr.shape} dtype {arr.dtype}"
                problems.append(f"{name}: {got}; expected {expected} {np.dtype(spec.dtype)}")
        if problems:
            return problems

        def report(name, rows, what):
            if rows.size:
                problems.append(f"{name}: {rows.size} {what} (first at index {rows[0]})")

        grid = "x".join(str(n) for n in grid_size)
        report("pos", rows_where((self.pos < 0) | (self.pos >= np.array(grid_size))), f"agents outside the {grid} grid")
        for name in ("obs", "reward", "final_obs"):
            report(name, rows_where(~np.isfinite(getattr(self, name))), "rows not finite")
        for name in ("world_t", "world_episode", "world_seed", "ep_length", "final_length"):
            report(name, np.flatnonzero(getattr(self, name) < 0), "negative values")
        # an episode counter this high would wrap to negative after more resets than any run makes
        report("world_episode", np.flatnonzero(self.world_episode > 2**62), "values above 2**62")
        for name, spec in self.model_specs.items():
            label = self.model_labels.get(name)
            for what, rows in spec.problems(self.models[name]):
                report(f"{name} ({label})" if label else name, rows, f"rows {what}")
        t_per_agent = np.repeat(self.world_t, N)
        report("ep_length", np.flatnonzero(self.ep_length > t_per_agent),
               "agents took more steps than their world's step count")
        report("ep_length", np.flatnonzero(self.active & (self.ep_length != t_per_agent)),
               "active agents did not move at every step")
        # Under SAME_STEP a world that ended on the last step is reset already, but the flags
        # and rewards it returned are that last step's: its flags are not checked against the
        # new episode.
        fresh = (self.world_done & (self.world_t == 0)) if autoreset == "same_step" else np.zeros(B, np.bool_)
        fresh_rows = np.repeat(fresh, N)
        report("terminated", np.flatnonzero(self.active & self.terminated & ~fresh_rows),
               "agents both active and terminated")
        report("terminated", np.flatnonzero(~self.active & ~self.terminated & (t_per_agent > 0) & ~fresh_rows),
               "agents neither active nor terminated")
        if max_steps is not None:
            if autoreset != "disabled":
                report("world_t", np.flatnonzero(self.world_t > max_steps), f"worlds past max_steps={max_steps}")
            due = np.repeat(self.world_t >= max_steps, N)
            report("truncated", np.flatnonzero(self.truncated & ~due & ~fresh_rows), f"agents truncated before max_steps={max_steps}")
            report("truncated", np.flatnonzero(~self.truncated & due), f"agents not truncated at max_steps={max_steps}")
            any_active = self.active.reshape(B, N).any(axis=1)
            expected = (self.world_t >= max_steps) | ~any_active
            expected |= fresh
            report("world_done", np.flatnonzero(self.world_done != expected),
                   "worlds flagged inconsistently with their step count and agents")
        if self.final_obs.shape[0] and max_steps is not None:
            report("final_length", np.flatnonzero(self.final_length > max_steps), f"episodes longer than max_steps={max_steps}")
        return problems
