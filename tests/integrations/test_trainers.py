"""Every trainer of the Integrations page, called as its own documentation calls an env, learns at
a tiny size: CleanRL's ppo.py pattern, Stable-Baselines3's MaskablePPO on a registered id, TorchRL
(GymWrapper, GymEnv, PettingZooWrapper), Tianshou, and EPyMARL's gymma wrapper and runner.

One file, one worker (tests/conftest.py's "trainers" group): the trainers' imports are slow.
RLlib and BenchMARL live in .venv-ray (test_rllib.py, test_benchmarl.py).
"""

from __future__ import annotations

import random
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode

import plume_multi
from trainer_helpers import one_torch_thread  # noqa: F401  (autouse: torch on one thread)

# A task small enough to learn in seconds: a 5x5 grid, the source at its centre.
TINY = dict(grid_size=(5, 5), sigma=2.0, max_steps=20)
COMPACT = "plume_multi:PlumeSearchCompact-v0"


# ----------------------------------------------------------------------------------------- CleanRL
def _cleanrl_ppo(env_id, env_kwargs, *, seed=1, total_timesteps=4096, num_envs=4, num_steps=64,
                 learning_rate=2.5e-3):
    """CleanRL's ppo.py (cleanrl/ppo.py, 2026), its env construction and loop as written there;
    only the env's keyword arguments (a tiny grid) and the logging are added. Returns the returns
    of the episodes that ended, in order, as RecordEpisodeStatistics reported them."""
    from torch import nn, optim
    from torch.distributions.categorical import Categorical

    gamma, gae_lambda, num_minibatches, update_epochs = 0.99, 0.95, 4, 4
    clip_coef, ent_coef, vf_coef, max_grad_norm = 0.2, 0.01, 0.5, 0.5
    batch_size = num_envs * num_steps
    minibatch_size = batch_size // num_minibatches
    num_iterations = total_timesteps // batch_size

    def make_env(env_id, idx, capture_video, run_name):
        def thunk():
            if capture_video and idx == 0:
                env = gym.make(env_id, render_mode="rgb_array", **env_kwargs)
                env = gym.wrappers.RecordVideo(env, f"videos/{run_name}")
            else:
                env = gym.make(env_id, **env_kwargs)
            env = gym.wrappers.RecordEpisodeStatistics(env)
            return env

        return thunk

    def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
        torch.nn.init.orthogonal_(layer.weight, std)
        torch.nn.init.constant_(layer.bias, bias_const)
        return layer

    class Agent(nn.Module):
        def __init__(self, envs):
            super().__init__()
            n_obs = np.array(envs.single_observation_space.shape).prod()
            self.critic = nn.Sequential(layer_init(nn.Linear(n_obs, 64)), nn.Tanh(), layer_init(nn.Linear(64, 64)),
                                        nn.Tanh(), layer_init(nn.Linear(64, 1), std=1.0))
            self.actor = nn.Sequential(layer_init(nn.Linear(n_obs, 64)), nn.Tanh(), layer_init(nn.Linear(64, 64)),
                                       nn.Tanh(), layer_init(nn.Linear(64, envs.single_action_space.n), std=0.01))

        def get_value(self, x):
            return self.critic(x)

        def get_action_and_value(self, x, action=None):
            probs = Categorical(logits=self.actor(x))
            if action is None:
                action = probs.sample()
            return action, probs.log_prob(action), probs.entropy(), self.critic(x)

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    envs = gym.vector.SyncVectorEnv([make_env(env_id, i, False, "test") for i in range(num_envs)])
    assert isinstance(envs.single_action_space, gym.spaces.Discrete), "only discrete action space is supported"
    agent = Agent(envs)
    optimizer = optim.Adam(agent.parameters(), lr=learning_rate, eps=1e-5)
    obs = torch.zeros((num_steps, num_envs) + envs.single_observation_space.shape)
    actions = torch.zeros((num_steps, num_envs) + envs.single_action_space.shape)
    logprobs = torch.zeros((num_steps, num_envs))
    rewards = torch.zeros((num_steps, num_envs))
    dones = torch.zeros((num_steps, num_envs))
    values = torch.zeros((num_steps, num_envs))

    returns_seen = []
    next_obs, _ = envs.reset(seed=seed)
    next_obs = torch.Tensor(next_obs)
    next_done = torch.zeros(num_envs)
    for iteration in range(1, num_iterations + 1):
        optimizer.param_groups[0]["lr"] = (1.0 - (iteration - 1.0) / num_iterations) * learning_rate
        for step in range(num_steps):
            obs[step] = next_obs
            dones[step] = next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
                values[step] = value.flatten()
            actions[step] = action
            logprobs[step] = logprob
            next_obs, reward, terminations, truncations, infos = envs.step(action.cpu().numpy())
            next_done = np.logical_or(terminations, truncations)
            rewards[step] = torch.tensor(reward).view(-1)
            next_obs, next_done = torch.Tensor(next_obs), torch.Tensor(next_done)
            # ppo.py reads infos["final_info"] (Gymnasium 0.29); Gymnasium 1.x puts the statistics
            # of the episodes that just ended under infos["episode"], masked by infos["_episode"]
            if "final_info" in infos:
                for info in infos["final_info"]:
                    if info and "episode" in info:
                        returns_seen.append(float(info["episode"]["r"]))
            if "episode" in infos:
                returns_seen.extend(infos["episode"]["r"][infos["_episode"]].tolist())
        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards)
            lastgaelam = 0
            for t in reversed(range(num_steps)):
                if t == num_steps - 1:
                    nextnonterminal, nextvalues = 1.0 - next_done, next_value
                else:
                    nextnonterminal, nextvalues = 1.0 - dones[t + 1], values[t + 1]
                delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
                advantages[t] = lastgaelam = delta + gamma * gae_lambda * nextnonterminal * lastgaelam
            returns = advantages + values
        b_obs = obs.reshape((-1,) + envs.single_observation_space.shape)
        b_logprobs, b_actions = logprobs.reshape(-1), actions.reshape((-1,) + envs.single_action_space.shape)
        b_advantages, b_returns, b_values = advantages.reshape(-1), returns.reshape(-1), values.reshape(-1)
        b_inds = np.arange(batch_size)
        for epoch in range(update_epochs):
            np.random.shuffle(b_inds)
            for start in range(0, batch_size, minibatch_size):
                mb_inds = b_inds[start:start + minibatch_size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb_inds], b_actions.long()[mb_inds])
                ratio = (newlogprob - b_logprobs[mb_inds]).exp()
                mb_adv = b_advantages[mb_inds]
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg_loss = torch.max(-mb_adv * ratio, -mb_adv * torch.clamp(ratio, 1 - clip_coef, 1 + clip_coef)).mean()
                newvalue = newvalue.view(-1)
                v_clipped = b_values[mb_inds] + torch.clamp(newvalue - b_values[mb_inds], -clip_coef, clip_coef)
                v_loss = 0.5 * torch.max((newvalue - b_returns[mb_inds]) ** 2, (v_clipped - b_returns[mb_inds]) ** 2).mean()
                loss = pg_loss - ent_coef * entropy.mean() + v_loss * vf_coef
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
                optimizer.step()
    envs.close()
    return returns_seen


