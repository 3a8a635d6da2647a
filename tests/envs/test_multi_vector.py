"""``multi_agent_vector_env``: B worlds x N searchers as B*N rows of one Gymnasium ``VectorEnv``.

The env is checked step by step against a plain reference written from its docstring's rules,
on top of ``naive.NaiveWorld`` (the engine's own Python reference), in every autoreset mode.
"""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from simulator_reference import NaiveWorld, gaussian

import plume_multi
from plume_multi import Scenario, StateError, ValidationError
from plume_multi.envs.multi_vector import MultiAgentVectorEnv, _row_outputs

B, N = 5, 3
CFG = dict(grid_size=(7, 5), sigma=2.0, goal_radius=1.5, max_steps=12)  # non-square: x/y mix-ups show


class RowsReference:
    """The rows' semantics by hand: B naive worlds that never reset by themselves, plus the rules
    of ``MultiAgentVectorEnv``'s docstring (masked rows, episode ends once per row, autoreset)."""

    def __init__(self, scenario, num_worlds, mode):
        field = gaussian(scenario.grid_size, scenario.source_location, scenario.sigma)
        self.worlds = [NaiveWorld(scenario, field, "disabled") for _ in range(num_worlds)]
        self.sc, self.mode = scenario, mode
        self.pending = [False] * num_worlds  # NEXT_STEP: the world resets on the next step

    def ended(self, world):
        return world.t >= self.sc.max_steps or not any(world.active)

    def reset(self, seed):
        for b, world in enumerate(self.worlds):
            world.reset(seed + b)
            self.pending[b] = False
        return self.obs(), self.live()

    def obs(self):
        return np.concatenate([w.obs for w in self.worlds])

    def live(self):
        rows = []
        for world in self.worlds:
            over = self.ended(world) and self.mode != "same_step"
            rows += [a and not over for a in world.active]
        return np.array(rows)

    def step(self, actions):
        n = self.sc.n_agents
        reward, term, trunc = (np.zeros(len(actions), t) for t in (np.float32, bool, bool))
        final_obs, final_len, ended_rows = {}, {}, []
        for b, world in enumerate(self.worlds):
            rows = range(b * n, (b + 1) * n)
            if self.pending[b]:
                world.reset()
                self.pending[b] = False
                continue
            was = [a and not self.ended(world) for a in world.active]
            world.step([int(actions[i]) for i in rows])
            for k, i in enumerate(rows):
                if was[k]:
                    reward[i], term[i], trunc[i] = world.reward[k], world.terminated[k], world.truncated[k]
                    if term[i] or trunc[i]:
                        final_obs[i], final_len[i] = world.obs[k].copy(), world.length[k]
            if self.ended(world):
                if self.mode == "same_step":
                    world.reset()
                elif self.mode == "next_step":
                    self.pending[b] = True
        return self.obs(), reward, term, trunc, self.live(), final_obs, final_len


def random_actions(rng, steps, rows, n_actions=4):
    return [rng.integers(0, n_actions, rows) for _ in range(steps)]


@pytest.mark.parametrize("mode", ["next_step", "same_step", "disabled"])
@pytest.mark.parametrize("team,neighbours", [(False, 0), (False, 2), (True, 1)])
def test_every_step_matches_the_reference(mode, team, neighbours):
    env = plume_multi.multi_agent_vector_env(B, N, team, autoreset_mode=mode, n_neighbours=neighbours, **CFG)
    ref = RowsReference(env.scenario, B, mode)
    obs, info = env.reset(seed=11)
    ref_obs, ref_live = ref.reset(11)
    np.testing.assert_array_equal(obs, ref_obs)
    np.testing.assert_array_equal(info["active"], ref_live)
    saw = dict(masked=0, finals=0, world_ends=0)
    for actions in random_actions(np.random.default_rng(3), 60, B * N):
        obs, reward, term, trunc, info = env.step(actions)
        ref_obs, ref_reward, ref_term, ref_trunc, ref_live, ref_final, ref_len = ref.step(actions)
        np.testing.assert_array_equal(obs, ref_obs)
        np.testing.assert_array_equal(reward, ref_reward)
        np.testing.assert_array_equal(term, ref_term)
        np.testing.assert_array_equal(trunc, ref_trunc)
        np.testing.assert_array_equal(info["active"], ref_live)
        assert reward.dtype == np.float32 and term.dtype == trunc.dtype == np.bool_
        saw["masked"] += int((~info["active"]).sum())
        saw["world_ends"] += int(env.simulator.final_mask.sum())
        ended = term | trunc
        if mode == "same_step" and ended.any():
            saw["finals"] += 1
            assert sorted(np.flatnonzero(info["_final_obs"])) == sorted(ref_final)
            for i, expected in ref_final.items():
                np.testing.assert_array_equal(info["final_obs"][i], expected)
                assert info["final_info"]["episode_length"][i] == ref_len[i]
            np.testing.assert_array_equal(info["final_info"]["goal_reached"], term)
        else:
            assert "final_obs" not in info and "final_info" not in info
    assert saw["world_ends"] >= 5 and (mode != "same_step" or saw["finals"] >= 5)
    assert saw["masked"] > 0 or team  # team worlds end at the first arrival: no masked rows in same_step


