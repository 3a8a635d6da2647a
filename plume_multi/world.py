"""WorldState: the current state of B worlds x N agents, as arrays, and nothing more.

A passive container: it does not step, seed or configure anything. The Simulator owns one and
the kernels write into its arrays in place. ``snapshot()`` exports it as a plain dict of arrays and
scalars, ``load()`` copies a snapshot back in, ``validate()`` lists inconsistencies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import ValidationError

__all__ = ["WorldState", "SNAPSHOT_FORMAT"]

SNAPSHOT_FORMAT = "plume_multi.world/1"

# name -> (dtype, shape as a function of (B, N, D)); final_* have zero rows unless SAME_STEP.
_PER_AGENT = {
    "pos": (np.int32, lambda B, N, D: (B * N, 2)),
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
    "world_episode": (np.int32, lambda B, N, D: (B,)),
    "world_seed": (np.int64, lambda B, N, D: (B,)),
}
_FINAL = {
    "final_obs": (np.float32, lambda B, N, D: (B * N, D)),
    "final_length": (np.int32, lambda B, N, D: (B * N,)),
}
ARRAY_FIELDS = {**_PER_AGENT, **_PER_WORLD, **_FINAL}


@dataclass(eq=False)
class WorldState:
    """State of ``num_worlds`` worlds of ``n_agents`` agents; agent ``n`` of world ``b`` is row ``b * N + n``.

    Arrays (all C-contiguous, mutated in place by the kernels):
        pos (BN, 2) int32: cell ``(x, y)`` of each agent.
        active (BN,) bool: still searching (not yet at the source).
        terminated, truncated (BN,) bool: flags returned by the last step.
        obs (BN, D) float32, reward (BN,) float32: outputs of the last step or reset.
        ep_length (BN,) int32: steps an agent has taken while active this episode.
        world_t (B,) int32: steps into the current episode.
        world_done (B,) bool: the episode ended on the last step (``world_t >= max_steps`` or no
            agent active); under NEXT_STEP autoreset the next step resets the world, under
            SAME_STEP it has been reset already.
        world_episode (B,) int32: episodes since the world was last seeded (0 = the seeded one).
        world_seed (B,) int64: the seed the world was last reset with.
        final_obs (BN, D), final_length (BN,): under SAME_STEP autoreset, the last observation
            and length of the episodes that ended on the last step, where ``world_done`` (zero
            rows otherwise).
        field (H, W) float32: the shared concentration field, indexed ``[y, x]``; never copied per
            agent or per step.
        source (2,) int32: ``(x, y)`` of the source.
    """

    num_worlds: int
    n_agents: int
    obs_dim: int
    field: np.ndarray
    source: np.ndarray
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

    @classmethod
    def allocate(cls, num_worlds: int, n_agents: int, obs_dim: int, field: np.ndarray, source,
                 with_final: bool = False) -> "WorldState":
        """Zeroed state; ``with_final`` allocates the SAME_STEP final buffers."""
        B, N, D = num_worlds, n_agents, obs_dim
        arrays = {}
        for name, (dtype, shape) in ARRAY_FIELDS.items():
            s = shape(B, N, D)
            if name in _FINAL and not with_final:
                s = (0,) + s[1:]
            arrays[name] = np.zeros(s, dtype=dtype)
        return cls(num_worlds=B, n_agents=N, obs_dim=D, field=field,
                   source=np.asarray(source, dtype=np.int32), **arrays)

    @property
    def grid_size(self) -> tuple[int, int]:
        return int(self.field.shape[1]), int(self.field.shape[0])

    def nbytes_per_agent(self) -> float:
        """Bytes of state per agent, the shared field excluded."""
        total = sum(getattr(self, name).nbytes for name in ARRAY_FIELDS)
        return total / (self.num_worlds * self.n_agents)

    # ------------------------------------------------------------------ snapshot / load
    def snapshot(self) -> dict:
        """A plain dict of array copies and scalars (``numpy.savez(path, **snap)`` saves it).

        The field is included, so a snapshot is complete on its own.
        """
        snap = {name: getattr(self, name).copy() for name in ARRAY_FIELDS}
        snap.update(format=SNAPSHOT_FORMAT, num_worlds=self.num_worlds, n_agents=self.n_agents,
                    obs_dim=self.obs_dim, field=self.field.copy(), source=self.source.copy())
        return snap

    def load(self, snap) -> None:
        """Copy a snapshot into this state's arrays (in place), after checking all of it.

        Raises ``ValidationError`` naming the first entry that does not fit; then nothing changed.
        """
        def scalar(key):
            if key not in snap:
                raise ValidationError(f"snapshot: missing {key!r}; expected a dict made by snapshot()")
            value = snap[key]
            return value.item() if isinstance(value, np.ndarray) else value

        if scalar("format") != SNAPSHOT_FORMAT:
            raise ValidationError(f"snapshot: format {scalar('format')!r}; expected {SNAPSHOT_FORMAT!r}")
        for key, mine in (("num_worlds", self.num_worlds), ("n_agents", self.n_agents), ("obs_dim", self.obs_dim)):
            if int(scalar(key)) != mine:
                raise ValidationError(f"snapshot: {key} = {scalar(key)}; this simulator has {key} = {mine}")
        for name in ("field", "source", *ARRAY_FIELDS):
            mine = getattr(self, name)
            theirs = np.asarray(snap[name]) if name in snap else None
            if theirs is None or theirs.shape != mine.shape or theirs.dtype != mine.dtype:
                got = "missing" if theirs is None else f"shape {theirs.shape} dtype {theirs.dtype}"
                raise ValidationError(f"snapshot[{name!r}]: {got}; expected shape {mine.shape} dtype {mine.dtype}")
        if not np.array_equal(np.asarray(snap["field"]), self.field) or not np.array_equal(snap["source"], self.source):
            raise ValidationError("snapshot: its field or source differs from this simulator's scenario")
        for name in ARRAY_FIELDS:
            np.copyto(getattr(self, name), snap[name])

    # ------------------------------------------------------------------ validate
    def validate(self, max_steps: int | None = None, autoreset: str = "next_step") -> list[str]:
        """Problems found in the state (empty when consistent). Never raises.

        With ``max_steps``, also checks ``world_done`` against the step counts and, unless
        ``autoreset == "disabled"`` (where episodes may run past their end), that no world is
        past ``max_steps``.
        """
        problems = []
        w, h = self.grid_size
        B, N = self.num_worlds, self.n_agents
        for name, (dtype, shape) in ARRAY_FIELDS.items():
            arr = getattr(self, name)
            expected = shape(B, N, self.obs_dim)
            if name in _FINAL and arr.shape[0] == 0:
                expected = (0,) + expected[1:]
            if arr.dtype != dtype or arr.shape != expected:
                problems.append(f"{name}: shape {arr.shape} dtype {arr.dtype}; expected {expected} {np.dtype(dtype)}")
        if problems:
            return problems
        x, y = self.pos[:, 0], self.pos[:, 1]
        out = np.flatnonzero((x < 0) | (x >= w) | (y < 0) | (y >= h))
        if out.size:
            problems.append(f"pos: {out.size} agents outside the {w}x{h} grid (first: row {out[0]} at {tuple(self.pos[out[0]])})")
        if not (0 <= self.source[0] < w and 0 <= self.source[1] < h):
            problems.append(f"source: {tuple(self.source)} outside the {w}x{h} grid")
        if not np.isfinite(self.field).all() or self.field.min() < 0 or self.field.max() > 1:
            problems.append("field: values outside [0, 1] or not finite")
        if not np.isfinite(self.obs).all():
            problems.append("obs: not finite")
        if not np.isfinite(self.reward).all() or (self.reward < 0).any():
            problems.append("reward: negative or not finite")
        for name in ("world_t", "world_episode", "world_seed", "ep_length"):
            neg = np.flatnonzero(getattr(self, name) < 0)
            if neg.size:
                problems.append(f"{name}: {neg.size} negative values (first at {neg[0]})")
        t_per_agent = np.repeat(self.world_t, N)
        over = np.flatnonzero(self.ep_length > t_per_agent)
        if over.size:
            problems.append(f"ep_length: {over.size} agents took more steps than their world's step count (first: row {over[0]})")
        lag = np.flatnonzero(self.active & (self.ep_length != t_per_agent))
        if lag.size:
            problems.append(f"ep_length: {lag.size} active agents did not move at every step (first: row {lag[0]})")
        if max_steps is not None:
            if autoreset != "disabled":
                late = np.flatnonzero(self.world_t > max_steps)
                if late.size:
                    problems.append(f"world_t: {late.size} worlds past max_steps={max_steps} (first: world {late[0]})")
            any_active = self.active.reshape(B, N).any(axis=1)
            expected = (self.world_t >= max_steps) | ~any_active
            if autoreset == "same_step":  # a world that ended on the last step is already reset
                expected |= self.world_done & (self.world_t == 0)
            wrong = np.flatnonzero(self.world_done != expected)
            if wrong.size:
                problems.append(f"world_done: {wrong.size} worlds flagged inconsistently with their step count and agents (first: world {wrong[0]})")
        return problems