def test_cleanrl_ppo_pattern_runs_on_the_compact_id_and_learns():
    returns = _cleanrl_ppo(COMPACT, TINY)
    assert len(returns) > 100  # RecordEpisodeStatistics' statistics, read back from every step
    first, last = np.mean(returns[:50]), np.mean(returns[-50:])
    assert last > first + 0.3 and last > 0.8, (first, last)


def test_record_episode_statistics_in_sync_vector_env_when_episodes_end_out_of_step():
    """The crash of the issue: one copy ends its episode (the wrapper's ``episode`` statistics)
    while another resets (the contract's ``episode`` counter, an int): not with the compact id."""
    envs = gym.vector.SyncVectorEnv([lambda: gym.wrappers.RecordEpisodeStatistics(gym.make(COMPACT, **TINY))
                                     for _ in range(4)])
    envs.reset(seed=0)
    rng = np.random.default_rng(0)
    ended_alone = 0
    for _ in range(300):
        _, _, terminated, truncated, infos = envs.step(rng.integers(0, 4, 4))
        done = terminated | truncated
        if done.any():
            assert isinstance(infos["episode"], dict) and set(infos["episode"]) >= {"r", "l", "t"}
            np.testing.assert_array_equal(infos["_episode"], done)
            ended_alone += 0 < done.sum() < 4
    assert ended_alone > 10  # episodes ended while other copies were resetting or running


