"""The benchmark's files: per-episode results (CSV, or Parquet with pyarrow), the summary of each
(task, policy), the Markdown table (tasks x policies) and the performance-profile figure.

A results file has one row per episode: ``task, policy, episode, seed, success, steps,
search_time, max_steps, reduced`` (``steps``: to the source, a failure counted at ``max_steps``;
``search_time`` empty for a failure). The table and the figure are computed from these rows only,
so results written by anyone, anywhere, combine.

Files are written whole or not at all (a temporary file renamed onto the target), and read
strictly: a row is complete when its line ends with a line break (the writer ends every line
with one), so a file cut while written, whose last line has none, is refused naming that row,
never read as a shorter number (``64`` for ``642``). Every field is checked (names printable,
integers and numbers in range, ``True``/``False`` flags, a success's steps within the cap and
equal to its search time, a failure at the cap), as are an episode given twice and two step caps
in one task; a refusal names the file, the row and the field.

The performance profile (Agarwal et al. 2021, as rliable draws it) is over the episode score
``1 - steps / max_steps`` (1 for finding the source at once, 0 for a failure): for each ``tau`` the
share of episodes scoring above ``tau``, averaged over the tasks a policy ran (each task weighs
the same), with stratified-bootstrap 95 % bands (seeded: the same rows, the same figure).
"""

from __future__ import annotations

import csv
import functools
import math
import os
import re
from collections import defaultdict
from pathlib import Path

import numpy as np

from ..checks import is_int, is_real, shown
from ..errors import PlumeError, RenderingError, ValidationError
from ..files import check_file, check_path, open_file, read_bytes, writing
from .scores import BENCH_EXTRA, BOOTSTRAP_SEED, iqm, iqm_interval, rliable_library, seeded_global_numpy
from .task import MAX_SEED

__all__ = ["COLUMNS", "write_rows", "read_rows", "summarise", "markdown_table", "merged_markdown", "table_cells",
           "performance_profile", "write_summary"]

COLUMNS = ("task", "policy", "episode", "seed", "success", "steps", "search_time", "max_steps", "reduced")
SUFFIXES = (".csv", ".parquet")
PARQUET_EXTRA = "pip install pyarrow"
# The learned baselines (plume_multi.training.POLICIES, named here without importing torch): their
# columns follow the built-in policies' (benchmarks/learned_baselines.py writes their rows).
LEARNED = ("ppo-mlp", "ppo-gru")
PROFILE_TAUS = np.linspace(0.0, 1.0, 101)
PROFILE_REPS = 500
# What a results file may hold: names, counts and sizes (a field of 200,000 characters or a file of
# gigabytes is not a benchmark's result)
MAX_NAME = 200
MAX_EPISODE = 2**31 - 1
MAX_STEPS = 2**31 - 1
MAX_LINE = 4096
MAX_FILE_BYTES = 1 << 30


# ----------------------------------------------------------------------------------------- files
def _suffix(path, what: str) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise ValidationError(f"{what}: got {str(path)!r}; expected a file name ending in .csv or .parquet")
    return suffix


def write_rows(rows, path) -> Path:
    """Write per-episode rows (``TaskResult.rows()``, concatenated) to ``path`` (.csv or .parquet),
    whole or not at all: a temporary file beside it, renamed onto it once complete, so a run
    killed while writing leaves the file it had. Every row is checked first, as ``read_rows``
    reads it back (``ValidationError`` naming the row and the field)."""
    p = Path(path)
    suffix = _suffix(p, "path")
    rows = list(rows)
    for n, row in enumerate(rows):
        if not isinstance(row, dict) or set(row) != set(COLUMNS):
            raise ValidationError(f"write_rows: rows[{n}]: got {shown(row, 200)}; expected a dict of the columns "
                                  f"{list(COLUMNS)}")
        _typed(row, _Location("rows", n))
    clean = [{k: ("" if k == "search_time" and isinstance(row[k], float) and math.isnan(row[k]) else row[k])
              for k in COLUMNS} for row in rows]
    if suffix == ".parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError as exc:
            raise PlumeError(f"Parquet files need pyarrow: {PARQUET_EXTRA} (or write .csv)") from exc
        for row in clean:
            row["search_time"] = None if row["search_time"] == "" else row["search_time"]
        with writing(p, "write_rows.path", "a results file to write", text=False) as f:
            pq.write_table(pa.Table.from_pylist(clean), f)
        return p
    with writing(p, "write_rows.path", "a results file to write", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(COLUMNS))
        writer.writeheader()
        writer.writerows(clean)
    return p


