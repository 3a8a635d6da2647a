"""The documentation site: it builds in MkDocs' strict mode, every public name has its entry in the
API reference, every model its section on its family's page, and the formulas are typeset at build
time (MathML), which a headless browser checks on a model page.

One build serves every test here (``site``, built once per module). How to add a page, a model
section or an API entry: docs/developing-models.md, "Documenting a model".
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import pkgutil
import re
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

# Every module of the package is public (its public names need API entries) except these, each
# with the reason. Model files under a family folder are implementations: their models are public
# through the family (plume_multi.plumes, ...), which is checked.
INTERNAL = {
    "plume_multi._compat": "the old import paths, deprecated",
    "plume_multi.checks": "the validators; model authors reach them through plume_multi.models.base",
    "plume_multi.cli": "the command line, documented by its --help and the pages",
    "plume_multi.engine.assemble": "the step driver's generator, behind Simulator",
    "plume_multi.engine.records": "helpers of the driver's records",
    "plume_multi.engine.shared": "kernels shared by the models (start cells, action checks)",
    "plume_multi.files": "the checked opener every reader of a path goes through",
    "plume_multi.envs.registration": "the env ids, which the pages name",
    "plume_multi.models.registry": "re-exported by plume_multi.models",
    "plume_multi.policies.infotaxis_kernels": "the compiled kernels behind policies.Infotaxis",
    "plume_multi.policies.infotaxis_scores": "the compiled window sums of policies.Infotaxis' decisions",
    "plume_multi.policies.paths": "the compiled free-path distances of the belief searchers among walls",
    "plume_multi.policies.bayesian_protocol": "the compiled episodes behind run_search (both protocols)",
    "plume_multi.policies.greedy_kernels": "the compiled kernels behind policies.Greedy",
    "plume_multi.policies.team_kernels": "the compiled kernels behind policies.Team",
    "plume_multi.policies.belief_state": "what Infotaxis, Greedy and Team share (the beliefs of a simulator)",
    "plume_multi.policies.perseus_problem": "what Perseus, its solver and its files share",
}
INTERNAL_PREFIXES = ("plume_multi.cli.", "plume_multi.models.plumes.", "plume_multi.models.bodies.",
                     "plume_multi.models.sensors.", "plume_multi.models.rewards.", "plume_multi.models.sources.")
# where a name's entry belongs, by module (the first prefix that matches)
API_PAGES = (
    ("plume_multi.models", "docs/api/models.md"),
    ("plume_multi.envs", "docs/api/frontends.md"),
    ("plume_multi.integrations", "docs/api/integrations.md"),
    ("plume_multi.evaluation", "docs/api/evaluation.md"),
    ("plume_multi.scenarios", "docs/api/evaluation.md"),
    ("plume_multi.tasks", "docs/api/benchmark.md"),
    ("plume_multi.policies", "docs/api/misc.md"),
    ("plume_multi.training", "docs/api/training.md"),
    ("plume_multi.errors", "docs/api/misc.md"),
    ("plume_multi.viz", "docs/api/rendering.md"),
    ("plume_multi.stats", "docs/api/stats.md"),
    ("plume_multi", "docs/api/engine.md"),
)
FAMILY_PAGES = {"plumes": "docs/models/plumes.md", "bodies": "docs/models/actions.md",
                "sensors": "docs/models/sensors.md", "rewards": "docs/models/rewards.md",
                "sources": "docs/models/sources.md"}
# the pages a researcher's tasks need (issue: "docs that answer"), each naming what it must explain
TASK_PAGES = {
    "docs/turbulent-search.md": ("PoissonHits", "Infotaxis", "team=True", "poisson_search"),
    "docs/evaluation.md": ("evaluate", "sweep", "EvaluationResult"),
    "docs/multi-agent-training.md": ("multi_agent_vector_env", "SB3VecEnv"),
    "docs/ray.md": ("ppo_config", "executor=\"ray\"", "RAY_ADDRESS"),
    "docs/recorded-data.md": ("Movie", ".npy", "HDF5", "Zarr"),
    "docs/compilation.md": ("PLUME_MULTI_CACHE_DIR", "prune", "ModelError"),
    "docs/training.md": ("plume_multi.train", "plume-multi train", "PPOConfig", "LearnedPolicy", "load_policy"),
    "docs/plume-statistics.md": ("plume_statistics", "odor_statistics", "intermittency", "Celani"),
}


# ------------------------------------------------------------------------------------- the build
@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                            cwd=ROOT, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "MPLBACKEND": "Agg"})
    assert result.returncode == 0, result.stdout + result.stderr
    return out


def test_the_site_builds_in_strict_mode(site):
    # the API reference is generated from the docstrings
    api = (site / "api" / "engine" / "index.html").read_text(encoding="utf-8")
    assert "Start new episodes" in api  # Simulator.reset's docstring
    # the integrations page shows the TorchRL block
    integrations = (site / "integrations" / "index.html").read_text(encoding="utf-8")
    assert "GymWrapper" in integrations
    assert (site / "frontends" / "single-agent" / "index.html").is_file()


# ------------------------------------------------------------------------------------- formulas
def _text_outside_code(page: str) -> str:
    page = re.sub(r"<(pre|code|script|style)\b.*?</\1>", " ", page, flags=re.S)
    return re.sub(r"<[^>]+>", " ", page)


def test_formulas_are_typeset_at_build_time_and_nothing_loads_from_the_network(site):
    pages = sorted(site.rglob("*.html"))
    formulas = 0
    for path in pages:
        page = path.read_text(encoding="utf-8")
        where = path.relative_to(site)
        assert 'class="arithmatex"' not in page, f"{where}: a formula left as TeX"
        text = _text_outside_code(page)
        for raw in ("\\(", "\\[", "\\frac", "\\sigma", "$$"):
            assert raw not in text, f"{where}: raw TeX {raw!r} in the text: {text[text.index(raw) - 80:][:200]!r}"
        # no script, stylesheet or font from elsewhere: the site works offline
        remote = re.findall(r'<(?:script|link)\b[^>]*(?:src|href)="(https?:[^"]+)"', page)
        assert not [url for url in remote if "stylesheet" in url or url.endswith((".js", ".css"))], (where, remote)
        assert "fonts.googleapis" not in page and "cdn.jsdelivr" not in page, where
        formulas += page.count("<math")
    models = (site / "models" / "plumes" / "index.html").read_text(encoding="utf-8")
    assert '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">' in models
    assert formulas >= 40


def _hook(name: str):
    spec = importlib.util.spec_from_file_location(f"docs_hook_{name}", DOCS / "hooks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_formula_that_cannot_be_typeset_fails_the_build():
    math = _hook("math")
    ok = math.typeset_page('<p>a <span class="arithmatex">\\(x &lt; \\frac{1}{2}\\)</span></p>', "page.md")
    assert "<mfrac>" in ok and "<mo>&#x0003C;</mo>" in ok and "arithmatex" not in ok
    for tex in ("\\left( x", "\\unknowncommand{x}"):
        with pytest.raises(ValueError, match=r"page\.md: cannot typeset the formula"):
            math.typeset_page(f'<div class="arithmatex">\\[{tex}\\]</div>', "page.md")


# ------------------------------------------------------------------------------------- public names
def _public_modules() -> list[str]:
    import plume_multi

    names = ["plume_multi"]
    for info in pkgutil.walk_packages(plume_multi.__path__, "plume_multi."):
        name = info.name
        if any(part.startswith("_") for part in name.split(".")):
            continue
        if name in INTERNAL or name.startswith(INTERNAL_PREFIXES):
            continue
        names.append(name)
    return names


def _canonical(obj) -> str | None:
    obj = getattr(obj, "py_func", obj)  # a compiled function: the Python function it compiles
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    return f"{module}.{qualname}" if module and qualname else None


def _is_documentable(obj) -> bool:
    return inspect.isclass(obj) or inspect.isfunction(getattr(obj, "py_func", obj))


def public_names() -> list[tuple[str, str | None]]:
    """``(public path, canonical path)`` of every class and function in the ``__all__`` of a public
    module (of those without ``__all__``: defined there, no leading underscore). Read statically
    with griffe (importing would pull torch and Ray); a module whose ``__all__`` griffe cannot
    follow (``plume_multi``'s names imported on first use) is imported instead."""
    import griffe

    package = griffe.load("plume_multi", search_paths=[str(ROOT)], resolve_aliases=True, resolve_external=False)
    found = []
    for module_name in _public_modules():
        module = package[module_name.removeprefix("plume_multi.")] if module_name != "plume_multi" else package
        exports = module.exports
        if exports is not None and not all(isinstance(name, str) and name in module.all_members for name in exports):
            found += _public_names_imported(module_name)  # computed or conditional names: ask Python
            continue
        names = exports if exports is not None else [n for n, m in module.members.items()
                                                      if not n.startswith("_") and not m.is_alias]
        for name in names:
            member = module[name]
            try:
                kind, canonical = member.kind, member.canonical_path
            except griffe.AliasResolutionError:  # imported from a library: not ours to document
                continue
            is_class = kind is griffe.Kind.CLASS or (kind is griffe.Kind.ATTRIBUTE and "namedtuple(" in str(member.value))
            if is_class or kind is griffe.Kind.FUNCTION:
                found.append((f"{module_name}.{name}", canonical))
    return found


def _public_names_imported(module_name: str) -> list[tuple[str, str | None]]:
    module = importlib.import_module(module_name)
    found = []
    for name in module.__all__:
        obj = getattr(module, name)
        if _is_documentable(obj):
            found.append((f"{module_name}.{name}", _canonical(obj)))
    return found


def inventory(site: Path) -> set[str]:
    """Every name the API reference documents (mkdocstrings' objects.inv: each rendered object
    under its path and every alias griffe knows for it)."""
    data = (site / "objects.inv").read_bytes()
    body = zlib.decompress(data.split(b"\n", 4)[4]).decode()
    return {line.split(" ", 1)[0] for line in body.splitlines() if " py:" in line}


def _entry(path: str, canonical: str | None) -> str:
    """What to write after ``:::``: the public path, or where the object is defined for the names
    ``plume_multi`` imports on first use (mkdocstrings cannot follow those)."""
    return canonical if path.count(".") == 1 and canonical else path


def _api_page(path: str) -> str:
    return next(page for prefix, page in API_PAGES if path == prefix or path.startswith(prefix + "."))


def test_every_public_name_has_an_entry_in_the_api_reference(site):
    documented = inventory(site)
    names = public_names()
    assert len(names) > 100 and ("plume_multi.evaluation.sweep", "plume_multi.evaluation.sweep") in names
    missing = [(path, canonical) for path, canonical in names if path not in documented and canonical not in documented]
    lines = [f"  {path}  ->  add `::: {_entry(path, canonical)}` to {_api_page(canonical or path)}"
             for path, canonical in missing]
    assert not missing, (
        f"{len(missing)} public names have no entry in the API reference (mkdocstrings, docs/api/*.md):\n"
        + "\n".join(sorted(set(lines)))
        + "\n(or, for a whole module, `::: module`, which documents its __all__; an implementation detail "
          "leaves __all__, or its module goes into INTERNAL in tests/test_docs_site.py, with the reason)")


def test_an_undocumented_name_is_reported_with_where_to_add_it():
    names = public_names()
    documented = {path for path, _ in names} | {canonical for _, canonical in names}
    documented -= {"plume_multi.evaluation.sweep"}
    missing = [path for path, canonical in names if path not in documented and canonical not in documented]
    assert missing == ["plume_multi.evaluation.sweep"]
    assert _api_page("plume_multi.evaluation.sweep") == "docs/api/evaluation.md"
    assert _api_page("plume_multi.models.plumes.Gaussian") == "docs/api/models.md"


# ------------------------------------------------------------------------------------- model sections
def models() -> list[tuple[str, type]]:
    """``(family, class)`` of every model the families export (subclasses of the family's base)."""
    import plume_multi
    from plume_multi.models import Body, Plume, Reward, Sensor
    from plume_multi.models.sources import SourceMotion

    bases = {"plumes": Plume, "bodies": Body, "sensors": Sensor, "rewards": Reward, "sources": SourceMotion}
    found = []
    for family, base in bases.items():
        module = getattr(plume_multi, family)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, base) and obj is not base:
                found.append((family, obj))
    return found


