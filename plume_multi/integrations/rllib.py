"""RLlib (Ray) adapters: PPO on the native vector env, and multi-agent PPO with one shared policy.

Needs ``pip install "plume-multi[rllib]"`` (Ray RLlib and torch).

* ``ppo_config(num_env_runners, num_envs_per_env_runner, **scenario)``: a ready ``PPOConfig`` whose
  env runners each step ``num_envs_per_env_runner`` single-agent worlds in one engine call
  (``gymnasium.make_vec("plume_multi:PlumeSearchCompact-v0", vectorization_mode="vector_entry_point")``)
  and collect the batch as arrays (``PlumeVectorEnvRunner``).
* ``multi_agent_ppo_config(num_env_runners, **scenario)``: N searchers per world
  (``PlumeMultiAgentEnv``), one shared policy.
* ``shared_policy_ppo_config(num_env_runners, worlds_per_env_runner, **scenario)``: the same shared
  policy trained at array speed, the searchers of many worlds as the rows of one vector env
  (``AgentRowsVectorEnv``).
* ``register()``: registers the envs with Ray under the names it returns.

Every id here resolves in a fresh process: ``"plume_multi:PlumeSearchCompact-v0"`` imports
``plume_multi`` itself (Gymnasium's ``module:id`` form), and Ray ships its registered creators to
every worker. Observations are flat ``Box`` float32 vectors, which RLlib's default encoder takes.
"""

from __future__ import annotations

import math
import uuid

import gymnasium as gym
import numpy as np

from ..checks import check_bool, check_int, is_int
from ..envs._core import Core, CoreVectorEnv, CoreViews, scenario_from
from ..envs.pettingzoo import AGENT_PREFIX
from ..envs.registration import COMPACT_ID
from ..envs.vector import compact_vector_env
from ..errors import ValidationError

try:
    import torch
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
    from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner
    from ray.rllib.env.single_agent_episode import SingleAgentEpisode
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "plume_multi.integrations.rllib needs Ray RLlib and torch: pip install 'plume-multi[rllib]'"
    ) from exc

__all__ = ["ENV_ID", "SINGLE_AGENT_NAME", "MULTI_AGENT_NAME", "SHARED_POLICY", "register", "ppo_config",
           "multi_agent_ppo_config", "shared_policy_ppo_config", "module_policy", "PlumeVectorEnvRunner",
           "PlumeMultiAgentEnv", "AgentRowsVectorEnv", "AGENT_ROWS_NAME"]

ENV_ID = f"plume_multi:{COMPACT_ID}"  # resolvable anywhere: Gymnasium imports plume_multi first
SINGLE_AGENT_NAME = "plume_multi_search"
MULTI_AGENT_NAME = "plume_multi_multiagent"
AGENT_ROWS_NAME = "plume_multi_agent_rows"
SHARED_POLICY = "shared"
# RLlib's default (60 s) drops whole samples on a busy machine; a slow sample is better than none.
SAMPLE_TIMEOUT_S = 600.0


# ----------------------------------------------------------------------------------------- registration
def _single_agent_creator(config):
    """RLlib's creator protocol: a ``VectorEnv`` when it asks for ``num_envs``, else one env."""
    options = dict(config)
    num_envs = options.pop("num_envs", None)
    if num_envs is not None:
        return gym.make_vec(ENV_ID, num_envs=num_envs, vectorization_mode="vector_entry_point", **options)
    return gym.make(ENV_ID, **options)


def _multi_agent_creator(config):
    return PlumeMultiAgentEnv(**dict(config))


def _agent_rows_creator(config):
    options = dict(config)
    return AgentRowsVectorEnv(options.pop("num_envs", options.get("n_agents", 1)), **options)


