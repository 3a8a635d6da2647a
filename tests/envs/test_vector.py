"""The Gymnasium VectorEnv front-end: each autoreset mode against a plain loop of single worlds,
parity with Gymnasium's SyncVectorEnv of PlumeSearchEnv, action masks against real movement,
seeding, make_vec, Gymnasium's wrappers, and refused inputs."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.wrappers.vector import NormalizeObservation, RecordEpisodeStatistics
from hypothesis import given
from hypothesis import strategies as st

import plume_multi
from plume_multi import Scenario, Simulator, StateError, ValidationError
from plume_multi.envs._core import mask_table
from plume_multi.envs.vector import PlumeVectorEnv
from plume_multi.envs.components import CompactObservation

MODES = list(AutoresetMode)


class LoopOfWorlds:
    """The plain reference: one ``Simulator(num_worlds=1)`` per world, seeded ``s + i``, with the
    autoreset rules of each Gymnasium mode written out here in Python."""

    def __init__(self, num_envs, mode, **options):
        scenario = Scenario(**options)
        self.sims = [Simulator(scenario, 1, autoreset="disabled") for _ in range(num_envs)]
        self.mode = mode
        self.pending = [False] * num_envs
        self.length = [0] * num_envs

    def reset(self, seed):
        self.pending = [False] * len(self.sims)
        self.length = [0] * len(self.sims)
        return np.stack([sim.reset(seed=seed + i)[0].copy() for i, sim in enumerate(self.sims)])

    def step(self, actions):
        """Returns obs, reward, terminated, truncated and {world: (final obs, length)}."""
        rows, rewards, terms, truncs, finals = [], [], [], [], {}
        for i, sim in enumerate(self.sims):
            if self.mode is AutoresetMode.NEXT_STEP and self.pending[i]:
                obs, reward, term, trunc = sim.reset()[0].copy(), 0.0, False, False
                self.pending[i] = False
                self.length[i] = 0
            else:
                o, r, te, tr = sim.step(np.array([actions[i]]))
                obs, reward, term, trunc = o[0].copy(), float(r[0]), bool(te[0]), bool(tr[0])
                self.length[i] += 1
                if term or trunc:
                    if self.mode is AutoresetMode.NEXT_STEP:
                        self.pending[i] = True
                    elif self.mode is AutoresetMode.SAME_STEP:
                        finals[i] = (obs, self.length[i])
                        obs = sim.reset()[0].copy()
                        self.length[i] = 0
            rows.append(obs)
            rewards.append(reward)
            terms.append(term)
            truncs.append(trunc)
        return np.stack(rows), np.array(rewards), np.array(terms), np.array(truncs), finals


@st.composite
def setups(draw):
    w, h = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    return dict(
        num_envs=draw(st.integers(1, 6)),
        grid_size=(w, h),
        source_location=(draw(st.integers(0, w - 1)), draw(st.integers(0, h - 1))),
        goal_radius=draw(st.sampled_from([1e-45, 1.0, 1.5])),
        max_steps=draw(st.integers(1, 7)),
        seed=draw(st.integers(0, 2**31 - 10)),
        actions_seed=draw(st.integers(0, 2**32 - 1)),
    )


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
@given(setup=setups())
def test_each_mode_matches_a_plain_loop_of_single_worlds(mode, setup):
    B, seed = setup.pop("num_envs"), setup.pop("seed")
    rng = np.random.default_rng(setup.pop("actions_seed"))
    env = plume_multi.vector_env(B, autoreset_mode=mode, **setup)
    ref = LoopOfWorlds(B, mode, **setup)
    obs, info = env.reset(seed=seed)
    np.testing.assert_array_equal(obs, ref.reset(seed))
    for _ in range(20):
        actions = rng.integers(0, 4, B)
        obs, reward, term, trunc, info = env.step(actions)
        r_obs, r_reward, r_term, r_trunc, r_finals = ref.step(actions)
        np.testing.assert_array_equal(obs, r_obs)
        np.testing.assert_array_equal(reward, r_reward)
        np.testing.assert_array_equal(term, r_term)
        np.testing.assert_array_equal(trunc, r_trunc)
        if mode is AutoresetMode.SAME_STEP:
            ended = sorted(r_finals)
            if ended:
                assert np.flatnonzero(info["_final_obs"]).tolist() == ended
                assert np.flatnonzero(info["_final_info"]).tolist() == ended
                for i in ended:
                    np.testing.assert_array_equal(info["final_obs"][i], r_finals[i][0])
                    assert info["final_info"]["episode_length"][i] == r_finals[i][1]
                    assert info["final_info"]["goal_reached"][i] == r_term[i]
            else:
                assert "final_obs" not in info and "final_info" not in info
        else:
            assert "final_obs" not in info


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
def test_first_episodes_match_gymnasiums_sync_vector_env_of_plume_search_env(mode):
    """Before any world's first episode ends both are seeded alike; afterwards PlumeSearchEnv
    draws fresh seeds, so only worlds still in (or just ending) their first episode are compared."""
    B, options = 16, dict(grid_size=(7, 5), source_location=(3, 2), max_steps=12, goal_radius=1.0)
    ours = plume_multi.vector_env(B, autoreset_mode=mode, **options)
    theirs = SyncVectorEnv(
        [lambda: plume_multi.PlumeSearchEnv(observation_model=CompactObservation(), **options) for _ in range(B)],
        autoreset_mode=mode,
    )
    rng = np.random.default_rng(1)
    o1, _ = ours.reset(seed=100)
    o2, _ = theirs.reset(seed=100)
    np.testing.assert_array_equal(o1, o2)
    first = np.ones(B, dtype=bool)
    compared_endings = 0
    for _ in range(12):
        actions = rng.integers(0, 4, B)
        o1, r1, te1, tr1, i1 = ours.step(actions)
        o2, r2, te2, tr2, i2 = theirs.step(actions)
        ended = te2 | tr2
        for a, b in ((r1, r2), (te1, te2), (tr1, tr2)):
            np.testing.assert_array_equal(a[first], b[first])
        same_obs = first & ~ended if mode is AutoresetMode.SAME_STEP else first
        np.testing.assert_array_equal(o1[same_obs], o2[same_obs])
        if mode is AutoresetMode.SAME_STEP and (first & ended).any():
            for i in np.flatnonzero(first & ended):
                np.testing.assert_array_equal(i1["final_obs"][i], i2["final_obs"][i])
                compared_endings += 1
        first &= ~ended
        if mode is AutoresetMode.DISABLED and ended.any():  # Gymnasium refuses to step them on
            ours.reset(options={"reset_mask": ended.copy()})
            theirs.reset(options={"reset_mask": ended.copy()})
    if mode is AutoresetMode.SAME_STEP:
        assert compared_endings > 0


def _moved_by_each_action(env):
    """``(B, K)`` bool from the engine itself: which actions change each world's cell now."""
    sim = env.simulator
    snap = sim.snapshot()
    before = sim.positions.copy()
    moved = np.zeros((env.num_envs, env.single_action_space.n), dtype=bool)
    w, h = env.scenario.grid_size
    for k in range(env.single_action_space.n):
        sim.step(np.full(env.num_envs, k, dtype=np.int64))
        after = sim.positions.copy()
        if sim.autoreset == "same_step":  # a world that ended was reset at once: use its last cell
            ended = sim.final_mask
            after[ended] = np.rint(sim.final_obs[ended][:, 1:3] * np.array([w - 1, h - 1]))
        moved[:, k] = (after != before).any(axis=1)
        sim.restore(snap)
    return moved


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
@pytest.mark.parametrize("action_model", ["cardinal", "moore"])
@pytest.mark.parametrize("grid_size", [(1, 1), (1, 5), (6, 1), (2, 2), (7, 4)])
def test_masks_allow_exactly_the_moves_that_change_the_cell(mode, action_model, grid_size):
    env = plume_multi.vector_env(24, autoreset_mode=mode, grid_size=grid_size, max_steps=5,
                                 action_model=action_model, goal_radius=1.0)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=3)
    checked_done = 0
    for _ in range(15):
        masks = env.action_masks()
        np.testing.assert_array_equal(masks, info["action_mask"])
        assert info["_action_mask"].all()
        moved = _moved_by_each_action(env)
        ended = env.simulator.state.world_done.copy() if mode is not AutoresetMode.SAME_STEP else np.zeros(24, bool)
        nothing_moves = ~moved.any(axis=1)
        expected = moved.copy()
        expected[ended | nothing_moves] = True
        np.testing.assert_array_equal(masks, expected)
        checked_done += int(ended.sum())
        if mode is AutoresetMode.DISABLED and ended.any():
            env.reset(options={"reset_mask": ended})
            info = {"action_mask": env.action_masks(), "_action_mask": np.ones(24, bool)}
            continue
        obs, _, _, _, info = env.step(rng.integers(0, env.single_action_space.n, 24))
    if grid_size != (1, 1) and mode is not AutoresetMode.SAME_STEP:
        assert checked_done > 0  # the "ended world allows everything" rule was exercised