def sections(page: str) -> dict[str, str]:
    """Each heading of a Markdown page -> the text under it, up to the next heading of its level or higher."""
    lines = page.splitlines()
    heads = [(i, len(m.group(1))) for i, line in enumerate(lines) if (m := re.match(r"(#{1,6}) ", line))]
    out = {}
    for k, (i, level) in enumerate(heads):
        end = next((j for j, lv in heads[k + 1:] if lv <= level), len(lines))
        out[lines[i]] = "\n".join(lines[i + 1:end])
    return out


def section_problems(family: str, model: type, site: Path | None) -> list[str]:
    page_path = FAMILY_PAGES[family]
    name = model.__name__
    found = {head: body for head, body in sections((ROOT / page_path).read_text(encoding="utf-8")).items()
             if f"`{name}`" in head or f"`{name}(" in head}
    if not found:
        return [f"{family}.{name}: no section in {page_path}: add a heading with `{name}` in it (e.g. "
                f"'## `{name}`: what it is') holding its equation, parameters, picture and reference"]
    head, body = next(iter(found.items()))
    problems = []
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", body)
    if not images:
        problems.append(f"{family}.{name}: its section '{head}' in {page_path} has no picture: draw one in "
                        f"docs/figures.py (@figure(\"{family}\", \"{name}\")) and show it with "
                        f"![...](../figures/{family}/{name}.png)")
    elif site is not None:
        built = [(site / "models" / image).resolve() for image in images]
        problems += [f"{family}.{name}: the picture {image} of '{head}' is not in the built site"
                     for image, path in zip(images, built) if not path.is_file()]
    if "\\(" not in body and "\\[" not in body:
        problems.append(f"{family}.{name}: its section '{head}' in {page_path} has no equation (\\( ... \\) or \\[ ... \\])")
    if not re.search(r"^\| *parameter", body, re.M | re.I) and "no parameters" not in body:
        problems.append(f"{family}.{name}: its section '{head}' in {page_path} has no table of parameters "
                        f"('| parameter | unit | default | ... |', or the words 'no parameters')")
    if not re.search(r"^\*\*Reference\*\*:", body, re.M):
        problems.append(f"{family}.{name}: its section '{head}' in {page_path} names no paper "
                        f"(a line starting '**Reference**:')")
    return problems


