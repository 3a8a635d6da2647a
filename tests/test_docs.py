"""The documentation cannot drift: every Python block of README.md and docs/ runs (the site itself,
its API reference, model sections and formulas: tests/test_docs_site.py).

Blocks run one by one, each in a fresh namespace and in a temporary folder (so each must be
self-contained, as a reader copying it expects). A block too long to run at full size is preceded
by an HTML comment that the renderers hide::

    <!-- docs-test: replace "1_500_000" "16_384" -->

and runs with those replacements (each must occur in the block). A block that is not run says why::

    <!-- docs-test: skip: needs AgileRL, not installed by the test extra -->

Shell commands go in ```bash blocks, which are not run.

What a block says it prints is checked: a line ``print(expr)  # value`` whose comment is a Python
literal (or starts with one, followed by ``:`` or ``;`` and words) runs as ``assert expr == value``.
"""

from __future__ import annotations

import re

import pytest

from docs_blocks import LANGUAGES, PAGES, ROOT, blocks, checked_prints, run_block

ALL = [block for page in PAGES for block in blocks(page)]
PYTHON = [block for block in ALL if block.language == "python"]


def test_a_printed_value_the_page_states_is_checked():
    code = checked_prints("x = (1, 2)\nprint(x)  # (1, 2): a pair\nprint(x)  # some words\n")
    assert "assert (x) == (1, 2)" in code and "print(x)  # some words" in code
    exec(code, {})
    with pytest.raises(AssertionError, match=r"the page says print\(x\) shows \(1, 3\); it shows \(1, 2\)"):
        exec(checked_prints("x = (1, 2)\nprint(x)  # (1, 3)\n"), {})


def test_the_pages_have_python_blocks_to_run():
    pages = {block.page.relative_to(ROOT).as_posix() for block in PYTHON}
    assert "README.md" in pages and "docs/getting-started.md" in pages
    assert len(PYTHON) >= 15


@pytest.mark.parametrize("block", ALL, ids=lambda b: b.id)
def test_fences_are_python_bash_or_text(block):
    assert block.language in LANGUAGES, f"{block.id}: fence ```{block.language}; use python, bash or text"
    if block.language == "bash":
        assert not block.replacements, f"{block.id}: bash blocks are not run; a replace mark is a mistake"


@pytest.mark.parametrize("block", PYTHON, ids=lambda b: b.id)
def test_python_block_runs(block, tmp_path):
    if block.skip is not None:
        # not run: the page must say so to the reader too, next to the block
        assert block.skip, f"{block.id}: a skipped block needs a reason"
        assert "not tested" in block.page.read_text(encoding="utf-8"), f"{block.id}: the page must say it is not tested"
        return
    run_block(block, tmp_path)  # pictures and movies land in a temporary folder


def test_no_page_points_at_documents_users_do_not_have():
    pattern = re.compile(r"shared/|CONTRACT\.md|seed 00\d|the reference's|the reference implementation", re.I)
    for page in [*PAGES, *sorted((ROOT / "plume_multi").rglob("*.py"))]:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
            assert not pattern.search(line), f"{page.relative_to(ROOT)}:{number}: {line.strip()}"


def test_the_factories_carry_the_env_card():
    import plume_multi

    for factory in (plume_multi.parallel_env, plume_multi.env, plume_multi.vector_env):
        doc = factory.__doc__
        for section in ("## Action Space", "## Observation Space", "## Rewards", "## Episode End", "## Example"):
            assert section in doc, f"{factory.__name__}.__doc__ lacks {section!r}"
    assert plume_multi.parallel_env.__doc__.startswith("A ``ParallelEnv`` of N searchers")


def test_the_readme_fits_on_a_few_screens_opens_with_a_picture_and_speaks_to_users():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = readme.splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines; the rest belongs on the docs site"
    assert any(line.startswith("![") and "docs/" in line for line in lines[:10]), "a picture on the first screen"
    assert "shared/" not in readme and "../" not in readme
    ids = set(re.findall(r'"((?:plume_multi:)?Plume\w+-v\d)"', readme))
    assert ids == {"plume_multi:PlumeSearchCompact-v0"}, ids  # the trainer's id: compact, prefixed
    for target in re.findall(r"\]\(((?:docs/)[^)#]+)", readme):
        assert (ROOT / target).exists(), f"the README links to {target}, which does not exist"


def test_the_readme_keeps_its_two_commands_and_says_how_to_reach_the_environment():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make demo" in readme and "make test" in readme
    assert "source .venv/bin/activate" in readme
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ci.strip().splitlines()[-1] == "make test"


def test_licence_and_citation_agree_with_the_package():
    import yaml

    import plume_multi

    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")  # (tomllib is Python 3.11+)
    project = {key: re.search(rf'^{key} = "([^"]+)"', pyproject, re.M).group(1) for key in ("license", "version")}
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert project["license"] == "MIT" and licence.startswith("MIT License")
    assert "The plume_multi developers" in licence
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert citation["cff-version"] == "1.2.0" and citation["type"] == "software"
    assert citation["license"] == "MIT" and str(citation["version"]) == plume_multi.__version__ == project["version"]
    assert citation["authors"] == [{"name": "The plume_multi developers"}]
    cited = {reference["title"] for reference in citation["references"]}
    references = " ".join((ROOT / "docs" / "references.md").read_text(encoding="utf-8").split())  # titles wrap
    assert len(cited) == 5 and all(title.split(":")[0] in references for title in cited)
    assert "## Unreleased" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


def _extras() -> set[str]:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = pyproject.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    return set(re.findall(r"^([a-z][\w-]*) = ", section, re.M))


