"""A policy file's content is checked whole before use (issue 32, item 7): a crafted file gave
``KeyError: 'sizes'`` (also through ``plume-multi eval --policy``). Every entry missing, of the
wrong type or out of range, every weight of the wrong name, shape, dtype or not finite is our
``ValidationError`` naming the file and the entry; an untouched file loads and acts as saved."""

import copy
import json
import math

import numpy as np
import pytest
import torch

from plume_multi import Scenario
from plume_multi.cli import main
from plume_multi.errors import ValidationError
from plume_multi.training import PPOConfig, LearnedPolicy, load_policy
from plume_multi.training.networks import NETWORKS

SCENARIO = Scenario(grid_size=(7, 5), sigma=2.0, max_steps=8)
CONFIG = PPOConfig(num_worlds=8, hidden=8, layers=1)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A saved (untrained) MLP policy: its path and its record."""
    torch.manual_seed(0)
    low, high = SCENARIO.observation_bounds()
    network = NETWORKS["mlp"](low, high, SCENARIO.n_actions, 0, CONFIG.hidden, CONFIG.layers)
    policy = LearnedPolicy(network, "ppo-mlp", SCENARIO, CONFIG, training={"seed": 1})
    path = policy.save(tmp_path_factory.mktemp("policy") / "p.pt")
    return path, torch.load(path, weights_only=True), policy


def test_an_untouched_file_loads_and_acts_as_saved(saved):
    path, _, policy = saved
    loaded = load_policy(path)
    obs = np.random.default_rng(0).random((20, SCENARIO.obs_dim), dtype=np.float32)
    np.testing.assert_array_equal(loaded(obs), policy(obs))
    assert loaded.config == CONFIG and loaded.training == {"seed": 1}
    assert all(t.device.type == "cpu" for t in loaded.network.state_dict().values())


def _edits(record):
    """``(label, edited record, what the message must say)``."""
    out = []

    def edit(label, change, match):
        bad = copy.deepcopy(record)
        change(bad)
        out.append((label, bad, match))

    for key in ("sizes", "state_dict", "scenario", "config", "training", "policy"):
        edit(f"no {key}", lambda r, k=key: r.pop(k), rf"entries: got missing \['{key}'\]")
    edit("extra", lambda r: r.update(extra=1), r"entries: got unknown \['extra'\]")
    edit("policy", lambda r: r.update(policy="ppo-lstm"), r"policy: got 'ppo-lstm' \(str\); expected one of")
    edit("sizes list", lambda r: r.update(sizes=[1, 2]), r"sizes: got \[1, 2\]; expected a dict")
    edit("sizes key", lambda r: r["sizes"].pop("hidden"), r"sizes: got .*; expected a dict of the integers")
    edit("hidden float", lambda r: r["sizes"].update(hidden=8.0), r"sizes\.hidden: got 8\.0 \(float\)")
    edit("hidden huge", lambda r: r["sizes"].update(hidden=10**9), r"sizes\.hidden: got 1000000000 \(int\); expected "
                                                                   r"an integer in 1\.\.4096")
    edit("obs_dim 0", lambda r: r["sizes"].update(obs_dim=0), r"sizes\.obs_dim: got 0")
    edit("both actions", lambda r: r["sizes"].update(action_dim=2), r"sizes: got .*; expected n_actions > 0")
    edit("obs_dim", lambda r: r["sizes"].update(obs_dim=4), r"scenario\.observation_layout: got .*; expected a list "
                                                           r"of 4 column names")
    edit("scenario text", lambda r: r.update(scenario="{"), r"scenario: got text that is not JSON")
    edit("scenario list", lambda r: r.update(scenario="[]"), r"scenario: got JSON of a list; expected a JSON object")
    edit("scenario bytes", lambda r: r.update(scenario=b"{}"), r"scenario: got b'\{\}' \(bytes\); expected a JSON text")
    edit("box", lambda r: r.update(scenario=json.dumps({**json.loads(r["scenario"]), "action_low": [0.0]})),
         r"scenario\.action_low: got \[0\.0\]; expected null for a policy of discrete actions")
    edit("config", lambda r: r["config"].update(hidden=-1), r"config: got .*; expected PPOConfig settings "
                                                           r"\(PPOConfig\.hidden: got -1")
    edit("config key", lambda r: r["config"].update(bogus=1), r"config: got .*PPOConfig\.bogus: got an unknown")
    edit("training", lambda r: r.update(training="null"), r"training: got JSON of a NoneType")
    edit("weights", lambda r: r["state_dict"].pop("obs_shift"), r"state_dict: got .*; expected the weights")
    edit("weights dict", lambda r: r.update(state_dict=[1]), r"state_dict: got \[1\] \(list\); expected the weights")
    first = next(k for k in record["state_dict"] if k.endswith("weight"))
    edit("shape", lambda r: r["state_dict"].update({first: torch.zeros(3, 3)}),
         rf"state_dict\['{first}'\]: got \(3, 3\) torch\.float32; expected a \(8, 3\) torch\.float32 tensor")
    edit("dtype", lambda r: r["state_dict"].update({first: r["state_dict"][first].double()}),
         rf"state_dict\['{first}'\]: got \(8, 3\) torch\.float64")
    edit("list", lambda r: r["state_dict"].update({first: r["state_dict"][first].tolist()}),
         rf"state_dict\['{first}'\]: got \[\[.*\(list\)")
    edit("nan", lambda r: r["state_dict"][first].__setitem__((0, 0), math.nan), rf"state_dict\['{first}'\]: got a "
                                                                               r"tensor with NaN")
    return out


def test_every_crafted_entry_is_refused_naming_the_file_and_the_entry(saved, tmp_path):
    _, record, _ = saved
    for label, bad, match in _edits(record):
        path = tmp_path / "crafted.pt"
        torch.save(bad, path)
        with pytest.raises(ValidationError, match=rf"load_policy: '{path}': {match}"):
            load_policy(path)


def test_a_crafted_file_is_refused_in_one_line_by_eval_and_a_fifo_is_never_opened(saved, tmp_path, capsys):
    _, record, _ = saved
    bad = copy.deepcopy(record)
    del bad["sizes"]
    path = tmp_path / "crafted.pt"
    torch.save(bad, path)
    code = main(["eval", "--grid", "7", "5", "--sigma", "2", "--policy", str(path), "--episodes", "2", "--no-plot",
                 "--out", str(tmp_path / "eval"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "entries: got missing ['sizes']" in err and "Traceback" not in err and "KeyError" not in err
    import os

    os.mkfifo(tmp_path / "pipe.pt")
    with pytest.raises(ValidationError, match=r"load_policy: got .*pipe\.pt', which is a FIFO"):
        load_policy(tmp_path / "pipe.pt")