def register() -> dict:
    """Register the envs with Ray's registry; return ``{"single_agent": name, "multi_agent": name,
    "agent_rows": name}``.

    ``config.environment(name, env_config={...Scenario fields})`` then finds them in every env
    runner (Ray ships the creators to its workers). Calling it again is harmless.
    """
    from ray.tune.registry import register_env

    register_env(SINGLE_AGENT_NAME, _single_agent_creator)
    register_env(MULTI_AGENT_NAME, _multi_agent_creator)
    register_env(AGENT_ROWS_NAME, _agent_rows_creator)
    return {"single_agent": SINGLE_AGENT_NAME, "multi_agent": MULTI_AGENT_NAME, "agent_rows": AGENT_ROWS_NAME}


# ----------------------------------------------------------------------------------------- multi-agent env
class PlumeMultiAgentEnv(CoreViews, MultiAgentEnv):
    """One world of N searchers as an RLlib ``MultiAgentEnv`` (a mapping over the front-end core).

    Agents ``searcher_0 .. searcher_{N-1}`` (PettingZoo's names); observation ``Box(low, high,
    (3 + 2k,), float32)``: ``[concentration, x/(W-1), y/(H-1)]`` then ``(dx, dy)`` of the
    ``n_neighbours`` nearest others (the sensors' columns and bounds); actions ``Discrete(4)``
    (``"cardinal"``). Reward 1.0 on reaching the source (team mode: the first arrival ends the
    episode for all, and every searcher still searching gets 1.0). An agent that arrived is
    terminated and receives no further observation; everyone is truncated at ``max_steps``.
    ``reset(seed=s)`` starts as world 0 of ``Simulator.reset(seed=s)`` (any ``s >= 0``; one beyond
    the engine's range folded into it).

    Args:
        **scenario: ``Scenario`` fields (``n_agents``, ``grid_size``, ``sigma``, ``max_steps``,
            ``team``, ``n_neighbours``, ...).
    """

    _UNCOPIED = ("_sim",)

    def __init__(self, config=None, **scenario):
        super().__init__()
        self.scenario = scenario_from({**dict(config or {}), **scenario}, owner="PlumeMultiAgentEnv")
        self._core = Core(self.scenario, 1, autoreset="disabled")
        self._bind()
        n = self.scenario.n_agents
        self.possible_agents = [f"{AGENT_PREFIX}{i}" for i in range(n)]
        self.agents = list(self.possible_agents)
        space = self._core.observation_box()
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces = {a: self._core.action_space() for a in self.possible_agents}
        self._index = dict(zip(self.possible_agents, range(n)))
        self._actions = np.zeros(n, dtype=np.int64)

    def _bind(self) -> None:
        self._sim = self._core.sim

    def reset(self, *, seed=None, options=None):
        obs = self._sim.reset(seed=self._core.fold_seed(seed))
        self.agents = list(self.possible_agents)
        return {a: obs[i].copy() for i, a in enumerate(self.agents)}, {}

    def step(self, action_dict):
        index = self._index
        for agent, action in action_dict.items():
            self._actions[index[agent]] = action
        obs, reward, terminated, truncated = self._sim.step(self._actions)
        out_obs, out_rew, out_term, out_trunc = {}, {}, {}, {}
        for agent in self.agents:
            i = index[agent]
            out_obs[agent] = obs[i].copy()
            out_rew[agent] = float(reward[i])
            out_term[agent] = bool(terminated[i])
            out_trunc[agent] = bool(truncated[i]) and not terminated[i]
        self.agents = [a for a in self.agents if not (out_term[a] or out_trunc[a])]
        out_term["__all__"] = not self.agents and not any(out_trunc.values())
        out_trunc["__all__"] = bool(truncated[0]) and not out_term["__all__"]
        return out_obs, out_rew, out_term, out_trunc, {}