def test_a_rows_episode_ends_once_and_its_masked_rows_earn_nothing():
    env = plume_multi.multi_agent_vector_env(64, 4, autoreset_mode=AutoresetMode.SAME_STEP, **CFG)
    _, info = env.reset(seed=0)
    live = info["active"]
    rng = np.random.default_rng(0)
    finished_early = 0
    for _ in range(100):
        _, reward, term, trunc, info = env.step(rng.integers(0, 4, env.num_envs))
        assert not (reward[~live] != 0).any() and not (term | trunc)[~live].any()  # masked: 0, no end
        world_reset = np.repeat(env.simulator.final_mask, 4)
        # a row live before the step is live after it unless its episode ended on this step
        # (or its world was reset, which makes every row live)
        np.testing.assert_array_equal(info["active"][live & ~world_reset], ~(term | trunc)[live & ~world_reset])
        assert info["active"][world_reset].all()
        finished_early += int((term & ~world_reset).sum())
        live = info["active"]
    assert finished_early > 20


def test_first_episode_of_world_b_is_parallel_env_seeded_s_plus_b():
    env = plume_multi.multi_agent_vector_env(3, 4, grid_size=(11, 6))
    obs, _ = env.reset(seed=40)
    for b in range(3):
        pz = plume_multi.parallel_env(n_agents=4, grid_size=(11, 6))
        observations, _ = pz.reset(seed=40 + b)
        np.testing.assert_array_equal(obs[4 * b:4 * b + 4], np.stack([observations[a] for a in pz.possible_agents]))


def test_action_masks_allow_moves_that_change_the_cell_and_everything_on_masked_rows():
    for model in ("cardinal", "moore"):
        env = plume_multi.multi_agent_vector_env(16, 3, action_model=model, **CFG)
        env.reset(seed=2)
        rng = np.random.default_rng(1)
        w, h = CFG["grid_size"]
        moves = env.scenario.moves()
        checked_masked = 0
        for _ in range(30):
            _, _, _, _, info = env.step(rng.integers(0, len(moves), env.num_envs))
            pos = env.agent_positions
            nx = np.clip(pos[:, :1] + moves[:, 0], 0, w - 1)
            ny = np.clip(pos[:, 1:] + moves[:, 1], 0, h - 1)
            expected = (nx != pos[:, :1]) | (ny != pos[:, 1:])
            expected[~info["active"]] = True
            np.testing.assert_array_equal(info["action_mask"], expected)
            np.testing.assert_array_equal(env.action_masks(), expected)
            checked_masked += int((~info["active"]).sum())
        assert checked_masked > 0


def test_spaces_shapes_and_fresh_arrays():
    env = plume_multi.multi_agent_vector_env(4, 5, n_neighbours=2, grid_size=(9, 6))
    assert env.num_envs == 20 and env.num_worlds == 4 and env.n_agents == 5
    assert env.single_observation_space.shape == (7,)
    np.testing.assert_array_equal(env.single_observation_space.low, [0, 0, 0, -1, -1, -1, -1])
    assert env.observation_space.shape == (20, 7) and env.single_action_space.n == 4
    obs, info = env.reset(seed=0)
    assert obs.dtype == np.float32 and env.observation_space.contains(obs)
    first = env.step(np.zeros(20, np.int64))
    kept = [first[0].copy(), first[1].copy(), first[4]["active"].copy()]
    env.step(np.ones((4, 5), np.int64))  # (B, N) actions are accepted too
    np.testing.assert_array_equal(first[0], kept[0])
    np.testing.assert_array_equal(first[1], kept[1])
    np.testing.assert_array_equal(first[4]["active"], kept[2])
    assert not np.shares_memory(first[0], env.simulator.state.obs)


