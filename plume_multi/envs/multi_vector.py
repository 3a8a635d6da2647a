"""``multi_agent_vector_env()``: B worlds of N searchers as the B*N rows of one Gymnasium ``VectorEnv``.

The training view of multi-agent worlds with one shared policy (parameter sharing): every agent is
a row, every row steps at once in one compiled kernel call (``Simulator``). This module maps
Gymnasium's vector API onto the front-end core (``_core.Core``) and masks the rows of agents that
have finished.
"""

from __future__ import annotations

import numpy as np
from gymnasium.vector import AutoresetMode

from ..checks import is_int
from ..engine.jit import njit
from ..errors import ValidationError
from ._core import (AUTORESET_NAMES, SCENARIO_FIELDS, Core, CoreVectorEnv, check_options, require_grid_body,
                    reset_mask, scenario_from, to_autoreset_mode)

__all__ = ["multi_agent_vector_env", "MultiAgentVectorEnv"]

# Scenario fields given as keyword options (n_agents and team are arguments of their own).
_OPTION_FIELDS = tuple(f for f in SCENARIO_FIELDS if f not in ("n_agents", "team"))


@njit(cache=True)
def _row_outputs(live, reward, terminated, truncated, active, world_done, n_agents, same_step,
                 out_reward, out_terminated, out_truncated):
    """Per-row results of one step, with finished agents' rows masked.

    Args:
        live: ``(B*N,)`` bool (mutated). In: the rows whose agent was searching in the
            observation the step acted on. Out: the rows whose agent is searching in the new
            observation, ``active and (same_step or not world_done[row // N])``.
        reward, terminated, truncated: ``(B*N,)`` float32 / bool / bool, the simulator's step
            results (an agent that finished earlier reads ``terminated`` on every step).
        active: ``(B*N,)`` bool, the simulator's ``active`` after the step.
        world_done: ``(B,)`` bool, the simulator's ``world_done`` after the step.
        n_agents: N.
        same_step: True under SAME_STEP autoreset (a done world was already reset).
        out_reward, out_terminated, out_truncated: ``(B*N,)`` (mutated): the simulator's values
            on rows that were live, 0 / False on the others, so a row's episode ends exactly once.
    """
    # Bitwise on uint8 views and no division per row: the loops vectorize (under 1 ns per row;
    # the plain version with `i // n_agents` and branches took 2.3).
    live8 = live.view(np.uint8)
    term8, trunc8, active8 = terminated.view(np.uint8), truncated.view(np.uint8), active.view(np.uint8)
    out_term8, out_trunc8 = out_terminated.view(np.uint8), out_truncated.view(np.uint8)
    for i in range(live8.shape[0]):
        was = live8[i]
        out_reward[i] = reward[i] * np.float32(was)
        out_term8[i] = term8[i] & was
        out_trunc8[i] = trunc8[i] & was
    for b in range(world_done.shape[0]):
        still = np.uint8(same_step or not world_done[b])
        for i in range(b * n_agents, (b + 1) * n_agents):
            live8[i] = active8[i] & still