class _Location:
    """Where a row was read: a file (or ``"rows"``) and its row number (1 = the first row after
    the header; the line is one more for a CSV file)."""

    __slots__ = ("file", "row", "csv")

    def __init__(self, file: str, row: int, csv_line: bool = False):
        self.file, self.row, self.csv = file, row, csv_line

    def __str__(self) -> str:
        if self.file == "rows":
            return f"rows[{self.row}]"
        return f"{self.file}, row {self.row}" + (f" (line {self.row + 1})" if self.csv else "")


def _refuse(where, field: str, value, expected: str):
    raise ValidationError(f"results: {where}, {field}: got {shown(value, 80)}; expected {expected}")


_NUMBER = re.compile(r"[+-]?([0-9]{1,19}(\.[0-9]{0,20})?|\.[0-9]{1,20})([eE][+-]?[0-9]{1,3})?")
_FLAGS = {"True": True, "true": True, "1": True, "False": False, "false": False, "0": False}


# The texts of a results file repeat (names, step counts, episode numbers across tasks): each is
# parsed once (a third of the time reading a file of 108,000 rows)
@functools.lru_cache(maxsize=1 << 16)
def _name_ok(text: str) -> bool:
    return 0 < len(text) <= MAX_NAME and text.isprintable() and text == text.strip()


@functools.lru_cache(maxsize=1 << 16)
def _integer_text(text: str):
    """The integer of ASCII digits ``text`` (at most 19 of them), else None."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 19 else None


@functools.lru_cache(maxsize=1 << 16)
def _number_text(text: str) -> float:
    """The number ``text`` writes in plain decimal or exponent notation, else NaN (never ``nan``,
    ``inf``, spaces, underscores or digits of other scripts, which ``float`` takes)."""
    return float(text) if _NUMBER.fullmatch(text) else math.nan


def _name(value, where, field: str) -> str:
    if not isinstance(value, str) or not _name_ok(value):
        _refuse(where, field, value, f"a non-empty name of at most {MAX_NAME} printable characters, without spaces "
                                     "at either end")
    return value


def _integer(value, where, field: str, low: int, high: int) -> int:
    if isinstance(value, str):
        number = _integer_text(value)
    else:
        number = int(value) if is_int(value) else None
    if number is None or not low <= number <= high:
        _refuse(where, field, value, f"an integer in {low}..{high}")
    return number


def _flag(value, where, field: str) -> bool:
    flag = _FLAGS.get(value) if isinstance(value, str) else (bool(value) if isinstance(value, (bool, np.bool_))
                                                               else None)
    if flag is None:
        _refuse(where, field, value, "True or False")
    return flag


def _real(value, where, field: str) -> float:
    if isinstance(value, str):
        number = _number_text(value)
    else:
        number = float(value) if is_real(value) else math.nan
    if not math.isfinite(number) or number < 0:
        _refuse(where, field, value, "a finite number >= 0")
    return number


def _missing(value) -> bool:
    """No search time: an empty CSV field, Parquet's null, or the NaN of ``TaskResult.rows()``."""
    return value is None or (isinstance(value, str) and value == "") or (
        isinstance(value, (float, np.floating)) and math.isnan(value))


