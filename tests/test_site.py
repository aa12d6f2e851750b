"""Build the site as a reader gets it, then read it as a reader would.

The build runs `jupyter-book build --all -W -n --keep-going` (a fresh Sphinx environment, so a warning
from an earlier run is not hidden by an incremental build; warnings are errors; executed outputs
come from the execution cache). Then:
- the executed notebooks show an error exactly in the cells tagged `raises-exception`;
- headless Chromium (Debian's `chromium`, driven by Playwright) opens every page in the table of
  contents and checks its title, its code outputs, its figures, its math, and (for a chapter)
  that the Colab button opens that very notebook. Screenshots go to _build/screenshots/.
Without Chromium the browser test is skipped with a hint, except under CI (CI=true): it fails.
"""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.book import (
    BUILD,
    HTML,
    NOTEBOOKS,
    ROOT,
    code_cells,
    executed_notebook,
    heading,
    load_notebook,
    repository_slug,
    tags,
    title,
    toc_files,
)

JUPYTER_BOOK = Path(sys.executable).with_name("jupyter-book")
SCREENSHOTS = BUILD / "screenshots"
HIDDEN = {"remove-cell", "remove-output"}


@pytest.fixture(scope="session")
def built_site():
    result = subprocess.run(
        [str(JUPYTER_BOOK), "build", str(ROOT), "--all", "-W", "-n", "--keep-going"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    BUILD.mkdir(exist_ok=True)
    log = result.stdout + result.stderr
    (BUILD / "build.log").write_text(log)
    assert result.returncode == 0, f"the site build failed (log in _build/build.log):\n{log[-6000:]}"
    return HTML


def test_site_builds_without_warnings(built_site):
    log = (BUILD / "build.log").read_text()
    # Sphinx writes "WARNING: ..." (kernels' own "[IPKernelApp] WARNING | ..." lines are not Sphinx's)
    problems = [line for line in log.splitlines() if re.search(r"\b(WARNING|ERROR|CRITICAL):", line)]
    assert not problems, "\n".join(problems)
    assert (built_site / "index.html").exists()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_errors_only_where_tagged(built_site, path):
    """nbmake lets a `raises-exception` cell pass even when it does not raise: check it did."""
    executed = executed_notebook(path)
    for index, cell in enumerate(code_cells(executed)):
        raised = any(output["output_type"] == "error" for output in cell["outputs"])
        if "raises-exception" in tags(cell):
            assert raised, f"code cell {index} is tagged raises-exception but did not raise"
        else:
            assert not raised, f"code cell {index} raised but is not tagged raises-exception"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_no_cell_shows_a_deprecation_warning(built_site, path):
    """A chapter teaches the current API: no output of the published build mentions a deprecation.

    (tests/test_precision_emulation.py also turns DeprecationWarning into an error in every cell.)
    """
    executed = executed_notebook(path)
    for index, cell in enumerate(code_cells(executed)):
        for output in cell["outputs"]:
            text = output.get("text", "") if output["output_type"] == "stream" else ""
            text = text if isinstance(text, str) else "".join(text)
            assert not re.search(r"(Deprecation|Future)Warning", text), f"code cell {index}: {text[:500]}"


# ---------------------------------------------------------------------------------------------
# The browser test

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
MATHJAX_CDN = "https://cdn.jsdelivr.net/npm/mathjax@3/es5/"


def find_chromium():
    for name in ("chromium", "chromium-browser"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def local_mathjax():
    """MathJax 3's files from the pinned django-static-mathjax package: the page asks the CDN for
    them, and the test answers from here, so math renders with no network."""
    spec = importlib.util.find_spec("mathjax")
    assert spec, "django-static-mathjax (requirements.txt) is not installed"
    return Path(list(spec.submodule_search_locations)[0]) / "static" / "mathjax" / "es5"


@pytest.fixture(scope="session")
def browser(built_site):
    chromium = find_chromium()
    if chromium is None:
        message = "no chromium found: install Debian's package (apt-get install chromium) to run the browser test"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.fixture
def page(browser):
    mathjax = local_mathjax()
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()

    def route(request_route):
        url = request_route.request.url
        if url.startswith(MATHJAX_CDN):
            return request_route.fulfill(path=str(mathjax / url[len(MATHJAX_CDN) :].split("?")[0]))
        if url.startswith("file://"):
            return request_route.continue_()
        return request_route.abort()  # no network here: fail fast instead of waiting

    opened.route("**/*", route)
    yield opened
    context.close()


def expected_outputs(notebook):
    """How many code cells show output on the page, and how many PNG figures they hold."""
    shown = [c for c in code_cells(notebook) if c["outputs"] and not HIDDEN & set(tags(c))]
    figures = sum(
        1 for c in shown for output in c["outputs"] if "image/png" in output.get("data", {})
    )
    return len(shown), figures


def open_page(page, html):
    page.goto(html.as_uri())
    page.wait_for_load_state("load")


def check_math(page):
    """Every math element is typeset by MathJax, without errors."""
    math = page.locator("div.math, span.math").count()
    if math:
        page.wait_for_function(
            "() => window.MathJax && MathJax.startup && MathJax.startup.promise"
            " && document.querySelectorAll('mjx-container').length > 0",
            timeout=30_000,
        )
        page.evaluate("() => MathJax.startup.promise")
        assert page.locator("mjx-container").count() >= math
        assert page.locator("mjx-merror").count() == 0
    return math


def save_screenshot(page, name):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def check_images(page):
    broken = page.evaluate(
        "() => [...document.querySelectorAll('article img')]"
        ".filter(img => !(img.complete && img.naturalWidth > 0)).map(img => img.src)"
    )
    assert not broken, f"images that did not load: {broken}"


def test_landing_page(page, built_site):
    open_page(page, built_site / "index.html")
    assert page.locator("article h1").first.inner_text().strip().startswith("JAX, executed")
    links = page.locator("article a[href*='chapters/']").evaluate_all("els => els.map(e => e.getAttribute('href'))")
    chapters = [f for f in toc_files() if f.startswith("chapters/") and f[len("chapters/") :][:2].isdigit()]
    for chapter in chapters:
        assert any(chapter + ".html" in link for link in links), f"the landing page does not link {chapter}"
    assert page.locator("article .cell_output").count() >= 1, "the versions cell shows its output"
    check_math(page)
    save_screenshot(page, "index")


def test_every_page_in_the_toc_is_built(built_site):
    for entry in toc_files()[1:]:
        assert (built_site / f"{entry}.html").exists(), f"{entry}.html was not built"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_chapter_page(page, built_site, path):
    html = built_site / "chapters" / path.with_suffix(".html").name
    open_page(page, html)

    assert title(load_notebook(path)) in page.locator("article h1").first.inner_text()

    executed = executed_notebook(path)
    outputs, figures = expected_outputs(executed)
    assert page.locator("article .cell_output").count() == outputs
    assert page.locator("article .cell_output img").count() == figures
    check_images(page)
    check_math(page)

    colab = page.locator("a[href^='https://colab.research.google.com/']")
    assert colab.count() == 1, "one Colab launch button"
    expected = (
        "https://colab.research.google.com/github/"
        f"{repository_slug()}/blob/main/{path.relative_to(ROOT).as_posix()}"
    )
    assert colab.get_attribute("href") == expected
    assert page.locator(f"a[href$='{path.name}']").count() >= 1, "a download link to the .ipynb"

    save_screenshot(page, path.stem)


markdown_pages = [entry for entry in toc_files()[1:] if (ROOT / f"{entry}.md").exists()]


@pytest.mark.parametrize("entry", markdown_pages)
def test_markdown_page(page, built_site, entry):
    """The pages written in Markdown (cheat sheet, statistics, bibliography) render whole."""
    open_page(page, built_site / f"{entry}.html")
    assert heading((ROOT / f"{entry}.md").read_text()) in page.locator("article h1").first.inner_text()
    unresolved = page.locator("article .xref.problematic, article .problematic").count()
    assert unresolved == 0, "unresolved cross-references on the page"
    check_images(page)
    check_math(page)
    save_screenshot(page, Path(entry).name)


def test_math_is_checked_somewhere(built_site):
    """The math check above must not pass only because no page has math.

    The page tests already typeset every page's math in the browser; here it is enough to count
    the math elements Sphinx wrote into the HTML (the ones `check_math` waits for).
    """
    total = sum(
        len(re.findall(r'<(?:div|span) class="math\b', (built_site / f"{entry}.html").read_text()))
        for entry in toc_files()[1:]
    )
    assert total > 0, "no page of the book has math: the math check ran on nothing"


def markdown_table(text, header_start):
    """The lines of the Markdown table in `text` whose header line starts with `header_start`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    table = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        table.append(line.strip())
    return table


def test_cheatsheet_control_flow_table_is_what_chapter_6_measured(built_site):
    executed = executed_notebook(ROOT / "chapters" / "06_control_flow.ipynb")
    printed = "".join(
        "".join(output.get("text", ""))
        for cell in code_cells(executed)
        for output in cell["outputs"]
        if output["output_type"] == "stream"
    )
    measured = markdown_table(printed, "| construct |")
    copied = markdown_table((ROOT / "chapters" / "appendix_cheatsheet.md").read_text(), "| construct |")
    assert len(measured) > 2
    assert copied == measured
