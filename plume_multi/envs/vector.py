"""``vector_env()``: a native Gymnasium ``VectorEnv`` of B single-agent plume searches.

One ``step`` call advances every world in one compiled kernel call (``Simulator``); this module
only turns the simulator's buffers into Gymnasium's batched return values, copied once per call,
and computes each world's action mask.
"""

from __future__ import annotations

import inspect
import sys

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from ..engine.jit import njit

from ..errors import StateError, ValidationError
from ..models.bodies import Cardinal
from ..scenario import Scenario
from ..simulator import MAX_SEED, Simulator
from ._checks import check_action_model, check_seed, is_integer, shown
from ._spaces import MODEL_OPTIONS, action_space, has_move_table, observation_box

__all__ = ["vector_env", "dict_vector_env", "compact_vector_env", "PlumeVectorEnv", "OBS_TYPES"]

OBS_TYPES = ("compact", "dict")
MAX_NUM_ENVS = 1 << 24  # worlds per vector env: beyond this the buffers alone pass a gigabyte

_MODE_NAMES = {  # what the Simulator calls each mode
    AutoresetMode.NEXT_STEP: "next_step",
    AutoresetMode.SAME_STEP: "same_step",
    AutoresetMode.DISABLED: "disabled",
}
_SCENARIO_FIELDS = (*MODEL_OPTIONS, "grid_size", "source_location", "sigma", "n_agents", "goal_radius", "max_steps",
                    "start_positions", "action_model", "n_neighbours", "team")

# Edge code of a cell: bit 0 x == 0, bit 1 x == width-1, bit 2 y == 0, bit 3 y == height-1,
# bit 4 "every action allowed" (the world's episode has ended and it is not reset yet).
# With unit moves these bits alone decide which moves change the position.
_N_CODES = 32
_FREE = 16


_ALL4 = np.uint32(0x01010101)  # four True bytes


@njit(cache=True)
def _fill_cardinal_masks(pos64, world_done, x_max, y_max, free_when_done, out):
    """Action masks of the ``"cardinal"`` model, four bools packed in one uint32 per world.

    Branch-free, so it vectorizes (about 0.5 ns per world; the table lookup of ``_fill_masks``
    takes 1.7).

    Args:
        pos64: ``(B,)`` uint64, a view of the ``(B, 2)`` int32 cells: x in the low word, y in
            the high word (little-endian).
        world_done: ``(B,)`` bool, the episode ended on the last step.
        x_max, y_max: ``width - 1``, ``height - 1``.
        free_when_done: 1 if an ended world allows every action, else 0.
        out: ``(B,)`` uint32, a view of the ``(B, 4)`` bool result (mutated): byte k is action k,
            0 UP (y < y_max), 1 RIGHT (x < x_max), 2 DOWN (y > 0), 3 LEFT (x > 0). A world with no
            allowed move (a 1x1 grid) allows every action.
    """
    done8 = world_done.view(np.uint8)
    free = np.uint32(free_when_done)
    for i in range(pos64.shape[0]):
        v = pos64[i]
        x = np.int32(v & np.uint64(0xFFFFFFFF))
        y = np.int32(v >> np.uint64(32))
        m = (np.uint32(y < y_max) | (np.uint32(x < x_max) << np.uint32(8))
             | (np.uint32(y > 0) << np.uint32(16)) | (np.uint32(x > 0) << np.uint32(24)))
        out[i] = m | (_ALL4 * ((np.uint32(done8[i]) & free) | np.uint32(m == 0)))


@njit(cache=True)
def _fill_masks(pos, world_done, x_max, y_max, table, out):
    """Action masks of any action model with unit moves, from a table of edge codes.

    Args:
        pos: ``(B, 2)`` int32 cells ``(x, y)``.
        world_done: ``(B,)`` bool, the episode ended on the last step.
        x_max, y_max: ``width - 1``, ``height - 1``.
        table: ``(32, K)`` bool, the mask of each edge code (``_mask_table``).
        out: ``(B, K)`` bool (mutated).
    """
    n_actions = table.shape[1]
    for i in range(pos.shape[0]):
        x = pos[i, 0]
        y = pos[i, 1]
        code = ((x == 0) + 2 * (x == x_max) + 4 * (y == 0) + 8 * (y == y_max)
                + _FREE * world_done[i])
        for k in range(n_actions):
            out[i, k] = table[code, k]