def test_every_model_has_a_section_with_equation_parameters_picture_and_paper(site):
    found = models()
    assert len(found) >= 20 and ("sensors", __import__("plume_multi").sensors.Belief) in found
    problems = [problem for family, model in found for problem in section_problems(family, model, site)]
    assert not problems, "\n".join(problems)


def test_a_model_without_a_section_is_reported_with_where_to_add_it():
    from dataclasses import dataclass

    from plume_multi.models import Sensor

    @dataclass(frozen=True)
    class Undocumented(Sensor):
        pass

    assert section_problems("sensors", Undocumented, None) == [
        "sensors.Undocumented: no section in docs/models/sensors.md: add a heading with `Undocumented` in it "
        "(e.g. '## `Undocumented`: what it is') holding its equation, parameters, picture and reference"]


def test_the_pages_answer_a_researchers_tasks(site):
    import mkdocs.config

    nav = json.dumps(mkdocs.config.load_config(str(ROOT / "mkdocs.yml"))["nav"])
    for page, needs in TASK_PAGES.items():
        relative = page.removeprefix("docs/")
        assert relative in nav, f"{page} is not in mkdocs.yml's nav"
        built = (site / relative.removesuffix(".md") / "index.html").read_text(encoding="utf-8")
        text = _text_outside_code(built) + " ".join(re.findall(r"<code>(.*?)</code>", built))
        text = text.replace("&quot;", '"')
        for need in needs:
            assert need in text, f"{page} does not mention {need!r}"
    # every name of plume_multi's own namespace is explained on a page, not only in the API reference
    import plume_multi

    prose = " ".join(path.read_text(encoding="utf-8") for path in DOCS.rglob("*.md") if "api" not in path.parts)
    unexplained = [name for name in plume_multi.__all__ if name not in prose]
    assert not unexplained, f"no page (docs/*.md outside docs/api/) mentions {unexplained}"


