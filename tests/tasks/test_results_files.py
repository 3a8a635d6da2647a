"""The benchmark's results files under corruption (issue 32, items 5 and 6).

The reader is a property over corrupted files: a valid file cut at every byte, and every field of
every row replaced by hostile text, is either refused with our ``ValidationError`` naming the file
and the row (and the field, where one is to blame), or read to exactly the valid rows it holds;
never a foreign error, a hang or a wrong row. A plain reference parser of the documented format
(below, no regular expressions) says which field values are valid. ``benchmark run`` writes each
task's rows whole as it finishes, so a run killed after some tasks keeps them, and resumes.
"""

import csv
import io
import math
import os
import signal
import subprocess
import sys
import threading

import pytest
from hypothesis import given, strategies as st

from plume_multi.cli import main
from plume_multi.errors import ValidationError
from plume_multi.tasks.table import COLUMNS, read_rows, write_rows

CAP = 642


def _rows() -> list:
    """12 rows of two tasks (one name with a comma and a space: quoted in CSV) and two policies."""
    rows = []
    for task in ("teams/uniform-2-v0", "mylab/maze, big-v1"):
        for policy in ("random", "mod.py:Greedy"):
            for e in range(3):
                ok = (e + len(policy)) % 2 == 0
                steps = float(7 + 10 * e) if ok else float(CAP)
                rows.append({"task": task, "policy": policy, "episode": e, "seed": 1000 + e, "success": ok,
                             "steps": steps, "search_time": steps if ok else math.nan, "max_steps": CAP,
                             "reduced": False})
    return rows


ROWS = _rows()


def _same(read: list, expected: list) -> bool:
    def key(row):
        return {k: ("nan" if k == "search_time" and math.isnan(v) else v) for k, v in row.items()}

    return [key(r) for r in read] == [key(r) for r in expected]


@pytest.fixture(scope="module")
def valid(tmp_path_factory) -> bytes:
    path = write_rows(ROWS, tmp_path_factory.mktemp("valid") / "valid.csv")
    data = path.read_bytes()
    assert _same(read_rows(path), ROWS)
    return data


def _named(exc: ValidationError, path, row: int | None = None) -> bool:
    text = str(exc)
    return str(path) in text and (row is None or f"row {row}" in text)


# ------------------------------------------------------------------------------ truncation at every byte
def test_a_file_cut_at_any_byte_is_refused_naming_its_row_or_read_to_its_complete_rows(tmp_path, valid):
    path = tmp_path / "cut.csv"
    ends = [i + 1 for i, byte in enumerate(valid) if byte == ord("\n")]  # where each line ends
    for k in range(len(valid)):
        path.write_bytes(valid[:k])
        complete = sum(1 for end in ends if end <= k) - 1  # rows whose line break is in the file
        if k in ends and complete >= 1:
            assert _same(read_rows(path), ROWS[:complete]), k  # cut between rows: the rows before the cut
            continue
        with pytest.raises(ValidationError) as info:
            read_rows(path)
        assert _named(info.value, path), (k, str(info.value))
        if complete >= 1 and k not in ends:
            assert f"row {complete + 1} (line {complete + 2})" in str(info.value), (k, str(info.value))
            assert "without a line break" in str(info.value)


def test_a_kill_while_writing_642_leaves_64_which_is_refused_not_read(tmp_path, valid):
    cut = valid[:valid.rindex(b"642")] + b"64"
    path = tmp_path / "killed.csv"
    path.write_bytes(cut)
    with pytest.raises(ValidationError, match=r"killed\.csv, row 12 \(line 13\): got .*,,64' without a line break"):
        read_rows(path)


# ------------------------------------------------------------------------------ every field hostile
def _reference_row(raw: dict):
    """The documented format, plainly: the typed row, or None when any field (or their relation) is
    not valid."""
    def name(v):
        return v if 0 < len(v) <= 200 and v.isprintable() and v == v.strip() else None

    def integer(v, high):
        return int(v) if v.isascii() and v.isdigit() and len(v) <= 19 and int(v) <= high else None

    def flag(v):
        return {"True": True, "true": True, "1": True, "False": False, "false": False, "0": False}.get(v)

    def number(v):
        if not v or not v.isascii() or any(c not in "0123456789+-.eE" for c in v):
            return None
        try:
            x = float(v)
        except ValueError:
            return None
        return x if math.isfinite(x) and x >= 0 else None

    row = {"task": name(raw["task"]), "policy": name(raw["policy"]), "episode": integer(raw["episode"], 2**31 - 1),
           "seed": integer(raw["seed"], 2**63 - 1), "success": flag(raw["success"]), "steps": number(raw["steps"]),
           "search_time": math.nan if raw["search_time"] == "" else number(raw["search_time"]),
           "max_steps": integer(raw["max_steps"], 2**31 - 1), "reduced": flag(raw["reduced"])}
    if any(v is None for v in row.values()) or row["max_steps"] < 1:
        return None
    if row["success"]:
        ok = not math.isnan(row["search_time"]) and row["steps"] <= row["max_steps"] \
            and row["search_time"] == row["steps"]
    else:
        ok = row["steps"] == row["max_steps"] and math.isnan(row["search_time"])
    return row if ok else None