def test_mask_table_of_the_cardinal_model_in_the_open_and_at_walls():
    table = mask_table(Scenario(grid_size=(5, 5)).moves(), (5, 5))
    assert table[0].tolist() == [True, True, True, True]  # inside
    assert table[1 | 4].tolist() == [True, True, False, False]  # corner (0, 0): only UP and RIGHT
    assert table[2 | 8].tolist() == [False, False, True, True]  # corner (4, 4)
    assert table[16 | 1 | 4].all()  # a free row (its world ended)
    moore = mask_table(Scenario(grid_size=(5, 5), action_model="moore").moves(), (5, 5))
    assert not moore[0, 8] and moore[0, :8].all()  # "stay" never moves
    assert moore[16].all()


@given(seed=st.integers(0, 2**31 - 64), num_envs=st.integers(1, 40))
def test_world_i_starts_where_a_single_world_seeded_s_plus_i_starts(seed, num_envs):
    env = plume_multi.vector_env(num_envs, grid_size=(13, 9))
    env.reset(seed=seed)
    for i in (0, num_envs // 2, num_envs - 1):
        rng = np.random.default_rng(seed + i)
        x = rng.integers(0, 13)
        y = rng.integers(0, 9)
        assert tuple(env.agent_positions[i]) == (x, y)


def test_same_seed_same_trajectory_and_unseeded_reset_continues_the_streams():
    def run(env, seed):
        rng = np.random.default_rng(7)
        out = [env.reset(seed=seed)[0]]
        for _ in range(30):
            out.append(env.step(rng.integers(0, 4, 8))[0])
        out.append(env.reset()[0])  # next episode of every world, from its own stream
        return np.stack(out)

    a = run(plume_multi.vector_env(8, grid_size=(9, 7), max_steps=6), 5)
    b = run(plume_multi.vector_env(8, grid_size=(9, 7), max_steps=6), 5)
    c = run(plume_multi.vector_env(8, grid_size=(9, 7), max_steps=6), 6)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    env = plume_multi.vector_env(8)
    env.reset(seed=5)
    assert env.np_random_seed == 5


def test_make_vec_returns_the_native_env_with_its_options():
    env = gym.make_vec("PlumeSearch-v0", num_envs=5, vectorization_mode="vector_entry_point",
                       grid_size=(11, 6), max_steps=9, plume_params={"sigma": 3.0})
    assert isinstance(env, PlumeVectorEnv)
    assert env.num_envs == 5 and env.scenario.grid_size == (11, 6) and env.scenario.max_steps == 9
    assert env.scenario.sigma == 3.0
    assert env.spec.id == "PlumeSearch-v0"
    assert env.obs_type == "dict"  # PlumeSearch-v0 is the contract's Dict in every mode
    assert env.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    same = gym.make_vec("PlumeSearch-v0", num_envs=3, vectorization_mode="vector_entry_point",
                        autoreset_mode=AutoresetMode.SAME_STEP)
    assert same.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP


def test_spaces_single_and_batched():
    env = plume_multi.vector_env(6, grid_size=(10, 4))
    assert env.single_action_space == gym.spaces.Discrete(4)
    assert env.action_space == gym.spaces.MultiDiscrete([4] * 6)
    assert env.single_observation_space.shape == (3,) and env.observation_space.shape == (6, 3)
    obs, _ = env.reset(seed=0)
    assert obs.dtype == np.float32 and env.observation_space.contains(obs)
    d = plume_multi.vector_env(6, grid_size=(10, 4), obs_type="dict")
    assert d.single_observation_space["concentration_field"].shape == (4, 10)
    assert d.observation_space["agent_position"].shape == (6, 2)
    moore = plume_multi.vector_env(2, action_model="moore")
    assert moore.single_action_space == gym.spaces.Discrete(9)


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP], ids=lambda m: m.name)
def test_dict_observation_is_the_contracts(mode):
    env = plume_multi.vector_env(5, autoreset_mode=mode, obs_type="dict", grid_size=(8, 6), max_steps=4)
    compact = plume_multi.vector_env(5, autoreset_mode=mode, grid_size=(8, 6), max_steps=4)
    obs, _ = env.reset(seed=2)
    compact.reset(seed=2)
    field = env.simulator.field
    rng = np.random.default_rng(0)
    saw_final = False
    for _ in range(10):
        assert env.observation_space.contains(obs)
        np.testing.assert_array_equal(obs["agent_position"], env.agent_positions)
        np.testing.assert_array_equal(obs["concentration_field"], np.broadcast_to(field, (5, 6, 8)))
        np.testing.assert_array_equal(obs["source_location"], np.tile([4, 3], (5, 1)))
        actions = rng.integers(0, 4, 5)
        obs, r, te, tr, info = env.step(actions)
        _, _, _, _, cinfo = compact.step(actions)
        if "final_obs" in info:
            saw_final = True
            ended = info["_final_obs"]
            cells = cinfo["final_obs"][ended][:, 1:] * np.array([7, 5])
            np.testing.assert_array_equal(info["final_obs"]["agent_position"][ended], np.rint(cells).astype(np.int32))
            np.testing.assert_array_equal(info["final_obs"]["concentration_field"][ended][0], field)
    assert saw_final == (mode is AutoresetMode.SAME_STEP)


