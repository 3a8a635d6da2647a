"""Rollouts: every row of a ``Simulator`` stepped ``T`` times through the network, into torch buffers.

One network call and one simulator step per time step, for all ``R = B * N`` rows at once; no
Python loop over worlds. The simulator autoresets in the same step (``autoreset="same_step"``), so
the observation after a step is always the one the next action answers; a time limit is not an
end of the task, so a row cut at ``max_steps`` gets the discounted value of its last observation
added to its reward (``final_obs``), as if the episode went on.

Buffers, each ``(T, R)`` unless noted, row ``r`` being agent ``r % N`` of world ``r // N``:

* ``obs`` ``(T, R, D)`` float32: what the network read at step t;
* ``actions`` int64 (``(T, R, A)`` float32 for a continuous body), ``log_probs``, ``values``;
* ``rewards`` float32 (with the bootstrap above);
* ``dones`` bool: step t ended the row's episode (it arrived, or was cut);
* ``starts`` bool: ``obs[t]`` is the first observation of an episode (the GRU's memory is cleared);
* ``live`` bool: the row's agent was still searching at step t. With several agents per world an
  agent that arrived waits for the others; its steps meanwhile are left out of the loss;
* ``memory0`` ``(R, H)``: the memory before step 0 (the GRU's update replays from it).
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["Rollout", "RolloutStats"]


class RolloutStats:
    """Episodes (of rows) that ended in the rollouts since the last ``take()``: how many, and how
    many of them reached the source."""

    def __init__(self):
        self.episodes = self.successes = 0

    def take(self) -> tuple[int, int]:
        out = (self.episodes, self.successes)
        self.episodes = self.successes = 0
        return out


class Rollout:
    """The buffers of one rollout and the loop that fills them (see the module docstring).

    Args:
        simulator: a ``Simulator`` with ``autoreset="same_step"``, already reset.
        network: the actor-critic.
        steps: T, steps per rollout.
        gamma: discount of the time-limit bootstrap.
        generator: the ``torch.Generator`` of the action draws.
    """

    def __init__(self, simulator, network, steps: int, gamma: float, generator: torch.Generator):
        self.sim, self.net, self.steps, self.gamma, self.generator = simulator, network, steps, gamma, generator
        self.n_agents = simulator.n_agents
        rows, dim = simulator.total_agents, simulator.obs_dim
        self.rows = rows
        self.obs = torch.zeros((steps, rows, dim))
        if network.n_actions:
            self.actions = torch.zeros((steps, rows), dtype=torch.int64)
        else:
            self.actions = torch.zeros((steps, rows, network.action_dim))
        self.log_probs, self.values, self.rewards = (torch.zeros((steps, rows)) for _ in range(3))
        self.dones, self.starts, self.live = (torch.zeros((steps, rows), dtype=torch.bool) for _ in range(3))
        self.memory = network.initial_memory(rows)
        self.memory0 = self.memory.clone()
        self.next_value = torch.zeros(rows)
        # what the first step of the next rollout sees
        self._next_obs = simulator.state.obs
        self._next_starts = torch.ones(rows, dtype=torch.bool)
        self._next_live = torch.from_numpy(simulator.active.copy())
        self.stats = RolloutStats()
        if not network.n_actions:
            body = simulator.scenario.action_model
            low, high = np.asarray(body.low, np.float64), np.asarray(body.high, np.float64)
            self._centre, self._half = (high + low) / 2.0, (high - low) / 2.0

    def _to_env(self, action: torch.Tensor) -> np.ndarray:
        if self.net.n_actions:
            return action.numpy()  # int64, contiguous: the simulator's fast path takes it as it is
        return self._centre + self._half * action.clamp(-1.0, 1.0).double().numpy()

    @torch.no_grad()
    def collect(self) -> None:
        """Fill the buffers with ``steps`` steps of every row, then the value of the observation
        that follows them (``next_value``, for the advantages)."""
        net, sim, gamma = self.net, self.sim, self.gamma
        recurrent = net.recurrent
        self.memory0.copy_(self.memory)
        memory = self.memory
        obs_np = self._next_obs
        for t in range(self.steps):
            obs = self.obs[t]
            obs.copy_(torch.from_numpy(obs_np))
            starts = self._next_starts
            self.starts[t] = starts
            self.live[t] = self._next_live
            actor, critic, memory = net.features(obs, memory, starts if recurrent else None)
            action, log_prob = net.head.sample(actor, self.generator)
            self.actions[t] = action
            self.log_probs[t] = log_prob
            self.values[t] = net.value_out(critic).squeeze(-1)

            obs_np, reward, terminated, truncated = sim.step(self._to_env(action))
            rewards = self.rewards[t]
            rewards.copy_(torch.from_numpy(reward))
            ended = terminated | truncated
            cut = truncated & ~terminated
            if cut.any():  # bootstrap the rows cut by the time limit from their last observation
                rows = np.flatnonzero(cut)
                last = torch.from_numpy(sim.final_obs[rows])
                rewards[rows] += gamma * net.value(last, memory[rows] if recurrent else memory)
            self.dones[t] = torch.from_numpy(ended)
            self.stats.episodes += int(np.count_nonzero(ended))
            self.stats.successes += int(np.count_nonzero(terminated))
            # a world that ended was reset in this step: all its rows start a new episode
            world_done = sim.final_mask
            self._next_starts = torch.from_numpy(np.repeat(world_done, self.n_agents) if self.n_agents > 1
                                                 else world_done.copy())
            self._next_live = torch.from_numpy(sim.active.copy())
        self.memory = memory
        self._next_obs = obs_np
        self.next_value = net.value(torch.from_numpy(obs_np), memory, self._next_starts if recurrent else None)
