"""The learned baselines' pieces against plain references: generalized advantages (a NumPy loop),
the action heads (torch.distributions), the GRU's replay of a rollout (step by step)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from plume_multi.training.networks import ActionHead, GRUActorCritic, MLPActorCritic
from plume_multi.training.ppo import advantages


def advantages_reference(rewards, values, dones, next_value, gamma, lam):
    """GAE as the paper writes it, one row and one step at a time (float64)."""
    steps, rows = rewards.shape
    adv = np.zeros((steps, rows))
    for r in range(rows):
        carry = 0.0
        for t in reversed(range(steps)):
            following = next_value[r] if t == steps - 1 else values[t + 1, r]
            going_on = 0.0 if dones[t, r] else 1.0
            delta = rewards[t, r] + gamma * following * going_on - values[t, r]
            carry = delta + gamma * lam * going_on * carry
            adv[t, r] = carry
    return adv, adv + values


@pytest.mark.parametrize("gamma, lam", [(0.99, 0.95), (0.9, 1.0), (1.0, 0.0)])
def test_advantages_match_the_reference_loop(gamma, lam):
    rng = np.random.default_rng(3)
    steps, rows = 7, 5
    rewards = rng.normal(size=(steps, rows)).astype(np.float32)
    values = rng.normal(size=(steps, rows)).astype(np.float32)
    dones = rng.random((steps, rows)) < 0.3
    next_value = rng.normal(size=rows).astype(np.float32)
    got_adv, got_ret = advantages(torch.from_numpy(rewards), torch.from_numpy(values), torch.from_numpy(dones),
                                  torch.from_numpy(next_value), gamma, lam)
    want_adv, want_ret = advantages_reference(rewards, values, dones, next_value, gamma, lam)
    np.testing.assert_allclose(got_adv.numpy(), want_adv, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_ret.numpy(), want_ret, rtol=1e-5, atol=1e-5)


def test_categorical_head_draws_its_distribution_and_reports_its_log_probs():
    torch.manual_seed(0)
    head = ActionHead(3, 4)
    features = torch.randn(1, 3).expand(200_000, 3).contiguous()
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        actions, log_p = head.sample(features, generator)
        reference = torch.distributions.Categorical(logits=head.out(features[:1]))
        probs = reference.probs[0].numpy()
        np.testing.assert_allclose(log_p.numpy(), reference.log_prob(actions).numpy(), rtol=1e-5, atol=1e-6)
        share = np.bincount(actions.numpy(), minlength=4) / len(actions)
        np.testing.assert_allclose(share, probs, atol=0.005)  # about 5 standard errors
        got_log_p, entropy = head.evaluate(features[:10], actions[:10])
        np.testing.assert_allclose(got_log_p.numpy(), log_p[:10].numpy(), rtol=1e-6)
        np.testing.assert_allclose(entropy.numpy(), reference.entropy().expand(10).numpy(), rtol=1e-5)
        assert head.greedy(features[:2]).tolist() == [int(np.argmax(probs))] * 2


def test_gaussian_head_matches_torch_normal():
    torch.manual_seed(0)
    head = ActionHead(3, 0, action_dim=2)
    with torch.no_grad():
        head.log_std.copy_(torch.tensor([-0.5, 0.3]))
        features = torch.randn(1000, 3)
        actions, log_p = head.sample(features, torch.Generator().manual_seed(2))
        normal = torch.distributions.Normal(head.out(features), head.log_std.exp())
        np.testing.assert_allclose(log_p.numpy(), normal.log_prob(actions).sum(-1).numpy(), rtol=1e-4, atol=1e-5)
        got, entropy = head.evaluate(features, actions)
        np.testing.assert_allclose(got.numpy(), log_p.numpy(), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(entropy.numpy(), normal.entropy().sum(-1).numpy(), rtol=1e-5)
        z = (actions - head.out(features)) / head.log_std.exp()
        assert abs(float(z.mean())) < 0.1 and abs(float(z.std()) - 1.0) < 0.1


def test_observations_are_scaled_by_their_finite_bounds():
    net = MLPActorCritic(np.array([0.0, -2.0, -np.inf]), np.array([1.0, 2.0, np.inf]), 4, hidden=8)
    obs = torch.tensor([[0.0, -2.0, 5.0], [1.0, 2.0, -7.0], [0.5, 0.0, 0.0]])
    np.testing.assert_allclose(net.scaled(obs).numpy(), [[-1.0, -1.0, 5.0], [1.0, 1.0, -7.0], [0.0, 0.0, 0.0]])


def test_the_gru_replay_equals_the_rollout_step_by_step():
    """The update replays a rollout from its first memory (``sequence``); it must compute what the
    rollout computed one step at a time (``features``), memory cleared at episode starts."""
    torch.manual_seed(0)
    net = GRUActorCritic(np.zeros(3), np.ones(3), 4, hidden=6)
    steps, rows = 5, 4
    obs = torch.rand(steps, rows, 3)
    starts = torch.rand(steps, rows) < 0.3
    memory0 = torch.randn(rows, 6)
    with torch.no_grad():
        memory, stepwise = memory0, []
        for t in range(steps):
            actor, critic, memory = net.features(obs[t], memory, starts[t])
            stepwise.append(actor)
        actor, critic = net.sequence(obs, memory0, starts)
    np.testing.assert_allclose(actor.numpy(), torch.cat(stepwise).numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(actor.numpy(), critic.numpy())
    # a start clears the memory: the first step of a started row does not depend on memory0
    with torch.no_grad():
        a1, _, _ = net.features(obs[0], memory0, torch.ones(rows, dtype=torch.bool))
        a2, _, _ = net.features(obs[0], torch.zeros(rows, 6), None)
    np.testing.assert_array_equal(a1.numpy(), a2.numpy())