def _csv_text(raw_rows: list) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(COLUMNS))
    writer.writeheader()
    writer.writerows(raw_rows)
    return out.getvalue()


def _raw(row: dict) -> dict:
    return {k: ("" if k == "search_time" and math.isnan(v) else str(v)) for k, v in row.items()}


HOSTILE = ["nan", "NaN", "inf", "-inf", "-5", "-0", "643", "642", "642.0", "6.42e2", "0", "1", "1e309", "", " ",
           " 3", "3 ", "0x10", "1_000", "٣", "１", "yes", "no", "TRUE", "True ", "true", "1.0", "\ufeff7", "7\t",
           "a,b", '"', 'x"y', "\n", "\r", "a\rb", "a\nb", "9" * 25, "9" * 19, "1" + "0" * 18, "9223372036854775808",
           "2147483648", "2147483647", "e5", "5.", ".5", "+.5", "1e+2", "--1", "Infinity"]


@given(row=st.integers(0, len(ROWS) - 1), column=st.sampled_from(COLUMNS),
       value=st.one_of(st.sampled_from(HOSTILE), st.text(max_size=12),
                       st.from_regex(r"[-+]?[0-9]{0,4}(\.[0-9]{0,3})?([eE][-+]?[0-9]{0,3})?", fullmatch=True)))
def test_every_field_hostile_is_refused_naming_row_and_field_or_read_as_the_reference_reads_it(row, column, value,
                                                                                            tmp_path_factory):
    raw = [_raw(r) for r in ROWS]
    raw[row][column] = value
    path = tmp_path_factory.mktemp("field") / "hostile.csv"
    path.write_text(_csv_text(raw), encoding="utf-8", newline="")
    expected = _reference_row(raw[row])
    try:
        read = read_rows(path)
    except ValidationError as exc:
        # refused: the reference refuses the row too (or its line is not one CSV row), named in the message
        assert _named(exc, path, row + 1), str(exc)
        if expected is not None:
            # a valid value that breaks what rows share: an episode given twice, or two caps in a task
            assert "again" in str(exc) or "max_steps" in str(exc), str(exc)
        return
    assert expected is not None, (column, value)
    assert _same(read, [expected if n == row else r for n, r in enumerate(ROWS)])


@pytest.mark.parametrize("column, value, match", [
    ("steps", "nan", r"row 1 \(line 2\), steps: got 'nan'; expected a finite number >= 0"),
    ("steps", "inf", r"row 1 \(line 2\), steps: got 'inf'"),
    ("steps", "-5", r"row 1 \(line 2\), steps: got '-5'"),
    ("search_time", "643", r"row 1 \(line 2\), steps: got '7.0'; expected .*|row 1 \(line 2\), search_time: got '643'"),
    ("max_steps", "0", r"row 1 \(line 2\), max_steps: got '0'; expected an integer in 1\.\."),
    ("success", "yes", r"row 1 \(line 2\), success: got 'yes'; expected True or False"),
    ("task", "", r"row 1 \(line 2\), task: got ''; expected a non-empty name"),
])
def test_the_values_that_were_read_in_silence_are_refused_naming_file_row_and_field(tmp_path, column, value, match):
    raw = [_raw(r) for r in ROWS]
    raw[0][column] = value
    path = tmp_path / "r.csv"
    path.write_text(_csv_text(raw), encoding="utf-8", newline="")
    with pytest.raises(ValidationError, match=rf"results: .*r\.csv, ({match})"):
        read_rows(path)


