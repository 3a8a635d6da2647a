"""``LearnedPolicy``: a trained network as a policy of observations, and its file.

A ``LearnedPolicy`` is a callable ``obs (M, D) float32 -> actions`` like every policy of
``plume_multi.policies``, so ``plume_multi.evaluate``, ``plume-multi eval --policy FILE.pt`` and a
plain loop over a ``Simulator`` run it. Greedy by default (the most likely action, or the Gaussian's
mean); ``sampled(seed)`` gives a copy that draws from the distribution, reproducibly.

The recurrent policy (``ppo-gru``) keeps one memory row per observation row: it starts at zeros
when the number of rows changes, and ``reset(mask)`` (or ``episode_start=`` in the call) clears the
rows whose episode begins. ``plume_multi.evaluate`` runs a fresh copy for each chunk of worlds, one
episode per world, so it needs neither.

The file (``save``/``load_policy``) is a small ``torch.save`` archive of plain values and tensors
only, so ``torch.load(..., weights_only=True)`` opens it safely: the weights, the network's sizes,
the scenario it was trained on (``Scenario.metadata()``), its observation columns, the PPO settings
and a summary of the training run.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import torch

from .. import files
from ..checks import check_arguments, check_bool, check_seed, is_int, is_real, shown
from ..errors import ValidationError
from ..integrations.trained import torch_threads
from .config import POLICIES, PPOConfig
from .networks import NETWORKS

__all__ = ["LearnedPolicy", "load_policy", "FILE_FORMAT"]

FILE_FORMAT = "plume_multi.learned_policy/1"


class LearnedPolicy:
    """A trained actor-critic acting for many rows at once.

    Args:
        network: an ``MLPActorCritic`` or ``GRUActorCritic`` (``plume_multi.training.networks``).
        name: the learned baseline it is (``"ppo-mlp"`` or ``"ppo-gru"``).
        scenario: the ``Scenario`` it was trained on, or its ``scenario_record`` (what is kept: the
            metadata, the observation columns, a continuous body's action box).
        config: the ``PPOConfig`` it was trained with.
        greedy: act by the most likely action (True) or by drawing from the distribution.
        seed: seeds the draws when ``greedy`` is False.
        training: a JSON-able summary of the training run (kept in the file).

    Call it with ``obs`` ``(M, D)`` float32 (D the scenario's observation width); it returns ``(M,)``
    int64 actions for a discrete body, ``(M, 2)`` float64 for a continuous one (within its box).
    The forward pass runs on ``config.threads`` torch threads (those it was trained with, 1 by
    default), whatever torch's global setting: these networks are small, and torch's default of one
    thread per core made every call hundreds of times slower on the loaded 2-core machine
    (measured: 12-16 ms against 25 us for a tanh layer of 1,000 x 32).
    """

    def __init__(self, network, name: str, scenario, config: PPOConfig, *, greedy: bool = True, seed=None,
                 training: dict | None = None):
        if name not in POLICIES:
            raise ValidationError(f"name: got {name!r}; expected one of {list(POLICIES)}")
        self.network = network.eval()
        self.name = name
        self.config = config
        self.greedy = check_bool("LearnedPolicy", "greedy", greedy)
        self.seed = check_seed(seed, max_seed=2**63 - 1)
        self.scenario = scenario if isinstance(scenario, dict) else scenario_record(scenario)
        self.training = dict(training or {})
        if not network.n_actions:
            low = np.asarray(self.scenario["action_low"], np.float64)
            high = np.asarray(self.scenario["action_high"], np.float64)
            self._action_centre, self._action_half = (high + low) / 2.0, (high - low) / 2.0
        self._generator = torch.Generator()
        self._generator.manual_seed(0 if seed is None else int(seed))
        self._memory = None

    @property
    def observation_layout(self) -> list:
        """The observation columns it reads, in order (the training scenario's)."""
        return list(self.scenario["observation_layout"])

    # ------------------------------------------------------------------ acting
    @property
    def recurrent(self) -> bool:
        """Whether the policy has a memory (``ppo-gru``)."""
        return bool(self.network.recurrent)

    @property
    def obs_dim(self) -> int:
        return self.network.obs_dim

    def reset(self, mask=None) -> None:
        """Clear the memory of every row (``mask=None``) or of the rows where ``mask`` ``(M,)`` is True."""
        if self._memory is None or mask is None:
            self._memory = None
            return
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != (self._memory.shape[0],):
            raise ValidationError(f"mask: got shape {mask.shape}; expected ({self._memory.shape[0]},) bool")
        self._memory[torch.from_numpy(mask)] = 0.0

    def __call__(self, obs, episode_start=None) -> np.ndarray:
        """Actions for ``obs`` ``(M, D)``; ``episode_start`` ``(M,)`` bool marks rows whose episode
        begins with this observation (their memory is cleared first; ignored without memory)."""
        if not isinstance(obs, np.ndarray) or obs.ndim != 2 or obs.shape[1] != self.obs_dim:
            got = f"shape {obs.shape}" if isinstance(obs, np.ndarray) else type(obs).__name__
            raise ValidationError(f"obs: got {got}; expected a ({'M'}, {self.obs_dim}) float32 array (the "
                                  f"observation columns {self.observation_layout})")
        x = torch.from_numpy(np.ascontiguousarray(obs, dtype=np.float32))
        rows = x.shape[0]
        if self._memory is None or self._memory.shape[0] != rows:
            self._memory = self.network.initial_memory(rows)
        if episode_start is not None and self.recurrent:
            self.reset(episode_start)
        with torch.no_grad(), torch_threads(self.config.threads):
            actor, _, self._memory = self.network.features(x, self._memory)
            if self.greedy:
                action = self.network.head.greedy(actor)
            else:
                action, _ = self.network.head.sample(actor, self._generator)
        return self.to_env(action)

    def to_env(self, action: torch.Tensor) -> np.ndarray:
        """The network's actions as the simulator takes them: int64 indices, or float64 ``(M, 2)``
        mapped from ``[-1, 1]`` (clipped) onto the body's action box."""
        if self.network.n_actions:
            return action.numpy()
        a = action.clamp(-1.0, 1.0).double().numpy()
        return self._action_centre + self._action_half * a

    def sampled(self, seed: int = 0) -> "LearnedPolicy":
        """A copy that draws its actions from the distribution, seeded by ``seed``."""
        other = copy.deepcopy(self)
        other.greedy = False
        other.seed = check_seed(seed, max_seed=2**63 - 1)
        other._generator.manual_seed(int(seed))
        other._memory = None
        return other

    def __deepcopy__(self, memo):
        other = copy.copy(self)
        other.network = copy.deepcopy(self.network, memo)
        other._generator = torch.Generator()
        other._generator.set_state(self._generator.get_state())
        other._memory = None if self._memory is None else self._memory.clone()
        other.training = copy.deepcopy(self.training, memo)
        return other

    def __repr__(self) -> str:
        mode = "greedy" if self.greedy else f"sampled, seed {self.seed}"
        return f"LearnedPolicy({self.name}, obs {self.observation_layout}, {mode})"

    # ------------------------------------------------------------------ the file
    def save(self, path) -> Path:
        """Write the policy to ``path`` (``.pt`` by convention; a few tens of kB), whole or not at all
        (a temporary file renamed onto it); return the path."""
        net = self.network
        record = {
            "format": FILE_FORMAT,
            "policy": self.name,
            "sizes": {"obs_dim": net.obs_dim, "n_actions": net.n_actions, "action_dim": net.action_dim,
                      "hidden": net.hidden, "layers": net.layers},
            "state_dict": {k: v.detach().clone() for k, v in net.state_dict().items()},
            "scenario": json.dumps(self.scenario),
            "config": dataclasses.asdict(self.config),
            "training": json.dumps(self.training),
        }
        with files.writing(path, "LearnedPolicy.save", "the path of the policy file to write", text=False) as f:
            torch.save(record, f)
        return Path(path)


def load_policy(path, *, greedy: bool = True, seed=None) -> LearnedPolicy:
    """The ``LearnedPolicy`` saved at ``path`` by ``LearnedPolicy.save``.

    Every entry of the file is checked before it is used (``_checked_record``): its keys, the
    network's sizes (within ``SIZE_LIMITS``), every weight's name, shape, dtype and finiteness
    against the network those sizes make, the scenario record and the PPO settings.

    Raises:
        ValidationError: the path is not a readable regular file (``plume_multi.files``), or the
            file is not such a policy (naming the entry that is wrong, what it holds and what was
            expected).
    """
    with files.open_file(path, "load_policy", "a policy file written by LearnedPolicy.save") as f:
        try:
            record = torch.load(f, map_location="cpu", weights_only=True)
        except Exception as exc:
            raise ValidationError(f"path: {str(path)!r} is not a policy file ({type(exc).__name__}: {exc})") from None
    if not isinstance(record, dict) or record.get("format") != FILE_FORMAT:
        raise ValidationError(f"path: {str(path)!r} is not a policy file of format {FILE_FORMAT!r}")
    name, network, scenario, config, training = _checked_record(record, str(path))
    return LearnedPolicy(network, name, scenario, config, greedy=greedy, seed=seed, training=training)


# The sizes a policy file may give its network (PPOConfig's own bounds for hidden and layers)
SIZE_LIMITS = {"obs_dim": (1, 1 << 16), "n_actions": (0, 1 << 16), "action_dim": (0, 64), "hidden": (1, 4096),
               "layers": (1, 16)}
RECORD_KEYS = ("format", "policy", "sizes", "state_dict", "scenario", "config", "training")


def _refused(path: str, entry: str, got: str, expected: str):
    raise ValidationError(f"load_policy: {path!r}: {entry}: got {got}; expected {expected}")


def _json_entry(record: dict, key: str, path: str) -> dict:
    text = record[key]
    if not isinstance(text, str):
        _refused(path, key, shown(text, typed=True), "a JSON text")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        _refused(path, key, f"text that is not JSON ({exc})", "a JSON text of an object")
    if not isinstance(value, dict):
        _refused(path, key, f"JSON of a {type(value).__name__}", "a JSON object")
    return value


def _checked_sizes(record: dict, path: str) -> dict:
    sizes = record["sizes"]
    if not isinstance(sizes, dict) or set(sizes) != set(SIZE_LIMITS):
        _refused(path, "sizes", shown(sizes, 200), f"a dict of the integers {list(SIZE_LIMITS)}")
    for key, (low, high) in SIZE_LIMITS.items():
        if not is_int(sizes[key]) or not low <= sizes[key] <= high:
            _refused(path, f"sizes.{key}", shown(sizes[key], typed=True), f"an integer in {low}..{high}")
    if (sizes["n_actions"] > 0) == (sizes["action_dim"] > 0):
        _refused(path, "sizes", shown(sizes, 200), "n_actions > 0 (discrete actions) or action_dim > 0 (a "
                 "continuous body's), not both")
    return {key: int(value) for key, value in sizes.items()}


def _checked_scenario(record: dict, path: str, sizes: dict) -> dict:
    scenario = _json_entry(record, "scenario", path)
    expected = "{'metadata': {...}, 'observation_layout': [...], 'action_low': ..., 'action_high': ...}"
    if set(scenario) != {"metadata", "observation_layout", "action_low", "action_high"} \
            or not isinstance(scenario["metadata"], dict):
        _refused(path, "scenario", shown(scenario, 200), expected)
    layout = scenario["observation_layout"]
    if not isinstance(layout, list) or len(layout) != sizes["obs_dim"] or not all(isinstance(c, str) for c in layout):
        _refused(path, "scenario.observation_layout", shown(layout, 200),
                 f"a list of {sizes['obs_dim']} column names (sizes.obs_dim)")
    for key in ("action_low", "action_high"):
        box = scenario[key]
        if sizes["n_actions"]:
            if box is not None:
                _refused(path, f"scenario.{key}", shown(box), "null for a policy of discrete actions")
            continue
        if not isinstance(box, list) or len(box) != sizes["action_dim"] or not all(
                is_real(v) and math.isfinite(v) for v in box):
            _refused(path, f"scenario.{key}", shown(box), f"{sizes['action_dim']} finite numbers (sizes.action_dim)")
    if not sizes["n_actions"] and not all(lo <= hi for lo, hi in zip(scenario["action_low"], scenario["action_high"])):
        _refused(path, "scenario.action_high", shown(scenario["action_high"]), "numbers >= action_low")
    return scenario


def _checked_record(record: dict, path: str) -> tuple:
    """``(name, network, scenario record, PPOConfig, training summary)`` of a policy file's record,
    every entry checked (``load_policy``); ``ValidationError`` naming the entry otherwise."""
    missing = [key for key in RECORD_KEYS if key not in record]
    unknown = sorted(map(str, set(record) - set(RECORD_KEYS)))
    if missing or unknown:
        _refused(path, "entries", f"{'missing ' + str(missing) if missing else ''}"
                 f"{' and ' if missing and unknown else ''}{'unknown ' + str(unknown) if unknown else ''}",
                 f"exactly {list(RECORD_KEYS)}")
    name = record["policy"]
    if not isinstance(name, str) or name not in POLICIES:
        _refused(path, "policy", shown(name, typed=True), f"one of {list(POLICIES)}")
    sizes = _checked_sizes(record, path)
    scenario = _checked_scenario(record, path, sizes)
    config = record["config"]
    if not isinstance(config, dict) or not all(isinstance(k, str) for k in config):
        _refused(path, "config", shown(config, 200), "a dict of PPOConfig settings")
    try:
        check_arguments(PPOConfig, (), config)
        config = PPOConfig(**config)
    except ValidationError as exc:
        _refused(path, "config", shown(config, 200), f"PPOConfig settings ({exc})")
    training = _json_entry(record, "training", path)
    # built on the meta device: its weights' shapes without allocating them (sizes within their
    # limits could still ask for a GiB), then the file's own tensors put in their places
    with torch.device("meta"):
        network = NETWORKS[POLICIES[name]](np.zeros(sizes["obs_dim"]), np.zeros(sizes["obs_dim"]),
                                           sizes["n_actions"], sizes["action_dim"], sizes["hidden"], sizes["layers"])
    weights = record["state_dict"]
    wanted = network.state_dict()
    if not isinstance(weights, dict) or set(weights) != set(wanted):
        got = shown(sorted(map(str, weights)), 200) if isinstance(weights, dict) else shown(weights, typed=True)
        _refused(path, "state_dict", got, f"the weights {sorted(wanted)} of a {name} network of these "
                 "sizes")
    for key, like in wanted.items():
        tensor = weights[key]
        if not isinstance(tensor, torch.Tensor) or tensor.layout != torch.strided or tensor.shape != like.shape \
                or tensor.dtype != like.dtype:
            got = f"{tuple(tensor.shape)} {tensor.dtype}" if isinstance(tensor, torch.Tensor) else shown(tensor, typed=True)
            _refused(path, f"state_dict[{key!r}]", got, f"a {tuple(like.shape)} {like.dtype} tensor")
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            _refused(path, f"state_dict[{key!r}]", "a tensor with NaN or infinite values", "finite weights")
    network.load_state_dict({key: tensor.contiguous() for key, tensor in weights.items()}, assign=True)
    return name, network, scenario, config, training


def scenario_record(scenario) -> dict:
    """What a policy keeps of the scenario it was trained on (JSON-able): ``metadata``
    (``Scenario.metadata()``), ``observation_layout`` and, for a continuous body, its action box
    ``action_low`` / ``action_high``."""
    record = {"metadata": json.loads(json.dumps(scenario.metadata(), default=str)),
              "observation_layout": list(scenario.observation_layout), "action_low": None, "action_high": None}
    if scenario.continuous:
        record["action_low"] = np.asarray(scenario.action_model.low, np.float64).tolist()
        record["action_high"] = np.asarray(scenario.action_model.high, np.float64).tolist()
    return record