def test_the_compact_id_passes_gymnasiums_checker_and_keeps_the_same_info_keys():
    from gymnasium.utils.env_checker import check_env

    env = gym.make(COMPACT, **TINY)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=True)
    _, reset_info = env.reset(seed=3)
    _, _, _, _, step_info = env.step(0)
    assert set(reset_info) == set(step_info) and "episode" not in reset_info
    assert reset_info["agent_xy"].dtype == np.int32 and reset_info["action_mask"].shape == (4,)
    # the contract's id keeps the contract's infos
    contract = gym.make("PlumeSearch-v0", grid_size=(5, 5))
    _, info = contract.reset(seed=3)
    assert info["episode"] == 1 and isinstance(info["agent_xy"], tuple) and "action_mask" not in info


# ----------------------------------------------------------------------------------------- Stable-Baselines3
def test_maskable_ppo_trains_on_make_vec_env_of_the_compact_id_with_its_masks():
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env(COMPACT, n_envs=2, seed=0, env_kwargs=dict(grid_size=(3, 3), max_steps=10))
    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(64)
    venv.reset()
    masks = get_action_masks(venv)
    cells = np.array([venv.env_method("action_masks")[i] for i in range(2)])
    np.testing.assert_array_equal(masks, cells)
    x, y = venv.get_attr("agent_state")[0].position
    assert masks[0].tolist() == [y < 2, x < 2, y > 0, x > 0]  # UP RIGHT DOWN LEFT into the 3x3 grid's walls


def test_ppo_mlppolicy_on_the_dict_id_names_the_compact_id_beside_sb3s_error():
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    with pytest.warns(UserWarning, match="plume_multi:PlumeSearchCompact-v0"):
        venv = make_vec_env("plume_multi:PlumeSearch-v0", n_envs=1, env_kwargs=dict(grid_size=(5, 5)))
    with pytest.raises(ValueError, match="MultiInputPolicy"):
        PPO("MlpPolicy", venv, device="cpu")


def _tiny_ppo(n_agents=1):
    from stable_baselines3 import PPO
    from plume_multi.integrations.sb3 import SB3VecEnv

    if n_agents == 1:
        env = plume_multi.vector_env(8, **TINY)
    else:
        env = plume_multi.multi_agent_vector_env(4, n_agents, autoreset_mode=AutoresetMode.SAME_STEP, **TINY)
    return PPO("MlpPolicy", SB3VecEnv(env), n_steps=16, batch_size=64, n_epochs=1, seed=0, device="cpu").learn(512)


def _same_episodes(a, b):
    np.testing.assert_array_equal(a.arrival_time, b.arrival_time)
    assert a.success_rate == b.success_rate


def test_evaluate_takes_an_sb3_model_directly_single_and_multi_agent():
    from plume_multi.tasks import Protocol, Task, evaluate as evaluate_task

    model = _tiny_ppo()
    scenario = plume_multi.Scenario(**TINY)
    by_hand = plume_multi.evaluate(lambda obs: model.predict(obs, deterministic=True)[0], scenario, 64, progress=False)
    direct = plume_multi.evaluate(model, scenario, 64, progress=False)
    _same_episodes(direct, by_hand)
    assert 0.0 < direct.success_rate

    # several searchers: a shared policy acts on every row; one model per searcher, on its own rows
    shared = _tiny_ppo(n_agents=3)
    team = scenario.replace(n_agents=3)
    _same_episodes(plume_multi.evaluate(shared, team, 32, progress=False),
                   plume_multi.evaluate(lambda obs: shared.predict(obs, deterministic=True)[0], team, 32, progress=False))

    def per_searcher(obs):  # what every user wrote before: rows b * N + n are searcher n of world b
        rows = obs.reshape(-1, 3, obs.shape[1])
        actions = np.empty(rows.shape[:2], dtype=np.int64)
        for n, chosen in enumerate((model, shared, model)):
            actions[:, n] = chosen.predict(rows[:, n], deterministic=True)[0]
        return actions.reshape(-1)

    _same_episodes(plume_multi.evaluate([model, shared, model], team, 32, progress=False),
                   plume_multi.evaluate(per_searcher, team, 32, progress=False))

    # a task runs it too; a model whose spaces do not fit is refused before anything runs
    task = Task(id="tests/tiny-v0", scenario_factory=lambda: scenario, protocol=Protocol(episodes=64, max_steps=20),
                card="The tiny search.")
    assert evaluate_task(task, model, progress=False).success_rate == direct.success_rate
    with pytest.raises(plume_multi.ValidationError, match=r"PPO takes observations of shape \(3,\); the scenario's "
                                                           r"are \(1,\)"):
        plume_multi.evaluate(model, scenario.replace(sensors=(plume_multi.sensors.Concentration(),)), 4)
    with pytest.raises(plume_multi.ValidationError, match=r"PPO acts in Discrete\(4\); the scenario expects "
                                                           r"Discrete\(9\)"):
        plume_multi.evaluate(model, scenario.replace(action_model="moore"), 4)