def move_masks(pos: np.ndarray, moves: np.ndarray, grid_size, free: np.ndarray, walls=None) -> np.ndarray:
    """``(M, K)`` bool in any dimension: the moves of ``moves`` ``(K, dims)`` that change each cell of
    ``pos`` ``(M, dims)`` (clamped into ``grid_size``); rows where ``free`` (and rows where no move
    changes the cell) allow every action. The masks of 3-D worlds and of worlds with walls (NumPy;
    other 2-D worlds use the compiled edge-code tables above). ``walls``: ``(masks, index)``, the
    scenario's ``(K, ...)`` wall masks and the ``(M,)`` mask of each row's world: a move into a
    solid cell is refused, so it changes nothing."""
    limit = np.asarray(grid_size, dtype=np.int64) - 1
    here = pos.astype(np.int64)[:, None, :]
    moved = np.clip(here + moves.astype(np.int64)[None], 0, limit)
    masks = (moved != here).any(axis=2)
    if walls is not None:
        solid, index = walls
        cells = tuple(moved[..., c] for c in reversed(range(moved.shape[2])))
        masks &= ~solid[(index[:, None], *cells)]
    masks[free | ~masks.any(axis=1)] = True
    return masks


def _mask_table(scenario: Scenario, free_when_done: bool) -> np.ndarray:
    """``(32, K)`` bool: for each edge code, the actions that move the agent off its cell.

    A row where no action moves (a 1x1 grid) allows every action: a sampler needs at least one.
    With ``free_when_done``, codes with the ``_FREE`` bit allow every action.
    """
    moves = scenario.moves()
    if np.abs(moves).max() > 1:  # the edge code only decides unit moves
        raise ValidationError(f"action masks: action model {scenario.action_model!r} has moves longer than one cell")
    w, h = scenario.grid_size
    table = np.ones((_N_CODES, len(moves)), dtype=np.bool_)
    for code in range(_FREE):
        # a representative cell with this code (codes that cannot occur on this grid get any row)
        x = 0 if code & 1 else (w - 1 if code & 2 else min(1, w - 1))
        y = 0 if code & 4 else (h - 1 if code & 8 else min(1, h - 1))
        nx = np.clip(x + moves[:, 0], 0, w - 1)
        ny = np.clip(y + moves[:, 1], 0, h - 1)
        row = (nx != x) | (ny != y)
        table[code] = row if row.any() else True
        table[code | _FREE] = True if free_when_done else table[code]
    return table


def _autoreset_mode(value) -> AutoresetMode:
    if isinstance(value, AutoresetMode):
        return value
    if isinstance(value, str):  # AutoresetMode is a str Enum: handled above
        for mode, name in _MODE_NAMES.items():
            if value in (mode.value, name, mode.name):
                return mode
    raise ValidationError(
        f"autoreset_mode: got {shown(value)}; expected a gymnasium.vector.AutoresetMode "
        f"(NEXT_STEP, SAME_STEP or DISABLED) or one of {[m.value for m in _MODE_NAMES]}"
    )


def _scenario(kwargs: dict) -> Scenario:
    kwargs = dict(kwargs)
    plume_params = kwargs.pop("plume_params", None)
    if plume_params is not None:  # PlumeSearchEnv's spelling, so make_vec kwargs work in every mode
        if not isinstance(plume_params, dict) or set(plume_params) - {"sigma"}:
            raise ValidationError(f"plume_params: got {plume_params!r}; expected None or {{'sigma': s}}")
        if "sigma" in kwargs and "sigma" in plume_params:
            raise ValidationError("sigma: given twice (as sigma= and in plume_params); give it once")
        kwargs.update(plume_params)
    unknown = sorted(set(kwargs) - set(_SCENARIO_FIELDS))
    if unknown:
        raise ValidationError(
            f"vector_env: unknown option(s) {unknown}; expected num_envs, autoreset_mode, obs_type, "
            f"render_mode, plume_params or Scenario fields {list(_SCENARIO_FIELDS)}"
        )
    if "action_model" in kwargs:
        check_action_model(kwargs["action_model"])
    n_agents = kwargs.get("n_agents", 1)
    if not (is_integer(n_agents) and n_agents == 1):
        raise ValidationError(
            f"n_agents: got {shown(n_agents)}; expected 1 (vector_env runs single-agent worlds; "
            "for several agents per world use parallel_env() or Simulator)"
        )
    try:
        return Scenario(**kwargs)
    except ValidationError as exc:
        message = str(exc)
        if plume_params is not None and message.startswith("Scenario.sigma:"):  # name it as it was given
            raise ValidationError("plume_params['sigma']:" + message[len("Scenario.sigma:"):]) from None
        raise