class AgentRowsVectorEnv(CoreVectorEnv):
    """The searchers of B worlds of N agents as the B*N rows of a Gymnasium ``VectorEnv``.

    For one policy shared by every searcher, trained at array speed by ``PlumeVectorEnvRunner``
    (``shared_policy_ppo_config``): row ``b * N + n`` is agent ``n`` of world ``b`` of one
    ``Simulator`` (``autoreset="next_step"``), observations as ``PlumeMultiAgentEnv``'s. An agent
    that reached the source reports ``terminated`` (and reward 0) until its world ends; the step
    after the world ends resets all its agents (their actions ignored, flags cleared). So each
    row's episode is one searcher's episode, as RLlib's multi-agent episodes split them.

    Args:
        num_envs: rows, B*N (a multiple of ``n_agents``).
        **scenario: ``Scenario`` fields.
    """

    def __init__(self, num_envs: int, **scenario):
        self.scenario = scenario_from(scenario, owner="AgentRowsVectorEnv")
        n = self.scenario.n_agents
        if not is_int(num_envs) or num_envs < n or num_envs % n:
            raise ValidationError(f"num_envs: got {num_envs!r}; expected a positive multiple of n_agents = {n} "
                                  "(one row per agent of each world)")
        self._adopt(Core(self.scenario, int(num_envs) // n, autoreset="next_step"), gym.vector.AutoresetMode.NEXT_STEP)

    def reset(self, *, seed=None, options=None):
        obs = self._sim.reset(seed=self._core.fold_seed(seed))
        self._ready = True
        return obs.copy(), {}

    def step(self, actions):
        obs, reward, terminated, truncated = self._sim.step(actions)
        return obs.copy(), reward.copy(), terminated.copy(), truncated.copy(), {}


# ----------------------------------------------------------------------------------------- vector runner
class PlumeVectorEnvRunner(SingleAgentEnvRunner):
    """A ``SingleAgentEnvRunner`` that samples a native vector env as arrays.

    The stock runner turns every step of every env into per-env episode calls and connector
    passes. This one, when sampling timesteps (PPO's ``truncate_episodes``), runs the module on the
    ``(B, D)`` observation batch, samples all actions at once, steps the vector env once (one
    engine call for the ``B`` worlds of ``plume_multi``'s vector env), stores the step in arrays, and
    builds the ``SingleAgentEpisode`` chunks only at the end of ``sample()``. Episode return and
    length metrics are logged as the stock runner logs them.

    What it leaves out: env-to-module and module-to-env connectors and per-episode callbacks (the
    observations go to the module as they come from the env; the sampled actions go to the env),
    and stateful (recurrent) modules. Sampling episodes (``num_episodes=``) and random actions
    go through the stock runner's path. The env must autoreset ``NEXT_STEP`` (Gymnasium's
    default) and have discrete actions. A row whose episode ended may wait several steps for its
    reset (reporting ``terminated`` or ``truncated`` until the reset step clears both), as the
    agents of ``AgentRowsVectorEnv`` do until their whole world is reset.
    """

    def __init__(self, *, config, **kwargs):
        super().__init__(config=config, **kwargs)
        if self.worker_index:
            # A remote runner owns num_cpus_per_env_runner CPUs: more torch threads than that
            # spin against each other and the other runners (10x slower on a busy machine).
            torch.set_num_threads(max(1, int(self.config.num_cpus_per_env_runner or 1)))

    def _sample(self, *, num_timesteps=None, num_episodes=None, explore, random_actions=False, force_reset=False):
        if num_timesteps is None or random_actions or self.module is None or self.module.is_stateful():
            if isinstance(self.env.unwrapped, AgentRowsVectorEnv):
                raise NotImplementedError(
                    "AgentRowsVectorEnv is sampled by timesteps only (PPO's batch_mode='truncate_episodes', "
                    "no random actions, a stateless module): RLlib's stock runner cannot step rows that wait "
                    "for their world's reset. Evaluate with plume_multi.evaluate(module_policy(algo), ...) instead."
                )
            self._fast = None  # the stock path takes the env over: restart from a reset next time
            return super()._sample(num_timesteps=num_timesteps, num_episodes=num_episodes, explore=explore,
                                   random_actions=random_actions, force_reset=force_reset)
        venv = self.env.unwrapped
        B = self.num_envs
        fast = getattr(self, "_fast", None)
        if force_reset or self._needs_initial_reset or fast is None:
            obs, _ = venv.reset(seed=self._seed if self._needs_initial_reset else None)
            self._needs_initial_reset = False
            fast = self._fast = {
                "obs": np.asarray(obs, dtype=np.float32), "resetting": np.zeros(B, np.bool_),
                "ids": [uuid.uuid4().hex for _ in range(B)], "t": np.zeros(B, np.int64),
                "ret": np.zeros(B, np.float64), "len": np.zeros(B, np.int64),
            }
        if explore:
            dist_cls = self.module.get_exploration_action_dist_cls()
        else:
            dist_cls = self.module.get_inference_action_dist_cls()

        obs_list, act_list, logp_list, logits_list = [fast["obs"]], [], [], []
        rew_list, term_list, trunc_list, valid_list = [], [], [], []
        resetting = fast["resetting"]
        ts = 0
        n_runners = self.config.num_env_runners or 1
        while ts < num_timesteps:
            batch = {Columns.OBS: torch.from_numpy(obs_list[-1])}
            with torch.no_grad():
                if explore:
                    t = (self.num_env_steps_sampled_lifetime // n_runners + ts) * n_runners
                    out = self.module.forward_exploration(batch, t=t)
                else:
                    out = self.module.forward_inference(batch)
                logits = out[Columns.ACTION_DIST_INPUTS]
                dist = dist_cls.from_logits(logits)
                if not explore:
                    dist = dist.to_deterministic()
                actions = dist.sample()
                logp = dist.logp(actions)
            actions = actions.numpy()
            obs, reward, terminated, truncated, _ = venv.step(actions)
            # A row whose episode ended waits (its steps are not valid) until its world is reset,
            # which NEXT_STEP does on the step after the world ended, clearing the flags.
            valid = ~resetting
            ts += int(valid.sum())
            obs_list.append(np.asarray(obs, dtype=np.float32))
            act_list.append(actions)
            logp_list.append(logp.numpy())
            logits_list.append(logits.numpy())
            rew_list.append(np.asarray(reward, dtype=np.float32))
            term_list.append(np.asarray(terminated, dtype=np.bool_))
            trunc_list.append(np.asarray(truncated, dtype=np.bool_))
            valid_list.append(valid)
            resetting = np.asarray(terminated, dtype=np.bool_) | np.asarray(truncated, dtype=np.bool_)
        fast["obs"] = obs_list[-1]
        fast["resetting"] = resetting
        episodes, done_returns, done_lengths = self._episodes(
            fast, np.stack(obs_list, 1), np.stack(act_list, 1), np.stack(logp_list, 1),
            np.stack(logits_list, 1), np.stack(rew_list, 1), np.stack(term_list, 1), np.stack(trunc_list, 1),
            np.stack(valid_list, 1))

        # The smoothed means keep the last `window` episodes: logging only the last ones to end
        # gives the same means as logging all.
        win = max(1, math.ceil(self.config.metrics_num_episodes_for_smoothing / n_runners))
        for length, ret in zip(done_lengths[-win:], done_returns[-win:]):
            self._log_episode_metrics(int(length), float(ret), 0.0)
        self._log_env_steps(metric=self._metrics_num_env_steps_sampled, num_steps=ts)
        self._increase_sampled_metrics(ts, len(done_returns))
        return episodes

    def _episodes(self, fast, obs, act, logp, logits, rew, term, trunc, valid):
        """Cut the ``(B, T, ...)`` arrays into ``SingleAgentEpisode`` chunks, env by env.

        Row ``i``'s steps are runs of valid steps; a run ends with its episode (then the row
        waits, its steps not valid, until its world is reset) or with the sample. A run ending
        with the sample continues, under the same episode id, in the next sample.
        """
        B, T = act.shape
        obs_space, act_space = self.env.single_observation_space, self.env.single_action_space
        episodes, done_returns, done_lengths, done_steps = [], [], [], []
        # Runs of valid steps, [first, last]: a run ends with its episode (term | trunc) or with
        # the sample; a step is valid when the last one did not end the row's episode.
        edge = np.zeros((B, 1), dtype=np.bool_)
        firsts = valid & ~np.concatenate([edge, valid[:, :-1]], axis=1)
        lasts = valid & ~np.concatenate([valid[:, 1:], edge], axis=1)
        returns = np.cumsum(rew, axis=1, dtype=np.float64)
        for i in range(B):
            for start, stop in zip(np.flatnonzero(firsts[i]).tolist(), np.flatnonzero(lasts[i]).tolist()):
                end = stop + 1
                finished = bool(term[i, stop] or trunc[i, stop])
                eps = SingleAgentEpisode(
                    fast["ids"][i], observations=obs[i, start:end + 1], infos=[{} for _ in range(end + 1 - start)],
                    actions=act[i, start:end],
                    rewards=rew[i, start:end], terminated=bool(finished and term[i, stop]),
                    truncated=bool(finished and trunc[i, stop] and not term[i, stop]),
                    extra_model_outputs={Columns.ACTION_LOGP: logp[i, start:end],
                                         Columns.ACTION_DIST_INPUTS: logits[i, start:end]},
                    observation_space=obs_space, action_space=act_space, len_lookback_buffer=0,
                    t_started=int(fast["t"][i]),
                )
                episodes.append(eps)
                chunk_return = returns[i, end - 1] - (returns[i, start - 1] if start else 0.0)
                fast["ret"][i] += chunk_return
                fast["len"][i] += end - start
                fast["t"][i] += end - start
                if finished:
                    done_steps.append(stop)
                    done_returns.append(fast["ret"][i])
                    done_lengths.append(fast["len"][i])
                    fast["ret"][i] = 0.0
                    fast["len"][i] = 0
                    fast["t"][i] = 0
                    fast["ids"][i] = uuid.uuid4().hex
        order = np.argsort(np.asarray(done_steps, dtype=np.int64), kind="stable")  # in the order they ended
        return episodes, np.asarray(done_returns)[order], np.asarray(done_lengths)[order]


# ----------------------------------------------------------------------------------------- configs
# Runners and worlds per runner beyond these are typos, not plans (the engine's own limits apply too).
MAX_ENV_RUNNERS = 100_000
MAX_WORLDS_PER_RUNNER = 1 << 24


def _check_sampling(builder: str, num_env_runners, worlds_name: str, worlds, rollout_fragment_length) -> None:
    """Refuse counts RLlib would take and then fail on (or crash with) later, inside a runner."""
    check_int(builder, "num_env_runners", num_env_runners, 0, MAX_ENV_RUNNERS)
    check_int(builder, worlds_name, worlds, 1, MAX_WORLDS_PER_RUNNER)
    if not (isinstance(rollout_fragment_length, str) and rollout_fragment_length == "auto"):
        check_int(builder, "rollout_fragment_length", rollout_fragment_length, 1, 1 << 20)


def _check_discrete(builder: str, action_model) -> None:
    """The configs here train discrete actions (PlumeVectorEnvRunner samples a categorical)."""
    if getattr(action_model, "continuous", False):
        raise ValidationError(
            f"{builder}: action_model={action_model!r} is a continuous body; the RLlib configs of "
            "plume_multi train grid bodies (Cardinal, Moore, Oriented, RunTumble). Train a continuous body "
            "with Stable-Baselines3 on SB3VecEnv(plume_multi.vector_env(n, action_model=...)) instead")


def ppo_config(num_env_runners: int = 2, num_envs_per_env_runner: int = 4096, *, rollout_fragment_length: int = 32,
               fast_runner: bool = True, **scenario) -> PPOConfig:
    """A ``PPOConfig`` training one policy on the native vector env of ``plume_multi``.

    Each of ``num_env_runners`` remote env runners steps ``num_envs_per_env_runner`` worlds of
    ``vector_env(obs_type="compact", **scenario)`` in one engine call per step. ``fast_runner``
    (default) samples through ``PlumeVectorEnvRunner``; ``False`` keeps RLlib's stock
    ``SingleAgentEnvRunner`` on the same vector env. One training batch is one sample from every
    runner: ``max(1, num_env_runners) * num_envs_per_env_runner * rollout_fragment_length`` steps.
    RLlib's own ``rollout_fragment_length`` is ``"auto"`` (the batch divided among the runners'
    worlds), so every combination of runners and worlds validates, also after changing them with
    ``.env_runners(...)`` or the batch with ``.training(train_batch_size_per_learner=...)``.

    Then ``algo = config.build_algo(); algo.train()``; change anything with the config's own
    methods (``.training(lr=...)``, ``.debugging(seed=...)``, ...).

    Args:
        num_env_runners: remote env runners (0: sample in the driver).
        num_envs_per_env_runner: worlds per runner.
        rollout_fragment_length: steps per world in one sample (sets the training batch).
        fast_runner: sample with ``PlumeVectorEnvRunner``.
        **scenario: ``vector_env`` options (``grid_size``, ``sigma``, ``max_steps``, ...).

    Raises:
        ValidationError: a negative or non-integer count, bad scenario options, or a continuous
            body (these configs train discrete actions); before anything reaches Ray.
    """
    _check_sampling("ppo_config", num_env_runners, "num_envs_per_env_runner", num_envs_per_env_runner,
                    rollout_fragment_length)
    check_bool("ppo_config", "fast_runner", fast_runner)
    _check_discrete("ppo_config", scenario.get("action_model"))
    compact_vector_env(1, **scenario).close()  # bad options fail here, not in a remote runner
    batch = max(1, num_env_runners) * num_envs_per_env_runner * rollout_fragment_length
    config = (
        PPOConfig()
        .environment(ENV_ID, env_config=dict(scenario))
        .env_runners(num_env_runners=num_env_runners, num_envs_per_env_runner=num_envs_per_env_runner,
                     gym_env_vectorize_mode=gym.VectorizeMode.VECTOR_ENTRY_POINT,
                     rollout_fragment_length="auto",  # batch / (runners x worlds): consistent whatever they become
                     env_runner_cls=PlumeVectorEnvRunner if fast_runner else None,
                     sample_timeout_s=SAMPLE_TIMEOUT_S)
        .training(train_batch_size_per_learner=batch, minibatch_size=min(batch, 4096), num_epochs=4, lr=1e-3)
        # three numbers in, four actions out: a small network learns as well, many times faster
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[64, 64]))
    )
    return config


def multi_agent_ppo_config(num_env_runners: int = 2, *, num_envs_per_env_runner: int = 1,
                           rollout_fragment_length: int | str = "auto", **scenario) -> PPOConfig:
    """A ``PPOConfig`` training one shared policy for every searcher of ``PlumeMultiAgentEnv``.

    Args:
        num_env_runners: remote env runners (0: sample in the driver).
        num_envs_per_env_runner: worlds per runner (RLlib steps them one after the other).
        rollout_fragment_length: env steps per world in one sample (``"auto"``: RLlib's choice).
        **scenario: ``Scenario`` fields (``n_agents``, ``team``, ``n_neighbours``, ...).

    Raises:
        ValidationError: a negative or non-integer count, bad scenario fields, or a continuous body.
    """
    _check_sampling("multi_agent_ppo_config", num_env_runners, "num_envs_per_env_runner", num_envs_per_env_runner,
                    rollout_fragment_length)
    sc = scenario_from(scenario, owner="multi_agent_ppo_config")  # bad options fail here, not in a runner
    _check_discrete("multi_agent_ppo_config", sc.action_model)
    names = register()
    return (
        PPOConfig()
        .environment(names["multi_agent"], env_config=dict(scenario))
        .env_runners(num_env_runners=num_env_runners, num_envs_per_env_runner=num_envs_per_env_runner,
                     rollout_fragment_length=rollout_fragment_length, sample_timeout_s=SAMPLE_TIMEOUT_S)
        .multi_agent(policies={SHARED_POLICY}, policy_mapping_fn=_shared_policy)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            SHARED_POLICY: RLModuleSpec(model_config=DefaultModelConfig(fcnet_hiddens=[64, 64]))}))
    )


