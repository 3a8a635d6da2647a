"""Simulator: the array API over the kernels.

``Simulator(scenario, num_worlds=B)`` owns one ``WorldState`` and advances all ``B x N`` agents in
one kernel call. Arrays returned by ``reset`` and ``step`` are *views of its buffers*, valid until
the next call: copy them if you keep them (the PettingZoo and Gymnasium front-ends do).
"""

from __future__ import annotations

import numbers
from dataclasses import asdict

import numba
import numpy as np

from .errors import StateError, ValidationError
from .fields import gaussian_field, validate_field
from .kernels import step as K
from .scenario import Scenario
from .world import WorldState

__all__ = ["Simulator", "AUTORESET_MODES", "MAX_SEED"]

AUTORESET_MODES = {
    "disabled": K.AUTORESET_DISABLED,
    "next_step": K.AUTORESET_NEXT_STEP,
    "same_step": K.AUTORESET_SAME_STEP,
}
MAX_SEED = 2**63 - 1
# Below this many agents a step is too short for threads to pay for their start-up.
PARALLEL_MIN_AGENTS = 32768


def _check_seed(seed, num_worlds: int):
    """None, or an int with 0 <= seed and seed + num_worlds - 1 <= MAX_SEED."""
    if seed is None:
        return None
    if not isinstance(seed, numbers.Integral) or isinstance(seed, (bool, np.bool_)):
        raise ValidationError(f"seed: got {seed!r} ({type(seed).__name__}); expected None or a non-negative int")
    seed = int(seed)
    if seed < 0 or seed + num_worlds - 1 > MAX_SEED:
        raise ValidationError(
            f"seed: got {seed}; expected 0 <= seed <= {MAX_SEED - num_worlds + 1} "
            f"(world i is seeded seed + i, for {num_worlds} worlds)"
        )
    return seed