def test_recurrent_ppo_trains_on_the_compact_id_and_evaluate_carries_its_state():
    """sb3-contrib's RecurrentPPO, as its documentation calls it, on the compact id; evaluate keeps
    each row's LSTM state from the first step of its episode on."""
    from sb3_contrib import RecurrentPPO
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env(COMPACT, n_envs=4, seed=0, env_kwargs=TINY)
    model = RecurrentPPO("MlpLstmPolicy", venv, n_steps=32, batch_size=64, n_epochs=1, seed=0, device="cpu",
                         policy_kwargs=dict(lstm_hidden_size=16)).learn(256)
    scenario = plume_multi.Scenario(**TINY)

    class ByHand:
        def __init__(self):
            self.state, self.start = None, True

        def __call__(self, obs):
            starts = np.full(len(obs), self.start)
            actions, self.state = model.predict(obs, state=self.state, episode_start=starts, deterministic=True)
            self.start = False
            return actions

    _same_episodes(plume_multi.evaluate(model, scenario, 32, progress=False),
                   plume_multi.evaluate(ByHand, scenario, 32, progress=False))
    # each call hands back the state the last one returned; every row starts its episode on the first
    calls, predict = [], model.predict

    def recording(obs, state=None, episode_start=None, deterministic=False):
        actions, out = predict(obs, state=state, episode_start=episode_start, deterministic=deterministic)
        calls.append((state, episode_start.copy(), out))
        return actions, out

    model.predict = recording
    plume_multi.evaluate(model, scenario, 8, progress=False)
    assert calls[0][0] is None and calls[0][1].all() and len(calls) == 20
    for (_, _, given), (state, starts, _) in zip(calls, calls[1:]):
        assert state is given and not starts.any()


# ----------------------------------------------------------------------------------------- TorchRL
def test_torchrl_ppo_learns_on_the_vector_env_with_disabled_autoreset():
    from tensordict.nn import TensorDictModule
    from torch import nn
    from torchrl.collectors import Collector
    from torchrl.envs import GymWrapper
    from torchrl.modules import OneHotCategorical, ProbabilisticActor, ValueOperator
    from torchrl.objectives import ClipPPOLoss
    from torchrl.objectives.value import GAE

    torch.manual_seed(0)
    env = GymWrapper(plume_multi.vector_env(32, autoreset_mode=AutoresetMode.DISABLED, **TINY))
    env.set_seed(0)
    actor = ProbabilisticActor(
        TensorDictModule(nn.Sequential(nn.Linear(3, 32), nn.Tanh(), nn.Linear(32, 4)), ["observation"], ["logits"]),
        in_keys=["logits"], spec=env.action_spec, distribution_class=OneHotCategorical, return_log_prob=True)
    critic = ValueOperator(nn.Sequential(nn.Linear(3, 32), nn.Tanh(), nn.Linear(32, 1)), in_keys=["observation"])
    loss = ClipPPOLoss(actor, critic, entropy_coeff=0.01, normalize_advantage=True)
    gae = GAE(gamma=0.9, lmbda=0.95, value_network=critic)
    optimizer = torch.optim.Adam(loss.parameters(), lr=3e-3)
    collector = Collector(env, actor, frames_per_batch=640, total_frames=640 * 20,
                          auto_register_policy_transforms=False)
    success = []
    for batch in collector:
        with torch.no_grad():
            gae(batch)
        done = batch["next", "done"]
        success.append(float(batch["next", "reward"][done].mean()))
        flat = batch.reshape(-1)
        for _ in range(8):
            out = loss(flat)
            optimizer.zero_grad()
            (out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]).backward()
            optimizer.step()
        collector.update_policy_weights_()
    collector.shutdown()
    assert np.mean(success[-3:]) > np.mean(success[:3]) + 0.3, success


