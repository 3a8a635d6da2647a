"""Trainers' models as policies of observations, for ``plume_multi.evaluate`` without an adapter.

``evaluate`` (and ``tasks.evaluate``) pass their policy argument through ``as_policy``, which
recognizes a trainer's model and returns a factory of a policy ``obs (B*N, D) float32 -> actions``
made for the scenario (checked against it before anything compiles):

* a Stable-Baselines3 algorithm (``PPO``, ``DQN``, sb3-contrib's ``MaskablePPO``, ...) or policy:
  ``model.predict(obs, deterministic=True)``; sb3-contrib's ``RecurrentPPO`` keeps its LSTM state
  per row from the episode's first step on (``SB3Policy``);
* a torch ``nn.Module`` mapping ``(M, D)`` float32 observations to ``(M, K)`` scores over the K
  actions (the most likely is taken), ``(M,)`` action indices, or ``(M, A)`` actions of a
  continuous body (a tuple: its first element); a TensorDict module (TorchRL's actors) reads the
  observations under its first in-key and gives ``"action"`` (one-hot or indices), in its
  deterministic mode (``TorchPolicy``);
* an RLlib ``RLModule``, ``MultiRLModule`` or ``Algorithm``: its greedy action (the most likely of
  the action distribution's inputs); a stateful module (``use_lstm``) carries its state per row. A
  multi-agent module serves every searcher with its one module (or its ``"shared"`` one), or each
  searcher ``n`` with module ``searcher_n`` when it has one per searcher (``RLlibPolicy``).

Rows are what the simulator gives: row ``b * N + n`` is searcher ``n`` of world ``b``, so a policy
shared by the searchers acts on all rows at once, and one model per searcher (a list, a mapping
``{n: model}``) runs as a ``policies.Team``. A model's library is never imported here unless the
object comes from it.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Mapping

import numpy as np

from ..errors import ValidationError

__all__ = ["as_policy", "SB3Policy", "TorchPolicy", "RLlibPolicy"]


@contextlib.contextmanager
def torch_threads(n: int):
    """Run the block with torch on ``n`` CPU threads; the previous count is restored afterwards
    (a few tenths of a microsecond each way)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _instance(obj, module: str, name: str) -> bool:
    """``isinstance(obj, module.name)`` when ``module`` is imported (an object of a library that
    is not imported cannot be one of its classes)."""
    cls = getattr(sys.modules.get(module), name, None)
    return isinstance(cls, type) and isinstance(obj, cls)


def _kind(obj) -> str | None:
    if _instance(obj, "stable_baselines3.common.base_class", "BaseAlgorithm") or \
            _instance(obj, "stable_baselines3.common.policies", "BasePolicy"):
        return "sb3"
    if _instance(obj, "ray.rllib.core.rl_module.rl_module", "RLModule") or \
            _instance(obj, "ray.rllib.algorithms.algorithm", "Algorithm"):
        return "rllib"
    if _instance(obj, "torch.nn", "Module"):
        return "torch"
    return None


def as_policy(policy):
    """``policy`` as ``plume_multi.evaluate`` runs it: a trainer's model becomes a factory
    ``(scenario) -> SB3Policy | TorchPolicy | RLlibPolicy`` (or a ``Team`` of them); a list, tuple
    or mapping of policies has its members converted; anything else is returned as it is."""
    if isinstance(policy, (list, tuple)):
        return type(policy)(as_policy(member) for member in policy)
    if isinstance(policy, Mapping):
        return {key: as_policy(member) for key, member in policy.items()}
    kind = _kind(policy)
    if kind is None:
        return policy
    made = {"sb3": SB3Policy, "torch": TorchPolicy, "rllib": _rllib_policy}[kind]
    factory = functools.partial(made, policy)
    factory.__name__ = f"{type(policy).__name__} ({kind})"  # what evaluate's messages show
    return factory


# ----------------------------------------------------------------------------------------- checks
def _check_space(who: str, observation_shape, action, scenario) -> None:
    """Refuse a model whose observation or action space does not fit ``scenario``."""
    if scenario is None:
        return
    if observation_shape is not None and tuple(observation_shape) != (scenario.obs_dim,):
        raise ValidationError(f"policy: {who} takes observations of shape {tuple(observation_shape)}; the scenario's "
                              f"are ({scenario.obs_dim},) (the columns {list(scenario.observation_layout)})")
    if action is None:
        return
    if scenario.continuous:
        expected = f"a Box of shape {np.asarray(scenario.action_model.low).shape} (the body {scenario.action_model.name})"
        fits = getattr(action, "shape", None) == np.asarray(scenario.action_model.low).shape and not hasattr(action, "n")
    else:
        expected = f"Discrete({scenario.n_actions}) (the body {scenario.action_model.name})"
        fits = int(getattr(action, "n", -1)) == scenario.n_actions
    if not fits:
        raise ValidationError(f"policy: {who} acts in {action}; the scenario expects {expected}")