class MultiAgentVectorEnv(CoreVectorEnv):
    """B worlds of N searchers each, seen as ``B * N`` rows of one Gymnasium ``VectorEnv``.

    ## Description
    Each world is the search of ``parallel_env()``: N agents on one ``width x height`` grid look
    for the source of a static Gaussian plume. Agent ``n`` of world ``b`` is row ``b * N + n``;
    every row has the same spaces, so one policy acts for all agents (parameter sharing). All
    rows advance in one compiled call. World ``b`` reset with seed ``s`` starts exactly where
    ``parallel_env(n_agents=N, ...).reset(seed=s + b)`` starts, and later episodes follow the same
    starts as that env's unseeded resets.

    ## Action Space
    ``single_action_space = Discrete(4)`` (``"cardinal"``): 0 UP ``(0, +1)``, 1 RIGHT ``(+1, 0)``,
    2 DOWN ``(0, -1)``, 3 LEFT ``(-1, 0)``, clamped into the grid (``action_model="moore"``:
    ``Discrete(9)``). ``step`` takes integers of shape ``(B * N,)`` (or ``(B, N)``). Every entry is
    checked, masked rows' too (their value is ignored but must be a valid action); a bad one raises
    ``ValidationError`` before any world changes.

    ## Observation Space
    ``Box(low, high, (3 + 2k,), float32)`` per row, ``k = n_neighbours``:

    | index | observation | range |
    |---|---|---|
    | 0 | concentration at the agent's cell | [0, 1] |
    | 1 | x / (width - 1) | [0, 1] |
    | 2 | y / (height - 1) | [0, 1] |
    | 3 + 2j, 4 + 2j | (dx / (width - 1), dy / (height - 1)) of the j-th nearest other agent | [-1, 1] |

    Every call returns fresh arrays: nothing returned shares memory with a later return.

    ## Rewards
    ``team=False``: 1.0 to a row on the step its agent reaches the source (distance
    ``<= goal_radius``), else 0.0. ``team=True``: the first arrival ends the episode of every
    agent of its world and each of them receives 1.0 on that step (shared, not split). Masked rows
    (below) always receive 0.0. float32.

    ## Starting State
    World ``b``'s first episode after ``reset(seed=s)`` draws its N start cells as
    ``numpy.random.default_rng(s + b)`` does (x then y, agent by agent); later episodes come
    from the world's own counter-based stream (deterministic given ``s``). ``reset()`` without a
    seed continues every world's stream. ``start_positions`` fixes the cells of every episode.

    ## Episode End
    A row's episode is its agent's episode. It ends exactly once, on one step:
    * Terminated: the agent reaches the source (``team=True``: any agent of its world does).
    * Truncated: the world's ``max_steps`` steps are done (every agent still searching).
    A world's episode ends when all its agents have finished or at truncation; then the world
    resets (see Autoreset) and all its rows start new episodes together.

    ## Finished agents: masked rows
    An agent that reached the source while others of its world still search stays on the
    source until the world resets. Its row is *masked* meanwhile: ``info["active"]`` is False,
    reward 0.0, ``terminated`` and ``truncated`` False, the action ignored, and the observation is
    what the agent senses on the source (neighbour columns keep following the others).

    ``info["active"]`` (``(B * N,)`` bool, returned with each observation) says whether the agent
    of the row is searching in *that* observation, i.e. whether the next action on the row
    counts. A learner that masks drops the transitions whose observation had ``active`` False from
    its loss (``examples/train_multiagent_ppo.py`` does). A learner that does not (SB3's PPO)
    still learns correctly: a masked stretch follows a ``done`` and earns 0, so it reads as the
    zero-reward start of the row's next episode; returns and advantages of real steps never
    reach across a ``done`` into it. Episode statistics of such a learner (``VecMonitor``,
    ``RecordEpisodeStatistics``) then count the masked steps into the length of the row's next
    episode; its returns are unchanged.

    ## Autoreset (``metadata["autoreset_mode"]``)
    * ``NEXT_STEP`` (default): the step after a world's episode ended resets it (its actions are
      ignored; reward 0, flags False). Rows of an ended world are masked until that step.
    * ``SAME_STEP``: the ending step returns the new episode's first observations. For every
      row whose episode ended on this step (``terminated | truncated``), ``info["final_obs"]``
      ``(B * N, D)`` holds its last observation (rows valid where ``info["_final_obs"]``) and
      ``info["final_info"]`` its ``episode_length`` (steps the agent took) and ``goal_reached``
      (rows valid where ``info["_final_info"]``); both keys appear only on steps where some row
      ended. This is the mode of ``plume_multi.integrations.sb3.SB3VecEnv``.
    * ``DISABLED``: nothing resets by itself; call ``reset(options={"reset_mask": m})`` with
      ``m`` a ``(B,)`` bool array of worlds. Rows of ended worlds stay masked.

    ## Infos and action masks
    After every ``reset`` and ``step``: ``info["active"]`` ``(B * N,)`` bool (above) and
    ``info["action_mask"]`` ``(B * N, K)`` bool (with ``info["_active"]``, ``info["_action_mask"]``
    all True). ``action_masks()`` returns the same masks for the current state. A move is allowed
    when it changes the agent's cell; a masked row allows every action (it is ignored).

    ## Arguments
    ``multi_agent_vector_env(num_worlds=1, n_agents=4, team=False, *,
    autoreset_mode=AutoresetMode.NEXT_STEP, render_mode=None, **scenario options)``;
    the options are ``Scenario``'s: ``grid_size``, ``source_location``, ``sigma``,
    ``goal_radius``, ``max_steps``, ``start_positions``, ``action_model``, ``n_neighbours``.
    ``render_mode="rgb_array"``: ``render()`` returns one ``(h, w, 3)`` uint8 frame per world.
    Invalid values raise ``ValidationError`` naming the argument.

    ## Version History
    * v0: first version.

    ## Example
    >>> import numpy as np, plume_multi
    >>> envs = plume_multi.multi_agent_vector_env(num_worlds=256, n_agents=4, grid_size=(32, 32))
    >>> obs, info = envs.reset(seed=0)                      # (1024, 3) float32, row b * 4 + n
    >>> actions = np.zeros(envs.num_envs, dtype=np.int64)   # all UP
    >>> obs, reward, terminated, truncated, info = envs.step(actions)
    >>> info["active"].shape, info["action_mask"].shape
    ((1024,), (1024, 4))
    """

    def __init__(self, num_worlds: int = 1, n_agents: int = 4, team: bool = False, *,
                 autoreset_mode=AutoresetMode.NEXT_STEP, render_mode=None, **scenario_options):
        if not is_int(num_worlds) or num_worlds < 1:
            raise ValidationError(f"num_worlds: got {num_worlds!r}; expected an integer >= 1")
        self._check_render_mode(render_mode)
        check_options(scenario_options, owner="multi_agent_vector_env", allowed=_OPTION_FIELDS,
                      takes="num_worlds, n_agents, team, autoreset_mode, render_mode (episode length: max_steps)")
        mode = to_autoreset_mode(autoreset_mode)
        self.scenario = sc = scenario_from(dict(scenario_options, n_agents=n_agents, team=team),
                                           owner="multi_agent_vector_env")
        require_grid_body(sc, "multi_agent_vector_env")
        self.num_worlds = int(num_worlds)
        self.n_agents = sc.n_agents
        self._live = np.zeros(self.num_worlds * self.n_agents, dtype=np.bool_)  # see _row_outputs
        self._dead = np.ones(self.num_worlds * self.n_agents, dtype=np.bool_)   # ~_live
        self._adopt(Core(sc, self.num_worlds, autoreset=AUTORESET_NAMES[mode]), mode, render_mode)

    def _free(self) -> np.ndarray:
        return self._dead  # a masked row's action is ignored: every action is allowed

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed=None, options=None):
        """Reset all worlds, or those of ``options["reset_mask"]``; return ``(obs, info)``.

        Args:
            seed: ``None`` (each world continues its own stream) or an int ``s >= 0``: world ``b``
                is seeded ``s + b`` (a seed beyond the engine's range folded into it, as
                ``vector_env``'s).
            options: ``None`` or ``{"reset_mask": m}``, ``m`` a ``(num_worlds,)`` bool array with at
                least one True: only those worlds (all their rows) are reset.

        Returns:
            ``(B * N, D)`` float32 observations and ``{"active", "action_mask", "_active", "_action_mask"}``.
        """
        self._refuse_closed("reset")
        seed = self._core.fold_seed(seed)
        mask = reset_mask(options, self.num_worlds, "num_worlds")
        obs = self._sim.reset(seed=seed, mask=mask)
        self._ready = True
        super().reset(seed=seed)
        self._update_live()
        return obs.copy(), self._info()

    def step(self, actions):
        """Advance every world one step; return ``(obs, reward, terminated, truncated, info)``.

        ``actions``: ``(B * N,)`` or ``(B, N)`` integers in ``0..K-1``. All are checked before any
        world changes (``ValidationError`` naming the first bad entry). Returns ``(B * N, D)``
        float32, ``(B * N,)`` float32, bool, bool and the info dict of the class docstring.
        """
        if self.closed:
            self._refuse_closed("step")
        obs, reward, terminated, truncated = self._sim.step(actions)
        n = self.num_envs
        out_reward = np.empty(n, dtype=np.float32)
        out_terminated = np.empty(n, dtype=np.bool_)
        out_truncated = np.empty(n, dtype=np.bool_)
        _row_outputs(self._live, reward, terminated, truncated, self._sim.active, self._sim.state.world_done,
                     self.n_agents, self._same_step, out_reward, out_terminated, out_truncated)
        np.logical_not(self._live, out=self._dead)
        info = self._info()
        if self._same_step:
            ended = out_terminated | out_truncated
            if ended.any():
                info.update(self._core.final_infos(ended, out_terminated))
        return obs.copy(), out_reward, out_terminated, out_truncated, info

    def step_into(self, actions, rewards: np.ndarray, terminals: np.ndarray, truncations: np.ndarray,
                  masks: np.ndarray | None = None) -> np.ndarray:
        """``step`` without allocating: the per-row results are written into the arrays given.

        The zero-copy path of trainers that own their buffers (PufferLib's style:
        ``plume_multi.integrations.puffer.SharedBufferEnv``). Returns the simulator's observation
        buffer, ``(B * N, D)`` float32 (a view, valid until the next call; see
        ``Simulator.bind_observations`` to have it be an array of yours). No info is built.

        Args:
            actions: as ``step``'s.
            rewards: ``(B * N,)`` float32; terminals, truncations: ``(B * N,)`` bool: written in
                place, as ``step`` returns them (masked rows 0 / False).
            masks: ``(B * N,)`` bool or None: written with ``info["active"]`` (the rows whose agent
                searches in the new observation).
        """
        if self.closed:
            self._refuse_closed("step")
        n = self.num_envs
        for name, array, dtype in (("rewards", rewards, np.float32), ("terminals", terminals, np.bool_),
                                   ("truncations", truncations, np.bool_), ("masks", masks, np.bool_)):
            if array is None and name == "masks":
                continue
            if not (isinstance(array, np.ndarray) and array.dtype == dtype and array.shape == (n,)
                    and array.flags.c_contiguous and array.flags.writeable):
                got = (f"shape {array.shape} dtype {array.dtype}" if isinstance(array, np.ndarray)
                       else type(array).__name__)
                raise ValidationError(f"{name}: got {got}; expected a writeable C-contiguous {np.dtype(dtype)} array "
                                      f"of shape ({n},)")
        obs, reward, terminated, truncated = self._sim.step(actions)
        _row_outputs(self._live, reward, terminated, truncated, self._sim.active, self._sim.state.world_done,
                     self.n_agents, self._same_step, rewards, terminals, truncations)
        np.logical_not(self._live, out=self._dead)
        if masks is not None:
            masks[...] = self._live
        return obs

    # ------------------------------------------------------------------ extras
    @property
    def active(self) -> np.ndarray:
        """``(B * N,)`` bool, a copy: the rows whose agent is searching now (``info["active"]``)."""
        return self._live.copy()

    # ------------------------------------------------------------------ helpers
    def _update_live(self) -> None:
        """``_live`` from the simulator's state (after a reset)."""
        active = self._sim.active
        if self._same_step:
            self._live[:] = active
        else:
            ended = np.repeat(self._sim.state.world_done, self.n_agents)
            np.logical_and(active, ~ended, out=self._live)
        np.logical_not(self._live, out=self._dead)

    def _info(self) -> dict:
        n = self.num_envs
        return {"active": self._live.copy(), "action_mask": self._masks(),
                "_active": np.ones(n, np.bool_), "_action_mask": np.ones(n, np.bool_)}


