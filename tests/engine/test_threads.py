"""A trainer in the same process is never slowed by the simulator's threads (engine/threads.py).

Each check runs in a fresh process: Numba's threading layer is chosen once per process. There,
torch is set to one thread and Numba to four (as on a four-core machine): with Numba's OpenMP
layer, the first parallel launch switched torch to four threads, nested, against Numba's spinning
workers (2-3x the CPU of a forward pass on this two-core machine, 40x on sixteen cores).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")
pytest.importorskip("stable_baselines3")

FRONT_ENDS = """
import json, sys, threading, time
import numpy as np
import torch
import numba
import plume_multi
from plume_multi import Scenario, Simulator
from plume_multi.engine.threads import threads_started
from plume_multi.integrations.sb3 import SB3VecEnv

torch.set_num_threads(1)
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(3, 64), torch.nn.Tanh(), torch.nn.Linear(64, 64), torch.nn.Tanh(),
                          torch.nn.Linear(64, 4))
x = torch.randn(64, 3)

def forward_cpu():
    # CPU of the whole process over CPU of this thread during forward passes (median of repeats):
    # 1.0 when no other thread burns CPU meanwhile (spinning workers, nested torch threads). A ratio
    # of clocks, not of times before and after: a shared machine slowing down moves both clocks.
    ratios = []
    for _ in range(9):
        process, thread = time.process_time(), time.thread_time()
        for _ in range(100):
            with torch.no_grad():
                net(x)
        ratios.append((time.process_time() - process) / (time.thread_time() - thread))
    return float(np.median(ratios))

def steps(env, actions, n=50):
    for _ in range(n):
        env.step(actions())

rng = np.random.default_rng(0)
def run_simulator():
    sim = Simulator(Scenario(grid_size=(16, 12)), num_worlds=16); sim.reset(seed=0)
    steps(sim, lambda: rng.integers(0, 4, 16))
def run_vector():
    env = plume_multi.vector_env(16, grid_size=(16, 12)); env.reset(seed=0)
    steps(env, lambda: rng.integers(0, 4, 16))
def run_multi_vector():
    env = plume_multi.multi_agent_vector_env(4, n_agents=4, grid_size=(16, 12)); env.reset(seed=0)
    steps(env, lambda: rng.integers(0, 4, 16))
def run_parallel():
    env = plume_multi.parallel_env(n_agents=4, grid_size=(16, 12)); env.reset(seed=0)
    for _ in range(50):
        if not env.agents:
            env.reset()
        env.step({a: int(rng.integers(0, 4)) for a in env.agents})
def run_aec():
    env = plume_multi.env(n_agents=4, grid_size=(16, 12)); env.reset(seed=0)
    for agent in env.agent_iter(200):
        done = env.terminations[agent] or env.truncations[agent]
        env.step(None if done else int(rng.integers(0, 4)))
def run_single():
    env = plume_multi.PlumeSearchEnv(grid_size=(16, 12)); env.reset(seed=0)
    for _ in range(50):
        env.step(int(rng.integers(0, 4)))
def run_sb3():
    venv = SB3VecEnv(plume_multi.vector_env(16, grid_size=(16, 12))); venv.reset()
    steps(venv, lambda: rng.integers(0, 4, 16))
def run_threaded():
    # the threaded kernel: Numba's threads start and run
    sim = Simulator(Scenario(grid_size=(16, 12)), num_worlds=64, parallel=True); sim.reset(seed=0)
    steps(sim, lambda: rng.integers(0, 4, 64))

result = {"layer": numba.config.THREADING_LAYER, "ratios": {"before": forward_cpu()}}
for name, run in [("Simulator", run_simulator), ("vector_env", run_vector), ("multi_agent_vector_env", run_multi_vector),
                  ("parallel_env", run_parallel), ("env", run_aec), ("PlumeSearchEnv", run_single),
                  ("SB3VecEnv", run_sb3)]:
    run()
    result["ratios"][name] = forward_cpu()
result["small_batches_started_threads"] = threads_started()
run_threaded()
result["ratios"]["threaded Simulator"] = forward_cpu()
result["torch_threads"] = torch.get_num_threads()

# two Python threads stepping threaded simulators at once: one launch at a time, no abort
def hammer():
    sim = Simulator(Scenario(grid_size=(16, 12)), num_worlds=64, parallel=True); sim.reset(seed=1)
    for _ in range(300):
        sim.step(np.zeros(64, np.int64))
workers = [threading.Thread(target=hammer) for _ in range(2)]
[w.start() for w in workers]
[w.join() for w in workers]
result["concurrent"] = "ok"
print(json.dumps(result))
"""


def _run(code: str, **env) -> dict:
    environ = {**os.environ, "PLUME_MULTI_QUIET": "1", **env}
    environ.pop("NUMBA_THREADING_LAYER", None) if "NUMBA_THREADING_LAYER" not in env else None
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         timeout=600, env=environ)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_torch_forward_pass_costs_the_same_after_every_front_end_has_stepped():
    result = _run(FRONT_ENDS, NUMBA_NUM_THREADS="4")
    assert result["layer"] == "workqueue"
    assert not result["small_batches_started_threads"]  # small batches never start Numba's threads
    assert result["torch_threads"] == 1                   # torch's setting survives Numba's threads
    # Numba's OpenMP layer gave 1.5 after the threaded Simulator here (checked); 1.0 otherwise
    busy = {name: round(ratio, 2) for name, ratio in result["ratios"].items() if ratio > 1.2}
    assert not busy, f"other threads burnt CPU during a forward pass after these front-ends stepped: {busy} " \
                     "(process CPU / this thread's CPU)"
    assert result["concurrent"] == "ok"


def test_a_threading_layer_the_user_chose_is_kept():
    code = "import numba, plume_multi; print(numba.config.THREADING_LAYER)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "NUMBA_THREADING_LAYER": "omp"}, check=True)
    assert out.stdout.split()[-1] == "omp"
    code = ("import numba; numba.config.THREADING_LAYER = 'tbb'; import plume_multi; "
            "print(numba.config.THREADING_LAYER)")
    environ = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=environ,
                         check=True)
    assert out.stdout.split()[-1] == "tbb"