def _greedy(scores, scenario, who: str) -> np.ndarray:
    """Actions of a network's output: scores ``(M, K)`` -> the most likely index; indices
    ``(M,)`` as they are; continuous actions ``(M, A)`` as float64."""
    out = np.asarray(scores)
    rows = out.shape[0] if out.ndim else 0
    if scenario is not None and scenario.continuous:
        return out.astype(np.float64)
    if out.ndim == 2 and out.dtype.kind == "f" and (scenario is None or out.shape[1] == scenario.n_actions):
        return out.argmax(axis=1).astype(np.int64)
    if out.ndim == 1 and out.dtype.kind in "iu":
        return out.astype(np.int64)
    k = "K" if scenario is None else scenario.n_actions
    expected = f"({rows}, {k}) scores over the {k} actions or ({rows},) action indices"
    raise ValidationError(f"policy: {who} returned {out.dtype} of shape {out.shape} for {rows} rows; expected {expected}")


# ----------------------------------------------------------------------------------------- Stable-Baselines3
class SB3Policy:
    """A Stable-Baselines3 model (algorithm or policy) acting on every row: ``model.predict(obs,
    deterministic=True)``. A recurrent model (sb3-contrib's ``RecurrentPPO``) gets its state back
    at every call, ``episode_start`` True for every row on the first call (``evaluate`` makes one
    of these per chunk of worlds, one episode per world).

    Args:
        model: the SB3 model.
        scenario: the scenario it will act in (its spaces are checked against the model's).
        deterministic: the most likely action (default), or a draw.
    """

    def __init__(self, model, scenario=None, *, deterministic: bool = True):
        self.model = model
        self.deterministic = deterministic
        space = getattr(model, "observation_space", None)
        _check_space(type(model).__name__, getattr(space, "shape", None), getattr(model, "action_space", None),
                     scenario)
        policy = getattr(model, "policy", model)
        self.recurrent = _instance(policy, "sb3_contrib.common.recurrent.policies", "RecurrentActorCriticPolicy")
        self._state = None

    def __call__(self, obs) -> np.ndarray:
        if not self.recurrent:
            actions, _ = self.model.predict(obs, deterministic=self.deterministic)
            return np.asarray(actions)
        starts = np.zeros(len(obs), dtype=bool)
        if self._state is None or self._state[0].shape[1] != len(obs):
            self._state, starts[:] = None, True
        actions, self._state = self.model.predict(obs, state=self._state, episode_start=starts,
                                                  deterministic=self.deterministic)
        return np.asarray(actions)

    def __repr__(self) -> str:
        return f"SB3Policy({type(self.model).__name__})"


# ----------------------------------------------------------------------------------------- torch
class TorchPolicy:
    """A torch module acting on every row (see the module docstring for what it may return), on
    one torch thread (these networks are small; see ``LearnedPolicy``) and without gradients.

    Args:
        module: a ``torch.nn.Module`` (a TensorDict module too).
        scenario: the scenario it will act in (a first layer's input width is checked against it).
    """

    def __init__(self, module, scenario=None):
        import torch

        self.module = module
        self.scenario = scenario
        self.dict_module = _instance(module, "tensordict.nn.common", "TensorDictModuleBase")
        if scenario is None:
            return
        first = next((m for m in module.modules() if isinstance(m, torch.nn.Linear)), None)
        if first is not None and first.in_features != scenario.obs_dim:
            raise ValidationError(f"policy: {type(module).__name__}'s first linear layer takes {first.in_features} "
                                  f"inputs; the scenario's observations have {scenario.obs_dim} columns "
                                  f"{list(scenario.observation_layout)}")
        # a Sequential ending in a linear layer gives its scores: their number must be the body's
        last = module[-1] if isinstance(module, torch.nn.Sequential) and len(module) else None
        if isinstance(last, torch.nn.Linear) and not scenario.continuous and last.out_features != scenario.n_actions:
            raise ValidationError(f"policy: {type(module).__name__} ends in {last.out_features} scores; the body "
                                  f"{scenario.action_model.name} has {scenario.n_actions} actions")

    def __call__(self, obs) -> np.ndarray:
        import torch

        x = torch.from_numpy(np.ascontiguousarray(obs, dtype=np.float32))
        with torch.no_grad(), torch_threads(1):
            if self.dict_module:
                out = self._dict_call(x)
            else:
                out = self.module(x)
                if isinstance(out, (tuple, list)):
                    out = out[0]
        return _greedy(out.detach().cpu().numpy(), self.scenario, type(self.module).__name__)

    def _dict_call(self, x):
        from tensordict import TensorDict
        from tensordict.nn import InteractionType, set_interaction_type

        key = self.module.in_keys[0]
        with set_interaction_type(InteractionType.DETERMINISTIC):
            out = self.module(TensorDict({key: x}, batch_size=[x.shape[0]]))
        action = out.get("action")
        if action.ndim == 2 and (self.scenario is None or not self.scenario.continuous):
            return action.float()  # one-hot rows: the index of their one is the action
        return action

    def __repr__(self) -> str:
        return f"TorchPolicy({type(self.module).__name__})"


