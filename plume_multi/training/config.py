"""``PPOConfig``: every setting of the PPO trainer, validated, with defaults per network."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..checks import check_bool, check_int, check_real
from ..errors import ValidationError

__all__ = ["PPOConfig", "POLICIES"]

# The learned baselines by name: ``plume-multi train --policy NAME`` and ``plume_multi.train(...,
# policy=NAME)``; each is PPO with the network it names.
POLICIES = {"ppo-mlp": "mlp", "ppo-gru": "gru"}


@dataclass(frozen=True)
class PPOConfig:
    """The settings of ``plume_multi.train``: the rollout, the PPO update and the network.

    A rollout steps ``num_worlds`` worlds (of ``n_agents`` rows each) ``rollout_steps`` times;
    the update then makes ``epochs`` passes over those transitions in minibatches of about
    ``minibatch_size`` transitions (the recurrent network takes whole rows, ``rollout_steps``
    transitions each, so its minibatches hold ``minibatch_size // rollout_steps`` rows).
    ``PPOConfig.for_policy(name)`` gives each learned baseline's defaults; ``replace(...)`` a copy
    with some settings changed.

    Attributes:
        num_worlds: worlds stepped together (B); every row of every world is one row of the batch.
        rollout_steps: steps per world in each rollout (T).
        epochs: passes over each rollout in the update.
        minibatch_size: transitions per gradient step (rounded to whole rows for the GRU).
        learning_rate: Adam's step size, annealed linearly to 0 over the budget with ``anneal_lr``.
        anneal_lr: anneal the learning rate.
        gamma: discount factor per step.
        gae_lambda: lambda of generalized advantage estimation.
        clip_coef: PPO's clipping of the probability ratio.
        ent_coef: weight of the entropy bonus.
        vf_coef: weight of the value loss.
        max_grad_norm: gradients are clipped to this global norm.
        hidden: units of every hidden layer (and of the GRU's memory).
        layers: hidden layers of the MLP's actor and of its critic (the GRU network has one
            encoding layer whatever this is).
        threads: torch's CPU threads while training (set for the run, restored afterwards). The
            simulator runs on the calling thread. One thread is fastest for these small networks on
            a small machine; results are deterministic for a given seed and thread count.
    """

    num_worlds: int = 4096
    rollout_steps: int = 4
    epochs: int = 1
    minibatch_size: int = 2048
    learning_rate: float = 1e-3
    anneal_lr: bool = False
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    hidden: int = 32
    layers: int = 2
    threads: int = 1

    def __post_init__(self):
        owner = "PPOConfig"
        for name, low, high in (("num_worlds", 1, 2**24), ("rollout_steps", 1, 4096), ("epochs", 1, 100),
                                ("minibatch_size", 1, 2**26), ("hidden", 1, 4096), ("layers", 1, 16),
                                ("threads", 1, 1024)):
            check_int(owner, name, getattr(self, name), low, high)
        check_real(owner, "learning_rate", self.learning_rate, 0.0, 1.0, low_open=True)
        check_bool(owner, "anneal_lr", self.anneal_lr)
        for name in ("gamma", "gae_lambda"):
            check_real(owner, name, getattr(self, name), 0.0, 1.0)
        check_real(owner, "clip_coef", self.clip_coef, 0.0, 10.0, low_open=True)
        for name in ("ent_coef", "vf_coef"):
            check_real(owner, name, getattr(self, name), 0.0, 100.0)
        check_real(owner, "max_grad_norm", self.max_grad_norm, 0.0, 1e6, low_open=True)

    @classmethod
    def for_policy(cls, policy: str, **changes) -> "PPOConfig":
        """The defaults of the learned baseline ``policy`` (``"ppo-mlp"`` or ``"ppo-gru"``), with
        ``changes`` applied."""
        if not isinstance(policy, str) or policy not in POLICIES:
            raise ValidationError(f"policy: got {policy!r}; expected one of {list(POLICIES)}")
        defaults = {}
        if POLICIES[policy] == "gru":
            # the GRU replays each row's sequence step by step in the update: longer rows (so that
            # the memory sees more of an episode) and fewer of them
            defaults = dict(num_worlds=2048, rollout_steps=16, minibatch_size=8192, learning_rate=2e-3, layers=1)
        return cls(**{**defaults, **changes})

    def replace(self, **changes) -> "PPOConfig":
        """A copy with some settings changed (validated again)."""
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise ValidationError(f"PPOConfig.replace: unknown setting(s) {unknown}; expected PPOConfig fields")
        return dataclasses.replace(self, **changes)
