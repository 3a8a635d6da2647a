"""``SharedBufferEnv``: B worlds of N searchers as rows of buffers the trainer owns (PufferLib's style).

PufferLib's native environments (``PufferEnv``) keep every agent of every copy as a row of a few
flat arrays allocated once (``observations``, ``rewards``, ``terminals``, ``truncations``,
``masks``, ``actions``), often shared memory set up by the trainer's vectorizer, and write each step
into them in place. This class is that interface over the engine, without depending on PufferLib:
the compiled step writes the observations straight into ``observations`` (no copy), the per-row
rewards and flags are computed into the other buffers, and nothing is allocated per step.

    import numpy as np
    from plume_multi.integrations.puffer import SharedBufferEnv

    env = SharedBufferEnv(num_worlds=1024, n_agents=4, grid_size=(32, 32), max_steps=200)
    obs, infos = env.reset(seed=0)              # env.observations, (4096, 3) float32
    obs, rewards, terminals, truncations, infos = env.step(np.zeros(env.num_agents, np.int64))
    obs is env.observations                     # True: the same buffer, written in place

Rows and episodes are those of ``plume_multi.multi_agent_vector_env`` (row ``b * N + n`` is agent
``n`` of world ``b``; autoreset ``NEXT_STEP``: a world resets on the step after its episode ended,
so no final observation is lost). ``masks[i]`` is False for a row whose agent has finished while
its world goes on, or whose world waits for its reset: drop those rows from the loss.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from gymnasium.vector import AutoresetMode

from ..envs.multi_vector import MultiAgentVectorEnv
from ..checks import shown
from ..errors import ValidationError

__all__ = ["SharedBufferEnv", "BUFFER_NAMES"]

BUFFER_NAMES = ("observations", "rewards", "terminals", "truncations", "masks", "actions")


class SharedBufferEnv:
    """B worlds x N searchers as ``num_agents = B * N`` rows of trainer-owned buffers.

    Attributes (PufferLib's names): ``single_observation_space`` (``Box((3 + 2k,), float32)``),
    ``single_action_space`` (``Discrete(K)``), ``num_agents``; the buffers ``observations``
    ``(num_agents, D)`` float32, ``rewards`` ``(num_agents,)`` float32, ``terminals``,
    ``truncations`` and ``masks`` ``(num_agents,)`` bool, ``actions`` ``(num_agents,)`` int64.

    Args:
        num_worlds: B.
        n_agents: N searchers per world.
        buf: ``None`` (the buffers are allocated here) or an object with the attributes
            ``observations``, ``rewards``, ``terminals``, ``truncations``, ``masks`` and optionally
            ``actions`` (PufferLib's vectorizer passes such a namespace of shared arrays), with the
            shapes and dtypes above; they are used as they are.
        team: the first arrival ends the world's episode for all its searchers.
        **scenario: ``Scenario`` fields (``grid_size``, ``sigma``, ``max_steps``, ``n_neighbours``, ...).
    """

    def __init__(self, num_worlds: int = 1, n_agents: int = 4, *, buf=None, team: bool = False, **scenario):
        self.venv = MultiAgentVectorEnv(num_worlds, n_agents, team, autoreset_mode=AutoresetMode.NEXT_STEP,
                                        **scenario)
        self.single_observation_space = self.venv.single_observation_space
        self.single_action_space = self.venv.single_action_space
        self.num_agents = n = self.venv.num_envs
        d = self.single_observation_space.shape[0]
        expected = {"observations": ((n, d), np.float32), "rewards": ((n,), np.float32),
                    "terminals": ((n,), np.bool_), "truncations": ((n,), np.bool_), "masks": ((n,), np.bool_),
                    "actions": ((n,), np.int64)}
        if buf is None:
            buf = SimpleNamespace(**{name: np.zeros(shape, dtype) for name, (shape, dtype) in expected.items()})
        for name, (shape, dtype) in expected.items():
            array = getattr(buf, name, None)
            if array is None and name == "actions":  # the trainer keeps its actions elsewhere
                array = np.zeros(shape, dtype)
            ok = (isinstance(array, np.ndarray) and array.shape == shape and array.flags.c_contiguous
                  and array.flags.writeable and (array.dtype == dtype or (name == "actions" and array.dtype.kind in "iu")))
            if not ok:
                got = f"shape {array.shape} dtype {array.dtype}" if isinstance(array, np.ndarray) else repr(array)
                raise ValidationError(f"buf.{name}: got {got}; expected a writeable C-contiguous {np.dtype(dtype)} "
                                      f"array of shape {shape} (or buf=None to allocate the buffers here)")
            setattr(self, name, array)
        # each buffer is written in its own step phase: two that share memory (terminals and
        # truncations the same array, rewards over the observations' bytes) would overwrite each other
        for i, first in enumerate(BUFFER_NAMES):
            for second in BUFFER_NAMES[i + 1:]:
                if np.shares_memory(getattr(self, first), getattr(self, second)):
                    raise ValidationError(f"buf.{second}: got an array that shares memory with buf.{first}; expected "
                                          "six buffers that do not overlap (or buf=None to allocate them here)")
        self.venv.simulator.bind_observations(self.observations)

    def reset(self, seed: int | None = None):
        """Reset every world (world ``b`` seeded ``seed + b``); return ``(observations, [])``."""
        self.venv.reset(seed=seed)
        self.rewards[:] = 0.0
        self.terminals[:] = False
        self.truncations[:] = False
        self.masks[:] = self.venv.active
        return self.observations, []

    def step(self, actions=None):
        """Advance every world one step with ``actions`` (``(num_agents,)`` integers; default: the
        ``actions`` buffer); return ``(observations, rewards, terminals, truncations, [])``, the
        buffers themselves, written in place."""
        if actions is None:
            actions = self.actions
        actions = self._checked_actions(actions)
        self.venv.step_into(actions, self.rewards, self.terminals, self.truncations, self.masks)
        return self.observations, self.rewards, self.terminals, self.truncations, []

    def _checked_actions(self, actions) -> np.ndarray:
        """``actions`` as ``(num_agents,)`` int64: integers only (a list of them too); floats, bools
        and strings are refused, never cast (2.7 would become action 2, "1" action 1)."""
        try:
            arr = np.asarray(actions)
        except (TypeError, ValueError):
            arr = None
        if arr is None or arr.dtype.kind not in "iu" or arr.shape != (self.num_agents,):
            got = f"an array of shape {arr.shape} dtype {arr.dtype}" if arr is not None else shown(actions, typed=True)
            raise ValidationError(f"actions: got {got}; expected ({self.num_agents},) integers (an integer array or a "
                                  f"list of ints), one action of {self.single_action_space} per row")
        return arr if arr.dtype == np.int64 else arr.astype(np.int64)

    def close(self) -> None:
        self.venv.close()
