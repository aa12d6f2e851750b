"""What the site's tests share: the build, the browser as a reader has it, and the checks
every page gets (tests/conftest.py holds the fixtures; tests/test_site.py and
tests/test_site_pages.py the tests, whose docstrings say what they check).

The browser is $BOOK_BROWSER if set, else the first of chromium, google-chrome,
google-chrome-stable on the PATH; axe-core is the version tests/package-lock.json pins,
installed by `npm ci --prefix tests`. Without a browser or axe-core the browser test is
skipped with a hint, except under CI (CI=true): it fails.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.book import BUILD, HTML, ROOT, code_cells, tags

JUPYTER_BOOK = Path(sys.executable).with_name("jupyter-book")
SCREENSHOTS = BUILD / "screenshots"
HIDDEN = {"remove-cell", "remove-output"}
AXE = ROOT / "tests" / "node_modules" / "axe-core" / "axe.min.js"
AXE_LOCK = ROOT / "tests" / "package-lock.json"


def build_site():
    """`jupyter-book build --all -W -n --keep-going` (a fresh Sphinx environment, so a
    warning from an earlier run is not hidden by an incremental build); executed outputs
    come from the execution cache. The log goes to _build/build.log.

    BOOK_REUSE_SITE=1 skips the build and tests the site already in _build/html (built
    by an earlier run or `make book`): to repeat the browser test on one build.
    """
    if os.environ.get("BOOK_REUSE_SITE") == "1":
        assert (HTML / "index.html").exists(), "BOOK_REUSE_SITE=1, but no _build/html"
        return HTML
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


class Reader:
    """A browser tab as an offline reader has it: every request to another host is
    blocked (the site serves MathJax itself), and the console errors and blocked
    requests are kept."""

    def __init__(self, browser, viewport):
        self.context = browser.new_context(viewport=viewport)
        # A busy machine (CI, or several builds at once) loads a page in more than
        # Playwright's default 30 s.
        self.context.set_default_timeout(180_000)
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


def check_offline_and_accessible(reader, name, load=1):
    """No console error, no request to another host, no serious or critical axe
    violation: [what failed]. `load` numbers the page's loads in the report."""
    page = reader.page
    check_math(page)
    # before axe, which reads the stylesheets
    console_errors = list(reader.console_errors)
    results = run_axe(page)
    violations = [
        f"{v['id']} ({v['impact']}, {len(v['nodes'])} nodes): {v['help']}: "
        + "; ".join(node["html"][:120] for node in v["nodes"][:3])
        for v in results["violations"]
        if v["impact"] in ("serious", "critical")
    ]
    REPORT.setdefault(name, {}).setdefault("loads", []).append(
        {
            "console_errors": len(console_errors),
            "blocked_requests": len(reader.blocked),
            "axe_serious_or_critical": len(violations),
            "axe_all": len(results["violations"]),
        }
    )
    failed = []
    if console_errors:
        failed.append(f"load {load}: console errors: {console_errors}")
    if reader.blocked:
        failed.append(f"load {load}: requests to other hosts: {reader.blocked}")
    if violations:
        failed.append(f"load {load}: axe-core: " + "; ".join(violations))
    return failed


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
    """The checks every page of the site gets, at 1280 px and at 390 px. The page is
    checked as it is open, then loaded again and checked again: the theme's scripts run
    in a different order from one load to the next, and a finding in either load fails."""
    failed = check_offline_and_accessible(desktop, name, load=1)
    desktop.open(html)
    failed += check_offline_and_accessible(desktop, name, load=2)
    assert not failed, "\n".join(failed)
    check_alt_text(desktop.page)
    save_screenshot(desktop.page, name)
    check_desktop_toggle(desktop.page)
    check_phone(phone, html, name, screenshot=phone_screenshot)


def report_lines():
    """One line per page (and load): written to _build/screenshots/report.txt."""
    lines = []
    for name, found in sorted(REPORT.items()):
        for load, r in enumerate(found.get("loads", [{}]), 1):
            lines.append(
                f"{name:28} load {load}: console errors {r.get('console_errors')}, "
                f"blocked requests {r.get('blocked_requests')}, axe serious/critical "
                f"{r.get('axe_serious_or_critical')} (all {r.get('axe_all')}), "
                f"width at 390 px {found.get('width_at_390')}"
            )
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    (SCREENSHOTS / "report.txt").write_text("\n".join(lines) + "\n")
    return lines


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
