"""Build the site as a reader gets it, then read it as a reader would.

The build runs `jupyter-book build --all -W -n --keep-going` (a fresh Sphinx
environment, so a warning from an earlier run is not hidden by an incremental build;
warnings are errors; executed outputs come from the execution cache, where nbmake's runs
are stored by tests/site_cache.py). Then:
- the executed notebooks show an error exactly in the cells tagged `raises-exception`,
  and no output mentions a deprecation;
- a headless Chromium (driven by Playwright) opens every page in the table of contents
  and checks its title, its code outputs, its figures (loaded, with alt text that is not
  a file name or path), its math, and (for a chapter) that the Colab button opens that
  very notebook. On every page, as an offline reader has it (every request to another
  host is blocked; the site serves MathJax itself): no console error, no blocked
  request, no serious or critical violation of axe-core's default rules (the axe-core
  that tests/package-lock.json pins, installed by `npm ci --prefix tests`); at 1280 px
  the sidebar toggle collapses the sidebar; at 390 x 844 no page is wider than the
  screen and the toggle opens the chapter list. Screenshots at 1280 and 390 px (the
  landing page also with the sidebar open) and a per-page report.txt go to
  _build/screenshots/. The browser is $BOOK_BROWSER if set, else the first of chromium,
  google-chrome, google-chrome-stable on the PATH. Without a browser or axe-core the
  browser test is skipped with a hint, except under CI (CI=true): it fails.
"""

import json
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
AXE = ROOT / "tests" / "node_modules" / "axe-core" / "axe.min.js"
AXE_LOCK = ROOT / "tests" / "package-lock.json"
# Every test here shares the one build and browser: pytest-xdist keeps them in one worker.
pytestmark = pytest.mark.xdist_group("site")


@pytest.fixture(scope="session")
def built_site():
    result = subprocess.run(
        [str(JUPYTER_BOOK), "build", str(ROOT), "--all", "-W", "-n", "--keep-going"],
        capture_output=True,
        check=False,
        text=True,
        cwd=ROOT,
    )
    BUILD.mkdir(exist_ok=True)
    log = result.stdout + result.stderr
    (BUILD / "build.log").write_text(log)
    assert result.returncode == 0, (
        f"the site build failed (log in _build/build.log):\n{log[-6000:]}"
    )
    return HTML


def test_site_builds_without_warnings(built_site):
    log = (BUILD / "build.log").read_text()
    # Sphinx writes "WARNING: ..." (kernels' own "[IPKernelApp] WARNING | ..." lines are not Sphinx's)
    problems = [
        line
        for line in log.splitlines()
        if re.search(r"\b(WARNING|ERROR|CRITICAL):", line)
    ]
    assert not problems, "\n".join(problems)
    assert (built_site / "index.html").exists()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_errors_only_where_tagged(built_site, path):
    """nbmake lets a `raises-exception` cell pass even when it does not raise: check it
    did."""
    executed = executed_notebook(path)
    for index, cell in enumerate(code_cells(executed)):
        raised = any(output["output_type"] == "error" for output in cell["outputs"])
        if "raises-exception" in tags(cell):
            assert raised, (
                f"code cell {index} is tagged raises-exception but did not raise"
            )
        else:
            assert not raised, (
                f"code cell {index} raised but is not tagged raises-exception"
            )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_no_cell_shows_a_deprecation_warning(built_site, path):
    """A chapter teaches the current API: no output of the built site mentions a
    deprecation."""
    executed = executed_notebook(path)
    for index, cell in enumerate(code_cells(executed)):
        for output in cell["outputs"]:
            text = output.get("text", "") if output["output_type"] == "stream" else ""
            text = text if isinstance(text, str) else "".join(text)
            assert not re.search(r"(Deprecation|Future)Warning", text), (
                f"code cell {index}: {text[:500]}"
            )


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
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


BROWSERS = ("chromium", "google-chrome", "google-chrome-stable")


def find_browser():
    """$BOOK_BROWSER, else the first Chromium-family browser on the PATH, or None."""
    for name in filter(None, (os.environ.get("BOOK_BROWSER"), *BROWSERS)):
        if shutil.which(name):
            return shutil.which(name)
    return None