class PlumeVectorEnv(VectorEnv):
    """B independent single-agent plume searches, stepped together in one compiled call.

    ## Description
    Each world is the search of ``PlumeSearchEnv``: one agent on a ``width x height`` grid looks
    for the source of a static Gaussian plume. World ``i`` reset with seed ``s`` replays exactly
    what ``PlumeSearchEnv().reset(seed=s + i)`` does, for the same actions.

    ## Action Space
    ``single_action_space = Discrete(4)`` (``"cardinal"``): 0 UP ``(0, +1)``, 1 RIGHT ``(+1, 0)``,
    2 DOWN ``(0, -1)``, 3 LEFT ``(-1, 0)``; the moved position is clamped into the grid
    (``action_model="moore"``: ``Discrete(9)``). ``action_space = MultiDiscrete([4] * B)``; ``step``
    takes any integer array of shape ``(B,)``. Invalid actions raise ``ValidationError`` before
    any world changes.

    ## Observation Space
    ``obs_type="compact"`` (default), ``Box(0, 1, (3,), float32)`` per world:

    | index | observation | range |
    |---|---|---|
    | 0 | concentration at the agent's cell | [0, 1] |
    | 1 | x / (width - 1) | [0, 1] |
    | 2 | y / (height - 1) | [0, 1] |

    ``obs_type="dict"``: the contract's ``Dict`` with keys ``agent_position`` (2,) int32 ``(x, y)``,
    ``concentration_field`` (height, width) float32 indexed ``[y, x]``, ``source_location`` (2,)
    int32, batched to ``(B, ...)``. It copies the whole field for every world at every step: use it
    with small B; train at scale on ``"compact"``.

    Observations are fresh arrays at every call: nothing returned shares memory with a later return.

    ## Rewards
    1.0 on the step that reaches the source (distance ``<= goal_radius``), else 0.0; float32.

    ## Starting State
    ``x = rng.integers(0, width)`` then ``y = rng.integers(0, height)`` with
    ``rng = numpy.random.default_rng(s + i)`` for world ``i``'s first episode after
    ``reset(seed=s)``; later episodes from the world's own counter-based stream (deterministic
    given ``s``). ``reset()`` without a seed continues every world's stream.

    ## Episode End
    Terminated: the source is reached. Truncated: ``max_steps`` steps. Both may be True.

    ## Autoreset (the ``autoreset_mode`` attribute and ``metadata["autoreset_mode"]``)
    * ``NEXT_STEP`` (default): the step after an ending resets that world (its action is ignored;
      reward 0, flags False).
    * ``SAME_STEP``: the ending step returns the new episode's first observation; the last one is in
      ``info["final_obs"]`` (``(B, ...)``, like the observation, rows valid where
      ``info["_final_obs"]``), and ``info["final_info"]`` holds ``episode_length`` and
      ``goal_reached`` of the ended episodes (rows valid where ``info["_final_info"]``). Both keys
      appear only on steps where some world ended.
    * ``DISABLED``: nothing resets by itself; call ``reset(options={"reset_mask": mask})``.
      Stepping an ended world is allowed: an agent at the source stays there and earns nothing.

    ## Infos and action masks
    ``info["action_mask"]`` ``(B, K)`` bool (and ``info["_action_mask"]``, all True) after every
    ``reset`` and ``step``; ``action_masks()`` returns the same for the current state. A move is
    allowed when it changes the agent's cell (a move into a wall does not); a world whose episode
    has ended and is not reset yet (``NEXT_STEP``, ``DISABLED``) allows every action.

    ## Arguments
    ``vector_env(num_envs, *, autoreset_mode=AutoresetMode.NEXT_STEP, obs_type="compact",
    render_mode=None, **scenario options)``; the options are ``Scenario``'s (``grid_size``,
    ``source_location``, ``sigma``, ``goal_radius``, ``max_steps``, ``start_positions``,
    ``action_model``) plus ``plume_params={"sigma": s}`` as ``PlumeSearchEnv`` spells it.
    ``render_mode="rgb_array"``: ``render()`` returns one ``(h, w, 3)`` uint8 frame per world.

    ## Version History
    * v0: first version.

    ## Example
    >>> import numpy as np, plume_multi
    >>> envs = plume_multi.vector_env(4096, grid_size=(64, 48), max_steps=200)
    >>> obs, info = envs.reset(seed=0)                      # (4096, 3) float32
    >>> actions = np.zeros(4096, dtype=np.int64)            # all UP
    >>> obs, reward, terminated, truncated, info = envs.step(actions)
    >>> info["action_mask"].shape
    (4096, 4)
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": ["rgb_array"], "render_fps": 30}

    def __init__(self, num_envs: int, *, autoreset_mode=AutoresetMode.NEXT_STEP, obs_type: str = "compact",
                 render_mode=None, **scenario_options):
        if not is_integer(num_envs) or not 1 <= num_envs <= MAX_NUM_ENVS:
            raise ValidationError(f"num_envs: got {shown(num_envs)}; expected an integer in 1..{MAX_NUM_ENVS}")
        if not isinstance(obs_type, str) or obs_type not in OBS_TYPES:
            raise ValidationError(f"obs_type: got {shown(obs_type)}; expected one of {list(OBS_TYPES)}")
        if render_mode is not None and not (isinstance(render_mode, str) and render_mode == "rgb_array"):
            raise ValidationError(f"render_mode: got {shown(render_mode)}; expected None or 'rgb_array'")
        mode = _autoreset_mode(autoreset_mode)
        self.scenario = _scenario(scenario_options)
        self._options = dict(scenario_options)
        self.num_envs = int(num_envs)
        self.obs_type = obs_type
        self.render_mode = render_mode

        sc = self.scenario
        w, h = sc.grid_size[:2]
        if obs_type == "dict" and sc.dims == 3:
            raise ValidationError(f"obs_type: got 'dict' with grid_size={sc.grid_size}; the dict observation is the "
                                  "single-agent contract's (2-D); 3-D worlds take obs_type='compact' (the sensors' "
                                  "columns)")
        self.single_action_space = action_space(sc)
        if obs_type == "compact":
            self.single_observation_space = observation_box(sc)
        else:
            side = max(w, h) - 1
            self.single_observation_space = spaces.Dict({
                "agent_position": spaces.Box(0, side, shape=(2,), dtype=np.int32),
                "concentration_field": spaces.Box(0.0, 1.0, shape=(h, w), dtype=np.float32),
                "source_location": spaces.Box(0, side, shape=(2,), dtype=np.int32),
            })
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)

        self._limits = (w - 1, h - 1)
        self._n_actions = None if sc.continuous else sc.n_actions
        # the packed kernel reads x and y as the two words of one uint64 and writes bytes in order
        self._cardinal = type(sc.action_model) is Cardinal and sys.byteorder == "little" and sc.dims == 2
        self._pos_scale = np.array([w - 1, h - 1], dtype=np.float32)
        self._set_mode(mode)

    def _set_mode(self, mode: AutoresetMode) -> None:
        """Adopt autoreset ``mode``: a new simulator (not reset yet) and the mode's mask rules."""
        # Gymnasium's own vector envs carry the mode as an attribute too (TorchRL reads it there).
        self.autoreset_mode = mode
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        self._same_step = mode == AutoresetMode.SAME_STEP
        self._free_when_done = not self._same_step
        self._mask_table = (_mask_table(self.scenario, free_when_done=self._free_when_done)
                            if has_move_table(self.scenario) and self.scenario.dims == 2 else None)
        self._moves_3d = self.scenario.moves() if has_move_table(self.scenario) and self.scenario.dims == 3 else None
        self._bind(Simulator(self.scenario, self.num_envs, autoreset=_MODE_NAMES[mode]))
        self._ready = False

    def _bind(self, sim: Simulator) -> None:
        """Use ``sim``, and the views of its buffers that the step reads."""
        self._sim = sim
        self._pos = sim.state.pos
        self._world_done = sim.state.world_done
        self._pos64 = self._pos.view(np.uint64).reshape(self.num_envs) if self._cardinal else None

    # ------------------------------------------------------------------ copy / pickle
    # The simulator and the views of its buffers are not copied: a copy gets a simulator of its
    # own, rebuilt from the scenario and restored from a snapshot, so it continues exactly as the
    # original would.
    _UNCOPIED = ("_sim", "_pos", "_world_done", "_pos64")

    def __getstate__(self):
        state = {k: v for k, v in self.__dict__.items() if k not in self._UNCOPIED}
        state["_snapshot"] = self._sim.snapshot() if self._ready else None
        return state

    def __setstate__(self, state):
        state = dict(state)
        snapshot = state.pop("_snapshot")
        self.__dict__.update(state)
        self._bind(Simulator(self.scenario, self.num_envs, autoreset=_MODE_NAMES[self.autoreset_mode]))
        if snapshot is not None:
            self._sim.restore(snapshot)

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed=None, options=None):
        """Reset all worlds, or those of ``options["reset_mask"]``; return ``(obs, info)``.

        Args:
            seed: ``None`` (each world continues its own stream) or an int ``s``: world ``i`` is
                seeded ``s + i``.
            options: ``None`` or ``{"reset_mask": m}``, ``m`` a ``(num_envs,)`` bool array with at
                least one True: only those worlds are reset (with a seed, world ``i`` gets ``s + i``).

        Returns:
            The observations of all worlds and ``{"action_mask", "_action_mask"}``.
        """
        if self.closed:
            raise StateError("Cannot reset: the environment is closed; create a new one")
        # Everything is checked before anything changes.
        seed = check_seed(seed, max_seed=MAX_SEED, num_worlds=self.num_envs)
        mask = self._reset_mask(options)
        if mask is not None and not self._ready and not mask.all():
            raise StateError("Cannot reset part of the worlds before the first reset(): reset them all first "
                             "(options=None)")
        self._sim.reset(seed=seed, mask=mask)
        self._ready = True
        super().reset(seed=seed)
        return self._observe(), {"action_mask": self.action_masks(), "_action_mask": np.ones(self.num_envs, np.bool_)}

    def step(self, actions):
        """Advance every world one step; return ``(obs, reward, terminated, truncated, info)``.

        ``actions``: ``(num_envs,)`` integers in ``0..K-1``. All of them are checked before any
        world changes (``ValidationError``, naming the first bad entry).
        """
        if self.closed:
            raise StateError("Cannot step: the environment is closed; create a new one")
        if self._n_actions is not None and not (type(actions) is np.ndarray and actions.dtype == np.int64
                                                and actions.shape == (self.num_envs,)):
            actions = self._check_actions(actions)
        if not self._ready:
            raise StateError("Cannot step before reset(): call reset() first")
        obs, reward, terminated, truncated = self._sim.step(actions)
        infos = {"action_mask": self.action_masks(), "_action_mask": np.ones(self.num_envs, np.bool_)}
        if self._same_step:
            self._add_final(infos, terminated)
        if self.obs_type == "compact":
            obs = obs.copy()
        else:
            obs = self._observe()
        return obs, reward.copy(), terminated.copy(), truncated.copy(), infos

    def render(self):
        """One ``(height, width, 3)`` uint8 frame per world (``render_mode="rgb_array"``): the world's
        plume now, its source, the agent, and its heading, antenna points and the wind when the
        scenario has them (``plume_multi.viz.scene.world_overlays``). A 3-D world's frame is its
        x-y, x-z and y-z maximum projections side by side (``plume_multi.viz.volume``)."""
        if self.render_mode is None:
            raise StateError("Cannot render: render_mode is None; create the env with render_mode='rgb_array'")
        if not self._ready:
            raise StateError("Cannot render before reset(): call reset() first")
        from ..viz.render import render_frame
        from ..viz.scene import world_overlays

        if self.scenario.dims == 3:
            from ..viz.volume import world_volume_frame

            return tuple(world_volume_frame(self._sim, i) for i in range(self.num_envs))
        active = self._sim.active
        frames = []
        for i in range(self.num_envs):
            scene = world_overlays(self._sim, i)
            frames.append(render_frame(scene.pop("field"), self._pos[i:i + 1], active=active[i:i + 1], **scene))
        return tuple(frames)

    # ------------------------------------------------------------------ extras
    def action_masks(self) -> np.ndarray:
        """``(num_envs, K)`` bool, a new array: the moves that change each agent's cell now.

        A world whose episode ended and is not reset yet allows every action. MaskablePPO
        (sb3-contrib) reads this method.
        """
        if self._moves_3d is not None or (self.scenario.walls is not None and self._mask_table is not None):
            walls = None if self.scenario.walls is None else (self.scenario.walls.masks, self._sim.wall_index)
            return move_masks(self._pos, self.scenario.moves(), self.scenario.grid_size,
                              self._world_done & self._free_when_done, walls)
        if self._mask_table is None:  # no displacement table: every action may change the state
            k = self.single_action_space.shape[0] if self._n_actions is None else self._n_actions
            return np.ones((self.num_envs, k), dtype=np.bool_)
        if self._cardinal:
            masks = np.empty((self.num_envs, 4), dtype=np.bool_)
            _fill_cardinal_masks(self._pos64, self._world_done, self._limits[0], self._limits[1],
                                 self._free_when_done, masks.view(np.uint32).reshape(self.num_envs))
        else:
            masks = np.empty((self.num_envs, self._n_actions), dtype=np.bool_)
            _fill_masks(self._pos, self._world_done, self._limits[0], self._limits[1], self._mask_table, masks)
        return masks

    def with_autoreset_mode(self, autoreset_mode) -> "PlumeVectorEnv":
        """A new vector env with the same arguments and another autoreset mode (not reset yet)."""
        options = dict(self._options)
        return type(self)(self.num_envs, autoreset_mode=autoreset_mode, obs_type=self.obs_type,
                          render_mode=self.render_mode, **options)

    @property
    def agent_positions(self) -> np.ndarray:
        """``(num_envs, dims)`` int32 cells ``(x, y)`` (``(x, y, z)`` in 3-D) of every world's agent
        (a copy)."""
        return self._pos.copy()

    @property
    def simulator(self) -> Simulator:
        """The ``Simulator`` underneath (its arrays are live views; do not write to them)."""
        return self._sim

    def close_extras(self, **kwargs) -> None:
        """Nothing to release: the buffers go with the object."""

    # ------------------------------------------------------------------ helpers
    def _check_actions(self, actions) -> np.ndarray:
        """``actions`` as a ``(num_envs,)`` int64 array, checked against what the caller gave."""
        B, K = self.num_envs, self._n_actions
        expected = f"an integer array of shape ({B},) with values in 0..{K - 1}"
        try:
            arr = np.asarray(actions)
        except (TypeError, ValueError, OverflowError):  # ragged lists, objects NumPy cannot read
            raise ValidationError(f"actions: got {shown(actions, typed=True)}; expected {expected}") from None
        if arr.dtype.kind not in "iu":
            raise ValidationError(f"actions: got {shown(actions, typed=True)} (dtype {arr.dtype}); expected {expected} "
                                  "(floats, NaN, booleans and None are not actions)")
        if arr.shape != (B,):
            raise ValidationError(f"actions: got shape {arr.shape}; expected {expected}")
        bad = np.flatnonzero((arr < 0) | (arr >= K))
        if bad.size:
            i = int(bad[0])
            raise ValidationError(f"actions[{i}] = {arr[i]} is out of range; expected {expected}. Nothing was changed.")
        return arr.astype(np.int64)

    def _reset_mask(self, options):
        if options is None:
            return None
        if not isinstance(options, dict) or set(options) - {"reset_mask"}:
            raise ValidationError(f"options: got {shown(options)}; expected None or {{'reset_mask': (num_envs,) bool array}}")
        if "reset_mask" not in options:
            return None
        mask = options["reset_mask"]
        expected = f"a numpy bool array of shape ({self.num_envs},) with at least one True"
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.shape != (self.num_envs,):
            got = f"shape {mask.shape} dtype {mask.dtype}" if isinstance(mask, np.ndarray) else shown(mask, typed=True)
            raise ValidationError(f"options['reset_mask']: got {got}; expected {expected}")
        if not mask.any():
            raise ValidationError(f"options['reset_mask']: got no True entry; expected {expected}")
        return mask

    def _observe(self):
        """A fresh batched observation of the current state."""
        if self.obs_type == "compact":
            return self._sim.state.obs.copy()
        return self._dict_obs(self._pos)

    def _fields(self) -> np.ndarray:
        """``(B, H, W)`` float32: each world's concentration now (one shared field copied B times
        for a static plume)."""
        sim = self._sim
        if sim.static_field is not None:
            return np.broadcast_to(sim.static_field, (self.num_envs, *sim.static_field.shape)).copy()
        return np.stack([sim.plume_image(i) for i in range(self.num_envs)])

    def _dict_obs(self, positions):
        return {
            "agent_position": np.array(positions, dtype=np.int32),
            "concentration_field": self._fields(),
            "source_location": np.rint(self._sim.sources).astype(np.int32),
        }

    def _add_final(self, infos, terminated):
        """SAME_STEP: the last observation and info of the worlds that ended on this step."""
        ended = self._sim.final_mask
        if not ended.any():
            return
        ended = ended.copy()
        keep = ended[:, None]
        final_compact = np.where(keep, self._sim.final_obs, np.float32(0))
        if self.obs_type == "compact":
            final_obs = final_compact
        else:
            # The engine keeps the compact final observation; its x, y columns are exact cells
            # times 1/(side-1) in float32, so rounding recovers the cells.
            cells = np.rint(final_compact[:, 1:3] * self._pos_scale).astype(np.int32)
            final_obs = self._dict_obs(cells)
        infos["final_obs"] = final_obs
        infos["_final_obs"] = ended
        infos["final_info"] = {
            "episode_length": np.where(ended, self._sim.final_length, 0).astype(np.int32),
            "_episode_length": ended.copy(),
            "goal_reached": terminated & ended,
            "_goal_reached": ended.copy(),
        }
        infos["_final_info"] = ended.copy()