class Simulator:
    """Advance ``num_worlds`` independent worlds of ``scenario.n_agents`` agents each.

    Args:
        scenario: a ``Scenario`` (default: ``Scenario()``).
        num_worlds: B >= 1 independent worlds sharing one concentration field.
        autoreset: what happens to a world whose episode ended (all its agents terminated, or
            ``max_steps`` reached):
            ``"next_step"`` (default): the following ``step`` resets it (its actions are ignored;
            reward 0, flags False); the step that ended it returned its final observation.
            ``"same_step"``: the ending step resets it at once and returns the new episode's first
            observation; the final one is in ``final_obs`` / ``final_length`` where ``final_mask``
            (which is ``state.world_done``).
            ``"disabled"``: nothing; call ``reset(mask=...)``. Stepping on is allowed: agents
            that reached the source stay put and earn nothing, the others keep moving (and may
            still reach it), the step count keeps growing and ``truncated`` stays True.
        field: optional ``(H, W)`` float array in ``[0, 1]`` to use instead of the Gaussian plume.
        parallel: ``"auto"`` (threads for large batches when Numba has more than one),
            ``True`` or ``False``. Results are identical either way.

    Agent ``n`` of world ``b`` is row ``b * N + n`` of every per-agent array.

    Example:
        >>> sim = Simulator(Scenario(n_agents=8, grid_size=(64, 48)), num_worlds=4)
        >>> obs = sim.reset(seed=0)                      # (32, 3) float32
        >>> actions = np.zeros(sim.num_agents, np.int64)  # all UP
        >>> obs, reward, terminated, truncated = sim.step(actions)
    """

    def __init__(self, scenario: Scenario | None = None, num_worlds: int = 1, *,
                 autoreset: str = "next_step", field=None, parallel="auto"):
        if scenario is None:
            scenario = Scenario()
        if not isinstance(scenario, Scenario):
            raise ValidationError(f"scenario: got {type(scenario).__name__}; expected a plume_multi.Scenario")
        if not isinstance(num_worlds, numbers.Integral) or isinstance(num_worlds, bool) or num_worlds < 1:
            raise ValidationError(f"num_worlds: got {num_worlds!r}; expected an integer >= 1")
        if autoreset not in AUTORESET_MODES:
            raise ValidationError(f"autoreset: got {autoreset!r}; expected one of {list(AUTORESET_MODES)}")
        if parallel not in ("auto", True, False):
            raise ValidationError(f"parallel: got {parallel!r}; expected 'auto', True or False")
        self.scenario = scenario
        self.num_worlds = int(num_worlds)
        self.autoreset = autoreset
        sc = scenario
        if field is None:
            field = gaussian_field(sc.grid_size, sc.source_location, sc.sigma)
        else:
            field = validate_field(field, sc.grid_size)
        field.flags.writeable = False
        self.state = WorldState.allocate(self.num_worlds, sc.n_agents, sc.obs_dim, field,
                                         sc.source_location, with_final=autoreset == "same_step")
        cfg = np.zeros(K.CFG_SIZE, dtype=np.int64)
        cfg[K.C_N_AGENTS] = sc.n_agents
        cfg[K.C_WIDTH], cfg[K.C_HEIGHT] = sc.grid_size
        cfg[K.C_SRC_X], cfg[K.C_SRC_Y] = sc.source_location
        cfg[K.C_GOAL_D2] = sc.goal_d2()
        cfg[K.C_MAX_STEPS] = sc.max_steps
        cfg[K.C_AUTORESET] = AUTORESET_MODES[autoreset]
        cfg[K.C_TEAM] = int(sc.team)
        cfg[K.C_N_NEIGHBOURS] = sc.n_neighbours
        cfg[K.C_FIXED_STARTS] = int(sc.start_positions is not None)
        self._cfg = cfg
        self._moves = sc.moves()
        if sc.start_positions is not None:
            self._starts = np.array(sc.start_positions, dtype=np.int32)
        else:
            self._starts = np.zeros((0, 2), dtype=np.int32)
        s = self.state
        self._state_args = (s.pos, s.active, s.terminated, s.truncated, s.obs, s.reward,
                            s.ep_length, s.world_t, s.world_done, s.world_episode, s.world_seed)
        self._step_args = (self._moves, s.field, self._starts, cfg, *self._state_args,
                           s.final_obs, s.final_length)
        self._reset_args = (cfg, s.field, self._starts, *self._state_args)
        self._action_shape = (self.num_agents,)
        self._all_worlds = np.ones(self.num_worlds, dtype=np.bool_)
        if parallel == "auto":
            parallel = numba.get_num_threads() > 1 and self.num_worlds > 1 and self.num_agents >= PARALLEL_MIN_AGENTS
        self.parallel = bool(parallel)
        self._step_kernel = K.step_kernel_parallel if self.parallel else K.step_kernel
        self._ready = False
        self.seed = None

    # ------------------------------------------------------------------ sizes
    @property
    def n_agents(self) -> int:
        """Agents per world (N)."""
        return self.scenario.n_agents

    @property
    def num_agents(self) -> int:
        """Agents in all worlds (B * N): the leading size of every per-agent array."""
        return self.num_worlds * self.scenario.n_agents

    @property
    def obs_dim(self) -> int:
        return self.scenario.obs_dim

    @property
    def n_actions(self) -> int:
        return self.scenario.n_actions

    @property
    def field(self) -> np.ndarray:
        """The shared concentration field, ``(H, W)`` float32, read-only."""
        return self.state.field

    # ------------------------------------------------------------------ reset / step
    def reset(self, seed=None, mask=None) -> np.ndarray:
        """Start new episodes; return the observations, ``(B*N, D)`` float32 (a view).

        Args:
            seed: ``None`` or an int. With a seed, world ``i`` is seeded ``seed + i`` and its
                first episode starts exactly where ``PlumeSearchEnv().reset(seed=seed + i)`` does.
                With ``None``, each world begins its next episode from its own stream (the first
                reset ever draws a base seed, kept in ``self.seed``).
            mask: ``None`` (all worlds) or a ``(B,)`` bool array of the worlds to reset; the
                others are left exactly as they are.
        """
        seed = _check_seed(seed, self.num_worlds)
        if mask is None:
            mask = self._all_worlds
        else:
            mask = np.asarray(mask)
            if mask.shape != (self.num_worlds,) or mask.dtype != np.bool_:
                raise ValidationError(
                    f"mask: got shape {mask.shape} dtype {mask.dtype}; expected a ({self.num_worlds},) bool array"
                )
            if not self._ready and not mask.all():
                raise StateError("Cannot reset part of the worlds before the first reset(): reset them all first")
        if seed is None and not self._ready:
            seed = int(np.random.SeedSequence().entropy % (2**31 - self.num_worlds))
        if seed is not None and mask is self._all_worlds:
            self.seed = seed
        K.reset_kernel(mask, -1 if seed is None else seed, *self._reset_args)
        self._ready = True
        return self.state.obs

    def step(self, actions):
        """Advance every world one step.

        Args:
            actions: ``(B*N,)`` (or ``(B, N)``) integers in ``0..n_actions-1``. Agents that are not
                active ignore theirs, but every entry is checked.

        Returns:
            ``(obs, reward, terminated, truncated)``: views of ``(B*N, D)`` float32,
            ``(B*N,)`` float32, ``(B*N,)`` bool, ``(B*N,)`` bool, valid until the next call.

        Raises:
            ValidationError: wrong type, dtype, shape or a value out of range. Nothing changed.
            StateError: before the first ``reset``.
        """
        if (type(actions) is not np.ndarray or actions.dtype != np.int64
                or actions.shape != self._action_shape or not actions.flags.c_contiguous):
            actions = self._coerce_actions(actions)
        if not self._ready:
            raise StateError("Cannot step before reset(): call reset() first")
        bad = self._step_kernel(actions, *self._step_args)
        if bad >= 0:
            raise ValidationError(
                f"actions[{bad}] = {actions[bad]} is out of range; expected integers in "
                f"0..{self.n_actions - 1} (action model {self.scenario.action_model!r}). Nothing was changed."
            )
        s = self.state
        return s.obs, s.reward, s.terminated, s.truncated

    def _coerce_actions(self, actions) -> np.ndarray:
        B, N = self.num_worlds, self.n_agents
        expected = f"an integer array of shape ({B * N},) or ({B}, {N}) with values in 0..{self.n_actions - 1}"
        arr = np.asarray(actions)
        if arr.dtype.kind not in "iu":
            raise ValidationError(
                f"actions: got dtype {arr.dtype}; expected {expected} (floats, NaN and booleans are not actions)"
            )
        if arr.shape not in ((B * N,), (B, N)):
            raise ValidationError(f"actions: got shape {arr.shape}; expected {expected}")
        if arr.dtype == np.uint64 and arr.size and arr.max() > self.n_actions:
            arr = np.minimum(arr, self.n_actions)  # keep huge values out of range after the cast
        return np.ascontiguousarray(arr.reshape(B * N), dtype=np.int64)

    # ------------------------------------------------------------------ views of the state
    @property
    def positions(self) -> np.ndarray:
        """``(B*N, 2)`` int32 cells ``(x, y)`` (a view)."""
        return self.state.pos

    @property
    def active(self) -> np.ndarray:
        """``(B*N,)`` bool: agents still searching (a view)."""
        return self.state.active

    @property
    def episode_length(self) -> np.ndarray:
        """``(B*N,)`` int32: steps each agent has taken while active this episode (a view)."""
        return self.state.ep_length

    @property
    def world_steps(self) -> np.ndarray:
        """``(B,)`` int32: steps into each world's episode (a view)."""
        return self.state.world_t

    @property
    def final_obs(self) -> np.ndarray:
        """Under ``same_step``: last observation of episodes that ended on the last step."""
        return self.state.final_obs

    @property
    def final_length(self) -> np.ndarray:
        return self.state.final_length

    @property
    def final_mask(self) -> np.ndarray:
        """``(B,)`` bool, worlds whose episode ended on the last step (a view of
        ``state.world_done``); under ``same_step`` their final observation is in ``final_obs``."""
        return self.state.world_done

    # ------------------------------------------------------------------ snapshot / restore / validate
    def snapshot(self) -> dict:
        """The full state as a plain dict (arrays and JSON-able scalars), including the scenario.

        ``restore(snapshot)`` on a simulator made with the same scenario, ``num_worlds`` and
        ``autoreset`` continues bit for bit.
        """
        if not self._ready:
            raise StateError("Cannot snapshot before reset(): call reset() first")
        snap = self.state.snapshot()
        snap.update(autoreset=self.autoreset, base_seed=-1 if self.seed is None else self.seed,
                    scenario_repr=repr(self.scenario))
        return snap

    def restore(self, snapshot) -> None:
        """Bring this simulator back to ``snapshot`` (checked first; on error nothing changes)."""
        if not isinstance(snapshot, dict) and not hasattr(snapshot, "files"):
            raise ValidationError(f"snapshot: got {type(snapshot).__name__}; expected the dict made by snapshot()")
        snap = dict(snapshot.items()) if hasattr(snapshot, "files") else snapshot
        for key, mine in (("autoreset", self.autoreset), ("scenario_repr", repr(self.scenario))):
            theirs = snap.get(key)
            theirs = theirs.item() if isinstance(theirs, np.ndarray) else theirs
            if theirs != mine:
                raise ValidationError(f"snapshot: {key} = {theirs!r}; this simulator has {mine!r}")
        self.state.load(snap)
        base = snap["base_seed"]
        base = int(base.item() if isinstance(base, np.ndarray) else base)
        self.seed = None if base < 0 else base
        self._ready = True

    def validate(self) -> list[str]:
        """Problems in the current state (empty when consistent)."""
        problems = self.state.validate(max_steps=self.scenario.max_steps, autoreset=self.autoreset)
        if not problems:
            d = self.state.pos.astype(np.int64) - np.asarray(self.scenario.source_location)
            # arrival is checked by a step, so only an agent that has not moved yet may sit there active
            moved_in = self.state.active & (self.state.ep_length > 0) & ((d * d).sum(axis=1) <= self.scenario.goal_d2())
            at_goal = np.flatnonzero(moved_in)
            if at_goal.size:
                problems.append(f"active: {at_goal.size} agents that moved onto the source are still marked active (first: row {at_goal[0]})")
        return problems

    def __repr__(self) -> str:
        return f"Simulator({self.scenario!r}, num_worlds={self.num_worlds}, autoreset={self.autoreset!r})"