def multi_agent_vector_env(num_worlds: int = 1, n_agents: int = 4, team: bool = False, *,
                           autoreset_mode=AutoresetMode.NEXT_STEP, render_mode=None,
                           **scenario_options) -> MultiAgentVectorEnv:
    """A Gymnasium ``VectorEnv`` of ``num_worlds`` worlds x ``n_agents`` searchers, one row per agent.

    See ``MultiAgentVectorEnv`` for the spaces, the masking of finished agents and the autoreset
    modes. For Stable-Baselines3, pass ``autoreset_mode=AutoresetMode.SAME_STEP`` and wrap it in
    ``plume_multi.integrations.sb3.SB3VecEnv``.

    Args:
        num_worlds: B >= 1 independent worlds.
        n_agents: N >= 1 searchers per world; ``num_envs`` is ``B * N``.
        team: the first arrival ends the world's episode for all its agents, who share the reward.
        autoreset_mode: a ``gymnasium.vector.AutoresetMode`` (default ``NEXT_STEP``) or its value.
        render_mode: ``None`` or ``"rgb_array"``.
        **scenario_options: ``Scenario`` fields (``grid_size``, ``max_steps``, ``sigma``,
            ``n_neighbours``, ...).
    """
    return MultiAgentVectorEnv(num_worlds, n_agents, team, autoreset_mode=autoreset_mode,
                               render_mode=render_mode, **scenario_options)