def _typed(row: dict, where) -> dict:
    """A row's values (CSV text or Parquet's own types) checked and typed; ``ValidationError``
    naming ``where`` and the field otherwise. A success has its ``search_time``, equal to its
    ``steps``, within ``max_steps``; a failure has none and counts ``max_steps`` steps."""
    out = {"task": _name(row["task"], where, "task"), "policy": _name(row["policy"], where, "policy"),
           "episode": _integer(row["episode"], where, "episode", 0, MAX_EPISODE),
           "seed": _integer(row["seed"], where, "seed", 0, MAX_SEED),
           "success": _flag(row["success"], where, "success"),
           "steps": _real(row["steps"], where, "steps"),
           "search_time": (math.nan if _missing(row["search_time"])
                           else _real(row["search_time"], where, "search_time")),
           "max_steps": _integer(row["max_steps"], where, "max_steps", 1, MAX_STEPS),
           "reduced": _flag(row["reduced"], where, "reduced")}
    cap = out["max_steps"]
    if out["success"]:
        if math.isnan(out["search_time"]):
            _refuse(where, "search_time", row["search_time"], "the search time of a success (success is True)")
        if out["steps"] > cap:
            _refuse(where, "steps", row["steps"], f"at most max_steps = {cap}")
        if out["search_time"] != out["steps"]:
            _refuse(where, "search_time", row["search_time"], f"the steps of a success, {row['steps']}")
    else:
        if out["steps"] != cap:
            _refuse(where, "steps", row["steps"], f"max_steps = {cap}, where a failure is counted (success is False)")
        if not math.isnan(out["search_time"]):
            _refuse(where, "search_time", row["search_time"], "nothing for a failure (success is False)")
    return out


def _results_files(source) -> list:
    """The files ``read_rows`` reads: ``source`` itself, or a folder's ``.csv`` and ``.parquet``
    files by name (names beginning with a dot, such as the temporary files of a write, are not
    results); each a regular file (``plume_multi.files``)."""
    expected = "a results file (.csv or .parquet) or a folder of them"
    p = check_path(source, "results", expected)
    if os.path.isdir(p):  # not Path.is_dir: it raises for a name too long for the file system
        names = sorted(f.name for f in p.iterdir()
                       if f.suffix.lower() in SUFFIXES and not f.name.startswith("."))
        if not names:
            raise ValidationError(f"results: the folder {str(source)!r} holds no .csv or .parquet results")
        return [check_file(p / name, "results", "a results file (.csv or .parquet)") for name in names]
    path = check_file(p, "results", expected)
    _suffix(path, "results")
    return [path]


