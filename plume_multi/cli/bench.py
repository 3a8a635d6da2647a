"""Engine throughput: ``Simulator.step`` against a vectorized NumPy step doing the same work.

    plume-multi bench [--quick] [--sizes 1,64,4096,65536,1048576] [--repeats 5]

Each row runs the Simulator (one thread, and Numba's threads where it has several) and
``NumpyStep`` in the same process, interleaved, ``--repeats`` rounds; figures are medians, and the
ratio is the median of the per-round ratios. Actions are drawn beforehand, outside the timing.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numba
import numpy as np

from . import ArgumentParser, UsageError, check_writable, progress_bar
from ..scenario import Scenario
from ..simulator import Simulator

__all__ = ["NumpyStep", "engine_rows", "main"]


class NumpyStep:
    """The Simulator's step (NEXT_STEP autoreset, no team, no neighbours) in vectorized NumPy.

    Same work, same outputs: clamped moves, finished agents stay put and earn nothing, sparse goal
    reward, per-world truncation, worlds that ended are reset on the next step, observation
    ``[field at the cell, x/(W-1), y/(H-1)]``. New episodes draw starts from ``numpy.random``
    (the Simulator's own counter-based draws are not reproduced), unless the scenario fixes them.
    """

    def __init__(self, scenario: Scenario, num_worlds: int, seed: int = 0):
        if scenario.team or scenario.n_neighbours:
            raise ValueError("NumpyStep covers scenarios without team mode or neighbour sensing")
        sc = self.sc = scenario
        self.B, self.N = num_worlds, sc.n_agents
        self.field = Simulator(sc).field
        self.moves = sc.moves()
        self.src = np.array(sc.source_location, np.int64)
        w, h = sc.grid_size
        self.hi = np.array([w - 1, h - 1], np.int64)
        self.scale = np.array([1.0 / (w - 1) if w > 1 else 0.0, 1.0 / (h - 1) if h > 1 else 0.0], np.float32)
        self.rng = np.random.default_rng(seed)
        BN = self.B * self.N
        self.pos = np.zeros((BN, 2), np.int64)
        self.active = np.ones(BN, bool)
        self.ep_length = np.zeros(BN, np.int32)
        self.t = np.zeros(self.B, np.int32)
        self.done = np.zeros(self.B, bool)
        self.obs = np.zeros((BN, 3), np.float32)
        self.reward = np.zeros(BN, np.float32)
        self.terminated = np.zeros(BN, bool)
        self.truncated = np.zeros(BN, bool)
        self._reset_rows(np.ones(BN, bool), np.ones(self.B, bool))
        self._observe()

    def _reset_rows(self, rows, worlds):
        n = int(rows.sum())
        if self.sc.start_positions is not None:
            self.pos[rows] = np.tile(np.array(self.sc.start_positions), (int(worlds.sum()), 1))
        else:
            self.pos[rows, 0] = self.rng.integers(0, self.sc.grid_size[0], n)
            self.pos[rows, 1] = self.rng.integers(0, self.sc.grid_size[1], n)
        self.active[rows] = True
        self.ep_length[rows] = 0
        self.t[worlds] = 0

    def _observe(self):
        self.obs[:, 0] = self.field[self.pos[:, 1], self.pos[:, 0]]
        self.obs[:, 1:] = self.pos * self.scale

    def step(self, actions):
        N = self.N
        reset_worlds = self.done
        reset_rows = np.repeat(reset_worlds, N)
        moving = self.active & ~reset_rows
        self.t += ~reset_worlds
        new = np.clip(self.pos + self.moves[actions], 0, self.hi)
        self.pos = np.where(moving[:, None], new, self.pos)
        self.ep_length += moving
        d = self.pos - self.src
        arrived = moving & ((d * d).sum(axis=1) <= self.sc.goal_d2())
        self.active &= ~arrived
        self.reward = arrived.astype(np.float32)
        self.terminated = ~self.active & ~reset_rows
        trunc_worlds = (self.t >= self.sc.max_steps) & ~reset_worlds
        self.truncated = np.repeat(trunc_worlds, N)
        if reset_worlds.any():
            self._reset_rows(reset_rows, reset_worlds)
        self._observe()
        self.done = (self.t >= self.sc.max_steps) | ~self.active.reshape(self.B, N).any(axis=1)
        self.done &= ~reset_worlds
        return self.obs, self.reward, self.terminated, self.truncated


def _rate(fn, actions, agents, min_seconds):
    """Agent-steps per second of ``fn`` over whole passes through ``actions``, at least ``min_seconds``."""
    calls, start = 0, time.perf_counter()
    while True:
        for a in actions:
            fn(a)
        calls += len(actions)
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return agents * calls / elapsed


def engine_rows(shapes, repeats=5, min_seconds=0.1, progress=None):
    """One row per ``(num_worlds, n_agents)``: medians of agent-steps/s for the serial and the
    threaded kernel and the NumPy step, with the median per-round ratio."""
    rows = []
    threads = numba.get_num_threads()
    for k, (B, N) in enumerate(shapes):
        sc = Scenario(n_agents=N, max_steps=1000)
        serial = Simulator(sc, B, parallel=False)
        threaded = Simulator(sc, B, parallel=True) if threads > 1 and B > 1 else None
        ref = NumpyStep(sc, B)
        for sim in filter(None, (serial, threaded)):
            sim.reset(seed=0)
        rng = np.random.default_rng(k)
        actions = [rng.integers(0, 4, B * N) for _ in range(8)]
        rounds = {"serial": [], "threaded": [], "numpy": []}
        for _ in range(repeats):
            rounds["serial"].append(_rate(serial.step, actions, B * N, min_seconds))
            if threaded is not None:
                rounds["threaded"].append(_rate(threaded.step, actions, B * N, min_seconds))
            rounds["numpy"].append(_rate(ref.step, actions, B * N, min_seconds))
        ratios = [s / n for s, n in zip(rounds["serial"], rounds["numpy"])]
        t0 = time.perf_counter()
        serial.reset(seed=1)
        reset_us = (time.perf_counter() - t0) * 1e6
        rows.append({
            "api": "Simulator.step", "num_worlds": B, "n_agents": N, "agents": B * N,
            "serial": statistics.median(rounds["serial"]),
            "threaded": statistics.median(rounds["threaded"]) if rounds["threaded"] else None,
            "threads": threads,
            "numpy": statistics.median(rounds["numpy"]),
            "ratio": statistics.median(ratios),
            "us_per_call": 1e6 * B * N / statistics.median(rounds["serial"]),
            "reset_us": reset_us,
            "bytes_per_agent": serial.state.nbytes_per_agent(),
        })
        if progress:
            progress(k + 1)
    return rows


_RSS_SCRIPT = """
import resource, numpy as np, plume_multi as pm
sim = pm.Simulator(pm.Scenario(n_agents={N}), {B}); sim.reset(seed=0)
actions = np.zeros(sim.total_agents, np.int64)
for _ in range(10): sim.step(actions)
try:  # the high-water mark of this address space (ru_maxrss would include the parent's, on Linux)
    kib = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
except OSError:
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(kib)
"""


def peak_rss_mib(num_worlds: int, n_agents: int) -> tuple[float, float]:
    """Peak RSS (MiB) of a fresh process stepping ``num_worlds x n_agents`` agents, and of the same
    process with one agent (interpreter, NumPy, Numba and compiled kernels)."""
    out = []
    for B, N in ((1, 1), (num_worlds, n_agents)):
        res = subprocess.run([sys.executable, "-c", _RSS_SCRIPT.format(B=B, N=N)], capture_output=True,
                             text=True, check=True)
        out.append(int(res.stdout.split()[-1]) / 1024)
    return out[1], out[0]


def format_table(rows) -> str:
    header = ["worlds x agents", "Simulator 1 thread", f"Simulator {rows[0]['threads']} threads",
              "NumPy", "ratio (1 thread)", "us/call", "reset us", "B/agent"]
    body = []
    for r in rows:
        body.append([
            f"{r['num_worlds']} x {r['n_agents']}", f"{r['serial'] / 1e6:,.2f} M",
            f"{r['threaded'] / 1e6:,.2f} M" if r["threaded"] else "-", f"{r['numpy'] / 1e6:,.2f} M",
            f"{r['ratio']:.1f}x", f"{r['us_per_call']:,.2f}", f"{r['reset_us']:,.0f}", f"{r['bytes_per_agent']:.0f}",
        ])
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines)


def _shapes(sizes):
    shapes = []
    for size in sizes:
        shapes.append((size, 1))  # B single-agent worlds
        if size >= 64 and size % 64 == 0:
            shapes.append((size // 64, 64))  # worlds of 64 agents
    return shapes


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(prog="plume-multi bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes and short rounds (a smoke test)")
    parser.add_argument("--sizes", default="1,64,4096,65536,1048576", help="total agent counts, comma-separated")
    parser.add_argument("--repeats", type=int, default=5, help="interleaved rounds per row (default 5)")
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    parser.add_argument("--no-rss", action="store_true", help="skip the peak-RSS subprocess")
    args = parser.parse_args(argv)
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        parser.error(f"--sizes: got {args.sizes!r}; expected comma-separated integers")
    if any(s < 1 for s in sizes) or args.repeats < 1:
        parser.error("--sizes must be >= 1 and --repeats >= 1")
    if args.json:
        try:
            check_writable(args.json, "--json")
        except UsageError as exc:
            parser.error(str(exc))
    if args.quick:
        sizes, args.repeats = [1, 64], 2
    min_seconds = 0.01 if args.quick else 0.1
    shapes = _shapes(sizes)
    print(f"Simulator.step vs a vectorized NumPy step (same work), medians of {args.repeats} interleaved rounds; "
          f"{os.cpu_count()} CPUs, Numba {numba.__version__}, NumPy {np.__version__}, {numba.get_num_threads()} Numba threads")
    with progress_bar(len(shapes), "bench", unit="row") as bar:
        rows = engine_rows(shapes, repeats=args.repeats, min_seconds=min_seconds,
                           progress=lambda done: bar.update(done - bar.n))
    print(format_table(rows))
    result = {"engine": rows}
    if not args.no_rss and not args.quick:
        big = max(sizes)
        rss, base = peak_rss_mib(big, 1)
        result["peak_rss_mib"] = {"agents": big, "peak": rss, "baseline": base}
        print(f"\nPeak RSS stepping {big:,} agents: {rss:,.0f} MiB (a process with one agent: {base:,.0f} MiB)")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
