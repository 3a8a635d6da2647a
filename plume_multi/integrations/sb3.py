"""``SB3VecEnv``: a Gymnasium vector env of plume searches seen as a Stable-Baselines3 ``VecEnv``.

Needs stable-baselines3 (the ``sb3`` extra: ``pip install "plume-multi[sb3]"``).
"""

from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from ..checks import shown
from ..envs._core import fold_seed
from ..envs.vector import PlumeVectorEnv
from ..errors import StateError, ValidationError

try:
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "plume_multi.integrations.sb3.SB3VecEnv needs stable-baselines3: pip install 'plume-multi[sb3]'"
    ) from exc

__all__ = ["SB3VecEnv"]


def _same_options(a, b) -> bool:
    """``a == b`` for option dicts that may hold arrays (compared element by element)."""
    if not (isinstance(a, dict) and isinstance(b, dict)) or a.keys() != b.keys():
        return False
    return all(np.array_equal(np.asarray(a[k]), np.asarray(b[k])) if isinstance(a[k], np.ndarray)
               or isinstance(b[k], np.ndarray) else a[k] is b[k] or a[k] == b[k] for k in a)


class SB3VecEnv(VecEnv):
    """Stable-Baselines3 ``VecEnv`` over a Gymnasium ``VectorEnv`` that autoresets on the same step.

    SB3 expects a finished env to be reset inside the step that ended it, with the last observation
    in ``infos[i]["terminal_observation"]``; that is Gymnasium's ``AutoresetMode.SAME_STEP``. A
    ``plume_multi.vector_env`` in any other mode is taken as it is given and replaced by a new one
    with the same arguments in ``SAME_STEP`` mode (``self.venv``; the one given is not changed)::

        from stable_baselines3 import PPO
        import plume_multi
        from plume_multi.integrations.sb3 import SB3VecEnv

        venv = SB3VecEnv(plume_multi.vector_env(64, grid_size=(32, 32), max_steps=200))
        model = PPO("MlpPolicy", venv, seed=0).learn(100_000)

    * ``step_wait`` returns ``(obs, rewards float32, dones bool, infos)``, ``infos`` a list of one
      dict per world. Each has ``"TimeLimit.truncated"`` (truncated and not terminated, as
      SB3's ``DummyVecEnv`` sets it); a world that ended also has ``"terminal_observation"``.
    * ``seed(s)`` makes the next ``reset()`` seed world ``i`` with ``s + i`` (SB3 calls it with the
      algorithm's ``seed``); ``set_options`` passes its options to that reset.
    * ``action_masks()``: ``(num_envs, K)`` bool, for sb3-contrib's ``MaskablePPO``.
    * ``get_attr`` / ``env_method`` look the name up on the vector env (or, through Gymnasium
      vector wrappers, on the env they wrap) and call a method *once* for all worlds; a result that
      is an array with one row per world is split into those rows, anything else is repeated for
      each index asked. ``set_attr`` sets the vector env's attribute (for all worlds only).
    * The worlds are not ``gym.Env`` objects: ``env_is_wrapped`` is False for every world. Wrap this
      adapter in ``VecMonitor`` for episode statistics.

    Args:
        venv: ``plume_multi.vector_env(...)`` in any autoreset mode, or a Gymnasium ``VectorEnv``
            (such as ``plume_multi.vector_env(...)`` inside Gymnasium vector wrappers, which keep
            the mode they were made with) whose ``metadata["autoreset_mode"]`` is
            ``AutoresetMode.SAME_STEP``.
    """

    def __init__(self, venv: VectorEnv):
        if not isinstance(venv, VectorEnv):
            raise ValidationError(
                f"venv: got {type(venv).__name__}; expected a gymnasium.vector.VectorEnv such as "
                "plume_multi.vector_env(n, autoreset_mode=AutoresetMode.SAME_STEP)"
            )
        mode = venv.metadata.get("autoreset_mode")
        if mode != AutoresetMode.SAME_STEP:
            if isinstance(venv, PlumeVectorEnv):
                venv = venv.with_autoreset_mode(AutoresetMode.SAME_STEP)
            else:
                raise ValidationError(
                    f"venv: its metadata['autoreset_mode'] is {mode!r}; expected AutoresetMode.SAME_STEP, which is "
                    "how SB3 resets. Wrappers keep the mode they were made with: create the vector env with "
                    "vector_env(n, autoreset_mode=AutoresetMode.SAME_STEP) before wrapping it"
                )
        self.venv = venv
        self._actions = None
        self._pending = False  # step_async was called (None is a value a caller may pass)
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
        self.metadata = {**venv.metadata, **self.metadata}

    # ------------------------------------------------------------------ reset / step
    def reset(self):
        """Reset every world; seeds and options set by ``seed`` / ``set_options`` apply once."""
        seed = self._seeds[0]
        if seed is not None and any(s != seed + i for i, s in enumerate(self._seeds)):
            raise ValidationError(
                f"seeds: got {self._seeds[:4]}...; expected consecutive seeds s, s+1, ... (set them with seed(s))"
            )
        options = self._options[0] or None
        obs, _ = self.venv.reset(seed=seed, options=options)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return obs

    def set_options(self, options=None) -> None:
        """Options for the next ``reset()`` (then forgotten): ``None``, a dict, or a list of the same
        dict for every world (the worlds are reset by one call)."""
        if options is None:
            options = {}
        if isinstance(options, (list, tuple)):
            if len(options) != self.num_envs or any(o is not options[0] and not _same_options(o, options[0])
                                                    for o in options):
                raise ValidationError(f"options: got {shown(options, typed=True)}; expected None, a dict, or a list of "
                                      f"{self.num_envs} equal dicts (the worlds are reset by one call)")
            options = options[0]
        if not isinstance(options, dict):
            raise ValidationError(f"options: got {shown(options, typed=True)}; expected None, a dict, or a list of "
                                  f"{self.num_envs} equal dicts")
        self._options = [copy.deepcopy(options) for _ in range(self.num_envs)]

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions
        self._pending = True

    def step_wait(self):
        if not self._pending:
            raise StateError("Cannot step_wait() before step_async(actions): call step(actions)")
        actions, self._actions, self._pending = self._actions, None, False
        obs, rewards, terminated, truncated, info = self.venv.step(actions)
        dones = terminated | truncated
        time_limit = truncated & ~terminated
        infos = [{"TimeLimit.truncated": t} for t in time_limit.tolist()]
        ended = np.flatnonzero(dones)
        if ended.size:
            final = info["final_obs"]
            if isinstance(final, dict):
                for i in ended:
                    infos[i]["terminal_observation"] = {key: value[i] for key, value in final.items()}
            else:
                for i in ended:
                    infos[i]["terminal_observation"] = final[i]
        return obs, np.asarray(rewards, dtype=np.float32), dones, infos

    def seed(self, seed: int | None = None):
        """Seed the next ``reset()``: world ``i`` gets ``seed + i`` (a random base when None; any
        non-negative integer, one beyond the vector env's range folded into it at the reset)."""
        if seed is not None:
            fold_seed(seed)  # the seed's type and sign, checked now; the vector env folds it
            seed = int(seed)
        return super().seed(seed)

    def close(self) -> None:
        self.venv.close()

    # ------------------------------------------------------------------ masks, attributes, methods
    def action_masks(self) -> np.ndarray:
        """``(num_envs, K)`` bool: the moves that change each agent's cell (see ``PlumeVectorEnv``)."""
        return self._lookup("action_masks")()

    def get_images(self):
        if self.render_mode != "rgb_array":
            warnings.warn(f"The render mode is {self.render_mode}; get_images needs 'rgb_array'", stacklevel=2)
            return [None] * self.num_envs
        return list(self.venv.render())

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        return self._per_world(self._lookup(attr_name), indices)

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        if indices is not None and sorted(self._get_indices(indices)) != list(range(self.num_envs)):
            raise ValidationError(
                f"set_attr({attr_name!r}): got indices {indices!r}; the worlds share one vector env, so "
                "attributes are set for all of them (indices=None)"
            )
        setattr(self.venv.unwrapped if not hasattr(self.venv, attr_name) else self.venv, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        result = self._lookup(method_name)(*method_args, **method_kwargs)
        return self._per_world(result, indices)

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False] * len(list(self._get_indices(indices)))

    def _lookup(self, name: str):
        try:
            return getattr(self.venv, name)
        except AttributeError:
            return getattr(self.venv.unwrapped, name)  # through Gymnasium's vector wrappers

    def _per_world(self, value, indices) -> list[Any]:
        if isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == self.num_envs:
            return list(value) if indices is None else [value[i] for i in self._get_indices(indices)]
        return [value] * len(list(self._get_indices(indices)))

    def __repr__(self) -> str:
        return f"SB3VecEnv({self.venv!r})"