def vector_env(num_envs: int = 1, *, autoreset_mode=AutoresetMode.NEXT_STEP, obs_type: str = "compact",
               render_mode=None, **scenario_options) -> PlumeVectorEnv:
    """A Gymnasium ``VectorEnv`` of ``num_envs`` single-agent plume searches (``PlumeVectorEnv``).

    ``gymnasium.make_vec("PlumeSearch-v0", ...)`` calls ``dict_vector_env`` and
    ``gymnasium.make_vec("PlumeSearchCompact-v0", ...)`` calls ``compact_vector_env``, so that an id
    has one observation space in every vectorization mode. See ``PlumeVectorEnv`` for spaces, autoreset modes and action masks.

    Args:
        num_envs: B >= 1 independent worlds.
        autoreset_mode: a ``gymnasium.vector.AutoresetMode`` (default ``NEXT_STEP``) or its value.
        obs_type: ``"compact"`` (float32 vector per world) or ``"dict"`` (the contract's ``Dict``).
        render_mode: ``None`` or ``"rgb_array"``.
        **scenario_options: ``Scenario`` fields (``grid_size``, ``max_steps``, ``sigma``, ...) or
            ``plume_params={"sigma": s}``.
    """
    return PlumeVectorEnv(num_envs, autoreset_mode=autoreset_mode, obs_type=obs_type,
                          render_mode=render_mode, **scenario_options)


