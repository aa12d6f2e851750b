"""Fixtures of the site's tests (tests/test_site.py, tests/test_site_pages.py): one
build and one browser per session (tests/site.py says how)."""

import pytest

from tests import site


@pytest.fixture(scope="session")
def built_site():
    return site.build_site()


@pytest.fixture(scope="session")
def browser(built_site):
    chromium = site.find_browser()
    if chromium is None:
        site.skip_or_fail(
            "no Chromium found: install one (Debian: apt-get install chromium) or set "
            "BOOK_BROWSER to run the browser test"
        )
    if not site.AXE.exists():
        site.skip_or_fail(
            f"{site.AXE.relative_to(site.ROOT)} is missing: run `npm ci --prefix tests`"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(
            executable_path=chromium, args=site.CHROMIUM_ARGS
        )
        yield instance
        instance.close()


@pytest.fixture(scope="session")
def desktop(browser):
    reader = site.Reader(browser, site.DESKTOP)
    yield reader
    reader.context.close()


@pytest.fixture(scope="session")
def phone(browser):
    reader = site.Reader(browser, site.PHONE)
    yield reader
    reader.context.close()


@pytest.fixture
def page(desktop):
    return desktop.page


@pytest.fixture(scope="session", autouse=True)
def site_report():
    """The per-page figures, printed at the end of the session (pytest -s)."""
    yield
    if site.REPORT:
        print("\n" + "\n".join(site.report_lines()))
