"""SB3VecEnv: Stable-Baselines3's VecEnv interface over the native vector env, checked against
SB3's own DummyVecEnv of PlumeSearchEnv, through SB3's VecEnv wrappers, and by training."""

import warnings

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers.vector import RecordEpisodeStatistics
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import DummyVecEnv, VecCheckNan, VecEnv, VecMonitor, VecNormalize

import plume_multi
from plume_multi import StateError, ValidationError
from plume_multi.integrations.sb3 import SB3VecEnv
from plume_multi.envs.components import CompactObservation

OPTIONS = dict(grid_size=(7, 5), source_location=(3, 2), max_steps=8, goal_radius=1.0)


def make(num_envs=6, **options):
    return SB3VecEnv(plume_multi.vector_env(num_envs, autoreset_mode=AutoresetMode.SAME_STEP, **{**OPTIONS, **options}))


def test_it_is_an_sb3_vec_env_with_single_world_spaces():
    venv = make(6)
    assert isinstance(venv, VecEnv) and venv.num_envs == 6
    assert venv.observation_space.shape == (3,) and venv.action_space.n == 4
    assert venv.render_mode is None
    obs = venv.reset()
    assert obs.shape == (6, 3) and obs.dtype == np.float32
    obs, rewards, dones, infos = venv.step(np.zeros(6, dtype=np.int64))
    assert rewards.shape == (6,) and rewards.dtype == np.float32
    assert dones.shape == (6,) and dones.dtype == np.bool_
    assert isinstance(infos, list) and len(infos) == 6 and all("TimeLimit.truncated" in i for i in infos)


def test_first_episodes_match_sb3s_dummy_vec_env_of_plume_search_env():
    """DummyVecEnv seeds env i with s + i and resets within the step, as SB3VecEnv does. After a
    world's first episode PlumeSearchEnv draws a fresh seed, so comparisons stop there."""
    B = 12
    ours = make(B)
    theirs = DummyVecEnv([lambda: plume_multi.PlumeSearchEnv(observation_model=CompactObservation(), **OPTIONS)
                          for _ in range(B)])
    ours.seed(21)
    theirs.seed(21)
    np.testing.assert_array_equal(ours.reset(), theirs.reset())
    rng = np.random.default_rng(0)
    first = np.ones(B, dtype=bool)
    endings = {"terminated": 0, "truncated": 0}
    for _ in range(10):
        actions = rng.integers(0, 4, B)
        o1, r1, d1, i1 = ours.step(actions)
        o2, r2, d2, i2 = theirs.step(actions)
        np.testing.assert_array_equal(r1[first], r2[first])
        np.testing.assert_array_equal(d1[first], d2[first])
        np.testing.assert_array_equal(o1[first & ~d2], o2[first & ~d2])
        for i in np.flatnonzero(first & d2):
            np.testing.assert_array_equal(i1[i]["terminal_observation"], i2[i]["terminal_observation"])
            assert i1[i]["TimeLimit.truncated"] == i2[i]["TimeLimit.truncated"]
            endings["truncated" if i2[i]["TimeLimit.truncated"] else "terminated"] += 1
        for i in np.flatnonzero(~d1):
            assert "terminal_observation" not in i1[i] and i1[i]["TimeLimit.truncated"] is False
        first &= ~d2
    assert endings["terminated"] > 0 and endings["truncated"] > 0


def test_terminal_observation_is_the_vector_envs_final_obs_and_obs_is_the_next_episode():
    venv = make(8)
    ref = plume_multi.vector_env(8, autoreset_mode=AutoresetMode.SAME_STEP, **OPTIONS)
    venv.seed(3)
    np.testing.assert_array_equal(venv.reset(), ref.reset(seed=3)[0])
    rng = np.random.default_rng(1)
    seen = 0
    for _ in range(20):
        a = rng.integers(0, 4, 8)
        obs, rewards, dones, infos = venv.step(a)
        r_obs, r_rew, r_term, r_trunc, r_info = ref.step(a)
        np.testing.assert_array_equal(obs, r_obs)
        np.testing.assert_array_equal(dones, r_term | r_trunc)
        for i in np.flatnonzero(dones):
            np.testing.assert_array_equal(infos[i]["terminal_observation"], r_info["final_obs"][i])
            assert infos[i]["TimeLimit.truncated"] == bool(r_trunc[i] and not r_term[i])
            seen += 1
    assert seen > 0


def test_seed_applies_to_the_next_reset_only():
    venv = make(4)
    assert venv.seed(50) == [50, 51, 52, 53]
    a = venv.reset()
    b = venv.reset()  # no seed: every world continues its own stream
    venv.seed(50)
    np.testing.assert_array_equal(venv.reset(), a)
    assert not np.array_equal(a, b)
    with pytest.raises(ValidationError, match="seed"):
        venv.seed(1.5)


def test_dict_observations_and_their_terminal_observation():
    venv = SB3VecEnv(plume_multi.vector_env(3, autoreset_mode=AutoresetMode.SAME_STEP, obs_type="dict",
                                            grid_size=(5, 4), max_steps=2))
    venv.seed(0)  # seeded: unseeded starts next to the source would end (and restart) an episode early
    obs = venv.reset()
    assert set(obs) == {"agent_position", "concentration_field", "source_location"}
    _, _, dones, _ = venv.step(np.zeros(3, dtype=np.int64))
    assert not dones.any()
    _, _, dones, infos = venv.step(np.zeros(3, dtype=np.int64))
    assert dones.all()
    term = infos[0]["terminal_observation"]
    assert term["agent_position"].shape == (2,) and term["concentration_field"].shape == (4, 5)