def dict_vector_env(num_envs: int = 1, **options) -> PlumeVectorEnv:
    """``vector_env(num_envs, obs_type="dict", **options)``: the vector entry point of ``PlumeSearch-v0``.

    That id means the contract's ``Dict`` observation in every vectorization mode, so ``obs_type``
    is not an option here (``PlumeSearchCompact-v0`` is the flat ``Box`` observation).
    """
    return _fixed_obs_type(num_envs, "dict", "PlumeSearch-v0", "PlumeSearchCompact-v0", options)


def compact_vector_env(num_envs: int = 1, **options) -> PlumeVectorEnv:
    """``vector_env(num_envs, obs_type="compact", **options)``: the vector entry point of
    ``PlumeSearchCompact-v0`` (the ``Box(3)`` observation in every vectorization mode)."""
    return _fixed_obs_type(num_envs, "compact", "PlumeSearchCompact-v0", "PlumeSearch-v0", options)


def _fixed_obs_type(num_envs, obs_type: str, env_id: str, other_id: str, options: dict) -> PlumeVectorEnv:
    given = options.pop("obs_type", obs_type)
    if given != obs_type:
        raise ValidationError(f"obs_type: got {given!r}; {env_id} always has obs_type={obs_type!r} "
                              f"(for the other observation use {other_id})")
    return PlumeVectorEnv(num_envs, obs_type=obs_type, **options)


# help(vector_env) shows the env card itself, not a pointer to PlumeVectorEnv.
for _factory in (vector_env,):
    if _factory.__doc__ and PlumeVectorEnv.__doc__:  # None under python -OO
        _factory.__doc__ = inspect.cleandoc(_factory.__doc__) + "\n\n" + inspect.cleandoc(PlumeVectorEnv.__doc__)
