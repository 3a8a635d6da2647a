"""Simulator: the array API over the kernels.

``Simulator(scenario, num_worlds=B)`` owns one ``WorldState`` and advances all ``B x N`` agents in
one kernel call, assembled for the scenario's models (``engine/assemble.py``). Arrays returned by
``reset`` and ``step`` are *views of its buffers*, valid until the next call: copy them if you keep
them (the PettingZoo and Gymnasium front-ends do).
"""

from __future__ import annotations

import json
import warnings

import numpy as np

from .models import capability_table as capabilities
from .checks import check_memory
from .checks import is_int as _is_int
from .errors import StateError, ValidationError
from .engine import api, records
from .engine import assemble as A
from .engine.compile import check_names, compile_entry
from .engine.threads import PARALLEL_LOCK, threads_for
from .models.base import StateArray, StateWorld
from .scenario import Scenario, ModelContext
from .walls import mask_indices
from .world import WorldState

__all__ = ["Simulator", "AUTORESET_MODES", "MAX_SEED", "MAX_WORLDS", "MAX_STEP_OPERATIONS"]

AUTORESET_MODES = {
    "disabled": A.AUTORESET_DISABLED,
    "next_step": A.AUTORESET_NEXT_STEP,
    "same_step": A.AUTORESET_SAME_STEP,
}
MAX_SEED = 2**63 - 1
MAX_WORLDS = 2**31 - 1
# A step of more operations than this (every pair of agents for Neighbours) takes over half an hour:
# refused before any work. Neighbours measured 1.2-1.7 ns per pair on one core (N = 1024 agents).
MAX_STEP_OPERATIONS = 2**40
SECONDS_PER_OPERATION = 2e-9
# Below this many agents a step is too short for threads to pay for their start-up, and Numba's
# threads are not started at all (engine/threads.py: a trainer in the process keeps its cores).
PARALLEL_MIN_AGENTS = 32768
# The state array of the wall mask each world drew for its episode (a scenario with walls)
WALL_INDEX = "walls.index"


def check_seed(seed, num_worlds: int):
    """None, or an integer (Python or NumPy) with 0 <= seed and seed + num_worlds - 1 <= MAX_SEED."""
    if seed is None:
        return None
    if not _is_int(seed):
        raise ValidationError(f"seed: got {seed!r} ({type(seed).__name__}); expected None or a non-negative integer")
    seed = int(seed)
    if seed < 0 or seed + num_worlds - 1 > MAX_SEED:
        raise ValidationError(
            f"seed: got {seed}; expected 0 <= seed <= {MAX_SEED - num_worlds + 1} "
            f"(world i is seeded seed + i, for {num_worlds} worlds)"
        )
    return seed


def _findable_record(value):
    """``value`` with its named tuple class replaced, where Numba's cache could not find that class
    again in another process (a script's ``__main__``, a notebook, a class held under another
    name), by an equivalent one it can (``engine.records``)."""
    cls = type(value)
    if isinstance(value, tuple) and hasattr(cls, "_fields") and not records.findable(cls):
        return records.stable(cls)(*value)
    return value


