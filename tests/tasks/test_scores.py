"""The IQM's interval falls back to SciPy whenever rliable does not import, says so once, and a
benchmark run's rows reach the disk before any interval is computed."""

import sys
import warnings

import numpy as np
import pytest

from plume_multi.cli import main
from plume_multi.tasks import scores

TASK = "teams/uniform-2-v0"


@pytest.fixture
def broken_rliable(tmp_path, monkeypatch):
    """An rliable that raises as arch 7.2 does under pandas 3 when imported."""
    package = tmp_path / "rliable"
    package.mkdir()
    (package / "__init__.py").write_text(
        'raise TypeError("deprecate_kwarg() missing 1 required positional argument: \'new_arg_name\'")\n')
    for name in [name for name in sys.modules if name == "rliable" or name.startswith("rliable.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(scores, "_RLIABLE", {})


def test_an_rliable_that_fails_to_import_falls_back_to_scipy_and_says_why_once(broken_rliable):
    data = np.random.default_rng(2).exponential(40.0, 100)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        low, high, method = scores.iqm_interval(data)
        assert scores.iqm_interval(data) == (low, high, method)
    assert method == "scipy" and low < scores.iqm(data) < high
    said = [str(w.message) for w in caught if "rliable" in str(w.message)]
    assert len(said) == 1 and "fails to import: TypeError: deprecate_kwarg()" in said[0]


def test_the_figure_says_rliable_does_not_import_rather_than_asking_to_install_it(broken_rliable, tmp_path, capsys):
    results = tmp_path / "rows.csv"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert main(["benchmark", "run", TASK, "--policy", "random", "--episodes", "4", "--max-steps", "10",
                     "--out", str(results), "--quiet"]) == 0
        capsys.readouterr()
        assert main(["benchmark", "table", "--results", str(results), "--figure", str(tmp_path / "p.png")]) == 2
    err = capsys.readouterr().err
    assert "needs rliable, which does not import here" in err and not (tmp_path / "p.png").exists()


def test_a_runs_rows_are_on_disk_before_its_interval_is_computed(tmp_path, capsys, monkeypatch):
    def bootstrap_fails(*args, **kwargs):
        raise RuntimeError("the bootstrap failed")

    monkeypatch.setattr(scores, "iqm_interval", bootstrap_fails)
    out = tmp_path / "rows.csv"
    code = main(["benchmark", "run", TASK, "--policy", "random", "--episodes", "4", "--max-steps", "10",
                 "--out", str(out), "--quiet"])
    assert code == 2 and "the bootstrap failed" in capsys.readouterr().err
    assert len(out.read_text().splitlines()) == 1 + 4  # the header and every episode