def test_the_readme_and_getting_started_name_every_extra():
    extras = _extras()
    assert {"viz", "movie", "sb3", "data", "rllib", "all", "docs", "test"} <= extras
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    sentence = re.search(r"The extras are (.*?) \(each explained", readme).group(1)
    assert set(re.findall(r"`([\w-]+)`", sentence)) == extras, sentence
    table = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    assert set(re.findall(r"^\| `([\w-]+)` \|", table, re.M)) == extras


def _top_level_split(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char in "([{" and 1 or (char in ")]}" and -1 or 0)
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    return [part for part in [*parts, current.strip()] if part]


def test_the_table_of_models_names_every_model_with_its_real_parameters():
    """Each row of the models overview's table (docs/models.md) names every model of its family, and each
    ``Model(keyword=default)`` written there is a parameter of that model, with that default when
    the default is a literal."""
    import ast
    import inspect

    import plume_multi
    from plume_multi.models import Body, Plume, Reward, Sensor
    from plume_multi.models.sources import SourceMotion

    bases = {"plumes": Plume, "bodies": Body, "sensors": Sensor, "rewards": Reward, "sources": SourceMotion}
    readme = (ROOT / "docs" / "models.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(plumes|bodies|sensors|rewards|sources)`[^|]*\| (.*) \|\s*$", readme, re.M))
    assert set(rows) == set(bases)
    for family, row in rows.items():
        module = getattr(plume_multi, family)
        models = {name for name in module.__all__ if inspect.isclass(getattr(module, name))
                  and issubclass(getattr(module, name), bases[family]) and getattr(module, name) is not bases[family]}
        written = {name: arguments for name, arguments in re.findall(r"`([A-Z]\w*)\(([^`]*)\)`", row.replace("\\|", "|"))
                   if name not in ("Discrete", "Box")}  # the action spaces the bodies give
        assert models <= set(written), f"docs/models.md: the {family} row lacks {sorted(models - set(written))}"
        for name, arguments in written.items():
            assert name in models, f"docs/models.md: the {family} row names {name}, which plume_multi.{family} does not export"
            parameters = inspect.signature(getattr(module, name)).parameters
            for argument in _top_level_split(arguments):
                if "=" not in argument or argument == "...":
                    continue
                keyword, default = (part.strip() for part in argument.split("=", 1))
                assert keyword in parameters, f"docs/models.md: {name}({keyword}=...) but {name} has no parameter {keyword}"
                try:
                    value = ast.literal_eval(default)
                except (ValueError, SyntaxError):
                    continue  # a placeholder such as (x, y) | "random"
                assert parameters[keyword].default == value, (
                    f"docs/models.md: {name}({keyword}={default}) but the default is {parameters[keyword].default!r}")


def test_the_source_layout_names_only_files_that_exist():
    page = (ROOT / "docs" / "source-layout.md").read_text(encoding="utf-8")
    layout = page.split("```", 2)[1]
    package_files = {path.name for folder in ("plume_multi", "examples", "tests", "benchmarks")
                     for path in (ROOT / folder).rglob("*.py")}
    folders = {path.name for path in ROOT.rglob("*") if path.is_dir() and ".venv" not in path.parts}
    named = set(re.findall(r"\b(\w+\.py)\b", layout))
    assert len(named) > 30
    assert not named - package_files, f"the source layout names files that do not exist: {sorted(named - package_files)}"
    for folder in re.findall(r"^\s*(\w+)/", layout, re.M):
        assert folder in folders, f"the source layout names the folder {folder}/, which does not exist"


def _dry_run(target: str) -> list:
    import shutil
    import subprocess

    if shutil.which("make") is None:
        pytest.fail("make is not installed: the README's two commands need it")
    out = subprocess.run(["make", "-n", "-B", target], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def test_make_test_builds_the_demos_environment_runs_the_readme_in_it_then_adds_the_test_tools():
    demo = [line for line in _dry_run("demo") if "pip install" in line and "--upgrade pip" not in line]
    assert demo == ['.venv/bin/python -m pip install --quiet --no-compile -c constraints.txt -e ".[all]"']
    test = _dry_run("test")
    steps = [test.index(demo[0]), test.index(".venv/bin/python tests/docs_blocks.py README.md"),
             test.index('.venv/bin/python -m pip install --quiet --no-compile -c constraints.txt -e ".[test]"'),
             next(k for k, line in enumerate(test) if "pytest" in line)]
    assert steps == sorted(steps), test
    assert all("-c constraints.txt" in line for line in test if "pip install" in line and "--upgrade pip" not in line)


def test_make_s_recipes_write_bytecode_whatever_the_callers_environment():
    """The environments install with --no-compile and count on Python writing bytecode at first
    import: a caller's PYTHONDONTWRITEBYTECODE made every test process compile each module it
    imports from source (collection 24.8 against 10.1 CPU s per worker)."""
    import os
    import shutil
    import subprocess

    if shutil.which("make") is None:
        pytest.fail("make is not installed: the README's two commands need it")
    # the Makefile, with one recipe that prints what it sees (read from standard input: any make)
    probe = "include Makefile\nplume-multi-probe-env:\n\t@echo \"[$${PYTHONDONTWRITEBYTECODE-unset}]\"\n"
    out = subprocess.run(["make", "-s", "-f", "-", "plume-multi-probe-env"], input=probe, cwd=ROOT, capture_output=True,
                         text=True, check=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}).stdout
    assert out.strip() == "[unset]", out


def test_the_constraints_bound_what_breaks_and_the_bench_extra_carries_the_same_bound():
    bounds = [line for line in (ROOT / "constraints.txt").read_text().splitlines() if line and not line.startswith("#")]
    assert "pandas<3" in bounds
    assert '"pandas<3"' in (ROOT / "pyproject.toml").read_text()