def skip_or_fail(message):
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def axe_version():
    """The axe-core version tests/package-lock.json pins."""
    lock = json.loads(AXE_LOCK.read_text())
    return lock["packages"]["node_modules/axe-core"]["version"]


@pytest.fixture(scope="session")
def browser(built_site):
    chromium = find_browser()
    if chromium is None:
        skip_or_fail(
            "no Chromium found: install one (Debian: apt-get install chromium) or set "
            "BOOK_BROWSER to run the browser test"
        )
    if not AXE.exists():
        skip_or_fail(f"{AXE.relative_to(ROOT)} is missing: run `npm ci --prefix tests`")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(
            executable_path=chromium, args=CHROMIUM_ARGS
        )
        yield instance
        instance.close()


class Reader:
    """A browser tab as an offline reader has it: every request to another host is
    blocked (the site serves MathJax itself), and the console errors and blocked
    requests are kept."""

    def __init__(self, browser, viewport):
        self.context = browser.new_context(viewport=viewport)
        self.page = self.context.new_page()
        self.console_errors = []
        self.blocked = []
        self.page.on(
            "console",
            lambda message: (
                message.type == "error" and self.console_errors.append(message.text)
            ),
        )
        self.page.on("pageerror", lambda error: self.console_errors.append(str(error)))
        self.page.route("**/*", self.route)

    def route(self, request_route):
        url = request_route.request.url
        if url.startswith(("file://", "data:", "blob:")):
            return request_route.continue_()
        self.blocked.append(url)
        return request_route.abort()

    def open(self, html):
        self.console_errors.clear()
        self.blocked.clear()
        self.page.goto(html.as_uri())
        self.page.wait_for_load_state("load")


@pytest.fixture(scope="session")
def desktop(browser):
    reader = Reader(browser, DESKTOP)
    yield reader
    reader.context.close()


@pytest.fixture(scope="session")
def phone(browser):
    reader = Reader(browser, PHONE)
    yield reader
    reader.context.close()


@pytest.fixture
def page(desktop):
    return desktop.page


# Per-page figures, printed at the end of the session (pytest -s) and written to
# _build/screenshots/report.txt: console errors, blocked requests, axe violations, width.
REPORT = {}


def run_axe(page):
    """axe-core's default rules on the open page: its results as a dict."""
    page.add_script_tag(content=AXE.read_text())
    assert page.evaluate("() => axe.version") == axe_version(), (
        "tests/node_modules is stale"
    )
    # Its preload of the stylesheets uses XMLHttpRequest, which Chromium refuses for file://.
    return page.evaluate("async () => await axe.run(document, {preload: false})")


def check_offline_and_accessible(reader, name):
    """No console error, no request to another host, no serious or critical axe
    violation."""
    page = reader.page
    check_math(page)
    console_errors = list(
        reader.console_errors
    )  # before axe, which reads the stylesheets
    results = run_axe(page)
    violations = [
        f"{v['id']} ({v['impact']}, {len(v['nodes'])} nodes): {v['help']}: "
        + "; ".join(node["html"][:120] for node in v["nodes"][:3])
        for v in results["violations"]
        if v["impact"] in ("serious", "critical")
    ]
    REPORT.setdefault(name, {}).update(
        console_errors=len(console_errors),
        blocked_requests=len(reader.blocked),
        axe_serious_or_critical=len(violations),
        axe_all=len(results["violations"]),
    )
    assert not console_errors, f"console errors: {console_errors}"
    assert not reader.blocked, f"requests to other hosts: {reader.blocked}"
    assert not violations, "axe-core: " + "; ".join(violations)


IMAGE_FILE = re.compile(r"\S*\.(png|svg|jpe?g|gif|webp|pdf)", re.IGNORECASE)


def check_alt_text(page):
    """Every figure in the article says what it shows: alt text that is not a file
    name."""
    images = page.evaluate(
        "() => [...document.querySelectorAll('article img')]"
        ".map(img => [img.getAttribute('src'), img.getAttribute('alt') || ''])"
    )
    for src, alt in images:
        alt = alt.strip()
        assert alt, f"figure {src} has no alt text"
        assert alt != src and not IMAGE_FILE.fullmatch(alt), (
            f"figure {src}: its alt text is a file name or path ({alt})"
        )