def test_row_outputs_kernel_matches_numpy():
    rng = np.random.default_rng(5)
    n_agents, worlds = 3, 40
    rows = n_agents * worlds
    for same_step in (False, True):
        live = rng.random(rows) < 0.7
        reward = rng.random(rows).astype(np.float32)
        term, trunc, active = (rng.random(rows) < 0.5 for _ in range(3))
        done = rng.random(worlds) < 0.3
        out = np.empty(rows, np.float32), np.empty(rows, bool), np.empty(rows, bool)
        got_live = live.copy()
        _row_outputs(got_live, reward, term, trunc, active, done, n_agents, same_step, *out)
        np.testing.assert_array_equal(out[0], np.where(live, reward, 0))
        np.testing.assert_array_equal(out[1], term & live)
        np.testing.assert_array_equal(out[2], trunc & live)
        np.testing.assert_array_equal(got_live, active & (same_step | ~np.repeat(done, n_agents)))


def test_disabled_mode_resets_chosen_worlds_only():
    env = plume_multi.multi_agent_vector_env(4, 2, autoreset_mode="disabled", **CFG)
    env.reset(seed=0)
    for _ in range(CFG["max_steps"]):
        env.step(np.zeros(8, np.int64))
    assert not env.active.any()  # every world truncated: all rows masked
    mask = np.array([False, True, False, True])
    before = env.agent_positions
    obs, info = env.reset(options={"reset_mask": mask})
    np.testing.assert_array_equal(info["active"], np.repeat(mask, 2))
    np.testing.assert_array_equal(env.agent_positions[~np.repeat(mask, 2)], before[~np.repeat(mask, 2)])


def test_render_gives_one_frame_per_world():
    env = plume_multi.multi_agent_vector_env(3, 2, render_mode="rgb_array", grid_size=(10, 6))
    with pytest.raises(StateError, match="reset"):
        env.render()
    env.reset(seed=0)
    frames = env.render()
    assert len(frames) == 3 and all(f.shape[2] == 3 and f.dtype == np.uint8 for f in frames)


@pytest.mark.parametrize("kwargs,name", [
    (dict(num_worlds=0), "num_worlds"), (dict(num_worlds=2.0), "num_worlds"), (dict(num_worlds=True), "num_worlds"),
    (dict(n_agents=0), "n_agents"), (dict(team="yes"), "team"), (dict(autoreset_mode="sometimes"), "autoreset_mode"),
    (dict(render_mode="human"), "render_mode"), (dict(grid_size=(0, 4)), "grid_size"),
    (dict(max_cycles=5), "unknown option"), (dict(n_neighbours=4), "n_neighbours"),
])
def test_invalid_arguments_raise_validation_error_naming_them(kwargs, name):
    kwargs = {"n_agents": 4, **kwargs}
    with pytest.raises(ValidationError, match=name) as err:
        plume_multi.multi_agent_vector_env(**kwargs)
    assert "expected" in str(err.value) and "got" in str(err.value)


def test_invalid_calls_raise_before_anything_changes():
    env = plume_multi.multi_agent_vector_env(2, 3, **CFG)
    with pytest.raises(StateError, match="reset"):
        env.step(np.zeros(6, np.int64))
    env.reset(seed=0)
    before = env.agent_positions
    bad = np.zeros(6, np.int64)
    bad[4] = 4  # a masked row's action is ignored but must still be valid
    for actions, match in ((bad, r"actions\[4\] = 4"), (np.zeros(5, np.int64), "shape"),
                           (np.zeros(6), "dtype")):
        with pytest.raises(ValidationError, match=match):
            env.step(actions)
    np.testing.assert_array_equal(env.agent_positions, before)
    for options, match in (({"reset_mask": np.ones(6, bool)}, r"shape \(6,\)"), ({"mask": 1}, "options"),
                           ({"reset_mask": np.zeros(2, bool)}, "no True")):
        with pytest.raises(ValidationError, match=match):
            env.reset(options=options)
    with pytest.raises(ValidationError, match="seed"):
        env.reset(seed=1.5)
    env.close()
    with pytest.raises(StateError, match="closed"):
        env.step(np.zeros(6, np.int64))


