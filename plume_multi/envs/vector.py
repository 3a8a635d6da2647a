"""``vector_env()``: a native Gymnasium ``VectorEnv`` of B single-agent plume searches.

One ``step`` call advances every world in one compiled kernel call (``Simulator``); this module
maps Gymnasium's vector API onto the front-end core (``_core.Core``): the simulator's buffers
become Gymnasium's batched return values, copied once per call.
"""

from __future__ import annotations

import inspect

import numpy as np
from gymnasium.vector import AutoresetMode

from ..checks import is_int, shown
from ..errors import StateError, ValidationError
from ..scenario import Scenario
from ._core import move_masks  # noqa: F401 - the masks of 3-D worlds and walls, importable here as they were
from ._core import (AUTORESET_NAMES, SCENARIO_FIELDS, Core, CoreVectorEnv, check_options, contract_space, reset_mask,
                    scenario_from, sigma_of, to_autoreset_mode)

__all__ = ["vector_env", "dict_vector_env", "compact_vector_env", "PlumeVectorEnv", "OBS_TYPES"]

OBS_TYPES = ("compact", "dict")
MAX_NUM_ENVS = 1 << 24  # worlds per vector env: beyond this the buffers alone pass a gigabyte


def _scenario(options: dict) -> Scenario:
    """The one-agent Scenario of ``vector_env``'s options (``plume_params={"sigma": s}``, as
    ``PlumeSearchEnv`` spells it, is ``sigma=s``, and errors about it name it so)."""
    options = dict(options)
    plume_params = options.pop("plume_params", None)  # PlumeSearchEnv's spelling: make_vec kwargs work in every mode
    sigma = sigma_of(plume_params, options.pop("sigma", None))
    if sigma is not None:
        options["sigma"] = sigma
    check_options(options, owner="vector_env", allowed=SCENARIO_FIELDS,
                  takes="num_envs, autoreset_mode, obs_type, render_mode, plume_params")
    n_agents = options.get("n_agents", 1)
    if not (is_int(n_agents) and n_agents == 1):
        raise ValidationError(
            f"n_agents: got {shown(n_agents)}; expected 1 (vector_env runs single-agent worlds; "
            "for several agents per world use parallel_env() or Simulator)"
        )
    labels = {"action_model": "action_model"}
    if plume_params is not None and "sigma" in plume_params:
        labels["sigma"] = "plume_params['sigma']"
    return scenario_from(options, owner="vector_env", labels=labels)