def test_returned_arrays_are_fresh_and_positions_are_a_copy():
    env = plume_multi.vector_env(4, grid_size=(6, 6), max_steps=3, autoreset_mode=AutoresetMode.SAME_STEP)
    obs0, info0 = env.reset(seed=0)
    out1 = env.step(np.zeros(4, dtype=np.int64))
    out2 = env.step(np.ones(4, dtype=np.int64))
    for a, b in zip((obs0, *out1[:4], info0["action_mask"]), (out1[0], *out2[:4], out1[4]["action_mask"])):
        assert not np.shares_memory(a, b)
    positions = env.agent_positions
    positions[:] = -1
    assert (env.agent_positions >= 0).all()
    kept = out2[0].copy()
    out2[0][:] = 9.0  # writing into a returned array changes nothing inside
    np.testing.assert_array_equal(env.simulator.state.obs, kept)


@pytest.mark.parametrize("bad", [
    np.array([0, 1, 4, 0]), np.array([0, -1, 0, 0]), np.array([0.0, 1.0, 2.0, 3.0]),
    np.array([0, 1, 2]), np.array([[0, 1], [2, 3]]), np.array([True, False, True, False]), "up",
])
def test_bad_actions_are_refused_before_any_world_changes(bad):
    env = plume_multi.vector_env(4, grid_size=(9, 9), max_steps=50)
    env.reset(seed=1)
    env.step(np.array([0, 1, 2, 3]))
    snap = env.simulator.snapshot()
    with pytest.raises(ValidationError, match="actions"):
        env.step(bad)
    after = env.simulator.snapshot()
    for key, value in snap.items():
        np.testing.assert_array_equal(after[key], value, err_msg=key)