def test_is_a_vector_env_exported_lazily():
    assert plume_multi.multi_agent_vector_env is plume_multi.envs.multi_vector.multi_agent_vector_env
    env = plume_multi.multi_agent_vector_env(2, 2)
    assert isinstance(env, MultiAgentVectorEnv) and env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert env.scenario == Scenario(n_agents=2)


# ---------------------------------------------------------------------- Stable-Baselines3
def test_sb3_adapter_gives_each_finished_row_its_terminal_observation():
    from plume_multi.integrations.sb3 import SB3VecEnv

    envs = plume_multi.multi_agent_vector_env(8, 3, autoreset_mode=AutoresetMode.SAME_STEP, **CFG)
    ref = plume_multi.multi_agent_vector_env(8, 3, autoreset_mode=AutoresetMode.SAME_STEP, **CFG)
    venv = SB3VecEnv(envs)
    assert venv.num_envs == 24
    venv.seed(4)
    obs = venv.reset()
    np.testing.assert_array_equal(obs, ref.reset(seed=4)[0])
    rng = np.random.default_rng(2)
    dones_seen = 0
    for _ in range(40):
        actions = rng.integers(0, 4, 24)
        obs, rewards, dones, infos = venv.step(actions)
        r_obs, r_reward, r_term, r_trunc, r_info = ref.step(actions)
        np.testing.assert_array_equal(obs, r_obs)
        np.testing.assert_array_equal(rewards, r_reward)
        np.testing.assert_array_equal(dones, r_term | r_trunc)
        for i in np.flatnonzero(dones):
            np.testing.assert_array_equal(infos[i]["terminal_observation"], r_info["final_obs"][i])
            assert infos[i]["TimeLimit.truncated"] == (r_trunc[i] and not r_term[i])
        assert not any("terminal_observation" in infos[i] for i in np.flatnonzero(~dones))
        dones_seen += int(dones.sum())
    assert dones_seen > 10
    np.testing.assert_array_equal(venv.action_masks(), ref.action_masks())


def test_sb3_ppo_with_a_seed_trains_on_it():
    """``PPO(seed=0)``: what fails on SuperSuit's ConcatVecEnv (it has no ``seed``)."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecMonitor

    from plume_multi.integrations.sb3 import SB3VecEnv

    def run():
        venv = VecMonitor(SB3VecEnv(plume_multi.multi_agent_vector_env(
            4, 4, autoreset_mode=AutoresetMode.SAME_STEP, **CFG)))
        model = PPO("MlpPolicy", venv, seed=0, n_steps=16, batch_size=64, n_epochs=1, device="cpu")
        model.learn(2 * 16 * 16)  # two rollouts; CFG's episodes last at most 12 steps
        return model

    first, second = run(), run()
    assert first.num_timesteps == 512 and len(first.ep_info_buffer) > 0
    for a, b in zip(first.policy.parameters(), second.policy.parameters()):
        assert (a == b).all()  # seeded: the same training twice


def test_benchmark_runs_quick_and_prints_its_table(capsys):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "multiagent_vector.py"
    spec = importlib.util.spec_from_file_location("benchmark_multiagent_vector", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rows = bench.main(["--quick"])
    out = capsys.readouterr().out
    assert [r["rows"] for r in rows] == [16] * 6 and all(r["env_steps_per_s"] > 0 for r in rows)
    for label in ("Simulator.step (engine alone)", "multi_agent_vector_env.step", "SB3VecEnv(multi_agent_vector_env)",
                  "vector_env(16)", "SuperSuit VectorEnv", "SuperSuit SB3 VecEnv"):
        assert label in out
    assert "vs SuperSuit" in out and "8 worlds x 2 searchers = 16 rows" in out


def test_the_env_card_has_every_section_and_its_example_runs():
    import doctest

    import plume_multi.envs.multi_vector as module

    card = MultiAgentVectorEnv.__doc__
    for section in ("Description", "Action Space", "Observation Space", "Rewards", "Starting State",
                    "Episode End", "Finished agents: masked rows", "Autoreset", "Arguments", "Version History",
                    "Example"):
        assert f"## {section}" in card
    result = doctest.testmod(module)
    assert result.attempted >= 5 and result.failed == 0