def shared_policy_ppo_config(num_env_runners: int = 2, worlds_per_env_runner: int = 256, *,
                             rollout_fragment_length: int = 32, **scenario) -> PPOConfig:
    """Multi-agent PPO with one shared policy, at array speed: a single-agent ``PPOConfig`` over
    the searchers of many worlds as rows (``AgentRowsVectorEnv``, sampled by ``PlumeVectorEnvRunner``).

    What PPO learns equals ``multi_agent_ppo_config``'s shared policy: RLlib's multi-agent episodes
    are split into one episode per agent for the loss, as the rows are here. Each runner steps
    ``worlds_per_env_runner`` worlds of ``n_agents`` searchers in one engine call. Per-agent
    metrics: ``episode_return_mean`` is one searcher's return. Only timestep sampling (PPO's
    default ``truncate_episodes``) is supported: RLlib's stock runner cannot sample these rows.

    Args:
        num_env_runners: remote env runners (0: sample in the driver).
        worlds_per_env_runner: worlds per runner; each is ``n_agents`` rows.
        rollout_fragment_length: steps per world in one sample (sets the training batch).
        **scenario: ``Scenario`` fields (``n_agents``, ``team``, ``n_neighbours``, ...).

    Raises:
        ValidationError: a negative or non-integer count, bad scenario fields, or a continuous body.
    """
    _check_sampling("shared_policy_ppo_config", num_env_runners, "worlds_per_env_runner", worlds_per_env_runner,
                    rollout_fragment_length)
    sc = scenario_from(scenario, owner="shared_policy_ppo_config")
    _check_discrete("shared_policy_ppo_config", sc.action_model)
    rows = worlds_per_env_runner * sc.n_agents
    batch = max(1, num_env_runners) * rows * rollout_fragment_length
    names = register()
    return (
        PPOConfig()
        .environment(names["agent_rows"], env_config=dict(scenario))
        .env_runners(num_env_runners=num_env_runners, num_envs_per_env_runner=rows,
                     gym_env_vectorize_mode=gym.VectorizeMode.VECTOR_ENTRY_POINT,
                     rollout_fragment_length="auto", env_runner_cls=PlumeVectorEnvRunner,
                     sample_timeout_s=SAMPLE_TIMEOUT_S)
        .training(train_batch_size_per_learner=batch, minibatch_size=min(batch, 4096), num_epochs=4, lr=1e-3)
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[64, 64]))
    )


