"""What the trainers' tests of every environment share: one torch thread while a test runs, and
benchmarks/trainers.py run tiny (``--quick``) on the rows of the trainers installed there."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "trainers.py"


def run_quick(only: str, capsys) -> tuple[str, list[float]]:
    """``trainers.py --quick --only ONLY``: its table, and the rate of each row (all checked > 0)."""
    spec = importlib.util.spec_from_file_location("trainers_benchmark", SCRIPT)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--quick", "--only", only]) == 0
    table = capsys.readouterr().out
    rates = [float(line.rsplit("|", 2)[1].replace(",", "")) for line in table.splitlines()[2:]]
    assert rates and min(rates) > 0, table
    return table, rates


@pytest.fixture(autouse=True)
def one_torch_thread():
    """Torch on one thread for the test (the small networks gain nothing from more on two cores)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