def test_torchrl_gym_env_batches_the_compact_ids_infos():
    from torchrl.envs import GymEnv

    env = GymEnv(COMPACT, num_envs=2, **TINY)
    rollout = env.rollout(30, break_when_any_done=False)
    assert tuple(rollout.batch_size) == (2, 30)
    assert rollout["next", "agent_xy"].shape == (2, 30, 2) and rollout["next", "action_mask"].shape == (2, 30, 4)
    env.close()


@pytest.mark.parametrize("api", ["parallel", "aec"])
def test_torchrl_pettingzoo_wrapper_episodes_last_until_every_searcher_arrived(api):
    from torchrl.envs import PettingZooWrapper

    make = plume_multi.parallel_env if api == "parallel" else plume_multi.env
    n, cycles = 4, 25
    env = PettingZooWrapper(make(n_agents=n, grid_size=(5, 5), max_cycles=cycles, black_death=True), use_mask=True)
    rollout = env.rollout(6 * cycles * (n if api == "aec" else 1), break_when_any_done=False)
    done = rollout["next", "done"].squeeze(-1)
    groups = [k for k in rollout["next"].keys() if k not in ("done", "terminated", "truncated")]
    reward = sum(rollout["next", g, "reward"].sum(dim=tuple(range(1, rollout["next", g, "reward"].ndim))) for g in groups)
    ends = done.nonzero().flatten().tolist()
    assert len(ends) >= 3
    # every episode ends when its N searchers have all arrived (N rewards) or at max_cycles
    for a, b in zip([-1, *ends], ends):
        per_step = n if api == "aec" else 1
        assert float(reward[a + 1:b + 1].sum()) == n or b - a == cycles * per_step


def test_evaluate_takes_a_torch_module_and_a_torchrl_actor():
    from tensordict.nn import TensorDictModule
    from torch import nn
    from torchrl.envs import GymWrapper
    from torchrl.modules import OneHotCategorical, ProbabilisticActor

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 4))
    scenario = plume_multi.Scenario(**TINY)
    by_hand = plume_multi.evaluate(lambda obs: net(torch.as_tensor(obs)).argmax(-1).numpy(), scenario, 64,
                                   progress=False)
    _same_episodes(plume_multi.evaluate(net, scenario, 64, progress=False), by_hand)
    env = GymWrapper(plume_multi.vector_env(4, autoreset_mode=AutoresetMode.DISABLED, **TINY))
    actor = ProbabilisticActor(TensorDictModule(net, ["observation"], ["logits"]), in_keys=["logits"],
                               spec=env.action_spec, distribution_class=OneHotCategorical)
    _same_episodes(plume_multi.evaluate(actor, scenario, 64, progress=False), by_hand)  # its mode: the argmax
    with pytest.raises(plume_multi.ValidationError, match="Sequential ends in 4 scores; the body Moore has 9 actions"):
        plume_multi.evaluate(net, scenario.replace(action_model="moore"), 4)
    with pytest.raises(plume_multi.ValidationError, match="first linear layer takes 3 inputs"):
        plume_multi.evaluate(net, scenario.replace(sensors=(plume_multi.sensors.Concentration(),)), 4)


def _episode_rewards(rollout, last_step=False):
    """Per episode of a TorchRL rollout of a parallel env: the searchers' rewards summed (over its
    last step only with ``last_step``)."""
    done = rollout["next", "done"].squeeze(-1)
    reward = rollout["next", "searcher", "reward"].sum(dim=(1, 2))
    ends = done.nonzero().flatten().tolist()
    return [float(reward[(b if last_step else a + 1):b + 1].sum()) for a, b in zip([-1, *ends], ends)]


def test_torchrl_pettingzoo_wrapper_without_black_death_warns_with_the_fix():
    from torchrl.envs import PettingZooWrapper

    def make():
        return plume_multi.parallel_env(n_agents=4, grid_size=(5, 5), max_cycles=25)

    with pytest.warns(UserWarning, match=r"every episode would end at the first arrival.*black_death=True.*"
                                         r"done_on_any=False, use_mask=True"):
        env = PettingZooWrapper(make())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per env
        rollout = env.rollout(150, break_when_any_done=False)
    # what it warns of: every episode ended on the step of its first arrival(s), or at the step limit
    rewards = _episode_rewards(rollout)
    assert rewards == _episode_rewards(rollout, last_step=True) and max(rewards) < 4 and rewards.count(1.0) > 3
    # either fix keeps every searcher's arrival in the episode, without a word
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*first arrival.*")
        for env in (PettingZooWrapper(make(), done_on_any=False, use_mask=True),
                    PettingZooWrapper(plume_multi.parallel_env(n_agents=4, grid_size=(5, 5), max_cycles=25,
                                                               black_death=True), use_mask=True)):
            rollout = env.rollout(150, break_when_any_done=False)
            pairs = list(zip(_episode_rewards(rollout), _episode_rewards(rollout, last_step=True)))
            assert any(total > last for total, last in pairs)  # arrivals before the episode's end
        plume_multi.parallel_env(n_agents=4).reset(seed=0)  # not under TorchRL: nothing to say