# ----------------------------------------------------------------------------------------- RLlib
def _rllib_policy(obj, scenario=None):
    """An ``RLlibPolicy``, or a ``Team`` of them for a module per searcher."""
    module = obj
    if _instance(obj, "ray.rllib.algorithms.algorithm", "Algorithm"):
        from .rllib import SHARED_POLICY

        module = obj.get_module() or obj.get_module(SHARED_POLICY)
        if module is None:
            raise ValidationError(f"policy: the algorithm {type(obj).__name__} has no default module and no "
                                  f"{SHARED_POLICY!r} one; pass its module: algo.get_module(MODULE_ID)")
    if not _instance(module, "ray.rllib.core.rl_module.multi_rl_module", "MultiRLModule"):
        return RLlibPolicy(module, scenario)
    from .rllib import SHARED_POLICY

    ids = list(module.keys())
    if len(ids) == 1 or SHARED_POLICY in ids:
        return RLlibPolicy(module[ids[0] if len(ids) == 1 else SHARED_POLICY], scenario)
    n = scenario.n_agents if scenario is not None else len(ids)
    per_agent = [f"searcher_{i}" for i in range(n)]
    if not set(per_agent) <= set(ids):
        raise ValidationError(f"policy: the multi-agent module has the modules {ids}; expected one module (or "
                              f"{SHARED_POLICY!r}) for every searcher, or one per searcher named {per_agent}")
    from ..policies.team import Team

    return Team([RLlibPolicy(module[agent], scenario) for agent in per_agent])


class RLlibPolicy:
    """An RLlib ``RLModule`` acting on every row by its greedy action (``forward_inference``; the
    most likely action of its action distribution inputs). A stateful module (``use_lstm``) gets
    its initial state for every row on the first call, then its own output state.

    Args:
        module: a single-agent ``RLModule``.
        scenario: the scenario it will act in (its spaces are checked against the module's).
    """

    def __init__(self, module, scenario=None):
        self.module = module
        self.scenario = scenario
        _check_space(type(module).__name__, getattr(getattr(module, "observation_space", None), "shape", None),
                     getattr(module, "action_space", None), scenario)
        self.stateful = bool(module.is_stateful())
        self._state = None

    def __call__(self, obs) -> np.ndarray:
        import torch
        from ray.rllib.core.columns import Columns

        x = torch.from_numpy(np.ascontiguousarray(obs, dtype=np.float32))
        with torch.no_grad():
            if not self.stateful:
                out = self.module.forward_inference({Columns.OBS: x})
                return _greedy(out[Columns.ACTION_DIST_INPUTS].numpy(), self.scenario, type(self.module).__name__)
            if self._state is None or _rows(self._state) != len(obs):
                initial = self.module.get_initial_state()
                self._state = _tree(initial, lambda s: torch.as_tensor(s).unsqueeze(0).repeat(len(obs), *[1] * s.ndim))
            out = self.module.forward_inference({Columns.OBS: x.unsqueeze(1), Columns.STATE_IN: self._state})
            self._state = out[Columns.STATE_OUT]
            scores = out[Columns.ACTION_DIST_INPUTS][:, -1]  # (rows, time 1, K): the one step
        return _greedy(scores.numpy(), self.scenario, type(self.module).__name__)

    def __repr__(self) -> str:
        return f"RLlibPolicy({type(self.module).__name__})"


def _tree(state, f):
    """``f`` applied to every tensor of a (nested dict) state."""
    if isinstance(state, Mapping):
        return {key: _tree(value, f) for key, value in state.items()}
    return f(state)


def _rows(state) -> int:
    while isinstance(state, Mapping):
        state = next(iter(state.values()))
    return int(state.shape[0])
