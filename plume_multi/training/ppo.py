"""PPO on a ``Simulator``: rollouts of every row at once, generalized advantages, clipped updates.

The algorithm is the PPO of Schulman et al. (2017) as CleanRL writes it (advantages normalized per
minibatch, value and entropy terms in one loss, gradient clipping, a linearly annealed learning
rate), here on the engine's arrays directly: the rollout reads the simulator's buffers without a
Gymnasium layer, the network acts for all rows in one call, and the update works on whole
``(T, R)`` tensors.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .config import PPOConfig
from .rollout import Rollout

__all__ = ["advantages", "update"]


@torch.no_grad()
def advantages(rewards, values, dones, next_value, gamma: float, gae_lambda: float):
    """Generalized advantage estimates and returns.

    Args:
        rewards, values: ``(T, R)`` float32.
        dones: ``(T, R)`` bool, step t ended the row's episode (nothing is bootstrapped across it).
        next_value: ``(R,)`` value of the observation after step T-1.

    Returns:
        ``(advantages, returns)``, both ``(T, R)``: ``A_t = sum_k (gamma lambda)^k delta_{t+k}``
        within the episode, ``delta_t = r_t + gamma V_{t+1} (1 - done_t) - V_t``; returns ``A + V``.
    """
    steps = rewards.shape[0]
    out = torch.empty_like(rewards)
    carry = torch.zeros_like(next_value)
    going_on = (~dones).to(rewards.dtype)
    for t in range(steps - 1, -1, -1):
        following = next_value if t == steps - 1 else values[t + 1]
        delta = rewards[t] + gamma * following * going_on[t] - values[t]
        carry = delta + (gamma * gae_lambda) * going_on[t] * carry
        out[t] = carry
    return out, out + values


def _weighted_mean(x: torch.Tensor, weights) -> torch.Tensor:
    return x.mean() if weights is None else (x * weights).sum() / weights.sum().clamp(min=1.0)


def _loss(net, batch: dict, config: PPOConfig, weights):
    """PPO's loss on one minibatch (``batch``: flat tensors of its transitions and what the
    network replays them from); returns ``(loss, approximate KL)``."""
    actor, critic = net.sequence(batch["obs"], batch["memory0"], batch["starts"])
    log_prob, entropy = net.head.evaluate(actor, batch["actions"])
    value = net.value_out(critic).squeeze(-1)
    adv = batch["advantages"]
    mean = _weighted_mean(adv, weights)
    std = _weighted_mean((adv - mean).square(), weights).sqrt()
    adv = (adv - mean) / (std + 1e-8)
    log_ratio = log_prob - batch["log_probs"]
    ratio = log_ratio.exp()
    clipped = ratio.clamp(1.0 - config.clip_coef, 1.0 + config.clip_coef)
    policy_loss = _weighted_mean(torch.maximum(-adv * ratio, -adv * clipped), weights)
    value_loss = 0.5 * _weighted_mean((value - batch["returns"]).square(), weights)
    loss = policy_loss - config.ent_coef * _weighted_mean(entropy, weights) + config.vf_coef * value_loss
    with torch.no_grad():
        kl = _weighted_mean((ratio - 1.0) - log_ratio, weights)
    return loss, kl


def update(net: nn.Module, optimizer, rollout: Rollout, config: PPOConfig, generator: torch.Generator) -> dict:
    """``config.epochs`` passes of PPO over ``rollout`` in shuffled minibatches; returns the last
    epoch's mean approximate KL divergence and the number of gradient steps.

    Feed-forward networks draw minibatches of single transitions; the recurrent network draws
    minibatches of whole rows (``(T, m)`` blocks) and replays its memory from ``memory0``.
    """
    adv, ret = advantages(rollout.rewards, rollout.values, rollout.dones, rollout.next_value,
                          config.gamma, config.gae_lambda)
    steps, rows = rollout.rewards.shape
    weights_all = None if bool(rollout.live.all()) else rollout.live.to(torch.float32)
    params = [p for p in net.parameters() if p.requires_grad]
    gradient_steps, kls = 0, []
    if net.recurrent:
        units = rows
        count = max(1, round(rows * steps / config.minibatch_size))
    else:
        units = steps * rows
        count = max(1, round(units / config.minibatch_size))
        flat = {"obs": rollout.obs.reshape(units, 1, -1), "actions": rollout.actions.reshape(units, *rollout.actions.shape[2:]),
                "log_probs": rollout.log_probs.reshape(units), "advantages": adv.reshape(units),
                "returns": ret.reshape(units)}
        flat_weights = None if weights_all is None else weights_all.reshape(units)
    for _epoch in range(config.epochs):
        kls = []
        order = torch.randperm(units, generator=generator)
        for part in torch.tensor_split(order, count):
            if net.recurrent:
                batch = {"obs": rollout.obs[:, part], "memory0": rollout.memory0[part], "starts": rollout.starts[:, part],
                         "actions": rollout.actions[:, part].reshape(steps * len(part), *rollout.actions.shape[2:]),
                         "log_probs": rollout.log_probs[:, part].reshape(-1), "advantages": adv[:, part].reshape(-1),
                         "returns": ret[:, part].reshape(-1)}
                weights = None if weights_all is None else weights_all[:, part].reshape(-1)
            else:
                # (1, m, D): one step of m rows, the shape the recurrent network's replay takes
                batch = {key: value[part] for key, value in flat.items()}
                batch["obs"] = batch["obs"].reshape(1, len(part), -1)
                batch["memory0"], batch["starts"] = None, None
                weights = None if flat_weights is None else flat_weights[part]
            loss, kl = _loss(net, batch, config, weights)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(params, config.max_grad_norm)
            optimizer.step()
            gradient_steps += 1
            kls.append(kl)
    kl = float(torch.stack(kls).mean()) if kls else math.nan
    return {"approx_kl": kl, "gradient_steps": gradient_steps}
