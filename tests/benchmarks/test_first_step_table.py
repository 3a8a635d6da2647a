"""benchmarks/first_step.py: the import table (``import plume_multi`` beside ``import numpy,
numba``) runs, tiny (the first-step rows compile, which other tests cover)."""

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_first_step", ROOT / "benchmarks" / "first_step.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_the_import_table_gives_both_imports_and_their_ratio(capsys):
    assert bench.main(["--rows", "--import-repeats", "1"]) == 0
    out = capsys.readouterr().out
    rows = dict(re.findall(r"^\| `(import [^`]+)` \| [\d.]+ \| [\d.]+ \| ([\d.]+)x \|$", out, re.M))
    assert set(rows) == {"import plume_multi", "import numpy, numba"} and float(rows["import numpy, numba"]) == 1.0
    assert float(rows["import plume_multi"]) > 0