def check_phone(phone, html, name, screenshot=False):
    """At 390 x 844: no page wider than the screen, and the sidebar toggle opens the
    chapter list."""
    phone.open(html)
    page = phone.page
    width = page.evaluate("() => document.documentElement.scrollWidth")
    REPORT.setdefault(name, {})["width_at_390"] = width
    assert width <= PHONE["width"], (
        f"the page is {width} px wide on a {PHONE['width']} px screen"
    )
    assert not phone.console_errors, f"console errors at 390 px: {phone.console_errors}"
    chapters = page.locator("nav.bd-docs-nav a").first
    assert not chapters.is_visible(), (
        "the chapter list is open before the toggle is pressed"
    )
    page.locator(".bd-header-article .primary-toggle").first.click()
    chapters.wait_for(state="visible", timeout=5_000)
    if screenshot:
        save_screenshot(page, f"{name}-390-sidebar-open", full_page=False)
    page.keyboard.press("Escape")
    chapters.wait_for(state="hidden", timeout=5_000)
    if not screenshot:
        save_screenshot(page, f"{name}-390")
    check_tables_keep_columns(page)


def check_tables_keep_columns(page):
    """Printed tables (cells tagged output-table) scroll sideways on a phone,
    unwrapped."""
    styles = page.locator(".tag_output-table .cell_output pre").evaluate_all(
        "els => els.map(e => [getComputedStyle(e).whiteSpace, getComputedStyle(e).overflowX])"
    )
    wrapped = [style for style in styles if style != ["pre", "auto"]]
    assert not wrapped, (
        f"printed tables that wrap or cannot scroll at 390 px: {wrapped}"
    )


def check_desktop_toggle(page):
    """At 1280 px the toggle collapses the sidebar, and a second press brings it
    back."""
    sidebar = page.locator("#pst-primary-sidebar")
    toggle = page.locator(".bd-header-article .primary-toggle").first
    assert sidebar.is_visible()
    toggle.click()
    page.wait_for_function(
        "() => getComputedStyle(document.getElementById('pst-primary-sidebar')).visibility"
        " === 'hidden'"
    )
    toggle.click()
    page.wait_for_function(
        "() => getComputedStyle(document.getElementById('pst-primary-sidebar')).visibility"
        " === 'visible'"
    )


def check_reader_page(desktop, phone, html, name, phone_screenshot=False):
    """The checks every page of the site gets, at 1280 px and at 390 px."""
    check_offline_and_accessible(desktop, name)
    check_alt_text(desktop.page)
    save_screenshot(desktop.page, name)
    check_desktop_toggle(desktop.page)
    check_phone(phone, html, name, screenshot=phone_screenshot)


def pytest_sessionfinish_report():
    lines = [
        f"{name:28} console errors {r.get('console_errors')}, blocked requests "
        f"{r.get('blocked_requests')}, axe serious/critical {r.get('axe_serious_or_critical')} "
        f"(all {r.get('axe_all')}), width at 390 px {r.get('width_at_390')}"
        for name, r in sorted(REPORT.items())
    ]
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    (SCREENSHOTS / "report.txt").write_text("\n".join(lines) + "\n")
    return lines


@pytest.fixture(scope="session", autouse=True)
def site_report():
    yield
    if REPORT:
        print("\n" + "\n".join(pytest_sessionfinish_report()))


