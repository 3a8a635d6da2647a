"""The one front-end core: what every environment API maps its ecosystem's calls onto.

Each front-end (``PlumeSearchEnv``, ``vector_env``, ``multi_agent_vector_env``, ``parallel_env`` and
``env``, ``AgentTupleEnv``, the adapters of ``plume_multi.integrations`` and the task envs) is a
thin mapping over a ``Core``: it renames (its options to ``Scenario`` fields, agent names to rows,
Gymnasium's modes to the ``Simulator``'s, arrays to its ecosystem's types) and computes nothing.
The core holds what they share:

* ``scenario_from``: the ``Scenario`` of a front-end's keyword options; an error about a field
  names it as that front-end's user spelled it (from the error's ``field``, not its text);
* ``Core``: the ``Simulator`` of B worlds and, from it, the Gymnasium spaces, checked actions,
  action masks, the final-observation infos of ``SAME_STEP`` autoreset, the step of a fixed agent
  set, the global state, frames, and copies (``copy``, ``pickle``) that continue bit for bit;
* ``fold_seed``: any seed Gymnasium accepts, folded into the front-end's range;
* ``sigma_of``, ``check_options``, ``to_autoreset_mode``, ``reset_mask``: the front-ends' options.

Package-internal: the front-ends of ``envs/``, ``integrations/`` and ``tasks/`` build on it, and
nothing here is part of the public API.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ..checks import is_int, shown
from ..engine.jit import njit
from ..errors import StateError, ValidationError
from ..models.bodies import BY_NAME, Cardinal
from ..scenario import Scenario
from ..simulator import MAX_SEED, Simulator

# The Scenario fields the vector envs take as keyword options.
SCENARIO_FIELDS = ("plume", "sensors", "reward", "start_region", "walls", "grid_size", "source_location", "sigma",
                   "n_agents", "goal_radius", "max_steps", "start_positions", "action_model", "n_neighbours", "team")
# What the Simulator calls each of Gymnasium's autoreset modes.
AUTORESET_NAMES = {
    AutoresetMode.NEXT_STEP: "next_step",
    AutoresetMode.SAME_STEP: "same_step",
    AutoresetMode.DISABLED: "disabled",
}


# ---------------------------------------------------------------------------------- options
def check_options(options: dict, *, owner: str, allowed, takes: str) -> None:
    """Refuse keyword ``options`` a front-end does not take: ``allowed`` are the Scenario fields it
    passes on, ``takes`` its own arguments in words (``"num_envs, autoreset_mode"``)."""
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        expected = f"{takes} or Scenario fields {list(allowed)}"
        raise ValidationError(f"{owner}: got unknown option(s) {unknown}; expected {expected}", owner=owner,
                              got=str(unknown), expected=expected)


def scenario_from(options: dict, *, owner: str, labels: dict | None = None, prefix: str = "") -> Scenario:
    """The ``Scenario`` of a front-end's keyword ``options`` (already under Scenario's names).

    Args:
        options: Scenario fields by keyword.
        owner: the front-end as its errors name it (``"vector_env"``).
        labels: Scenario field -> the name the front-end's user gave it (``{"sigma":
            "plume_params['sigma']"}``): a ``ValidationError`` about that field is raised again
            under that name (``owner`` the front-end, ``field`` the name), its message
            ``"{prefix}{name}: got ...; expected ..."``, the rest of it unchanged.
    """
    try:
        return Scenario(**options)
    except ValidationError as exc:
        name = (labels or {}).get(exc.field) if exc.owner == "Scenario" else None
        if name is None or exc.got is None or exc.expected is None:
            raise
        raise ValidationError(f"{prefix}{name}: got {exc.got}; expected {exc.expected}", owner=owner, field=name,
                              got=exc.got, expected=exc.expected) from None


def sigma_of(plume_params, sigma=None):
    """The default Gaussian's spread, given as ``PlumeSearchEnv`` spells it, ``plume_params={"sigma":
    s}``, or as ``Scenario`` does, ``sigma=s`` (None when neither gives it): one set of options then
    works in every front-end. ``ValidationError`` for another ``plume_params``, or for both."""
    if plume_params is None:
        return sigma
    if not isinstance(plume_params, Mapping):
        raise ValidationError(f"plume_params: got {shown(plume_params)}; expected None or a dict {{'sigma': s}} with "
                              "0.1 <= s <= 100")
    unknown = sorted(str(k) for k in plume_params if k != "sigma")
    if unknown:
        raise ValidationError(f"plume_params: got unknown keys {unknown}; expected only 'sigma' (the static Gaussian "
                              "plume's spread)")
    if sigma is not None and "sigma" in plume_params:
        raise ValidationError("sigma: given twice (as sigma= and in plume_params); give it once")
    return plume_params.get("sigma", sigma)


def fold_seed(seed, *, num_worlds: int = 1, max_seed: int = MAX_SEED):
    """``None``, or the base seed of ``num_worlds`` worlds (world ``i`` is seeded ``base + i``) for
    any seed Gymnasium accepts: a non-negative integer (Python or NumPy; not ``bool``), of any size.

    A seed whose worlds fit in the range (``seed + num_worlds - 1 <= max_seed``) is used as it is;
    a larger one is folded into it, ``seed % (max_seed - num_worlds + 2)``: deterministic, and a
    seed in range behaves exactly as it always did. (Stable-Baselines3 draws seeds in
    ``[0, 2**32)``; the single-agent contract's range ends at ``2**31 - 1``.)
    """
    if seed is None:
        return None
    if not is_int(seed) or seed < 0:
        got = shown(seed, typed=True)
        expected = "None or a non-negative integer"
        raise ValidationError(f"seed: got {got}; expected {expected}", field="seed", got=got, expected=expected)
    seed = int(seed)
    bases = max_seed - num_worlds + 2  # the base seeds 0 .. max_seed - num_worlds + 1
    return seed if seed < bases else seed % bases


def to_autoreset_mode(value) -> AutoresetMode:
    """``value`` as a ``gymnasium.vector.AutoresetMode`` (the mode itself, its value, or its name)."""
    if isinstance(value, AutoresetMode):
        return value
    if isinstance(value, str):  # AutoresetMode is a str Enum: handled above
        for mode, name in AUTORESET_NAMES.items():
            if value in (mode.value, name, mode.name):
                return mode
    expected = (f"a gymnasium.vector.AutoresetMode (NEXT_STEP, SAME_STEP or DISABLED) or one of "
                f"{[m.value for m in AUTORESET_NAMES]}")
    got = shown(value)
    raise ValidationError(f"autoreset_mode: got {got}; expected {expected}", field="autoreset_mode", got=got,
                          expected=expected)


def reset_mask(options, count: int, unit: str):
    """The ``reset_mask`` of a vector env's ``reset(options=...)``: None, or a ``(count,)`` bool
    array with at least one True (``unit``: what an entry is, ``"num_envs"`` or ``"num_worlds"``)."""
    if options is None:
        return None
    if not isinstance(options, dict) or set(options) - {"reset_mask"}:
        raise ValidationError(f"options: got {shown(options)}; expected None or {{'reset_mask': ({unit},) bool array}}")
    if "reset_mask" not in options:
        return None
    mask = options["reset_mask"]
    expected = f"a numpy bool array of shape ({count},) (one entry per world) with at least one True"
    if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.shape != (count,):
        got = f"shape {mask.shape} dtype {mask.dtype}" if isinstance(mask, np.ndarray) else shown(mask, typed=True)
        raise ValidationError(f"options['reset_mask']: got {got}; expected {expected}")
    if not mask.any():
        raise ValidationError(f"options['reset_mask']: got no True entry; expected {expected}")
    return mask


def require_grid_body(sc: Scenario, owner: str) -> None:
    """Refuse a continuous body before anything compiles: ``owner`` (a front-end of discrete
    actions) takes grid bodies."""
    if sc.continuous:
        raise ValidationError(f"action_model: got {sc.action_model!r}; {owner} takes grid bodies (continuous "
                              "bodies run on Simulator and vector_env)")


# ---------------------------------------------------------------------------------- spaces
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


def contract_space(width: int, height: int) -> spaces.Dict:
    """The single-agent contract's ``Dict`` observation of a ``width x height`` grid:
    ``agent_position`` and ``source_location`` ``Box(0, max(w, h) - 1, (2,), int32)`` cells ``(x, y)``,
    ``concentration_field`` ``Box(0, 1, (h, w), float32)`` indexed ``[y, x]``."""
    side = max(width, height) - 1
    return spaces.Dict({
        "agent_position": spaces.Box(0, side, shape=(2,), dtype=np.int32),
        "concentration_field": spaces.Box(0.0, 1.0, shape=(height, width), dtype=np.float32),
        "source_location": spaces.Box(0, side, shape=(2,), dtype=np.int32),
    })


# ---------------------------------------------------------------------------------- actions
def action_value(action, n_actions: int) -> int:
    """``action`` as a Python int if it is an integer in ``0..n_actions-1``, else -1.

    Integer types only: Python ``int``, NumPy integer scalars and 0-d integer arrays. ``bool``,
    floats, strings and arrays with dimensions are not actions.
    """
    if type(action) is int:
        value = action
    elif isinstance(action, np.integer):
        value = int(action)
    elif isinstance(action, np.ndarray) and action.ndim == 0 and action.dtype.kind in "iu":
        value = int(action)
    elif is_int(action):
        value = int(action)
    else:
        return -1
    return value if 0 <= value < n_actions else -1


# ---------------------------------------------------------------------------------- action masks
# Edge code of a cell: bit 0 x == 0, bit 1 x == width-1, bit 2 y == 0, bit 3 y == height-1,
# bit 4 "every action allowed" (the row is free: its agent is done). With unit moves these bits
# alone decide which moves change the position.
_N_CODES = 32
_FREE = 16
_ALL4 = np.uint32(0x01010101)  # four True bytes


@njit(cache=True)
def _fill_cardinal_masks(pos64, free, x_max, y_max, out):
    """Action masks of the ``"cardinal"`` model, four bools packed in one uint32 per row.

    Branch-free, so it vectorizes (about 0.5 ns per row; the table lookup of ``_fill_masks``
    takes 1.7).

    Args:
        pos64: ``(M,)`` uint64, a view of the ``(M, 2)`` int32 cells: x in the low word, y in
            the high word (little-endian).
        free: ``(M,)`` bool, rows that allow every action.
        x_max, y_max: ``width - 1``, ``height - 1``.
        out: ``(M,)`` uint32, a view of the ``(M, 4)`` bool result (mutated): byte k is action k,
            0 UP (y < y_max), 1 RIGHT (x < x_max), 2 DOWN (y > 0), 3 LEFT (x > 0). A row with no
            allowed move (a 1x1 grid) allows every action.
    """
    free8 = free.view(np.uint8)
    for i in range(pos64.shape[0]):
        v = pos64[i]
        x = np.int32(v & np.uint64(0xFFFFFFFF))
        y = np.int32(v >> np.uint64(32))
        m = (np.uint32(y < y_max) | (np.uint32(x < x_max) << np.uint32(8))
             | (np.uint32(y > 0) << np.uint32(16)) | (np.uint32(x > 0) << np.uint32(24)))
        out[i] = m | (_ALL4 * (np.uint32(free8[i]) | np.uint32(m == 0)))


@njit(cache=True)
def _fill_masks(pos, free, x_max, y_max, table, out):
    """Action masks of any 2-D action model with unit moves, from a table of edge codes.

    Args:
        pos: ``(M, 2)`` int32 cells ``(x, y)``.
        free: ``(M,)`` bool, rows that allow every action.
        x_max, y_max: ``width - 1``, ``height - 1``.
        table: ``(32, K)`` bool, the mask of each edge code (``mask_table``).
        out: ``(M, K)`` bool (mutated).
    """
    n_actions = table.shape[1]
    for i in range(pos.shape[0]):
        x = pos[i, 0]
        y = pos[i, 1]
        code = ((x == 0) + 2 * (x == x_max) + 4 * (y == 0) + 8 * (y == y_max)
                + _FREE * free[i])
        for k in range(n_actions):
            out[i, k] = table[code, k]


def mask_table(moves: np.ndarray, grid_size) -> np.ndarray:
    """``(32, K)`` bool: for each edge code, the unit moves of ``moves`` ``(K, 2)`` that move an
    agent off its cell on a ``grid_size`` grid. A row where no action moves (a 1x1 grid) allows
    every action (a sampler needs at least one); codes with the free bit allow every action."""
    w, h = grid_size
    table = np.ones((_N_CODES, len(moves)), dtype=np.bool_)
    for code in range(_FREE):
        # a representative cell with this code (codes that cannot occur on this grid get any row)
        x = 0 if code & 1 else (w - 1 if code & 2 else min(1, w - 1))
        y = 0 if code & 4 else (h - 1 if code & 8 else min(1, h - 1))
        nx = np.clip(x + moves[:, 0], 0, w - 1)
        ny = np.clip(y + moves[:, 1], 0, h - 1)
        row = (nx != x) | (ny != y)
        table[code] = row if row.any() else True
    return table


def move_masks(pos: np.ndarray, moves: np.ndarray, grid_size, free: np.ndarray, walls=None) -> np.ndarray:
    """``(M, K)`` bool in any dimension: the moves of ``moves`` ``(K, dims)`` that change each cell of
    ``pos`` ``(M, dims)`` (clamped into ``grid_size``); rows where ``free`` (and rows where no move
    changes the cell) allow every action. The masks of 3-D worlds, of worlds with walls and of moves
    longer than one cell (NumPy; other 2-D worlds use the compiled edge-code tables above).
    ``walls``: ``(masks, index)``, the scenario's ``(K, ...)`` wall masks and the ``(M,)`` mask of each
    row's world: a move into a solid cell is refused, so it changes nothing."""
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


# ---------------------------------------------------------------------------------- the core
class Core:
    """The worlds of one front-end: its ``Scenario``, the ``Simulator`` of its B worlds, and what
    the front-end maps from them.

    Args:
        scenario: the worlds' ``Scenario``.
        num_worlds: B >= 1.
        autoreset: the Simulator's mode, ``"disabled"``, ``"next_step"`` or ``"same_step"``.
        field: a field for the Simulator instead of the default plume's (``PlumeSearchEnv``'s plume
            model), or None.
        max_seed: the last seed of the front-end's range (``fold_seed``): the engine's
            ``MAX_SEED``, or the single-agent contract's ``2**31 - 1``.

    Attributes:
        scenario, num_worlds, n_agents, rows (``B * N``, the agent rows of every array), sim (the
        ``Simulator``: its arrays are views, valid until the next call).

    A copy (``copy.deepcopy``, ``pickle``) gets a simulator of its own, built from the scenario and
    restored from a snapshot, so it continues exactly as the original would.
    """

    def __init__(self, scenario: Scenario, num_worlds: int = 1, *, autoreset: str = "disabled", field=None,
                 max_seed: int = MAX_SEED):
        self.scenario = scenario
        self.num_worlds = int(num_worlds)
        self.n_agents = scenario.n_agents
        self.rows = self.num_worlds * self.n_agents
        self.autoreset = autoreset
        self.max_seed = max_seed
        self._field = field
        self.sim = Simulator(scenario, self.num_worlds, autoreset=autoreset, field=field)

    def replaced(self, scenario: Scenario) -> "Core":
        """A new core (not reset) of the same worlds under another scenario."""
        return Core(scenario, self.num_worlds, autoreset=self.autoreset, field=self._field, max_seed=self.max_seed)

    # ------------------------------------------------------------------ copy / pickle
    def __getstate__(self):
        state = {k: v for k, v in self.__dict__.items() if k != "sim"}
        try:
            state["snapshot"] = self.sim.snapshot()
        except StateError:  # never reset: nothing to carry over
            state["snapshot"] = None
        return state

    def __setstate__(self, state):
        state = dict(state)
        snapshot = state.pop("snapshot")
        self.__dict__.update(state)
        self.sim = Simulator(self.scenario, self.num_worlds, autoreset=self.autoreset, field=self._field)
        if snapshot is not None:
            self.sim.restore(snapshot)

    # ------------------------------------------------------------------ seeds, spaces
    def fold_seed(self, seed):
        """``fold_seed`` for these worlds, in this front-end's range."""
        return fold_seed(seed, num_worlds=self.num_worlds, max_seed=self.max_seed)

    def action_space(self) -> spaces.Space:
        return action_space(self.scenario)

    def observation_box(self) -> spaces.Box:
        return observation_box(self.scenario)

    # ------------------------------------------------------------------ actions
    def action_words(self) -> str:
        """What a discrete action is, for messages: ``"an integer in 0..3 (action model 'cardinal':
        0 UP, 1 RIGHT, 2 DOWN, 3 LEFT)"``."""
        sc = self.scenario
        model = sc.action_model
        names = ", ".join(f"{k} {name}" for k, name in enumerate(sc.action_names))
        label = next((repr(k) for k, cls in BY_NAME.items() if type(model) is cls), model.name)
        return f"an integer in 0..{sc.n_actions - 1} (action model {label}: {names})"

    def check_action(self, action) -> int:
        """One agent's discrete action as a Python int (``ValidationError`` unless ``action_value``
        takes it)."""
        k = self.scenario.n_actions
        value = action_value(action, k)
        if value < 0:
            got, expected = shown(action, typed=True), f"an integer in 0..{k - 1}"
            raise ValidationError(f"action: got {got}; expected {expected}", field="action", got=got, expected=expected)
        return value

    def check_actions(self, actions, expected: str | None = None) -> np.ndarray:
        """``actions`` as a ``(rows,)`` int64 array of discrete actions, every entry checked before
        anything changes (``ValidationError`` naming the first bad one; ``expected``: the words for
        what was expected, by default the vector envs')."""
        n, k = self.rows, self.scenario.n_actions
        expected = expected or f"an integer array of shape ({n},) with values in 0..{k - 1}"
        try:
            arr = np.asarray(actions)
        except (TypeError, ValueError, OverflowError):  # ragged lists, objects NumPy cannot read
            raise ValidationError(f"actions: got {shown(actions, typed=True)}; expected {expected}") from None
        if arr.dtype.kind not in "iu":
            raise ValidationError(f"actions: got {shown(actions, typed=True)} (dtype {arr.dtype}); expected {expected} "
                                  "(floats, NaN, booleans and None are not actions)")
        if arr.shape != (n,):
            raise ValidationError(f"actions: got shape {arr.shape}; expected {expected}")
        bad = np.flatnonzero((arr < 0) | (arr >= k))
        if bad.size:
            i = int(bad[0])
            raise ValidationError(f"actions[{i}] = {arr[i]} is out of range; expected {expected}. Nothing was changed.")
        return arr.astype(np.int64)

    def masker(self, free: np.ndarray):
        """A function of no arguments that returns the ``(rows, K)`` bool action masks now, a new
        array: the moves that change each agent's cell (a move into a wall does not). Rows where
        ``free`` (a ``(rows,)`` bool array the caller keeps up to date), and rows where no move
        changes the cell, allow every action; so does every row of a body without a displacement
        table (every action may change the state). For sb3-contrib's ``MaskablePPO`` and the infos."""
        sc, sim, n = self.scenario, self.sim, self.rows
        if not hasattr(sc.action_model, "moves"):
            k = sc.n_actions if not sc.continuous else len(sc.action_bounds()[0])
            return lambda: np.ones((n, k), dtype=np.bool_)
        moves = sc.moves()
        pos = sim.state.pos
        if sc.dims == 3 or sc.walls is not None or np.abs(moves).max() > 1:
            grid, n_agents = sc.grid_size, self.n_agents
            if sc.walls is None:
                return lambda: move_masks(pos, moves, grid, free)
            solid = sc.walls.masks
            # each world draws its wall mask at its reset: read the index at every call
            return lambda: move_masks(pos, moves, grid, free, (solid, np.repeat(sim.wall_index, n_agents)))
        w, h = sc.grid_size
        x_max, y_max = w - 1, h - 1
        # the packed kernel reads x and y as the two words of one uint64 and writes bytes in order
        if type(sc.action_model) is Cardinal and sys.byteorder == "little":
            pos64 = pos.view(np.uint64).reshape(n)

            def cardinal():
                masks = np.empty((n, 4), dtype=np.bool_)
                _fill_cardinal_masks(pos64, free, x_max, y_max, masks.view(np.uint32).reshape(n))
                return masks

            return cardinal
        table = mask_table(moves, (w, h))

        def by_table():
            masks = np.empty((n, table.shape[1]), dtype=np.bool_)
            _fill_masks(pos, free, x_max, y_max, table, masks)
            return masks

        return by_table

    # ------------------------------------------------------------------ steps and their results
    def step_fixed_set(self, actions: np.ndarray) -> tuple:
        """Step a fixed agent set (every agent stays until its world's episode ends: PettingZoo's
        black death, EPyMARL's tuples).

        Returns:
            ``(obs, reward, arrived, truncated)``: a fresh ``(rows, D)`` float32 copy in which the
            agents that had finished before this step observe zeros, the reward (a view), ``(rows,)``
            bool: each agent has reached the source (now or before), and whether world 0's step
            limit is reached (a Python bool).
        """
        sim = self.sim
        finished_before = ~sim.active  # a copy: these agents observe zeros
        obs, reward, _, truncated = sim.step(actions)
        obs = obs.copy()
        obs[finished_before] = 0.0
        return obs, reward, ~sim.active, bool(truncated[0])

    def final_infos(self, ended: np.ndarray, terminated: np.ndarray) -> dict:
        """``SAME_STEP`` autoreset: Gymnasium's infos of the rows whose episode ended on this step.

        Args:
            ended: ``(rows,)`` bool, the rows whose episode ended now (at least one).
            terminated: ``(rows,)`` bool, the rows that reached the source now.

        Returns:
            ``final_obs`` ``(rows, D)`` float32, each ended row's last (compact) observation, zeros
            elsewhere; ``final_info`` with ``episode_length`` (int32, the steps the agent took) and
            ``goal_reached``; and their ``_``-prefixed masks. A row of a world that ended (and was
            reset) takes them from the simulator's ``final_*`` buffers; a row whose agent finished
            while its world goes on takes its current ones.
        """
        sim = self.sim
        world_reset = sim.final_mask if self.n_agents == 1 else np.repeat(sim.final_mask, self.n_agents)
        last_obs = np.where(world_reset[:, None], sim.final_obs, sim.state.obs)
        length = np.where(world_reset, sim.final_length, sim.episode_length)
        return {
            "final_obs": np.where(ended[:, None], last_obs, np.float32(0)),
            "_final_obs": ended.copy(),
            "final_info": {
                "episode_length": np.where(ended, length, 0).astype(np.int32),
                "_episode_length": ended.copy(),
                "goal_reached": terminated & ended,
                "_goal_reached": ended.copy(),
            },
            "_final_info": ended.copy(),
        }

    # ------------------------------------------------------------------ views of the worlds
    def fields(self) -> np.ndarray:
        """``(B, H, W)`` float32, a new array: each world's concentration now (one shared field
        copied B times for a static plume)."""
        sim = self.sim
        if sim.static_field is not None:
            return np.broadcast_to(sim.static_field, (self.num_worlds, *sim.static_field.shape)).copy()
        return np.stack([sim.plume_image(i) for i in range(self.num_worlds)])

    def state_space(self) -> spaces.Box:
        """The space of ``global_state``: ``(k N + 1,)`` float32, ``k = dims + 2``."""
        sc = self.scenario
        k, n = sc.dims + 2, sc.n_agents
        high = np.ones(k * n + 1, np.float32)
        high[0:-1:k] = sc.plume.concentration_bounds()[1]
        return spaces.Box(np.zeros(k * n + 1, np.float32), high, dtype=np.float32)

    def global_state(self, world: int = 0) -> np.ndarray:
        """World ``world``'s global state, a fresh ``(k N + 1,)`` float32 array, ``k = dims + 2``:
        per agent ``(concentration, x, y[, z], active)`` (position columns ``cell / (side - 1)``;
        ``active`` 1.0 while it searches), then the elapsed fraction of ``max_steps``."""
        sim, sc = self.sim, self.scenario
        n, k = sc.n_agents, sc.dims + 2
        rows = slice(world * n, (world + 1) * n)
        out = np.empty(k * n + 1, dtype=np.float32)
        per_agent = out[:-1].reshape(n, k)
        if sc.observation_layout[:k - 1] == ["concentration", *"xyz"[:sc.dims]]:
            per_agent[:, :k - 1] = sim.state.obs[rows, :k - 1]
        else:
            pos = sim.positions[rows]
            per_agent[:, 0] = sim.plume_image(world)[tuple(pos[:, c] for c in reversed(range(pos.shape[1])))]
            for c, side in enumerate(sc.grid_size):
                per_agent[:, 1 + c] = pos[:, c] * (np.float32(1.0 / (side - 1)) if side > 1 else np.float32(0))
        per_agent[:, k - 1] = sim.active[rows]
        out[-1] = min(int(sim.world_steps[world]) / sc.max_steps, 1.0)
        return out

    def frame(self, world: int = 0, *, scaled: bool = False) -> np.ndarray:
        """World ``world``'s picture, ``(H * s, W * s, 3)`` uint8: its plume now, its source(s), the
        agents (finished ones white), and their headings, antenna points, the wind and the walls
        when the scenario has them (``plume_multi.viz.scene.world_overlays``); ``s = 1``, or with
        ``scaled`` ``plume_multi.viz.render.display_scale(W, H)``. A 3-D world: its x-y, x-z and y-z
        maximum projections side by side (``plume_multi.viz.volume``)."""
        from ..viz.render import display_scale, render_frame
        from ..viz.scene import world_overlays

        sim, sc = self.sim, self.scenario
        if sc.dims == 3:
            from ..viz.volume import world_volume_frame

            return world_volume_frame(sim, world)
        n = self.n_agents
        rows = slice(world * n, (world + 1) * n)
        scene = world_overlays(sim, world)
        scale = display_scale(*sc.grid_size) if scaled else 1
        return render_frame(scene.pop("field"), sim.positions[rows], active=sim.active[rows], scale=scale, **scene)

    def frames(self, *, scaled: bool = False) -> tuple:
        """``frame`` of every world."""
        return tuple(self.frame(b, scaled=scaled) for b in range(self.num_worlds))


class CoreViews:
    """Base of a front-end over a ``Core`` that keeps views of its buffers (and other things a copy
    must not share, such as a window) in the attributes named in ``_UNCOPIED``, made by
    ``_bind()``. A copy or pickle carries the rest, the core included (which restores its simulator
    from a snapshot), and calls ``_bind()`` again, so it continues exactly as the original."""

    _UNCOPIED: tuple = ()

    def _bind(self) -> None:
        raise NotImplementedError

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k not in self._UNCOPIED}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._bind()


