"""plume_multi.integrations.rllib: the array-based env runner, the multi-agent env, registration, the examples.

Runs in .venv-ray (``make test``; conftest.py collects this file only where Ray imports).
"""

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from plume_multi import Scenario, Simulator
from plume_multi.envs.vector import PlumeVectorEnv
from plume_multi.integrations.rllib import (AGENT_ROWS_NAME, MULTI_AGENT_NAME, AgentRowsVectorEnv, SINGLE_AGENT_NAME, PlumeMultiAgentEnv, PlumeVectorEnvRunner,
                               _agent_rows_creator, _multi_agent_creator, _single_agent_creator, ppo_config,
                               register, shared_policy_ppo_config)

pytestmark = pytest.mark.ray
ROOT = Path(__file__).resolve().parents[2]
W, H, MAX_STEPS = 7, 5, 12
MOVES = np.array(Scenario().moves())


def load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cells(obs):
    return np.rint(obs[:, 1:3] * [W - 1, H - 1]).astype(int)


def test_vector_runner_episodes_follow_the_engine_and_continue_across_samples():
    config = ppo_config(num_env_runners=0, num_envs_per_env_runner=8, rollout_fragment_length=10,
                        grid_size=(W, H), sigma=2.0, max_steps=MAX_STEPS).debugging(seed=3)
    runner = PlumeVectorEnvRunner(config=config)
    assert isinstance(runner.env.unwrapped, PlumeVectorEnv)
    source = np.array([W // 2, H // 2])
    open_chunks = {}
    finished = 0
    for _ in range(3):
        episodes = runner.sample()
        assert 80 <= sum(len(e) for e in episodes) < 88
        for eps in episodes:
            obs = eps.get_observations()
            act = eps.get_actions()
            rew = eps.get_rewards()
            assert obs.shape == (len(act) + 1, 3) and obs.dtype == np.float32
            # every transition is the engine's move: clamp(cell + move[action])
            xy = cells(obs)
            np.testing.assert_array_equal(xy[1:], np.clip(xy[:-1] + MOVES[act], 0, [W - 1, H - 1]))
            # a reward only on the step that reaches the source, which terminates the episode
            at_source = (xy[1:] == source).all(axis=1)
            np.testing.assert_array_equal(rew, at_source.astype(np.float32))
            assert eps.is_terminated == bool(at_source[-1])
            assert not at_source[:-1].any()
            assert eps.is_truncated == (not eps.is_terminated and eps.t == MAX_STEPS)
            if not eps.is_done:
                assert eps.t < MAX_STEPS
            # stored log-probabilities and logits are the module's for these observations
            with torch.no_grad():
                logits = runner.module.forward_exploration({"obs": torch.from_numpy(obs[:-1])})["action_dist_inputs"]
            np.testing.assert_allclose(eps.get_extra_model_outputs("action_dist_inputs"), logits.numpy(), rtol=1e-4, atol=1e-6)
            logp = torch.log_softmax(logits, -1).numpy()[np.arange(len(act)), act]
            np.testing.assert_allclose(eps.get_extra_model_outputs("action_logp"), logp, rtol=1e-4, atol=1e-6)
            # a chunk that went on from the last sample starts where that one stopped
            if eps.id_ in open_chunks:
                last_obs, last_t = open_chunks.pop(eps.id_)
                np.testing.assert_array_equal(obs[0], last_obs)
                assert eps.t_started == last_t
            else:
                assert eps.t_started == 0
            if eps.is_done:
                finished += 1
            else:
                open_chunks[eps.id_] = (obs[-1], eps.t)
    assert finished > 8
    metrics = runner.get_metrics()
    assert 0.0 <= metrics["episode_return_mean"] <= 1.0
    assert 1 <= metrics["episode_len_mean"] <= MAX_STEPS
    runner.stop()


def test_multi_agent_env_replays_the_simulator():
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    scenario = dict(n_agents=3, grid_size=(9, 6), sigma=2.0, max_steps=25, n_neighbours=1)
    env = PlumeMultiAgentEnv(**scenario)
    check_multiagent_environments(env)
    sim = Simulator(Scenario(**scenario), num_worlds=1, autoreset="disabled")
    obs, _ = env.reset(seed=4)
    ref = sim.reset(seed=4)
    np.testing.assert_array_equal(np.stack([obs[a] for a in env.possible_agents]), ref)
    rng = np.random.default_rng(0)
    gone = set()
    for t in range(25):
        actions = rng.integers(0, 4, 3)
        obs, rew, term, trunc, _ = env.step({a: actions[int(a[-1])] for a in env.agents})
        ref_obs, ref_rew, ref_term, ref_trunc = sim.step(actions)
        for a in obs:
            i = int(a[-1])
            np.testing.assert_array_equal(obs[a], ref_obs[i])
            assert rew[a] == ref_rew[i] and term[a] == ref_term[i]
        assert not gone & set(obs)  # agents that finished get nothing more
        gone |= {a for a in obs if term[a] or trunc[a]}
        assert set(env.agents) == set(env.possible_agents) - gone
        if term["__all__"] or trunc["__all__"]:
            assert not env.agents
            break
    assert gone == set(env.possible_agents)


def test_team_mode_ends_every_searcher_together():
    env = PlumeMultiAgentEnv(n_agents=2, grid_size=(3, 1), sigma=1.0, max_steps=5, team=True,
                             start_positions=((0, 0), (2, 0)))
    env.reset(seed=0)
    obs, rew, term, trunc, _ = env.step({"searcher_0": 1, "searcher_1": 0})  # searcher_0 steps onto the source
    assert rew == {"searcher_0": 1.0, "searcher_1": 1.0}
    assert term == {"searcher_0": True, "searcher_1": True, "__all__": True}
    assert not env.agents


def test_register_and_creators():
    names = register()
    assert names == {"single_agent": SINGLE_AGENT_NAME, "multi_agent": MULTI_AGENT_NAME,
                     "agent_rows": AGENT_ROWS_NAME}
    venv = _single_agent_creator({"num_envs": 5, "grid_size": (9, 6), "sigma": 3.0})
    assert isinstance(venv.unwrapped, PlumeVectorEnv) and venv.num_envs == 5
    env = _single_agent_creator({"grid_size": (9, 6), "sigma": 3.0})
    assert env.observation_space.shape == (3,)
    assert isinstance(_multi_agent_creator({"n_agents": 2}), PlumeMultiAgentEnv)
    rows = _agent_rows_creator({"num_envs": 6, "n_agents": 3})
    assert isinstance(rows, AgentRowsVectorEnv) and rows._sim.num_worlds == 2


def test_the_gymnasium_id_resolves_in_a_fresh_process():
    code = ("import gymnasium; v = gymnasium.make_vec('plume_multi:PlumeSearchCompact-v0', num_envs=3, "
            "vectorization_mode='vector_entry_point', grid_size=(9, 6)); "
            "print(type(v).__name__, v.single_observation_space.shape)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/").stdout
    assert out.split() == ["PlumeVectorEnv", "(3,)"]


def test_vector_example_trains_one_iteration_with_remote_runners(ray_local, capsys):
    example = load(ROOT / "examples" / "rllib_vector_ppo.py")
    assert example.main(["--runners", "2", "--envs", "16", "--fragment", "8", "--iterations", "1", "--grid", "8", "6",
                         "--sigma", "2", "--max-steps", "20", "--eval-episodes", "20"]) == 0
    out = capsys.readouterr().out
    assert "2 env runner(s) x 16 worlds" in out
    assert "iteration 1: return" in out
    assert "before training, sampled policy on 20 held-out episodes" in out
    assert "after training, greedy policy on 20 held-out episodes" in out


def test_multiagent_example_trains_one_iteration_with_remote_runners(ray_local, capsys):
    example = load(ROOT / "examples" / "rllib_multiagent_ppo.py")
    assert example.main(["--runners", "1", "--envs", "1", "--agents", "2", "--team", "--batch", "64",
                         "--iterations", "1", "--grid", "8", "6", "--sigma", "2", "--max-steps", "20",
                         "--eval-episodes", "10"]) == 0
    out = capsys.readouterr().out
    assert "2 searchers (team) sharing one policy, 1 env runner(s)" in out
    assert "iteration 1: return per searcher" in out
    assert "after training, sampled shared policy on 10 held-out episodes" in out


def test_scaling_benchmark_runs_tiny(ray_local, capsys):
    bench = load(ROOT / "benchmarks" / "rllib_scaling.py")
    assert bench.main(["--envs", "8", "--ma-envs", "2", "--agents", "2", "--fragment", "4", "--rounds", "1",
                       "--runners", "0", "--grid", "8", "6", "--steps", "20"]) == 0
    out = capsys.readouterr().out
    assert "| native vector env, PlumeVectorEnvRunner" in out
    assert "| SyncVectorEnv of PlumeSearchEnv (RLlib's default) |" in out and "1.0x" in out
    assert "2 searchers per world, one shared policy, 2 worlds per runner, agent-steps/s" in out
    assert "| searchers as rows of one vector env (shared_policy_ppo_config)" in out


def test_configs_refuse_bad_scenarios_before_any_runner_starts():
    from plume_multi import ValidationError
    from plume_multi.integrations.rllib import multi_agent_ppo_config

    with pytest.raises(ValidationError, match="sigma"):
        ppo_config(num_env_runners=0, num_envs_per_env_runner=4, sigma=-1.0)
    with pytest.raises(ValidationError, match="n_agents"):
        ppo_config(num_env_runners=0, num_envs_per_env_runner=4, n_agents=3)
    with pytest.raises(ValidationError, match="n_neighbours"):
        multi_agent_ppo_config(num_env_runners=0, n_agents=2, n_neighbours=2)
    config = multi_agent_ppo_config(num_env_runners=0, n_agents=3, team=True)
    assert config.env == MULTI_AGENT_NAME and config.env_config["team"] is True
    assert set(config.policies) == {"shared"}
    assert config.policy_mapping_fn("searcher_2", None) == "shared"


@pytest.mark.ray
def test_cli_eval_with_ray_equals_the_local_run(ray_local, tmp_path, capsys):
    from plume_multi.cli import main

    args = ["eval", "--policy", "gradient", "--episodes", "30", "--worlds", "7", "--grid", "16", "12", "--sigma", "3",
            "--steps", "40", "--agents", "2", "--quiet", "--no-plot"]
    assert main(args + ["--out", str(tmp_path / "local")]) == 0
    assert main(args + ["--out", str(tmp_path / "ray"), "--ray", "--tasks", "3"]) == 0
    assert "(seeds 0..29, ray)" in capsys.readouterr().out
    assert (tmp_path / "local.csv").read_text() == (tmp_path / "ray.csv").read_text()


@pytest.mark.parametrize("team", [False, True])
def test_shared_policy_rows_are_one_episode_per_searcher(team):
    n = 3
    config = shared_policy_ppo_config(num_env_runners=0, worlds_per_env_runner=4, rollout_fragment_length=10,
                                      n_agents=n, grid_size=(W, H), sigma=2.0, max_steps=MAX_STEPS, team=team)
    runner = PlumeVectorEnvRunner(config=config)
    assert isinstance(runner.env.unwrapped, AgentRowsVectorEnv) and runner.num_envs == 12
    source = np.array([W // 2, H // 2])
    ended = 0
    for _ in range(4):
        episodes = runner.sample()
        assert sum(len(e) for e in episodes) >= 120
        by_id = {}
        for eps in episodes:
            obs, act, rew = eps.get_observations(), eps.get_actions(), eps.get_rewards()
            xy = cells(obs)
            np.testing.assert_array_equal(xy[1:], np.clip(xy[:-1] + MOVES[act], 0, [W - 1, H - 1]))
            assert rew[:-1].sum() == 0  # a searcher earns only on its last step
            at_source = (xy[-1] == source).all()
            if eps.is_terminated:
                assert rew[-1] == 1.0 and (at_source or team)
            else:
                assert rew[-1] == 0.0 and not at_source
            assert eps.t <= MAX_STEPS
            assert eps.id_ not in by_id
            by_id[eps.id_] = eps
            ended += eps.is_done
    assert ended > 12
    with pytest.raises(Exception, match="multiple of n_agents"):
        AgentRowsVectorEnv(5, n_agents=3)
    with pytest.raises(NotImplementedError, match="sampled by timesteps only"):
        runner.sample(num_episodes=2)
    runner.stop()


def test_multiagent_example_rows_mode_trains_one_iteration(ray_local, capsys):
    example = load(ROOT / "examples" / "rllib_multiagent_ppo.py")
    assert example.main(["--rows", "--runners", "0", "--envs", "8", "--fragment", "8", "--agents", "3",
                         "--iterations", "1", "--grid", "8", "6", "--sigma", "2", "--max-steps", "20",
                         "--eval-episodes", "10"]) == 0
    out = capsys.readouterr().out
    assert "3 searchers sharing one policy, 0 env runner(s) x 8 worlds of a 8x6 grid as rows of one vector env" in out
    assert "iteration 1: return per searcher" in out


# ----------------------------------------------------------------------------------------- issue 23.12, 23.17, 24.4
@pytest.mark.parametrize("runners, worlds", [(2, 256), (3, 100), (1, 7)])
def test_ppo_config_validates_for_any_runners_and_worlds_and_after_changing_them(runners, worlds):
    config = ppo_config(num_env_runners=runners, num_envs_per_env_runner=worlds, grid_size=(W, H))
    config.validate()
    batch = runners * worlds * 32
    assert config.total_train_batch_size == batch
    assert config.get_rollout_fragment_length(worker_index=1) * worlds * runners == batch  # one sample each
    # RLlib's own knobs changed afterwards still validate (the fragment follows the batch)
    config.copy(copy_frozen=False).env_runners(num_env_runners=runners + 2).validate()
    config.copy(copy_frozen=False).training(train_batch_size_per_learner=8000).validate()
    shared_policy_ppo_config(num_env_runners=runners, worlds_per_env_runner=worlds, n_agents=2).validate()


def test_the_builders_refuse_negative_counts_and_continuous_bodies_clearly():
    from plume_multi import ValidationError, bodies
    from plume_multi.integrations.rllib import multi_agent_ppo_config

    with pytest.raises(ValidationError, match=r"ppo_config.num_env_runners: got -3; expected an integer in 0\.\."):
        ppo_config(num_env_runners=-3)
    with pytest.raises(ValidationError, match="ppo_config.num_envs_per_env_runner: got 0"):
        ppo_config(num_env_runners=1, num_envs_per_env_runner=0)
    with pytest.raises(ValidationError, match="multi_agent_ppo_config.num_env_runners: got 2.5"):
        multi_agent_ppo_config(num_env_runners=2.5)
    with pytest.raises(ValidationError, match="shared_policy_ppo_config.worlds_per_env_runner: got -1"):
        shared_policy_ppo_config(num_env_runners=1, worlds_per_env_runner=-1)
    for build in (lambda: ppo_config(1, 4, action_model=bodies.Continuous()),
                  lambda: multi_agent_ppo_config(1, n_agents=2, action_model=bodies.Continuous()),
                  lambda: shared_policy_ppo_config(1, 4, n_agents=2, action_model=bodies.Continuous())):
        with pytest.raises(ValidationError, match="continuous body.*Stable-Baselines3"):
            build()


def test_the_natural_call_with_the_prefixed_compact_id_trains_in_a_remote_runner(ray_local):
    from ray.rllib.algorithms.ppo import PPOConfig

    config = (PPOConfig()
              .environment("plume_multi:PlumeSearchCompact-v0", env_config={"grid_size": (W, H), "max_steps": 20})
              .env_runners(num_env_runners=1, num_envs_per_env_runner=2)
              .training(train_batch_size_per_learner=64, minibatch_size=32, num_epochs=1))
    algo = config.build_algo()
    try:
        result = algo.train()
    finally:
        algo.stop()
    assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 64


def test_the_dict_id_in_an_rllib_runner_names_the_flat_id_before_rllibs_encoder_error():
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner

    config = PPOConfig().environment("plume_multi:PlumeSearch-v0", env_config={"grid_size": (W, H)})
    with pytest.warns(UserWarning, match="plume_multi:PlumeSearchCompact-v0"):
        with pytest.raises(ValueError, match="No default encoder config"):
            SingleAgentEnvRunner(config=config)


# ----------------------------------------------------------------------------------------- evaluate
def _same_episodes(a, b):
    np.testing.assert_array_equal(a.arrival_time, b.arrival_time)


def test_evaluate_takes_rllib_algorithms_and_modules_single_and_multi_agent():
    import plume_multi
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from plume_multi.integrations.rllib import module_policy, multi_agent_ppo_config

    scenario = Scenario(grid_size=(W, H), sigma=2.0, max_steps=MAX_STEPS)
    algo = ppo_config(num_env_runners=0, num_envs_per_env_runner=4, grid_size=(W, H), sigma=2.0,
                      max_steps=MAX_STEPS).build_algo()
    try:
        expected = plume_multi.evaluate(module_policy(algo), scenario, 32, progress=False)
        _same_episodes(plume_multi.evaluate(algo, scenario, 32, progress=False), expected)
        _same_episodes(plume_multi.evaluate(algo.get_module(), scenario, 32, progress=False), expected)
        with pytest.raises(plume_multi.ValidationError, match=r"acts in Discrete\(4\); the scenario expects Discrete\(9\)"):
            plume_multi.evaluate(algo, scenario.replace(action_model="moore"), 4)
    finally:
        algo.stop()

    team = scenario.replace(n_agents=2)
    # RLlib's env checker steps the env once and refuses a step in which a searcher arrives (its last
    # observation is returned as it leaves env.agents): on this small grid that happens by chance
    algo = (multi_agent_ppo_config(num_env_runners=0, n_agents=2, grid_size=(W, H), sigma=2.0, max_steps=MAX_STEPS)
            .environment(disable_env_checking=True).build_algo())
    try:  # one shared module serves every searcher's rows
        _same_episodes(plume_multi.evaluate(algo, team, 16, progress=False),
                       plume_multi.evaluate(module_policy(algo), team, 16, progress=False))
    finally:
        algo.stop()

    names = register()
    config = (PPOConfig().environment(names["multi_agent"], env_config=dict(n_agents=2, grid_size=(W, H), sigma=2.0,
                                                                              max_steps=MAX_STEPS))
              .environment(disable_env_checking=True)
              .env_runners(num_env_runners=0)
              .multi_agent(policies={"searcher_0", "searcher_1"}, policy_mapping_fn=lambda agent, *a, **k: agent)
              .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[8])))
    algo = config.build_algo()
    try:  # a module per searcher: each on its own rows, as a hand-written reshape would do
        modules = algo.get_module("searcher_0"), algo.get_module("searcher_1")

        def by_hand(obs):
            rows = obs.reshape(-1, 2, obs.shape[1])
            with torch.no_grad():
                return np.stack([m.forward_inference({"obs": torch.from_numpy(rows[:, n])})["action_dist_inputs"]
                                 .argmax(-1).numpy() for n, m in enumerate(modules)], axis=1).reshape(-1)

        multi = algo.env_runner.module
        _same_episodes(plume_multi.evaluate(multi, team, 16, progress=False),
                       plume_multi.evaluate(by_hand, team, 16, progress=False))
        with pytest.raises(plume_multi.ValidationError, match="one per searcher named"):
            plume_multi.evaluate(multi, scenario.replace(n_agents=3), 4)
    finally:
        algo.stop()


def test_rllibs_lstm_recipe_trains_on_the_compact_id_and_evaluate_carries_its_state():
    """The recurrent recipe of docs/integrations.md: RLlib's default LSTM encoder on the compact id."""
    import plume_multi
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    config = (PPOConfig()
              .environment("plume_multi:PlumeSearchCompact-v0",
                           env_config={"grid_size": (W, H), "sigma": 2.0, "max_steps": MAX_STEPS})
              .env_runners(num_env_runners=0, num_envs_per_env_runner=2)
              .training(train_batch_size_per_learner=64, minibatch_size=32, num_epochs=1)
              .rl_module(model_config=DefaultModelConfig(use_lstm=True, lstm_cell_size=16, max_seq_len=8)))
    algo = config.build_algo()
    try:
        assert algo.train()["env_runners"]["num_env_steps_sampled_lifetime"] >= 64
        module = algo.get_module()
        assert module.is_stateful()
        scenario = Scenario(grid_size=(W, H), sigma=2.0, max_steps=MAX_STEPS)

        class ByHand:  # every row's state from its initial one on, one step at a time
            def __init__(self):
                self.state = None

            def __call__(self, obs):
                x = torch.from_numpy(obs)[:, None]
                if self.state is None:
                    initial = {k: torch.as_tensor(v) for k, v in module.get_initial_state().items()}
                    self.state = {k: v[None].repeat(len(obs), *[1] * v.ndim) for k, v in initial.items()}
                with torch.no_grad():
                    out = module.forward_inference({Columns.OBS: x, Columns.STATE_IN: self.state})
                self.state = out[Columns.STATE_OUT]
                return out[Columns.ACTION_DIST_INPUTS][:, -1].argmax(-1).numpy()

        _same_episodes(plume_multi.evaluate(algo, scenario, 16, progress=False),
                       plume_multi.evaluate(ByHand, scenario, 16, progress=False))
    finally:
        algo.stop()


def test_the_trainers_benchmark_runs_its_rllib_rows_tiny(ray_local, capsys):
    from trainer_helpers import run_quick

    table, rates = run_quick("rllib", capsys)
    assert "| RLlib PPO | ppo_config(1 runner x 256 worlds) |" in table and "| RLlib PPO, LSTM |" in table
    assert len(rates) == 2