# ----------------------------------------------------------------------------------------- Tianshou
def test_tianshou_dqn_learns_on_the_compact_id():
    from tianshou.algorithm.modelfree.dqn import DQN, DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.trainer import OffPolicyTrainerParams
    from tianshou.utils.net.common import Net

    # Tianshou draws its exploration from NumPy's global generator: seeded here, the test does not
    # depend on what the tests before it drew
    torch.manual_seed(0)
    np.random.seed(0)
    random.seed(0)

    def make():
        return gym.make(COMPACT, grid_size=(7, 7), sigma=2.0, max_steps=20)

    envs = DummyVectorEnv([make for _ in range(4)])
    envs.seed(0)
    policy = DiscreteQLearningPolicy(model=Net(state_shape=3, action_shape=4, hidden_sizes=[32, 32]),
                                     action_space=envs.action_space[0], eps_training=0.2, eps_inference=0.0)
    algorithm = DQN(policy=policy, optim=AdamOptimizerFactory(lr=3e-3), gamma=0.9, target_update_freq=50)
    collector = Collector(algorithm, envs, VectorReplayBuffer(5000, len(envs)), exploration_noise=True)
    collector.reset()

    def success():
        test = Collector(algorithm.policy, DummyVectorEnv([make for _ in range(8)]))
        test.reset(gym_reset_kwargs={"seed": 1000})
        return float(np.mean(test.collect(n_episode=32).returns))

    before = success()
    algorithm.run_training(OffPolicyTrainerParams(
        training_collector=collector, max_epochs=2, epoch_num_steps=600, collection_step_num_env_steps=20,
        batch_size=64, update_step_num_gradient_steps_per_sample=0.5, test_collector=None, show_progress=False,
        verbose=False))
    assert success() > before + 0.5


# ----------------------------------------------------------------------------------------- EPyMARL
class _Gymma:
    """What EPyMARL's ``envs/gymma.py`` GymmaWrapper (with its ``FlattenObservation`` and a
    ``TimeLimit``) does with an env, rewritten from its source (EPyMARL is not on PyPI)."""

    def __init__(self, key, time_limit, seed, pretrained_wrapper=None, common_reward=True, reward_scalarisation="sum",
                 **kwargs):
        assert pretrained_wrapper is None and reward_scalarisation == "sum"  # what the recipes use
        self._env = gym.wrappers.TimeLimit(gym.make(key, **kwargs), max_episode_steps=time_limit)
        self._flat = [gym.spaces.flatdim(s) for s in self._env.observation_space]
        self.n_agents = self._env.unwrapped.n_agents
        self.episode_limit = time_limit
        self.longest_action_space = max(self._env.action_space, key=lambda x: x.n)
        self.common_reward = common_reward
        try:
            self._env.unwrapped.seed(seed)
        except Exception:  # EPyMARL's own fallback
            self._env.reset(seed=seed)

    def _pad(self, obs):
        flat = [gym.spaces.flatten(s, o) for s, o in zip(self._env.observation_space, obs)]
        return [np.pad(o, (0, max(self._flat) - len(o))) for o in flat]

    def step(self, actions):
        actions = [int(a) for a in actions]
        obs, reward, done, truncated, self._info = self._env.step(actions)
        self._obs = self._pad(obs)
        if self.common_reward:
            reward = float(sum(reward))
        done = all(done)
        return self._obs, reward, done, truncated, self._info

    def reset(self, seed=None, options=None):
        obs, info = self._env.reset(seed=seed, options=options)
        self._obs = self._pad(obs)
        return self._obs, info

    def get_obs(self):
        return self._obs

    def get_state(self):
        return np.concatenate(self._obs, axis=0).astype(np.float32)

    def get_state_size(self):
        return self.n_agents * max(self._flat)

    def get_avail_actions(self):
        return [[1] * self.longest_action_space.n for _ in range(self.n_agents)]