def test_attributes_methods_and_masks():
    venv = make(5)
    venv.reset()
    assert venv.get_attr("num_envs") == [5] * 5
    assert venv.get_attr("num_envs", indices=[1, 3]) == [5, 5]
    positions = venv.get_attr("agent_positions", indices=2)
    assert len(positions) == 1 and positions[0].shape == (2,)
    assert venv.has_attr("action_masks") and not venv.has_attr("no_such_thing")
    masks = venv.env_method("action_masks")
    assert len(masks) == 5 and masks[0].shape == (4,)
    np.testing.assert_array_equal(np.stack(masks), venv.action_masks())
    assert is_masking_supported(venv) and is_masking_supported(VecMonitor(venv))
    np.testing.assert_array_equal(get_action_masks(VecMonitor(venv)), venv.action_masks())
    assert venv.env_is_wrapped(object) == [False] * 5
    venv.set_attr("custom_note", "x")
    assert venv.get_attr("custom_note") == ["x"] * 5
    with pytest.raises(ValidationError, match="indices"):
        venv.set_attr("custom_note", "y", indices=[0])
    venv.close()


def test_refuses_wrapped_envs_that_do_not_reset_on_the_same_step():
    # wrappers keep the mode they were made with, so a wrapped env cannot be switched
    with pytest.raises(ValidationError, match="SAME_STEP"):
        SB3VecEnv(RecordEpisodeStatistics(plume_multi.vector_env(2)))
    with pytest.raises(ValidationError, match="VectorEnv"):
        SB3VecEnv(object())
    venv = make(2)
    with pytest.raises(StateError, match="step_async"):
        venv.step_wait()


def test_works_through_gymnasium_and_sb3_wrappers():
    inner = RecordEpisodeStatistics(plume_multi.vector_env(16, autoreset_mode=AutoresetMode.SAME_STEP, **OPTIONS))
    venv = VecNormalize(VecCheckNan(VecMonitor(SB3VecEnv(inner)), raise_exception=True), gamma=0.9)
    venv.seed(0)
    venv.reset()
    rng = np.random.default_rng(0)
    episodes = 0
    for _ in range(30):
        _, _, dones, infos = venv.step(rng.integers(0, 4, 16))
        for i in np.flatnonzero(dones):
            assert infos[i]["episode"]["l"] <= OPTIONS["max_steps"]
            assert np.isfinite(infos[i]["terminal_observation"]).all()
            episodes += 1
    assert episodes > 16 and inner.episode_count == episodes
    assert venv.action_masks is not None and get_action_masks(venv).shape == (16, 4)


@pytest.mark.parametrize("algo", [PPO, MaskablePPO])
def test_ppo_and_maskable_ppo_train_without_warnings(algo):
    venv = VecMonitor(make(8))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = algo("MlpPolicy", venv, seed=0, n_steps=16, batch_size=64, n_epochs=2, device="cpu")
        model.learn(256)
    obs = venv.reset()
    kwargs = {"action_masks": get_action_masks(venv)} if algo is MaskablePPO else {}
    actions, _ = model.predict(obs, deterministic=True, **kwargs)
    assert actions.shape == (8,) and ((0 <= actions) & (actions < 4)).all()
    assert model.num_timesteps == 256


def test_seeded_training_is_reproducible():
    def train():
        model = PPO("MlpPolicy", make(4), seed=3, n_steps=8, batch_size=16, n_epochs=1, device="cpu")
        model.learn(64)
        return model.policy.state_dict()

    a, b = train(), train()
    for key in a:
        assert np.array_equal(a[key].numpy(), b[key].numpy()), key


def test_make_vec_env_without_a_seed_works_every_time():
    """SB3's own first call: ``make_vec_env(id, n_envs=2)`` with no seed draws a base seed in
    ``[0, 2**32)``; the single env folds the seeds of 2**31 and more into its range."""
    from stable_baselines3.common.env_util import make_vec_env

    for _ in range(12):  # a drawn base of 2**31 or more (one run in two) was refused
        venv = make_vec_env("plume_multi:PlumeSearchCompact-v0", n_envs=2, env_kwargs=dict(OPTIONS))
        obs = venv.reset()
        assert obs.shape == (2, 3)
        venv.step(np.zeros(2, dtype=np.int64))
        venv.close()


@pytest.mark.parametrize("base", [2**31 - 1, 2**31, 2**32 - 1, 2**40 + 3])
def test_make_vec_env_with_large_seeds_replays_the_folded_seeds(base):
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env("plume_multi:PlumeSearchCompact-v0", n_envs=2, seed=base, env_kwargs=dict(OPTIONS))
    obs = venv.reset()
    for i in range(2):
        seed = (base + i) % 2**31  # the contract's range is [0, 2**31)
        ref, info = plume_multi.envs.single.compact_env(**OPTIONS).reset(seed=seed)
        np.testing.assert_array_equal(obs[i], ref)
        assert venv.reset_infos[i]["seed"] == seed