def _shared_policy(agent_id, episode, **kwargs):
    return SHARED_POLICY


class _ModulePolicy:
    """``obs (M, D) float32 -> actions (M,) int64`` through an RLlib module (see ``module_policy``)."""

    def __init__(self, module, explore: bool):
        self.module = module
        self.explore = explore

    def __call__(self, obs):
        batch = {Columns.OBS: torch.as_tensor(np.asarray(obs, dtype=np.float32))}
        with torch.no_grad():
            if self.explore:
                logits = self.module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS]
                dist = self.module.get_exploration_action_dist_cls().from_logits(logits)
                return dist.sample().numpy().astype(np.int64)
            logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
            return logits.argmax(dim=-1).numpy().astype(np.int64)


def module_policy(algo_or_module, module_id: str | None = None, *, explore: bool = False):
    """A policy for ``plume_multi.evaluate`` (or any batched loop) from a trained algorithm.

    Args:
        algo_or_module: an RLlib ``Algorithm`` (its module is taken from the learner) or an
            ``RLModule``.
        module_id: which module of a multi-module setup (default: the default module, or
            ``SHARED_POLICY`` when that is the one there).
        explore: sample from the action distribution instead of taking its most likely action.
    """
    module = algo_or_module
    if hasattr(algo_or_module, "get_module"):
        module = algo_or_module.get_module(module_id) if module_id else None
        if module is None:
            module = algo_or_module.get_module() or algo_or_module.get_module(SHARED_POLICY)
    return _ModulePolicy(module, explore)