def _epymarl_episode(env, choose):
    """EPyMARL's EpisodeRunner.run: one episode, the transitions as its batch stores them."""
    env.reset()
    terminated, t, stats, episode = False, 0, {}, []
    while not terminated:
        pre = dict(state=env.get_state(), avail_actions=env.get_avail_actions(), obs=env.get_obs())
        actions = choose(np.array(pre["obs"]))
        _, reward, terminated, truncated, env_info = env.step(actions)
        terminated = terminated or truncated
        episode.append(dict(pre, actions=actions, reward=reward,
                            terminated=terminated != env_info.get("episode_limit", False)))
        t += 1
    stats = {k: stats.get(k, 0) + env_info.get(k, 0) for k in set(stats) | set(env_info)}  # numbers only
    return episode, stats, t


def test_epymarl_gymma_wrapper_and_runner_drive_the_tuple_env_and_a_shared_policy_learns():
    n, limit = 2, 12
    env = _Gymma("plume_multi:PlumeSearchAgents-v0", time_limit=limit, seed=0, n_agents=n, grid_size=(5, 5),
                 sigma=2.0, max_steps=limit)
    assert env.get_state_size() == n * 3 and len(env.get_avail_actions()) == n
    torch.manual_seed(0)
    policy = torch.nn.Sequential(torch.nn.Linear(3, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4))
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)

    def choose(obs):
        with torch.no_grad():
            return torch.distributions.Categorical(logits=policy(torch.as_tensor(obs))).sample().numpy()

    returns = []
    for _ in range(40):  # REINFORCE on the common reward, one policy shared by the agents, 8 episodes a batch
        losses = []
        for _ in range(8):
            episode, stats, t = _epymarl_episode(env, choose)
            assert t <= limit and set(stats) == {"arrived", "episode_limit"}
            assert episode[-1]["terminated"] == (stats["arrived"] == n)  # a step-limit end is not a termination
            returns.append(sum(step["reward"] for step in episode))
            obs = torch.as_tensor(np.array([step["obs"] for step in episode]))
            acts = torch.as_tensor(np.array([step["actions"] for step in episode]))
            rew = np.array([step["reward"] for step in episode], dtype=np.float32)
            to_go = torch.as_tensor(np.cumsum(rew[::-1])[::-1].copy())
            logp = torch.distributions.Categorical(logits=policy(obs)).log_prob(acts).sum(-1)
            losses.append(-(logp * (to_go - np.mean(returns[-40:]))).sum())
        optimizer.zero_grad()
        (torch.stack(losses).sum() / 8).backward()
        optimizer.step()
    assert np.mean(returns[-64:]) > np.mean(returns[:64]) + 0.3, returns  # arrivals per episode, of 2


# EPyMARL's src/config/default.yaml: the keys its main and episode runner read (EPyMARL is not on
# PyPI; sacred is, and its config layer is what decides which command-line keys are accepted)
EPYMARL_DEFAULTS = {"runner": "episode", "mac": "basic_mac", "env": "sc2", "common_reward": True,
                    "reward_scalarisation": "sum", "env_args": {}, "batch_size_run": 1, "test_nepisode": 20,
                    "test_interval": 2000, "test_greedy": True, "log_interval": 2000, "runner_log_interval": 2000,
                    "learner_log_interval": 2000, "t_max": 10000, "use_cuda": True, "gamma": 0.99, "batch_size": 32,
                    "buffer_size": 32, "lr": 0.0005, "hidden_dim": 64, "obs_agent_id": True, "obs_last_action": True}
# EPyMARL's src/config/envs/gymma.yaml
EPYMARL_GYMMA = {"env": "gymma", "env_args": {"key": None, "time_limit": 100, "pretrained_wrapper": None},
                 "test_greedy": True, "test_nepisode": 100, "test_interval": 50000, "log_interval": 50000,
                 "runner_log_interval": 10000, "learner_log_interval": 10000, "t_max": 2050000}
EPYMARL_ENV_CONFIG = Path(__file__).resolve().parents[2] / "examples" / "epymarl" / "plume_search.yaml"


