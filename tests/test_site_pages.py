"""The site in a browser, as a reader has it (the build: tests/site.py).

A headless Chromium (driven by Playwright) opens every page in the table of contents and
checks its title, its code outputs, its figures (loaded, with alt text that is not a file
name or path), its math, and (for a chapter) that the Colab button opens that very
notebook. Every page is loaded twice, and in each load, as an offline reader has it
(every request to another host is blocked; the site serves MathJax itself): no console
error, no blocked request, no serious or critical violation of axe-core's default rules.
At 1280 px the sidebar toggle collapses the sidebar; at 390 x 844 no page is wider than
the screen and the toggle opens the chapter list. Screenshots at 1280 and 390 px (the
landing page also with the sidebar open) and a per-page, per-load report.txt go to
_build/screenshots/.
"""

from pathlib import Path

import pytest

from tests.book import (
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
from tests.site import check_images, check_reader_page, expected_outputs

# Every test here shares the one build and browser: pytest-xdist keeps them in one worker.
pytestmark = pytest.mark.xdist_group("site")


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