# ------------------------------------------------------------------------------------- in a browser
def _browser() -> str | None:
    return os.environ.get("PLUME_BROWSER") or shutil.which("chromium") or shutil.which("chromium-browser")


# Injected into a copy of a built page: measures every block formula and the fractions in them as
# the browser laid them out.
MEASURE = """<script>
const rect = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; };
const blocks = [...document.querySelectorAll("math[display=block]")];
const fractions = [...document.querySelectorAll("math[display=block] mfrac")].map(
  f => ({numerator: rect(f.children[0]), denominator: rect(f.children[1])}));
document.body.setAttribute("data-formulas", JSON.stringify({
  blocks: blocks.map(rect), fractions: fractions, text: document.body.innerText}));
</script>"""


def test_a_model_page_shows_its_formulas_typeset_in_a_headless_browser(site):
    """Chromium, offline, on the plumes page: the Gaussian's formula is laid out as mathematics (a
    fraction's numerator above its denominator), no raw TeX is shown; the screenshot is kept in
    test-artifacts/ ($PLUME_TEST_ARTIFACTS). The browser: chromium on the PATH, or $PLUME_BROWSER.

    Plain ``chromium --headless`` twice (``--dump-dom`` of a copy of the page with a measuring
    script, then ``--screenshot``): no driver to install (Playwright's own browser download does not
    work offline; Selenium needs chromedriver), and MathML needs no script to typeset."""
    browser = _browser()
    if browser is None:
        if os.environ.get("PLUME_REQUIRE_BROWSER") == "1":
            pytest.fail("PLUME_REQUIRE_BROWSER=1 but no chromium here: `make test` installs it (apt-get install chromium)")
        pytest.skip("no headless browser (chromium); `make test` installs one and requires it")
    page = site / "models" / "plumes" / "index.html"
    probe = page.with_name("formula-check.html")  # beside the page: its relative assets resolve
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
             "--no-first-run", "--disable-extensions", "--window-size=1200,1600"]  # tall: the Gaussian's formula in the picture
    env = {**os.environ, "HOME": str(site)}  # chromium writes its profile under HOME
    dom = subprocess.run([*flags, "--dump-dom", probe.as_uri()], capture_output=True, text=True, timeout=120, env=env)
    found = re.search(r'data-formulas="([^"]*)"', dom.stdout)
    assert found, f"the browser ran no script on the page: {dom.stderr[-2000:]}"
    import html

    measured = json.loads(html.unescape(found.group(1)))
    assert len(measured["blocks"]) >= 1
    assert measured["blocks"][0][1] < 1500, "the screenshot would not show the first formula"
    for left, top, width, height in measured["blocks"]:
        assert width > 50 and height > 15, measured["blocks"]
    assert measured["fractions"], "the Gaussian's formula has a fraction"
    for fraction in measured["fractions"]:
        numerator, denominator = fraction["numerator"], fraction["denominator"]
        assert numerator[1] + numerator[3] <= denominator[1] + 1, fraction  # stacked: typeset, not inline text
    text = measured["text"]
    for raw in ("\\(", "\\[", "\\frac", "\\exp", "$$"):
        assert raw not in text, f"raw TeX {raw!r} shown on the page"

    artifacts = Path(os.environ.get("PLUME_TEST_ARTIFACTS", ROOT / "test-artifacts"))
    artifacts.mkdir(parents=True, exist_ok=True)
    shot = artifacts / "docs-plumes-formula.png"
    shot.unlink(missing_ok=True)
    subprocess.run([*flags, f"--screenshot={shot}", probe.as_uri()], capture_output=True, text=True, timeout=120,
                   env=env)
    assert shot.is_file() and shot.stat().st_size > 10_000, f"no screenshot at {shot}"