def _epymarl_main(env_config: dict, argv: list) -> dict:
    """EPyMARL's src/main.py: default.yaml updated by the env config (``--env-config``), added to a
    sacred ``Experiment``, run by ``ex.run_commandline(argv)``; its main builds the env as the
    episode runner does (``env_REGISTRY["gymma"](**env_args, common_reward=..., reward_scalarisation=...)``,
    ``env_args["seed"]`` from the run's seed) and plays one episode of random actions."""
    import copy

    from sacred import SETTINGS, Experiment

    def update(d, u):  # main.py's recursive_dict_update
        for k, v in u.items():
            d[k] = update(d.get(k, {}), v) if isinstance(v, dict) else v
        return d

    SETTINGS["CAPTURE_MODE"] = "no"
    ex = Experiment("pymarl", save_git_info=False)
    ex.add_config(update(copy.deepcopy(EPYMARL_DEFAULTS), copy.deepcopy(env_config)))
    played = {}

    @ex.main
    def my_main(_run, _config, _log):
        config = copy.deepcopy(dict(_config))
        config["env_args"] = dict(config["env_args"])
        config["env_args"]["seed"] = config["seed"]
        assert config["env"] == "gymma"
        env = _Gymma(**config["env_args"], common_reward=config["common_reward"],
                     reward_scalarisation=config["reward_scalarisation"])
        rng = np.random.default_rng(0)
        played.update(env=env, episode=_epymarl_episode(env, lambda obs: rng.integers(0, 4, len(obs))))

    ex.run_commandline(["main.py", *argv])
    return played


def test_the_epymarl_env_config_runs_as_shipped_and_with_the_documented_changes_through_sacred():
    import yaml
    from sacred.utils import ConfigAddedError

    shipped = yaml.load(EPYMARL_ENV_CONFIG.read_text(), Loader=yaml.FullLoader)  # as main.py reads it
    assert set(EPYMARL_GYMMA["env_args"]) <= set(shipped["env_args"]) and set(EPYMARL_GYMMA) <= set(shipped)
    assert shipped["env_args"]["max_steps"] == shipped["env_args"]["time_limit"]

    played = _epymarl_main(shipped, [])  # as shipped
    env, (episode, stats, t) = played["env"], played["episode"]
    assert env.n_agents == 4 and env._env.unwrapped.scenario.grid_size == (16, 16) and t <= 100
    assert episode[-1]["terminated"] == (stats["arrived"] == 4)

    # the header's example: every key it changes is one the file has
    played = _epymarl_main(shipped, ["with", "env_args.n_agents=2", "env_args.grid_size=[6, 6]",
                                     "env_args.time_limit=30", "env_args.max_steps=30"])
    env, (episode, stats, t) = played["env"], played["episode"]
    assert env.n_agents == 2 and env._env.unwrapped.scenario.grid_size == (6, 6) and t <= 30
    assert episode[-1]["terminated"] == (stats["arrived"] == 2)  # a step-limit end is not a termination

    # EPyMARL's own first call, gymma.yaml with the id alone, runs on the env's defaults, but gymma's
    # TimeLimit ends the episode before the env's own limit, so EPyMARL takes that end for a termination
    played = _epymarl_main(EPYMARL_GYMMA, ["with", "env_args.key=plume_multi:PlumeSearchAgents-v0"])
    env, (episode, stats, t) = played["env"], played["episode"]
    assert env.n_agents == 4 and t == 100 and stats["arrived"] < 4 and episode[-1]["terminated"]

    # sacred refuses a key no config has: the old recipe's keys on gymma.yaml, a new key on this file
    for config, key in ((EPYMARL_GYMMA, "env_args.n_agents=4"), (shipped, "env_args.goal_radius=2.0")):
        with pytest.raises(ConfigAddedError, match=key.split("=")[0]):
            _epymarl_main(config, ["with", key, "--debug"])


# ----------------------------------------------------------------------------------------- the benchmark
def test_the_trainers_benchmark_runs_tiny(capsys):
    from trainer_helpers import run_quick

    table, rates = run_quick("stable,recurrent,cleanrl,torchrl,epymarl,puffer", capsys)
    for row in ("| Stable-Baselines3 PPO | SB3VecEnv(vector_env(256)) |", "| sb3-contrib RecurrentPPO |",
                "| CleanRL-style loop |", "| TorchRL collector |", "| EPyMARL (env alone) |",
                "| PufferLib style (env alone) |"):
        assert row in table
    assert len(rates) == 10
