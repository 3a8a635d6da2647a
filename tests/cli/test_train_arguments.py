"""``plume-multi train``'s validation flags (issue 32, item 3): ``--validation-episodes 0`` validated
nothing while ``--validations`` promised ten validations, and exited 0."""

from plume_multi.cli import main


def test_validation_episodes_below_one_are_refused_before_training(capsys, tmp_path):
    for value in ("0", "-3"):
        code = main(["train", "--validation-episodes", value, "--budget", "64", "--out", str(tmp_path / "p"),
                     "--quiet"])
        err = capsys.readouterr().err
        assert code == 2 and f"--validation-episodes: got {value}; expected an integer >= 1 (--validations 0 turns " \
                             "validation off)" in err
    assert not list(tmp_path.iterdir())  # nothing trained, nothing written