def expected_outputs(notebook):
    """How many code cells show output on the page, and how many PNG figures they
    hold."""
    shown = [
        c for c in code_cells(notebook) if c["outputs"] and not HIDDEN & set(tags(c))
    ]
    figures = sum(
        1
        for c in shown
        for output in c["outputs"]
        if "image/png" in output.get("data", {})
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


def save_screenshot(page, name, full_page=True):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(
        path=str(SCREENSHOTS / f"{name}.png"), full_page=full_page, timeout=120_000
    )


def check_images(page):
    broken = page.evaluate(
        "() => [...document.querySelectorAll('article img')]"
        ".filter(img => !(img.complete && img.naturalWidth > 0)).map(img => img.src)"
    )
    assert not broken, f"images that did not load: {broken}"


def test_landing_page(desktop, phone, built_site):
    page = desktop.page
    desktop.open(built_site / "index.html")
    page.wait_for_url("**/intro.html")
    assert page.title() == "JAX, executed", f"the home page's title is {page.title()!r}"
    assert (
        page.locator("article h1")
        .first.inner_text()
        .strip()
        .startswith("JAX, executed")
    )
    links = page.locator("article a[href*='chapters/']").evaluate_all(
        "els => els.map(e => e.getAttribute('href'))"
    )
    chapters = [
        f
        for f in toc_files()
        if f.startswith("chapters/") and f[len("chapters/") :][:2].isdigit()
    ]
    for chapter in chapters:
        assert any(chapter + ".html" in link for link in links), (
            f"the landing page does not link {chapter}"
        )
    assert page.locator("article .cell_output").count() >= 1, (
        "the versions cell shows its output"
    )
    check_reader_page(
        desktop, phone, built_site / "intro.html", "index", phone_screenshot=True
    )


def test_every_page_in_the_toc_is_built(built_site):
    for entry in toc_files()[1:]:
        assert (built_site / f"{entry}.html").exists(), f"{entry}.html was not built"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_chapter_page(desktop, phone, built_site, path):
    html = built_site / "chapters" / path.with_suffix(".html").name
    page = desktop.page
    desktop.open(html)

    assert title(load_notebook(path)) in page.locator("article h1").first.inner_text()

    executed = executed_notebook(path)
    outputs, figures = expected_outputs(executed)
    assert page.locator("article .cell_output").count() == outputs
    assert page.locator("article .cell_output img").count() == figures
    check_images(page)
    tables = sum(
        1 for c in code_cells(executed) if "output-table" in tags(c) and c["outputs"]
    )
    assert page.locator(".tag_output-table .cell_output").count() == tables

    colab = page.locator("a[href^='https://colab.research.google.com/']")
    assert colab.count() == 1, "one Colab launch button"
    expected = (
        "https://colab.research.google.com/github/"
        f"{repository_slug()}/blob/main/{path.relative_to(ROOT).as_posix()}"
    )
    assert colab.get_attribute("href") == expected
    assert page.locator(f"a[href$='{path.name}']").count() >= 1, (
        "a download link to the .ipynb"
    )

    check_reader_page(desktop, phone, html, path.stem)


markdown_pages = [entry for entry in toc_files()[1:] if (ROOT / f"{entry}.md").exists()]


@pytest.mark.parametrize("entry", markdown_pages)
def test_markdown_page(desktop, phone, built_site, entry):
    """The pages written in Markdown (cheat sheet, statistics, bibliography) render
    whole."""
    page = desktop.page
    desktop.open(built_site / f"{entry}.html")
    assert (
        heading((ROOT / f"{entry}.md").read_text())
        in page.locator("article h1").first.inner_text()
    )
    unresolved = page.locator("article .xref.problematic, article .problematic").count()
    assert unresolved == 0, "unresolved cross-references on the page"
    check_images(page)
    check_reader_page(desktop, phone, built_site / f"{entry}.html", Path(entry).name)


def test_math_is_checked_somewhere(built_site):
    """The math check above must not pass only because no page has math.

    The page tests already typeset every page's math in the browser; here it is enough
    to count the math elements Sphinx wrote into the HTML (the ones `check_math` waits
    for).
    """
    total = sum(
        len(
            re.findall(
                r'<(?:div|span) class="math\b',
                (built_site / f"{entry}.html").read_text(),
            )
        )
        for entry in toc_files()[1:]
    )
    assert total > 0, "no page of the book has math: the math check ran on nothing"


def markdown_table(text, header_start):
    """The lines of the Markdown table in `text` whose header line starts with
    `header_start`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    table = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        table.append(line.strip())
    return table


def test_cheatsheet_control_flow_table_is_what_chapter_6_measured(built_site):
    """Chapter 6 displays its measured table as Markdown (IPython.display.Markdown); the
    cheat sheet copies it."""
    executed = executed_notebook(ROOT / "chapters" / "06_control_flow.ipynb")
    displayed = "\n".join(
        "".join(output["data"]["text/markdown"])
        for cell in code_cells(executed)
        for output in cell["outputs"]
        if output["output_type"] in ("display_data", "execute_result")
        and "text/markdown" in output["data"]
    )
    measured = markdown_table(displayed, "| construct |")
    copied = markdown_table(
        (ROOT / "chapters" / "appendix_cheatsheet.md").read_text(), "| construct |"
    )
    assert len(measured) > 2
    assert copied == measured