class PlumeVectorEnv(CoreVectorEnv):
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
    given ``s``). ``reset()`` without a seed continues every world's stream. Any non-negative
    integer is a seed: one beyond the engine's range (``s + B - 1 > 2**63 - 1``) is folded into it,
    ``s % (2**63 - B + 1)``.

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

    def __init__(self, num_envs: int, *, autoreset_mode=AutoresetMode.NEXT_STEP, obs_type: str = "compact",
                 render_mode=None, **scenario_options):
        if not is_int(num_envs) or not 1 <= num_envs <= MAX_NUM_ENVS:
            raise ValidationError(f"num_envs: got {shown(num_envs)}; expected an integer in 1..{MAX_NUM_ENVS}")
        if not isinstance(obs_type, str) or obs_type not in OBS_TYPES:
            raise ValidationError(f"obs_type: got {shown(obs_type)}; expected one of {list(OBS_TYPES)}")
        self._check_render_mode(render_mode)
        mode = to_autoreset_mode(autoreset_mode)
        self.scenario = sc = _scenario(scenario_options)
        if obs_type == "dict" and sc.dims == 3:
            raise ValidationError(f"obs_type: got 'dict' with grid_size={sc.grid_size}; the dict observation is the "
                                  "single-agent contract's (2-D); 3-D worlds take obs_type='compact' (the sensors' "
                                  "columns)")
        self._options = dict(scenario_options)
        self.obs_type = obs_type
        self._n_actions = None if sc.continuous else sc.n_actions
        self._pos_scale = np.array([d - 1 for d in sc.grid_size[:2]], dtype=np.float32)
        self._never_free = np.zeros(num_envs, dtype=np.bool_)
        self._adopt(Core(sc, int(num_envs), autoreset=AUTORESET_NAMES[mode]), mode, render_mode,
                    None if obs_type == "compact" else contract_space(*sc.grid_size))

    def _free(self) -> np.ndarray:
        # an ended world allows every action until it is reset; SAME_STEP resets it at once
        return self._never_free if self._same_step else self._sim.state.world_done

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed=None, options=None):
        """Reset all worlds, or those of ``options["reset_mask"]``; return ``(obs, info)``.

        Args:
            seed: ``None`` (each world continues its own stream) or an int ``s >= 0``: world ``i``
                is seeded ``s + i`` (a seed beyond the engine's range folded into it).
            options: ``None`` or ``{"reset_mask": m}``, ``m`` a ``(num_envs,)`` bool array with at
                least one True: only those worlds are reset (with a seed, world ``i`` gets ``s + i``).

        Returns:
            The observations of all worlds and ``{"action_mask", "_action_mask"}``.
        """
        self._refuse_closed("reset")
        # Everything is checked before anything changes.
        seed = self._core.fold_seed(seed)
        mask = reset_mask(options, self.num_envs, "num_envs")
        if mask is not None and not self._ready and not mask.all():
            raise StateError("Cannot reset part of the worlds before the first reset(): reset them all first "
                             "(options=None)")
        self._sim.reset(seed=seed, mask=mask)
        self._ready = True
        super().reset(seed=seed)
        return self._observe(), {"action_mask": self._masks(), "_action_mask": np.ones(self.num_envs, np.bool_)}

    def step(self, actions):
        """Advance every world one step; return ``(obs, reward, terminated, truncated, info)``.

        ``actions``: ``(num_envs,)`` integers in ``0..K-1``. All of them are checked before any
        world changes (``ValidationError``, naming the first bad entry).
        """
        if self.closed:
            self._refuse_closed("step")
        if self._n_actions is not None and not (type(actions) is np.ndarray and actions.dtype == np.int64
                                                and actions.shape == (self.num_envs,)):
            actions = self._core.check_actions(actions)
        if not self._ready:
            raise StateError("Cannot step before reset(): call reset() first")
        obs, reward, terminated, truncated = self._sim.step(actions)
        infos = {"action_mask": self._masks(), "_action_mask": np.ones(self.num_envs, np.bool_)}
        if self._same_step and self._sim.final_mask.any():
            self._add_final(infos, terminated)
        if self.obs_type == "compact":
            obs = obs.copy()
        else:
            obs = self._observe()
        return obs, reward.copy(), terminated.copy(), truncated.copy(), infos

    def with_autoreset_mode(self, autoreset_mode) -> "PlumeVectorEnv":
        """A new vector env with the same arguments and another autoreset mode (not reset yet)."""
        return type(self)(self.num_envs, autoreset_mode=autoreset_mode, obs_type=self.obs_type,
                          render_mode=self.render_mode, **self._options)

    # ------------------------------------------------------------------ helpers
    def _observe(self):
        """A fresh batched observation of the current state."""
        if self.obs_type == "compact":
            return self._sim.state.obs.copy()
        return self._dict_obs(self._pos)

    def _dict_obs(self, positions):
        return {
            "agent_position": np.array(positions, dtype=np.int32),
            "concentration_field": self._core.fields(),
            "source_location": np.rint(self._sim.sources).astype(np.int32),
        }

    def _add_final(self, infos, terminated):
        """SAME_STEP: the last observation and info of the worlds that ended on this step."""
        infos.update(self._core.final_infos(self._sim.final_mask, terminated))
        if self.obs_type == "dict":
            # The engine keeps the compact final observation; its x, y columns are exact cells
            # times 1/(side-1) in float32, so rounding recovers the cells.
            cells = np.rint(infos["final_obs"][:, 1:3] * self._pos_scale).astype(np.int32)
            infos["final_obs"] = self._dict_obs(cells)


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