def _csv_rows(path: Path) -> list:
    """``(raw row, Location)`` of each row of a results CSV. A row is complete when its line ends
    with a line break: the writer ends every line with one, so a file whose last line has none
    was cut while written (a kill leaves ``64`` for ``642``) and is refused, naming that row."""
    data = read_bytes(path, "results", "a results file", limit=MAX_FILE_BYTES)
    name = str(path)

    def at(offset: int) -> str:
        line = data.count(b"\n", 0, offset) + 1
        return "the header (line 1)" if line == 1 else f"row {line - 1} (line {line})"

    nul = data.find(b"\0")
    if nul >= 0:
        raise ValidationError(f"results: {name}, {at(nul)}: got a NUL byte; expected text (CSV)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValidationError(f"results: {name}, {at(exc.start)}: got bytes that are not UTF-8 (byte {exc.start}: "
                              f"{exc.reason}); expected UTF-8 text (CSV)") from None
    if not text:
        raise ValidationError(f"results: {name}: got an empty file; expected the header {','.join(COLUMNS)} and "
                              "rows below it")
    lines = text.split("\n")
    if lines[-1]:
        n = len(lines)
        raise ValidationError(f"results: {name}, {'the header' if n == 1 else f'row {n - 1}'} (line {n}): got "
                              f"{shown(lines[-1], 80)} without a line break at its end; expected every line to end "
                              "with one (a file cut while it was written: run the benchmark again, it resumes)")
    lines = [line[:-1] if line.endswith("\r") else line for line in lines[:-1]]
    header = _csv_fields(lines[0], name, 1, "the header")
    if sorted(header) != sorted(COLUMNS):
        raise ValidationError(f"results: {name}, the header (line 1): got {shown(lines[0], 200)}; expected the "
                              f"columns {','.join(COLUMNS)}, each once (in any order)")
    if len(lines) == 1:
        raise ValidationError(f"results: {name}: got the header alone; expected rows below it (one per episode)")
    out = []
    for n, line in enumerate(lines[1:], start=1):
        # a line without quotes or carriage returns splits at its commas, as the csv module would
        plain = '"' not in line and "\r" not in line and len(line) <= MAX_LINE
        fields = line.split(",") if plain else _csv_fields(line, name, n + 1, f"row {n}")
        if len(fields) != len(header):
            raise ValidationError(f"results: {name}, row {n} (line {n + 1}): got {len(fields)} fields "
                                  f"({shown(line, 120)}); expected {len(header)}, one per column of the header")
        out.append((dict(zip(header, fields)), _Location(name, n, csv_line=True)))
    return out


def _csv_fields(line: str, name: str, number: int, what: str) -> list:
    if len(line) > MAX_LINE:
        raise ValidationError(f"results: {name}, {what} (line {number}): got a line of {len(line)} characters; "
                              f"expected at most {MAX_LINE}")
    if "\r" in line:
        raise ValidationError(f"results: {name}, {what} (line {number}): got a carriage return inside the line; "
                              "expected one row per line")
    try:
        return next(csv.reader([line], strict=True))
    except (csv.Error, StopIteration) as exc:
        raise ValidationError(f"results: {name}, {what} (line {number}): got {shown(line, 120)}, not a CSV line "
                              f"({exc}); expected comma-separated fields") from None


def _parquet_rows(path: Path) -> list:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise PlumeError(f"{path}: reading Parquet needs pyarrow: {PARQUET_EXTRA}") from exc
    with open_file(path, "results", "a results file") as f:
        try:
            table = pq.read_table(f)
        except Exception as exc:  # pyarrow's own errors, whatever the damage
            raise ValidationError(f"results: {path}: got a file pyarrow cannot read as Parquet ({type(exc).__name__}: "
                                  f"{shown(str(exc), 200)}); expected a results file") from None
    if sorted(table.column_names) != sorted(COLUMNS):
        raise ValidationError(f"results: {path}: got the columns {table.column_names}; expected {list(COLUMNS)}")
    if table.num_rows == 0:
        raise ValidationError(f"results: {path}: got no rows; expected one per episode")
    return [(row, _Location(str(path), n)) for n, row in enumerate(table.to_pylist(), start=1)]


def read_rows(source) -> list:
    """The rows of a results file, or of every ``.csv`` / ``.parquet`` file in a folder (sorted by
    name; names beginning with a dot are skipped).

    Every file is read whole and checked before any row is returned: a file that is not a regular
    file, is not UTF-8 text, was cut while written (its last line has no line break), or has a
    header that is not ``COLUMNS``, a row with a field out of its range (``_typed``), an episode of a
    (task, policy) twice, or two step caps in one task, is refused with ``ValidationError`` naming
    the file, the row and the field. Never a row read wrong.
    """
    typed = []
    for path in _results_files(source):
        raw = _parquet_rows(path) if path.suffix.lower() == ".parquet" else _csv_rows(path)
        typed.extend((_typed(row, where), where) for row, where in raw)
    seen, caps = {}, {}
    for row, where in typed:
        key = (row["task"], row["policy"], row["episode"])
        if key in seen:
            raise ValidationError(f"results: {where}, episode: got episode {row['episode']} of {row['task']} under "
                                  f"{row['policy']} again (first at {seen[key]}); expected each episode once "
                                  "(two runs in one folder?)")
        seen[key] = where
        cap = caps.setdefault(row["task"], (row["max_steps"], where))
        if cap[0] != row["max_steps"]:
            raise ValidationError(f"results: {where}, max_steps: got {row['max_steps']} for {row['task']}; expected "
                                  f"{cap[0]}, the step cap of its rows at {cap[1]} (one cap per task, so that its "
                                  "policies compare: run them with the same --max-steps)")
    return [row for row, _ in typed]


# ----------------------------------------------------------------------------------------- summary
def _groups(rows) -> dict:
    """``{(task, policy): rows in episode order}``, in the order first seen; a repeated episode is refused."""
    groups = defaultdict(dict)
    for row in rows:
        key = (row["task"], row["policy"])
        if row["episode"] in groups[key]:
            raise ValidationError(f"results: episode {row['episode']} of {key[0]} under {key[1]} appears twice "
                                  "(two runs in one folder?)")
        groups[key][row["episode"]] = row
    return {key: [eps[e] for e in sorted(eps)] for key, eps in groups.items()}


def summarise(rows) -> list:
    """One dict per (task, policy): episodes, success rate, mean and median steps of the
    successful episodes, IQM of the steps with its 95 % interval, reduced."""
    out = []
    for (task, policy), group in _groups(rows).items():
        steps = np.array([r["steps"] for r in group])
        found = np.array([r["success"] for r in group])
        low, high, method = iqm_interval(steps)
        times = steps[found]
        out.append({"task": task, "policy": policy, "episodes": len(group), "max_steps": group[0]["max_steps"],
                    "reduced": any(r["reduced"] for r in group), "success_rate": float(found.mean()),
                    "mean_steps": float(times.mean()) if times.size else math.nan,
                    "median_steps": float(np.median(times)) if times.size else math.nan,
                    "iqm_steps": iqm(steps), "iqm_low": low, "iqm_high": high, "ci_method": method})
    return out


def write_summary(summary, path) -> Path:
    """The summary rows as CSV, written whole or not at all."""
    p = Path(path)
    if p.suffix.lower() != ".csv":
        raise ValidationError(f"path: got {str(path)!r}; expected a file name ending in .csv")
    with writing(p, "write_summary.path", "a summary file to write", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(summary[0]))
        writer.writeheader()
        writer.writerows(summary)
    return p


def _order(values, preferred) -> list:
    seen = list(dict.fromkeys(values))
    return [v for v in preferred if v in seen] + [v for v in seen if v not in preferred]


def markdown_table(summary) -> str:
    """Tasks (rows) x policies (columns); each cell ``IQM [low, high] (success %)``: the
    interquartile mean of the steps to the source (failures at the cap; lower is better) with its
    stratified-bootstrap 95 % interval, and the share of episodes that found the source. A
    reduced run is marked ``*``; ``–``: the policy cannot act in the task or was not run. The
    built-in policies come first, then the learned baselines (``ppo-mlp``, ``ppo-gru``: the
    protocol's episodes shared among their training seeds), then any other."""
    cells = {}
    for s in summary:
        star = "*" if s["reduced"] else ""
        cells[s["task"], s["policy"]] = (f"{s['iqm_steps']:.0f} [{s['iqm_low']:.0f}, {s['iqm_high']:.0f}] "
                                         f"({s['success_rate']:.0%}){star}")
    return _rendered(cells)


def _rendered(cells: dict) -> str:
    """The Markdown table of ``{(task, policy): cell text}``, rows and columns in the table's order."""
    from ..policies.named import NAMES
    from .registry import list as task_ids

    tasks = _order([t for t, _ in cells], task_ids())
    policies = _order([p for _, p in cells], NAMES + LEARNED)
    lines = ["| task | " + " | ".join(policies) + " |", "|---|" + "---:|" * len(policies)]
    for task in tasks:
        lines.append(f"| {task} | " + " | ".join(cells.get((task, policy), "–") for policy in policies) + " |")
    return "\n".join(lines) + "\n"


TABLE_BEGIN, TABLE_END = "<!-- benchmark-table: begin -->", "<!-- benchmark-table: end -->"


def table_cells(text: str, where: str = "table") -> dict:
    """``{(task, policy): cell text}`` of the Markdown table ``markdown_table`` wrote, found in
    ``text`` (between ``TABLE_BEGIN`` and ``TABLE_END`` when it holds them, as docs/benchmark.md
    does; else its first table); ``–`` cells left out. A ``ValidationError`` when there is no such
    table or a row has another number of cells than its header."""
    if TABLE_BEGIN in text and TABLE_END in text:
        text = text[text.index(TABLE_BEGIN) + len(TABLE_BEGIN):text.index(TABLE_END)]
    lines = [line.strip() for line in text.splitlines()]
    try:
        first = next(i for i, line in enumerate(lines) if line.startswith("| task |"))
    except StopIteration:
        raise ValidationError(f"{where}: holds no table whose header begins '| task |'; expected the Markdown table "
                              "of plume-multi benchmark table") from None
    policies = [c.strip() for c in lines[first].strip("|").split("|")][1:]
    cells = {}
    for number, line in enumerate(lines[first + 2:], first + 3):
        if not line.startswith("|"):
            break
        row = [c.strip() for c in line.strip("|").split("|")]
        if len(row) != len(policies) + 1:
            raise ValidationError(f"{where}: table line {number} has {len(row)} cells; expected {len(policies) + 1} "
                                  f"(a task and {len(policies)} policies): {line[:120]!r}")
        cells.update({(row[0], p): c for p, c in zip(policies, row[1:]) if c != "–"})
    return cells


def merged_markdown(summary, earlier: str, where: str = "table") -> str:
    """``markdown_table(summary)`` with the cells of the ``earlier`` table (``table_cells``) where
    ``summary`` has none: a column run alone, added to a table whose other columns' results are
    elsewhere, those cells unchanged."""
    new = table_cells(markdown_table(summary))
    return _rendered({**table_cells(earlier, where), **new})


# ----------------------------------------------------------------------------------------- figure
def profile_scores(rows) -> dict:
    """``{policy: (E, T) scores}``: ``1 - steps / max_steps`` of the first E episodes of each of the
    T tasks the policy ran (E the fewest episodes among them), tasks in the table's order."""
    from .registry import list as task_ids

    by_policy = defaultdict(dict)
    for (task, policy), group in _groups(rows).items():
        by_policy[policy][task] = np.array([1.0 - r["steps"] / r["max_steps"] for r in group])
    out = {}
    for policy, per_task in by_policy.items():
        order = _order(list(per_task), task_ids())
        e = min(len(per_task[t]) for t in order)
        out[policy] = np.stack([per_task[t][:e] for t in order], axis=1)
    return out


def performance_profile(rows, path, title: str | None = None) -> Path:
    """A PNG of the performance profiles of the policies in ``rows`` (rliable's
    ``create_performance_profile`` and ``plot_performance_profiles``; needs rliable and matplotlib)."""
    if rliable_library() is None:  # missing, or failing to import: the warning said why
        raise RenderingError(f"the performance profile needs rliable, which does not import here (the warning "
                             f"above says why): {BENCH_EXTRA}")
    from rliable import library, plot_utils
    from ..evaluation import pyplot

    plt = pyplot()
    p = Path(path)
    if p.suffix.lower() != ".png":
        raise ValidationError(f"path: got {str(path)!r}; expected a file name ending in .png")
    p.parent.mkdir(parents=True, exist_ok=True)
    scores = profile_scores(rows)
    with seeded_global_numpy(BOOTSTRAP_SEED):
        profiles, intervals = library.create_performance_profile(scores, PROFILE_TAUS, reps=PROFILE_REPS)
    labels = {k: f"{k} ({v.shape[1]} task{'s' if v.shape[1] != 1 else ''})" for k, v in scores.items()}
    fig, ax = plt.subplots(figsize=(7, 4.5))
    plot_utils.plot_performance_profiles({labels[k]: v for k, v in profiles.items()}, PROFILE_TAUS,
                                         performance_profile_cis={labels[k]: v for k, v in intervals.items()},
                                         ax=ax, xlabel=r"score $\tau$ = 1 - steps / step cap",
                                         ylabel=r"share of episodes scoring $> \tau$")
    ax.legend(fontsize="small", loc="upper right")
    ax.set_title(title or "Performance profiles over the tasks each policy ran", fontsize="medium")
    fig.tight_layout()
    with writing(p, "performance_profile", "a .png file name", text=False) as f:  # whole or not at all
        fig.savefig(f, dpi=100, format="png")
    plt.close(fig)
    return p