class Simulator:
    """Advance ``num_worlds`` independent worlds of ``scenario.n_agents`` agents each.

    Args:
        scenario: a ``Scenario`` (default: ``Scenario()``).
        num_worlds: B >= 1 independent worlds sharing the plume's read-only data.
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
        field: optional ``(H, W)`` array in ``[0, 1]`` (``(D, H, W)`` in 3-D) to use instead of the
            default plume's field (copied: later changes to your array do not reach the simulator).
            Only with the default plume model, ``plumes.Gaussian`` with a fixed source: another
            plume's agents would read that plume, not the field (refused).
        parallel: ``"auto"`` (threads for large batches when Numba has more than one),
            ``True`` or ``False``. Results are identical either way.

    Agent ``n`` of world ``b`` is row ``b * N + n`` of every per-agent array. Positions have
    ``scenario.dims`` coordinates: ``(x, y)``, or ``(x, y, z)`` in a 3-D scenario.

    Example:
        >>> sim = Simulator(Scenario(n_agents=8, grid_size=(64, 48)), num_worlds=4)
        >>> obs = sim.reset(seed=0)                      # (32, 3) float32
        >>> actions = np.zeros(sim.total_agents, np.int64)  # all UP
        >>> obs, reward, terminated, truncated = sim.step(actions)
    """

    def __init__(self, scenario: Scenario | None = None, num_worlds: int = 1, *,
                 autoreset: str = "next_step", field=None, parallel="auto"):
        if scenario is None:
            scenario = Scenario()
        if not isinstance(scenario, Scenario):
            raise ValidationError(f"scenario: got {type(scenario).__name__}; expected a plume_multi.Scenario")
        capabilities.check(scenario)  # the scenario's parts work together (Scenario checked; a few µs, before compiling)
        if not _is_int(num_worlds) or not 1 <= num_worlds <= MAX_WORLDS:
            raise ValidationError(f"num_worlds: got {num_worlds!r}; expected an integer in 1..{MAX_WORLDS}")
        if not isinstance(autoreset, str) or autoreset not in AUTORESET_MODES:
            raise ValidationError(f"autoreset: got {autoreset!r}; expected one of {list(AUTORESET_MODES)}")
        if not (parallel is True or parallel is False or (isinstance(parallel, str) and parallel == "auto")):
            raise ValidationError(f"parallel: got {parallel!r}; expected 'auto', True or False")
        self.scenario = sc = scenario
        self.num_worlds = B = int(num_worlds)
        self.autoreset = autoreset
        N = sc.n_agents
        if B * N > 2**40:
            raise ValidationError(f"num_worlds: got {B} worlds of {N} agents ({B * N} agents); expected at most 2**40 agents")

        ctx = ModelContext(sc)
        ctx.num_worlds = B
        ctx.field = self._make_field(sc, field)
        self._ctx = ctx
        # Every model's parameters and state, by role; roles are "plume", "body", "reward", "sensor<k>".
        self._roles = {"plume": sc.plume, "body": sc.action_model, "reward": sc.reward}
        self._roles.update({f"sensor{k}": s for k, s in enumerate(sc.sensors)})
        specs, labels = {}, {}
        for role, model in self._roles.items():
            for name, spec in model.state_spec(ctx).items():
                specs[f"{role}.{name}"] = spec
                labels[f"{role}.{name}"] = f"{model.name}.{name}"
        if sc.walls is not None:  # the mask each world drew for its episode (engine state, not a model's)
            specs[WALL_INDEX] = StateArray(np.int64, "world", (), 0, sc.walls.n_masks - 1)
            labels[WALL_INDEX] = "Scenario.walls"
        # impossible sizes are refused here, before any allocation or compilation
        needed = WorldState.nbytes_needed(B, N, sc.obs_dim, specs, autoreset == "same_step", sc.dims)
        check_memory("num_worlds x n_agents", needed, "the state", "Use fewer worlds or agents.")
        self._check_work(B)
        self._params = {role: _findable_record(model.params(ctx)) for role, model in self._roles.items()}
        self.state = WorldState.allocate(B, N, sc.obs_dim, with_final=autoreset == "same_step", model_specs=specs,
                                         model_labels=labels, dims=sc.dims)
        self._obs_bounds = sc.observation_bounds()

        cfg = np.zeros(A.CFG_SIZE, dtype=np.int64)
        cfg[A.C_N_AGENTS] = N
        cfg[A.C_WIDTH], cfg[A.C_HEIGHT], cfg[A.C_DEPTH] = sc.width, sc.height, sc.depth
        cfg[A.C_MAX_STEPS] = sc.max_steps
        cfg[A.C_AUTORESET] = AUTORESET_MODES[autoreset]
        cfg[A.C_TEAM] = int(sc.team)
        if sc.start_positions is not None:
            cfg[A.C_START_MODE] = A.START_FIXED
            self._starts = np.array(sc.start_positions, dtype=np.int32)
        else:
            cfg[A.C_START_MODE] = A.START_DRAW
            lo, hi = sc.start_region or ((0,) * sc.dims, tuple(n - 1 for n in sc.grid_size))
            cfg[A.C_X0], cfg[A.C_Y0], cfg[A.C_X1], cfg[A.C_Y1] = lo[0], lo[1], hi[0], hi[1]
            if sc.dims == 3:
                cfg[A.C_Z0], cfg[A.C_Z1] = lo[2], hi[2]
            self._starts = np.zeros((0, sc.dims), dtype=np.int32)
        fcfg = np.zeros(A.FCFG_SIZE, dtype=np.float64)
        fcfg[A.F_GOAL_D2] = sc.goal_d2()
        self._cfg, self._fcfg = cfg, fcfg
        widths = [sensor.width(ctx) for sensor in sc.sensors]
        self._cols = np.array(np.cumsum([0] + widths[:-1]) if widths else [], dtype=np.int64)
        # models whose data can change under the simulation (a memory-mapped movie) check it first
        self._guards = tuple(g for g in (model.guard() for model in self._models()) if g is not None)
        # without walls the driver never reads the masks: empty arrays of their types stand in
        no_masks = np.zeros((0,) * (sc.dims + 1), np.bool_)
        no_masks.flags.writeable = False
        self._no_walls = (no_masks, np.zeros(0, np.int64))
        self._args = self._args_for(self.state)
        self._layout = self._make_layout()
        self._driver = A.assemble(self._layout)

        self._action_shape = (B * N, len(sc.action_bounds()[0])) if sc.continuous else (B * N,)
        self._all_worlds = np.ones(B, dtype=np.bool_)
        if parallel == "auto":
            parallel = B > 1 and threads_for(B * N, PARALLEL_MIN_AGENTS) > 1
        self.parallel = bool(parallel)
        self._no_actions = self._dummy_actions()
        # compile (or load from the cache) what this simulator runs now: a model that cannot
        # compile fails here, named, not at the first reset()
        run_args = (0, self._all_worlds, np.int64(0), self._no_actions, *self._args)
        # a serial simulator's entry point has the step pasted in; a threaded one's calls the
        # function step_parallel calls (engine/assemble.py)
        self._run = self._driver.run_threaded if self.parallel else self._driver.run
        self._compile(self._run, run_args, "step" if not self.parallel else "reset")
        if self.parallel:
            self._compile(self._driver.step_parallel, (self._no_actions, self._all_worlds, *self._args),
                          "threaded step")
        self._ready = False
        self.seed = None
        # the base of each world's seed (world_seed = base + b); validate() checks against it
        self._seed_base = np.full(B, -1, dtype=np.int64)

    # ------------------------------------------------------------------ assembly
    @staticmethod
    def _make_field(sc: Scenario, field):
        if field is None:
            made = sc.plume.field(sc.grid_size)
            if made is not None:
                made.flags.writeable = False
            return made
        from .models.plumes import Gaussian

        # the field replaces what the default plume model reads (a Gaussian with a fixed source reads
        # the shared field it is given); any other plume reads its own data and would ignore it
        if type(sc.plume) is not Gaussian or sc.plume.random_source:
            raise ValidationError(f"field: got an array with the plume {sc.plume.name}; expected field=None (a field "
                                  "replaces the default plume's, plumes.Gaussian with a fixed source; another plume's "
                                  "agents would read that plume, not the field)")
        shape = tuple(reversed(sc.grid_size))
        names = "(depth, height, width)" if sc.dims == 3 else "(height, width)"
        try:
            arr = np.array(field, dtype=np.float64, copy=True)
        except (TypeError, ValueError, OverflowError):
            raise ValidationError(f"field: got {type(field).__name__}; expected a float array of shape "
                                  f"{names} = {shape} with values in [0, 1]") from None
        if arr.shape != shape:
            raise ValidationError(f"field: got shape {arr.shape}; expected {names} = {shape}")
        if not np.isfinite(arr).all() or (arr.size and (arr.min() < 0 or arr.max() > 1)):
            raise ValidationError("field: got values outside [0, 1] or not finite; expected finite values in [0, 1]")
        out = np.ascontiguousarray(arr, dtype=np.float32)
        out.flags.writeable = False
        return out

    def _make_layout(self) -> A.Layout:
        sc = self.scenario
        dims = sc.dims
        walls = "" if sc.walls is None else ("faces" if sc.continuous else "cells")
        roles = []
        for prefix, model, kinds in (("plume", sc.plume, ("source", "sample_cell", "sample_at", "reset_world",
                                                          "advance", "view", "wind_at", "reach")),
                                     ("body", sc.action_model, ("first_invalid", "move", "reset_agent", "location",
                                                                "heading", "heading_index")
                                      + (("place",) if walls == "faces" else ())),
                                     ("reward", sc.reward, ("goal", "step"))):
            kernels = model.kernels_for(dims)
            owner = f"{type(model).__name__} ({model.family} model)"
            if kernels is None or any(getattr(kernels, k, None) is None for k in kinds):
                raise ValidationError(f"{owner}: kernels: got {kernels!r}; expected its family's Kernels record "
                                      f"with every compiled function ({', '.join(kinds)})")
            roles.append(tuple((k, A.function_ref(getattr(kernels, k), owner, k)) for k in kinds))
        sensors = []
        for sensor in sc.sensors:
            owner = f"{type(sensor).__name__} (sensor model)"
            kernels = sensor.kernels_for(dims)
            if kernels is None:
                raise ValidationError(f"{owner}: kernels: got None; expected a SensorKernels record")
            agent = None if kernels.observe_agent is api.no_sensor else \
                A.function_ref(kernels.observe_agent, owner, "observe_agent")
            world = None if kernels.observe_world is api.no_sensor else \
                A.function_ref(kernels.observe_world, owner, "observe_world")
            inner = None
            if sensor.wraps is not None:
                inner = A.function_ref(sensor.wraps.kernels_for(dims).observe_agent,
                                       f"{type(sensor.wraps).__name__} (sensor model)", "observe_agent")
            sensors.append((agent, world, inner))
        api.register_plume(self._params["plume"], sc.plume.kernels_for(dims), f"{type(sc.plume).__name__} (plume model)")
        for model in self._models():
            kernels = model.kernels_for(dims)
            for role in kernels.__dataclass_fields__:
                check_names(getattr(kernels, role), model)
        label = " + ".join(type(m).__name__ for m in (sc.plume, sc.action_model, *sc.sensors))
        if dims == 3:
            label += " (3-D)"
        if walls:
            label += " among walls"
        return A.Layout(plume=roles[0], body=roles[1], reward=roles[2], sensors=tuple(sensors),
                        label=label, dims=dims, walls=walls, several_sources=sc.plume.source_count() > 1,
                        records=A.records_of(self._records_for(self.state)[0]))

    def _models(self) -> list:
        sc = self.scenario
        inner = [s.wraps for s in sc.sensors if s.wraps is not None]
        return [sc.plume, sc.action_model, sc.reward, *sc.sensors, *inner]

    def _compile(self, fn, args, what: str) -> None:
        compile_entry(fn, args, what=what, label=self._layout.label, models=self._models())

    def _dummy_actions(self) -> np.ndarray:
        return np.zeros(self._action_shape, np.float64 if self.scenario.continuous else np.int64)

    def _model_state(self, state: WorldState, role: str) -> tuple:
        prefix = role + "."
        arrays = {name[len(prefix):]: arr for name, arr in state.models.items() if name.startswith(prefix)}
        return _findable_record(self._roles[role].state_tuple(arrays))

    def _args_for(self, state: WorldState) -> tuple:
        """The last arguments of the driver's entry points for ``state`` (``engine/assemble.py``)."""
        return A.entry_args(*self._records_for(state))

    def _records_for(self, state: WorldState) -> tuple:
        """The driver's records for ``state``: ``(models, core)`` (``engine/assemble.py``)."""
        P = self._params
        sensors = []
        for k, sensor in enumerate(self.scenario.sensors):
            inner = _findable_record(sensor.wraps.params(self._ctx)) if sensor.wraps is not None else ()
            sensors.append(A.SensorArgs(P[f"sensor{k}"], self._model_state(state, f"sensor{k}"), inner))
        models = A.Models(A.ModelArgs(P["plume"], self._model_state(state, "plume")),
                          A.ModelArgs(P["body"], self._model_state(state, "body")), P["reward"], tuple(sensors))
        if self.scenario.walls is not None:
            walls, wall_index = self.scenario.walls.masks, state.models[WALL_INDEX]
        else:
            walls, wall_index = self._no_walls
        core = A.Core(self._cols, self._cfg, self._fcfg, self._starts, state.pos, state.active, state.terminated,
                      state.truncated, state.obs, state.reward, state.ep_length, state.world_t, state.world_done,
                      state.world_episode, state.world_seed, state.final_obs, state.final_length, walls, wall_index)
        return models, core

    def _check_work(self, num_worlds: int) -> None:
        """Refuse a step no run could finish: its operations beyond the per-agent work (every pair
        of agents of a world, for ``Neighbours``), estimated before anything is allocated."""
        per_world = sum(model.step_operations(self._ctx) for model in self._models())
        total = per_world * num_worlds
        if total > MAX_STEP_OPERATIONS:
            minutes = total * SECONDS_PER_OPERATION / 60
            raise ValidationError(
                f"num_worlds x n_agents: a step would take about {total:.3g} operations ({per_world:.3g} per world, "
                f"every pair of agents for the neighbour sensor), about {minutes:.3g} minutes; expected at most "
                f"{MAX_STEP_OPERATIONS:.3g} (2**40). Use fewer agents per world or no Neighbours sensor.")

    # ------------------------------------------------------------------ sizes
    @property
    def n_agents(self) -> int:
        """Agents per world (N)."""
        return self.scenario.n_agents

    @property
    def total_agents(self) -> int:
        """Agents in all worlds (B * N): the leading size of every per-agent array."""
        return self.num_worlds * self.scenario.n_agents

    @property
    def num_agents(self) -> int:
        """Deprecated name of ``total_agents`` (too close to ``n_agents``, the agents per world)."""
        warnings.warn("Simulator.num_agents is deprecated; use Simulator.total_agents (all worlds) or "
                      "Simulator.n_agents (per world)", DeprecationWarning, stacklevel=2)
        return self.total_agents

    @property
    def obs_dim(self) -> int:
        return self.scenario.obs_dim

    @property
    def n_actions(self) -> int:
        return self.scenario.n_actions

    @property
    def field(self) -> np.ndarray:
        """The concentration of world 0 now, ``(H, W)`` float32 (``(D, H, W)`` in 3-D; read-only for
        a static plume)."""
        return self.plume_image(0)

    @property
    def dims(self) -> int:
        """2, or 3 for a 3-D scenario: the coordinates of a position (``positions`` is ``(B*N, dims)``)."""
        return self.scenario.dims

    @property
    def static_field(self) -> np.ndarray | None:
        """The one ``(H, W)`` float32 field every world shares (a static plume's), or None when
        each world has its own (a random or moving source, puffs, a movie, Poisson hits)."""
        return self._ctx.field

    def plume_image(self, world: int = 0) -> np.ndarray:
        """``(H, W)`` float32 concentration of one world at its current step, for pictures
        (``(D, H, W)`` in 3-D: ``plume_multi.viz.volume`` draws it)."""
        if not _is_int(world) or not 0 <= world < self.num_worlds:
            raise ValidationError(f"world: got {world!r}; expected an integer in 0..{self.num_worlds - 1}")
        plume = self.scenario.plume
        if self._ctx.field is not None:
            return self._ctx.field
        state = self._model_state(self.state, "plume")
        self._check_guards()
        return plume.image(self._params["plume"], state, int(world), int(self.state.world_t[world]))

    @property
    def sources(self) -> np.ndarray:
        """``(B, dims)`` float64: the source each world is searching for, ``(x, y)`` (``(x, y, z)``
        in 3-D) in cells."""
        return self.scenario.plume.sources(self._params["plume"], self._model_state(self.state, "plume"),
                                           self.num_worlds)

    @property
    def source_positions(self) -> np.ndarray:
        """``(B, K, 2)`` float64: every source of every world now, ``(x, y)`` in cells (``K``
        sources per world; ``sources`` is the first of each)."""
        return self.scenario.plume.source_positions(self._params["plume"], self._model_state(self.state, "plume"),
                                                    self.num_worlds)

    @property
    def sources_found(self) -> np.ndarray:
        """``(B, K)`` bool: the sources an agent of each world has reached this episode. With one
        source: whether an agent of the world has arrived."""
        found = self.scenario.plume.sources_found(self._params["plume"], self._model_state(self.state, "plume"),
                                                  self.num_worlds)
        if found is not None:
            return found
        return self.state.terminated.reshape(self.num_worlds, self.n_agents).any(axis=1)[:, None]

    @property
    def wall_index(self) -> np.ndarray | None:
        """``(B,)`` int64: the wall mask each world drew for its episode (an index into
        ``scenario.walls.masks``; a read-only view), or None without walls."""
        if self.scenario.walls is None:
            return None
        view = self.state.models[WALL_INDEX].view()
        view.flags.writeable = False
        return view

    def wall_mask(self, world: int = 0) -> np.ndarray | None:
        """World ``world``'s solid cells now, ``(H, W)`` bool (``(D, H, W)`` in 3-D; read-only), or
        None without walls."""
        if not _is_int(world) or not 0 <= world < self.num_worlds:
            raise ValidationError(f"world: got {world!r}; expected an integer in 0..{self.num_worlds - 1}")
        walls = self.scenario.walls
        if walls is None:
            return None
        return walls.masks[int(self.state.models[WALL_INDEX][world])]

    # ------------------------------------------------------------------ reset / step
    def reset(self, seed=None, mask=None) -> np.ndarray:
        """Start new episodes; return the observations, ``(B*N, D)`` float32 (a view).

        Args:
            seed: ``None`` or an integer. With a seed, world ``i`` is seeded ``seed + i`` and its
                first episode starts exactly where ``PlumeSearchEnv().reset(seed=seed + i)`` does.
                With ``None``, each world begins its next episode from its own stream (the first
                reset ever draws a base seed, kept in ``self.seed``).
            mask: ``None`` (all worlds) or a ``(B,)`` bool array of the worlds to reset; the
                others are left exactly as they are.
        """
        seed = check_seed(seed, self.num_worlds)
        if mask is None:
            mask = self._all_worlds
        else:
            if not isinstance(mask, np.ndarray) or mask.shape != (self.num_worlds,) or mask.dtype != np.bool_:
                got = f"shape {mask.shape} dtype {mask.dtype}" if isinstance(mask, np.ndarray) else type(mask).__name__
                raise ValidationError(f"mask: got {got}; expected a ({self.num_worlds},) bool array")
            if not self._ready and not mask.all():
                raise StateError("Cannot reset part of the worlds before the first reset(): reset them all first")
            mask = np.ascontiguousarray(mask)
        if seed is None and not self._ready:
            seed = int(np.random.SeedSequence().entropy % (2**31 - self.num_worlds))
        self._check_guards()
        if seed is not None:
            if mask is self._all_worlds:
                self.seed = seed
            self._seed_base[mask] = seed
        self._run(1, mask, -1 if seed is None else seed, self._no_actions, *self._args)
        self._ready = True
        return self.state.obs

    def step(self, actions):
        """Advance every world one step.

        Args:
            actions: discrete bodies: ``(B*N,)`` (or ``(B, N)``) integers in ``0..n_actions-1``;
                continuous bodies: ``(B*N, 2)`` (or ``(B, N, 2)``) finite floats, clipped to the
                action box (``(B*N, 3)`` velocities in 3-D). Agents that are not active ignore
                theirs, but every entry is checked.

        Returns:
            ``(obs, reward, terminated, truncated)``: views of ``(B*N, D)`` float32,
            ``(B*N,)`` float32, ``(B*N,)`` bool, ``(B*N,)`` bool, valid until the next call.

        Raises:
            ValidationError: wrong type, dtype, shape or a value out of range. Nothing changed.
            StateError: before the first ``reset``.
        """
        given = actions
        if (type(actions) is not np.ndarray or actions.shape != self._action_shape
                or actions.dtype != (np.float64 if self.scenario.continuous else np.int64)
                or not actions.flags.c_contiguous):
            actions = self._coerce_actions(actions)
        if not self._ready:
            raise StateError("Cannot step before reset(): call reset() first")
        if self._guards:
            self._check_guards()
        if self.parallel:
            with PARALLEL_LOCK:  # Numba's workqueue threads take one launch at a time
                bad = self._driver.step_parallel(actions, self._all_worlds, *self._args)
        else:
            bad = self._run(0, self._all_worlds, -1, actions, *self._args)
        if bad >= 0:
            self._bad_action(given, bad)
        s = self.state
        return s.obs, s.reward, s.terminated, s.truncated

    def _check_guards(self) -> None:
        for guard in self._guards:
            guard()

    def _bad_action(self, given, row: int):
        body = self.scenario.action_model
        value = np.asarray(given).reshape(self._action_shape)[row]
        if self.scenario.continuous:
            raise ValidationError(f"actions[{row}] = {value.tolist()} is not finite; expected finite "
                                  f"{self._action_words()}. Nothing was changed.")
        raise ValidationError(
            f"actions[{row}] = {value} is out of range; expected integers in 0..{self.n_actions - 1} "
            f"(action model {body.name}). Nothing was changed."
        )

    def _action_words(self) -> str:
        return "(speed, turn) pairs" if self.dims == 2 else "(vx, vy, vz) velocities"

    def _coerce_actions(self, actions) -> np.ndarray:
        B, N = self.num_worlds, self.n_agents
        if self.scenario.continuous:
            k = self._action_shape[1]
            expected = f"a float array of shape ({B * N}, {k}) or ({B}, {N}, {k}): {self._action_words()}, one per agent"
            try:
                arr = np.asarray(actions)
            except (TypeError, ValueError):
                raise ValidationError(f"actions: got {type(actions).__name__}; expected {expected}") from None
            if arr.dtype.kind not in "fiu":
                raise ValidationError(f"actions: got dtype {arr.dtype}; expected {expected}")
            if arr.shape not in ((B * N, k), (B, N, k)):
                raise ValidationError(f"actions: got shape {arr.shape}; expected {expected}")
            return np.ascontiguousarray(arr.reshape(B * N, k), dtype=np.float64)
        expected = f"an integer array of shape ({B * N},) or ({B}, {N}) with values in 0..{self.n_actions - 1}"
        try:
            arr = np.asarray(actions)
        except (TypeError, ValueError):
            raise ValidationError(f"actions: got {type(actions).__name__}; expected {expected}") from None
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
        """``(B*N, dims)`` int32 cells ``(x, y)`` (``(x, y, z)`` in 3-D; a view)."""
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

    def model_state(self, name: str) -> np.ndarray:
        """A model's state array by name (``"body.heading"``, ``"plume.source"``, ...): a read-only
        view, valid until the next call. The state changes only through ``reset``, ``step`` and
        ``restore`` (which checks what it is given)."""
        if name not in self.state.models:
            raise ValidationError(f"name: got {name!r}; expected one of {sorted(self.state.models)}")
        view = self.state.models[name].view()
        view.flags.writeable = False
        return view

    def bind_observations(self, buffer: np.ndarray) -> None:
        """Make ``buffer`` the array the compiled step writes observations into, from now on.

        For trainers that own the memory (shared buffers of a multi-process collector, PufferLib
        style): ``reset`` and ``step`` then return ``buffer`` itself, written in place, with no
        copy. The current observations are copied into it first.

        Args:
            buffer: ``(B*N, D)`` float32, C-contiguous, writeable and aligned.

        Raises:
            ValidationError: anything else; nothing changes.
        """
        shape = self.state.obs.shape
        if not isinstance(buffer, np.ndarray):
            raise ValidationError(f"buffer: got {type(buffer).__name__}; expected a numpy float32 array of shape {shape}")
        if (buffer.dtype != np.float32 or buffer.shape != shape or not buffer.flags.c_contiguous
                or not buffer.flags.writeable or not buffer.flags.aligned):
            raise ValidationError(
                f"buffer: got shape {buffer.shape} dtype {buffer.dtype} (C-contiguous {buffer.flags.c_contiguous}, "
                f"writeable {buffer.flags.writeable}, aligned {buffer.flags.aligned}); expected a C-contiguous, "
                f"writeable, aligned float32 array of shape {shape}: np.zeros({shape}, np.float32), or a view of "
                "shared memory with that layout")
        buffer[...] = self.state.obs
        self.state.obs = buffer
        self._args = self._args_for(self.state)

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
                    seed_base=self._seed_base.copy(), scenario=self._scenario_json())
        return snap

    def _scenario_json(self) -> str:
        return json.dumps(self.scenario.metadata(), sort_keys=True)

    def restore(self, snapshot) -> None:
        """Bring this simulator back to ``snapshot``. Everything is checked first (keys, shapes,
        dtypes, the scenario it was taken from, and the consistency of its content); on an error
        nothing changes."""
        if not isinstance(snapshot, dict) and not hasattr(snapshot, "files"):
            raise ValidationError(f"snapshot: got {type(snapshot).__name__}; expected the dict made by snapshot()")
        snap = {k: snapshot[k] for k in snapshot.files} if hasattr(snapshot, "files") else snapshot

        def scalar(key, kind):
            if key not in snap:
                raise ValidationError(f"snapshot: missing key {key!r}; expected a dict made by snapshot()")
            value = snap[key]
            if isinstance(value, np.ndarray) and value.shape == ():
                value = value.item()
            if not isinstance(value, kind) or isinstance(value, bool):
                raise ValidationError(f"snapshot[{key!r}]: got {value!r}; expected {kind.__name__ if isinstance(kind, type) else 'an integer'}")
            return value

        if scalar("autoreset", str) != self.autoreset:
            raise ValidationError(f"snapshot['autoreset']: got {snap['autoreset']!r}; this simulator has {self.autoreset!r}")
        theirs = scalar("scenario", str)
        mine = self._scenario_json()
        if theirs != mine:
            try:
                a, b = json.loads(theirs), json.loads(mine)
                diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            except (ValueError, AttributeError):
                diff = ["(unreadable)"]
            raise ValidationError(f"snapshot['scenario']: taken from a different scenario; fields that differ: {diff}")
        base = int(scalar("base_seed", (int, np.integer)))
        if not -1 <= base <= MAX_SEED:
            raise ValidationError(f"snapshot['base_seed']: got {base}; expected -1 or a seed in 0..{MAX_SEED}")
        seed_base = snap.get("seed_base")
        if not isinstance(seed_base, np.ndarray) or seed_base.shape != (self.num_worlds,) or seed_base.dtype != np.int64:
            raise ValidationError(f"snapshot['seed_base']: got {type(seed_base).__name__}; expected a "
                                  f"({self.num_worlds},) int64 array")
        candidate = self.state.check_snapshot(snap)
        problems = self._problems(candidate, seed_base)
        if problems:
            raise ValidationError(f"snapshot: inconsistent state, nothing restored: {'; '.join(problems[:3])}")
        self.state.copy_from(candidate)
        self._seed_base[:] = seed_base
        self.seed = None if base < 0 else base
        self._ready = True

    def validate(self) -> list[str]:
        """Problems in the current state (empty when consistent)."""
        return self._problems(self.state, self._seed_base, started=self._ready)

    def _model_problems(self, state: WorldState, started: bool) -> list[str]:
        """Every model's ``check_state``, before any compiled function reads its arrays: the
        plume's first, then the others against the sources its arrays hold (read only once they
        are consistent). Before the first reset (``started`` False) the arrays hold nothing yet:
        the models check them alone (``world=None``)."""
        problems = []
        world = StateWorld(state, None) if started else None
        for role, model in self._roles.items():  # the plume first
            prefix = role + "."
            arrays = {name[len(prefix):]: arr for name, arr in state.models.items() if name.startswith(prefix)}
            for name, what in model.check_state(self._ctx, arrays, world):
                problems.append(f"{prefix}{name} ({model.name}.{name}): {what}")
            if role == "plume":
                if problems:
                    return problems  # the others are checked against the sources its arrays hold
                if started:
                    sources = self.scenario.plume.sources(self._params["plume"], self._model_state(state, "plume"),
                                                          self.num_worlds)
                    world = StateWorld(state, sources)
        return problems

    def _problems(self, state: WorldState, seed_base: np.ndarray, started: bool = True) -> list[str]:
        sc = self.scenario
        self._check_guards()
        problems = state.validate(sc.grid_size, max_steps=sc.max_steps, autoreset=self.autoreset)
        if problems:
            return problems
        problems = self._model_problems(state, started)
        if problems:  # compiled code below must not read what a model refused
            return problems
        B = self.num_worlds
        rows = lambda arr: np.flatnonzero(arr)  # noqa: E731
        low, high = self._obs_bounds
        outside = (state.obs < low) | (state.obs > high)
        col = 0
        for sensor in sc.sensors:
            width = sensor.width(self._ctx)
            bad = rows(outside[:, col:col + width].any(axis=1))
            if bad.size:
                problems.append(f"obs: {bad.size} rows whose {sensor.name} columns are outside the sensor's bounds "
                                f"[{low[col:col + width].min():g}, {high[col:col + width].max():g}] (first: row "
                                f"{bad[0]})")
            col += width
        allowed = np.array(sorted({0.0, *sc.reward.values()}), dtype=np.float32)
        bad = rows(~np.isin(state.reward, allowed))
        if bad.size:
            problems.append(f"reward: {bad.size} values the reward model cannot give (first: row {bad[0]}, "
                            f"{state.reward[bad[0]]!r}; expected one of {allowed.tolist()})")
        seeded = seed_base >= 0
        wrong = rows(seeded & (state.world_seed != seed_base + np.arange(B)))
        if wrong.size:
            problems.append(f"world_seed: {wrong.size} worlds whose seed is not the seed they were reset with "
                            f"(first: world {wrong[0]})")
        if sc.walls is not None:
            problems += self._wall_problems(state)
        # recompute the observations of the sensors that are a pure function of the state
        recomputed = self._observe_copy(state)
        col = 0
        for sensor in sc.sensors:
            width = sensor.width(self._ctx)
            if sensor.recomputable:
                a = state.obs[:, col:col + width]
                b = recomputed[:, col:col + width]
                diff = rows(~((a == b) | (np.isnan(a) & np.isnan(b))).all(axis=1))
                if diff.size:
                    problems.append(f"obs: {diff.size} rows whose {sensor.name} columns do not match the state "
                                    f"(first: row {diff[0]})")
            col += width
        d2 = self._distance2_to_source(state)
        moved_in = state.active & (state.ep_length > 0) & (d2 <= sc.goal_d2())
        at_goal = rows(moved_in)
        if at_goal.size:
            problems.append(f"active: {at_goal.size} agents that moved onto the source are still marked active "
                            f"(first: row {at_goal[0]})")
        return problems

    def _wall_problems(self, state: WorldState) -> list[str]:
        """Each world's mask is the one its seed and episode draw, for the engine and for a plume
        that keeps its own (puffs); no agent is inside a solid cell. (The indices are in range:
        ``WorldState.validate`` checked them first.)"""
        walls, problems = self.scenario.walls, []
        index = state.models[WALL_INDEX]
        drawn = mask_indices(state.world_seed, state.world_episode, walls.n_masks)
        plume_index = self.scenario.plume.wall_index(self._params["plume"], self._model_state(state, "plume"))
        for name, got in ((WALL_INDEX, index), ("plume's wall index", plume_index)):
            wrong = np.flatnonzero(got != drawn) if got is not None else np.zeros(0, np.int64)
            if wrong.size:
                problems.append(f"{name}: {wrong.size} worlds whose wall mask is not the one their seed and episode "
                                f"draw (first: world {wrong[0]}, mask {got[wrong[0]]}, drawn {drawn[wrong[0]]})")
        if problems:
            return problems
        world = np.repeat(np.arange(self.num_worlds), self.n_agents)
        cells = tuple(state.pos[:, c] for c in reversed(range(state.pos.shape[1])))
        inside = np.flatnonzero(walls.masks[(index[world], *cells)])
        if inside.size:
            problems.append(f"pos: {inside.size} agents inside a solid cell of their world's wall mask "
                            f"(first: row {inside[0]}, cell {tuple(state.pos[inside[0]].tolist())})")
        return problems

    def _observe_copy(self, state: WorldState) -> np.ndarray:
        """The observations the sensors give for ``state`` now, computed on copies."""
        copy = WorldState(num_worlds=state.num_worlds, n_agents=state.n_agents, obs_dim=state.obs_dim,
                          models={k: v.copy() for k, v in state.models.items()}, model_specs=state.model_specs,
                          model_labels=state.model_labels, dims=state.dims,
                          **{name: getattr(state, name).copy() for name in
                             ("pos", "active", "terminated", "truncated", "obs", "reward", "ep_length",
                              "world_t", "world_done", "world_episode", "world_seed", "final_obs",
                              "final_length")})
        # mode 2 of the compiled entry point: observe every world (the step's own sensor code)
        self._run(2, self._all_worlds, -1, self._no_actions, *self._args_for(copy))
        return copy.obs

    def _distance2_to_source(self, state: WorldState) -> np.ndarray:
        sc = self.scenario
        loc = sc.action_model.locations(self._params["body"], self._model_state(state, "body"), state.pos)
        plume_state = self._model_state(state, "plume")
        if sc.plume.source_count() > 1:  # the nearest source an arrival would count
            from .models.sources.source_set import nearest_counted

            xy = sc.plume.source_positions(self._params["plume"], plume_state, self.num_worlds)
            found = sc.plume.sources_found(self._params["plume"], plume_state, self.num_worlds)
            return nearest_counted(xy, found, loc, self.n_agents, sc.team)
        src = sc.plume.sources(self._params["plume"], plume_state, self.num_worlds)
        d = loc - np.repeat(src, self.n_agents, axis=0)
        return (d * d).sum(axis=1)

    def __repr__(self) -> str:
        return f"Simulator({self.scenario!r}, num_worlds={self.num_worlds}, autoreset={self.autoreset!r})"