def test_disabled_mode_resets_only_the_masked_worlds():
    env = plume_multi.vector_env(6, autoreset_mode=AutoresetMode.DISABLED, grid_size=(5, 5), max_steps=3)
    env.reset(seed=10)
    for _ in range(3):
        _, _, term, trunc, _ = env.step(np.zeros(6, dtype=np.int64))
    assert trunc.all()
    before = env.agent_positions
    mask = np.array([True, False, True, False, False, False])
    obs, info = env.reset(options={"reset_mask": mask})
    assert obs.shape == (6, 3) and info["action_mask"].shape == (6, 4)
    np.testing.assert_array_equal(env.agent_positions[~mask], before[~mask])
    np.testing.assert_array_equal(env.simulator.world_steps, np.where(mask, 0, 3))
    # stepping on: only the reset worlds still count their steps within max_steps
    _, _, _, trunc, _ = env.step(np.zeros(6, dtype=np.int64))
    np.testing.assert_array_equal(trunc, ~mask)
    # a seeded partial reset gives masked world i the seed s + i
    env.reset(seed=40, options={"reset_mask": mask})
    rng = np.random.default_rng(42)
    assert tuple(env.agent_positions[2]) == (rng.integers(0, 5), rng.integers(0, 5))


@pytest.mark.parametrize("options, match", [
    ({"reset_mask": np.zeros(3, dtype=bool)}, "at least one True"),
    ({"reset_mask": np.ones(4, dtype=bool)}, r"shape \(4,\)"),
    ({"reset_mask": np.ones(3, dtype=int)}, "dtype int"),
    ({"reset_mask": [True, True, True]}, "list"),
    ({"shuffle": True}, "options"),
])
def test_bad_reset_options_are_refused(options, match):
    env = plume_multi.vector_env(3)
    env.reset(seed=0)
    with pytest.raises(ValidationError, match=match):
        env.reset(options=options)