def test_steps_above_the_cap_and_two_caps_in_one_task_are_refused(tmp_path):
    raw = [_raw(r) for r in ROWS]
    raw[0].update(steps="700.0", search_time="700.0")  # a success after the cap
    path = tmp_path / "a.csv"
    path.write_text(_csv_text(raw), encoding="utf-8", newline="")
    with pytest.raises(ValidationError, match=r"a\.csv, row 1 \(line 2\), steps: got '700\.0'; expected at most "
                                              r"max_steps = 642"):
        read_rows(path)
    folder = tmp_path / "two"
    write_rows(ROWS[:3], folder / "a.csv")
    write_rows([dict(r, policy="other", max_steps=CAP + 1, steps=CAP + 1.0 if not r["success"] else r["steps"])
                for r in ROWS[:3]], folder / "b.csv")
    with pytest.raises(ValidationError, match=r"b\.csv, row 1 \(line 2\), max_steps: got 643 for teams/uniform-2-v0; "
                                              r"expected 642, the step cap of its rows at .*a\.csv, row 1"):
        read_rows(folder)
    with pytest.raises(ValidationError, match=r"b\.csv, row 1 \(line 2\), episode: got episode 0 .* again"):
        write_rows(ROWS[:3], folder / "b.csv")
        read_rows(folder)


def test_what_is_not_a_results_file_is_refused_with_our_error(tmp_path, valid):
    cases = {}
    cases["nul"] = valid.replace(b"mylab", b"my\0ab", 1)
    cases["latin1"] = valid.replace("mylab".encode(), "m\xefl".encode("latin-1"), 1)
    cases["long"] = valid.replace(b"mylab", b"m" * 200_000, 1)
    cases["header"] = valid[:valid.index(b"\n") + 1]
    cases["empty"] = b""
    cases["columns"] = b"task,policy\r\nx,y\r\n"
    cases["crlf-inside"] = valid.replace(b"mylab", b"my\rlab", 1)
    messages = {"nul": r"row 7 \(line 8\): got a NUL byte", "latin1": r"row 7 \(line 8\): got bytes that are not UTF-8",
                "long": r"row 7 \(line 8\): got a line of 200\d+ characters; expected at most 4096",
                "header": r"got the header alone; expected rows below it", "empty": r"got an empty file",
                "columns": r"the header \(line 1\): got 'task,policy'; expected the columns",
                "crlf-inside": r"row 7 \(line 8\): got a carriage return inside the line"}
    for label, data in cases.items():
        path = tmp_path / f"{label}.csv"
        path.write_bytes(data)
        with pytest.raises(ValidationError, match=rf"results: .*{label}\.csv[,:] {messages[label]}"):
            read_rows(path)
    # what a folder may hold under a results name: each refused by name, never opened or waited on
    for label, make in [("fifo", lambda p: os.mkfifo(p)), ("folder", lambda p: p.mkdir()),
                        ("dangling", lambda p: p.symlink_to(tmp_path / "missing.csv")),
                        ("loop", lambda p: p.symlink_to(p))]:
        folder = tmp_path / f"results-{label}"
        folder.mkdir()
        write_rows(ROWS, folder / "a.csv")
        make(folder / "x.csv")
        with pytest.raises(ValidationError, match=r"results: got .*x\.csv'?, which "):
            read_rows(folder)
    assert _same(read_rows(tmp_path / "results-fifo" / "a.csv"), ROWS)
    for name in ("x" * 100_000 + ".csv", "a\0b.csv", ""):  # too long for the file system, a NUL, empty
        with pytest.raises(ValidationError, match=r"results: got "):
            read_rows(name)
    # a write's temporary file (a name beginning with a dot) is not read as results
    (tmp_path / "results-fifo" / "x.csv").unlink()
    (tmp_path / "results-fifo" / ".a.csv.1234.tmp").write_bytes(valid[:20])
    (tmp_path / "results-fifo" / ".b.csv").write_bytes(valid[:20])
    assert _same(read_rows(tmp_path / "results-fifo"), ROWS)


def test_the_table_command_refuses_what_it_cannot_read_and_never_writes_over_its_input(tmp_path, valid, capsys):
    results = tmp_path / "results"
    results.mkdir()
    (results / "a.csv").write_bytes(valid[:valid.index(b"\n") + 1])  # the header alone
    assert main(["benchmark", "table", "--results", str(results)]) == 2
    assert "got the header alone" in capsys.readouterr().err
    (results / "a.csv").write_bytes(valid)
    for option in ("--csv", "--markdown"):
        assert main(["benchmark", "table", "--results", str(results), option, str(results / "a.csv")]) == 2
        assert "a results file of the folder read" in capsys.readouterr().err
        assert main(["benchmark", "table", "--results", str(results / "a.csv"), option,
                     str(results / "a.csv")]) == 2
        assert "the results file read" in capsys.readouterr().err
    assert main(["benchmark", "table", "--results", str(results), "--csv", str(results / "new.csv")]) == 2
    assert (results / "a.csv").read_bytes() == valid and not (results / "new.csv").exists()
    assert main(["benchmark", "table", "--results", str(results), "--csv", str(tmp_path / "summary.csv")]) == 0
    assert "mylab/maze, big-v1" in capsys.readouterr().out


