"""Every task builds, runs a few episodes in every front-end it offers and is deterministic.

Tiny runs: a few episodes of a few steps (a reduced protocol), so that the cost is compiling each
task family's combination of models once (the teams share one; the Gym and PettingZoo fronts reuse
the simulator's)."""

import gymnasium
import numpy as np
import pytest

from plume_multi import tasks
from plume_multi.tasks.envs import TaskEnv
from plume_multi.tasks.families.recorded import SYNTHETIC_SOURCE, synthetic_frames, write_synthetic_recording

STEPS = 12
EPISODES = 3
RUNNABLE = [t for t in tasks.list() if not tasks.get(t).options]


def _policy(task_id):
    return tasks.get(task_id).baselines[0]


@pytest.mark.parametrize("task_id", RUNNABLE)
def test_every_task_runs_its_first_baseline_deterministically(task_id):
    a = tasks.evaluate(task_id, _policy(task_id), episodes=EPISODES, max_steps=STEPS, progress=False)
    b = tasks.evaluate(task_id, _policy(task_id), episodes=EPISODES, max_steps=STEPS, progress=False)
    assert a.reduced and a.evaluation.episodes == EPISODES and a.protocol.max_steps == STEPS
    np.testing.assert_array_equal(a.evaluation.arrival_time, b.evaluation.arrival_time)
    assert a.summary() == b.summary()
    steps = a.steps
    assert ((steps >= 0) & (steps <= STEPS)).all()
    assert np.array_equal(steps == STEPS, ~a.evaluation.success | (a.evaluation.search_time == STEPS))
    assert a.iqm_low <= a.iqm_steps <= a.iqm_high
    assert [r["seed"] for r in a.rows()] == list(range(EPISODES))


def _gym_episode(env, seed):
    obs, _ = env.reset(seed=seed)
    trace = [np.array(obs, dtype=np.float64).ravel()]
    env.action_space.seed(seed)
    for _ in range(STEPS):
        obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        trace.append(np.concatenate([np.array(obs, dtype=np.float64).ravel(), np.ravel(reward).astype(float)]))
        if np.all(terminated) or truncated:
            break
    return np.concatenate(trace)


@pytest.mark.parametrize("task_id", RUNNABLE)
def test_every_task_is_a_gymnasium_id_that_replays_for_a_seed(task_id):
    env = gymnasium.make(f"plume_multi:{task_id}")
    sc = tasks.get(task_id).scenario()
    assert env.observation_space == (env.unwrapped.observation_space)
    if sc.n_agents == 1:
        assert isinstance(env.unwrapped, TaskEnv)
        assert env.observation_space.shape == (len(sc.observation_layout),)
    else:
        assert len(env.observation_space) == sc.n_agents
    np.testing.assert_array_equal(_gym_episode(env, 3), _gym_episode(env, 3))
    obs, _ = env.reset(seed=4)
    assert env.observation_space.contains(obs)


@pytest.mark.parametrize("task_id", [t for t in RUNNABLE if tasks.get(t).scenario().n_agents == 1])
def test_one_searcher_tasks_vectorize_by_their_id(task_id):
    envs = gymnasium.make_vec(task_id, num_envs=3, vectorization_mode="vector_entry_point")
    obs, _ = envs.reset(seed=7)
    assert obs.shape == (3, len(tasks.get(task_id).scenario().observation_layout))
    envs.action_space.seed(0)
    obs, reward, terminated, truncated, _ = envs.step(envs.action_space.sample())
    assert reward.shape == (3,) and np.isfinite(obs).all()


@pytest.mark.parametrize("task_id", [t for t in RUNNABLE if not tasks.get(t).scenario().continuous])
def test_grid_tasks_are_pettingzoo_envs(task_id):
    from pettingzoo.test import parallel_api_test

    sc = tasks.get(task_id).scenario()
    env = tasks.parallel_env(task_id)
    assert env.possible_agents == [f"searcher_{n}" for n in range(sc.n_agents)]
    assert env.max_num_agents == sc.n_agents
    parallel_api_test(env, num_cycles=STEPS)
    aec = tasks.aec_env(task_id)
    aec.reset(seed=1)
    assert aec.agent_selection == "searcher_0"


def test_the_file_task_runs_on_the_synthetic_recording_in_the_data_zoo_layout(tmp_path):
    path = write_synthetic_recording(tmp_path / "plume.h5")
    task = tasks.make("recorded/file-v0", path=str(path))
    sc = task.scenario()
    assert sc.grid_size == (64, 32) and tuple(sc.plume.source) == SYNTHETIC_SOURCE
    np.testing.assert_array_equal(np.asarray(sc.plume.frames), synthetic_frames())
    on_file = tasks.evaluate(task, "gradient", episodes=EPISODES, max_steps=STEPS, progress=False)
    in_memory = tasks.evaluate("recorded/synthetic-v0", "gradient", episodes=EPISODES, max_steps=STEPS, progress=False)
    # the same frames and source: the same episodes (the file task allows 1000 steps, here cut to 12)
    np.testing.assert_array_equal(on_file.evaluation.arrival_time, in_memory.evaluation.arrival_time)
    env = gymnasium.make("recorded/file-v0", path=str(path))
    obs, _ = env.reset(seed=0)
    assert obs.shape == (5,)


def test_a_mixed_team_puts_the_partners_in_their_places():
    from plume_multi.policies import Team
    from plume_multi.tasks.running import policy_for_task

    task = tasks.get("teams/mixed-4-v0")
    members = policy_for_task("random", task, task.scenario())
    assert len(members) == 4 and members[0] is members[2] and members[1] is members[3] and members[0] is not members[1]
    team = Team([m(task.scenario(), 0) for m in members])
    assert [type(m).__name__ for m in team.members] == ["RandomPolicy", "Greedy", "RandomPolicy", "Greedy"]


@pytest.mark.ray
def test_ray_runs_the_same_episodes(ray_local):
    local = tasks.evaluate("teams/mixed-2-v0", "random", episodes=8, max_steps=STEPS, num_worlds=3, progress=False)
    remote = tasks.evaluate("teams/mixed-2-v0", "random", episodes=8, max_steps=STEPS, num_worlds=3, executor="ray",
                            progress=False)
    np.testing.assert_array_equal(local.evaluation.arrival_time, remote.evaluation.arrival_time)
    assert local.summary() == remote.summary()