@pytest.mark.parametrize("kwargs, match", [
    (dict(num_envs=0), "num_envs"),
    (dict(num_envs=2, obs_type="pixels"), "obs_type"),
    (dict(num_envs=2, autoreset_mode="sometimes"), "autoreset_mode"),
    (dict(num_envs=2, n_agents=3), "n_agents"),
    (dict(num_envs=2, colour="red"), "unknown option"),
    (dict(num_envs=2, grid_size=(0, 4)), "grid_size"),
    (dict(num_envs=2, render_mode="human"), "render_mode"),
    (dict(num_envs=2, plume_params={"sigma": 1.0, "wind": 2}), "plume_params"),
])
def test_bad_options_are_refused(kwargs, match):
    with pytest.raises(ValidationError, match=match):
        plume_multi.vector_env(**kwargs)


def test_bad_seeds_and_calls_out_of_order():
    env = plume_multi.vector_env(3)
    with pytest.raises(StateError, match="reset"):
        env.step(np.zeros(3, dtype=np.int64))
    for seed in (-1, 1.5, "1", True, [1, 2, 3]):
        with pytest.raises(ValidationError, match="seed"):
            env.reset(seed=seed)
    env.reset(seed=0)
    env.close()
    with pytest.raises(StateError, match="closed"):
        env.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(StateError, match="closed"):
        env.reset()


def test_autoreset_mode_strings_are_accepted():
    assert plume_multi.vector_env(2, autoreset_mode="SameStep").metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert plume_multi.vector_env(2, autoreset_mode="disabled").metadata["autoreset_mode"] is AutoresetMode.DISABLED


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP], ids=lambda m: m.name)
def test_record_episode_statistics_counts_the_episodes_the_env_plays(mode):
    B, max_steps = 12, 6
    env = RecordEpisodeStatistics(plume_multi.vector_env(B, autoreset_mode=mode, grid_size=(5, 4),
                                                         max_steps=max_steps, goal_radius=1.0))
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    length = np.zeros(B, dtype=int)
    ret = np.zeros(B)
    pending = np.zeros(B, dtype=bool)
    episodes = []
    for _ in range(40):
        _, reward, term, trunc, info = env.step(rng.integers(0, 4, B))
        if mode is AutoresetMode.NEXT_STEP:
            length[pending] = 0
            ret[pending] = 0
            length[~pending] += 1
            ret[~pending] += reward[~pending]
        else:
            length += 1
            ret += reward
        done = term | trunc
        if done.any():
            np.testing.assert_array_equal(info["_episode"], done)
            np.testing.assert_array_equal(info["episode"]["l"][done], length[done])
            np.testing.assert_array_equal(info["episode"]["r"][done], ret[done])
            episodes += length[done].tolist()
            if mode is AutoresetMode.SAME_STEP:
                length[done] = 0
                ret[done] = 0
        pending = done
    assert len(episodes) == env.episode_count > B
    assert max(episodes) == max_steps


def test_normalize_observation_wraps_the_next_step_env():
    env = NormalizeObservation(plume_multi.vector_env(64, grid_size=(16, 16), max_steps=20))
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(50):
        obs, *_ = env.step(rng.integers(0, 4, 64))
    assert obs.shape == (64, 3) and np.isfinite(obs).all()
    assert abs(float(obs[:, 1].mean())) < 1.0 and 0.3 < float(obs[:, 1].std()) < 3.0
    assert env.obs_rms.count > 64 * 50


def test_render_gives_one_frame_per_world():
    env = plume_multi.vector_env(3, grid_size=(12, 7), render_mode="rgb_array")
    with pytest.raises(StateError, match="reset"):
        env.render()
    env.reset(seed=0)
    frames = env.render()
    assert len(frames) == 3 and all(f.shape[2] == 3 and f.dtype == np.uint8 for f in frames)
    assert not np.array_equal(frames[0], frames[1]) or tuple(env.agent_positions[0]) == tuple(env.agent_positions[1])
    with pytest.raises(StateError, match="render_mode"):
        plume_multi.vector_env(2).render()


def test_benchmark_runs_quick_and_prints_its_table(capsys):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "vector.py"
    spec = importlib.util.spec_from_file_location("benchmark_vector", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rows = bench.measure(quick=True)
    assert [r["num_envs"] for r in rows] == [4096, 4096, 16, 16]
    assert all(r["env_steps_per_s"] > 0 for r in rows)
    assert [r["target_env_steps_per_s"] is not None for r in rows] == [False, True, False, False]
    bench.main(["--quick"])
    out = capsys.readouterr().out
    assert "vector_env(4096).step" in out and "SyncVectorEnv of 16 PlumeSearchEnv" in out