class CoreVectorEnv(CoreViews, VectorEnv):
    """Base of the Gymnasium vector envs over a ``Core``: its agent rows are the ``num_envs``
    entries. A subclass builds its core and calls ``_adopt``; this class gives the autoreset mode,
    the batched spaces, ``render``, ``action_masks``, ``agent_positions``, ``simulator``, the
    closed-env checks and copies. ``_bind`` (extended by a subclass for its own views) binds
    ``_sim``, ``_pos`` and ``_masks`` (the masks of rows where ``_free()`` is True allow every action).
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": ["rgb_array"], "render_fps": 30}
    _UNCOPIED = ("_sim", "_pos", "_masks")

    @staticmethod
    def _check_render_mode(render_mode) -> None:
        if render_mode is not None and not (isinstance(render_mode, str) and render_mode == "rgb_array"):
            raise ValidationError(f"render_mode: got {shown(render_mode)}; expected None or 'rgb_array'")

    def _adopt(self, core: Core, mode: AutoresetMode, render_mode=None, observation_space=None) -> None:
        """Take ``core``'s rows as this env's entries, under autoreset ``mode`` (the core's
        simulator must run it), with ``observation_space`` per entry (default the sensors' box)."""
        self._core = core
        self.num_envs = core.rows
        self.render_mode = render_mode
        # Gymnasium's own vector envs carry the mode as an attribute too (TorchRL reads it there).
        self.autoreset_mode = mode
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        self._same_step = mode == AutoresetMode.SAME_STEP
        self.single_action_space = core.action_space()
        self.single_observation_space = observation_space or core.observation_box()
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._ready = False
        self._bind()

    def _free(self) -> np.ndarray:
        """``(num_envs,)`` bool, kept up to date in place: the rows whose masks allow every action."""
        return np.zeros(self.num_envs, dtype=np.bool_)

    def _bind(self) -> None:
        self._sim = sim = self._core.sim
        self._pos = sim.state.pos
        self._masks = self._core.masker(self._free())

    def _refuse_closed(self, call: str) -> None:
        if self.closed:
            raise StateError(f"Cannot {call}: the environment is closed; create a new one")

    def render(self):
        """One ``(height, width, 3)`` uint8 frame per world (``render_mode="rgb_array"``): the world's
        plume now, its source, the agents, and their headings, antenna points, the wind and the
        walls when the scenario has them (``plume_multi.viz.scene.world_overlays``). A 3-D world's
        frame is its x-y, x-z and y-z maximum projections side by side (``plume_multi.viz.volume``)."""
        if self.render_mode is None:
            raise StateError("Cannot render: render_mode is None; create the env with render_mode='rgb_array'")
        if not self._ready:
            raise StateError("Cannot render before reset(): call reset() first")
        return self._core.frames()

    def action_masks(self) -> np.ndarray:
        """``(num_envs, K)`` bool, a new array: the moves that change each agent's cell now (a move into
        a wall does not). A row whose agent is done (its episode ended and is not reset yet, or it
        is masked) allows every action. MaskablePPO (sb3-contrib) reads this method."""
        return self._masks()

    @property
    def agent_positions(self) -> np.ndarray:
        """``(num_envs, dims)`` int32 cells ``(x, y)`` (``(x, y, z)`` in 3-D) of every row's agent (a copy)."""
        return self._pos.copy()

    @property
    def simulator(self) -> Simulator:
        """The ``Simulator`` underneath (its arrays are live views; do not write to them)."""
        return self._sim

    def close_extras(self, **kwargs) -> None:
        """Nothing to release: the buffers go with the object."""