def test_write_rows_refuses_a_row_it_could_not_read_back_and_leaves_the_file(tmp_path):
    path = write_rows(ROWS, tmp_path / "r.csv")
    before = path.read_bytes()
    with pytest.raises(ValidationError, match=r"write_rows: rows\[2\]|results: rows\[2\], steps: got nan"):
        write_rows([*ROWS[:2], dict(ROWS[2], steps=math.nan)], path)
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["r.csv"]


# ------------------------------------------------------------------------------ a run killed, then resumed
POLICY = '''
import os, time
import numpy as np


def slow(scenario, seed):
    """Random moves; blocks on the team of 8 while the file BLOCK exists (the test kills it there)."""
    while scenario.n_agents == 8 and os.path.exists(os.environ["BLOCK"]):
        time.sleep(0.05)
    rng = np.random.default_rng(seed)
    return lambda obs: rng.integers(0, scenario.n_actions, len(obs))
'''


def test_a_run_killed_after_two_tasks_keeps_their_rows_and_a_rerun_reuses_them(tmp_path, capsys, monkeypatch):
    module = tmp_path / "slow.py"
    module.write_text(POLICY)
    block = tmp_path / "BLOCK"
    block.write_text("")
    out = tmp_path / "all.csv"
    spec = f"{module}:slow"
    argv = ["benchmark", "run", "teams", "--policy", spec, "--episodes", "3", "--max-steps", "5", "--out", str(out),
            "--quiet"]
    env = dict(os.environ, BLOCK=str(block), PYTHONPATH=os.pathsep.join(sys.path))
    child = subprocess.Popen([sys.executable, "-m", "plume_multi.cli", *argv], stdout=subprocess.PIPE, text=True,
                             env=env, cwd=tmp_path)
    written = []
    # the child waits in uniform-8 until it is killed: a child that never writes the first two tasks
    # (the file written only at the end) is killed after a deadline, and the test fails, not hangs
    deadline = threading.Timer(300, child.kill)
    deadline.start()
    try:
        for line in child.stdout:
            if line.startswith("wrote"):
                written.append(line)
            if len(written) == 2:  # teams/uniform-2 and -4 are on disk; the child now waits in uniform-8
                break
    finally:
        deadline.cancel()
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    assert len(written) == 2
    kept = read_rows(out)
    assert [(r["task"], r["episode"]) for r in kept] == [(t, e) for t in ("teams/uniform-2-v0", "teams/uniform-4-v0")
                                                         for e in range(3)]
    block.unlink()
    capsys.readouterr()
    monkeypatch.setenv("BLOCK", str(block))
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "teams/uniform-2-v0 " + spec + ": reused 3 episodes" in text and "uniform-4-v0 " + spec + ": reused" in text
    assert "4 run, 2 reused" in text
    rows = read_rows(out)
    assert [r["task"] for r in rows[::3]] == [f"teams/{k}-{n}-v0" for k in ("uniform", "mixed") for n in (2, 4, 8)]
    assert _same(rows[:6], kept)  # reused as they were
    # --force runs everything again: the same rows (seeded), the file rewritten
    assert main([*argv, "--force"]) == 0
    assert "6 run, 0 reused" in capsys.readouterr().out and _same(read_rows(out), rows)


def test_a_folder_run_reuses_complete_files_and_runs_again_what_is_cut_or_different(tmp_path, capsys, monkeypatch):
    from plume_multi.policies import perseus_named

    # the task's baselines include perseus: a tiny solve (its own tests check the named budget)
    monkeypatch.setattr(perseus_named, "BUDGET", {"beliefs": 10, "iterations": 2, "seed": 0})
    out = tmp_path / "results"
    argv = ["benchmark", "run", "teams/uniform-2-v0", "--policy", "baselines", "--episodes", "2", "--max-steps", "4",
            "--out", str(out), "--quiet"]
    assert main(argv) == 0
    files = sorted(out.iterdir())
    assert len(files) == 5 and "5 run, 0 reused" in capsys.readouterr().out
    first = {f.name: f.read_bytes() for f in files}
    files[0].write_bytes(first[files[0].name][:-7])  # cut: refused, run again
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert f"{files[0]}: not reused (results: {files[0]}, row 2 (line 3)" in text and "1 run, 4 reused" in text
    assert {f.name: f.read_bytes() for f in sorted(out.iterdir())} == first
    assert main([*argv[:6], "3", *argv[7:]]) == 0  # three episodes asked for: none of the files is that run
    assert "2 episodes where 3 are asked for" in capsys.readouterr().out
    assert main([*argv, "--resume", "--force"]) == 2  # one or the other
    assert "not allowed with argument" in capsys.readouterr().err
