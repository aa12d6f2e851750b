"""The site as the build writes it: built with warnings as errors from the executed
notebooks (tests/site.py), then read without a browser.

- the executed notebooks show an error exactly in the cells tagged `raises-exception`,
  and no output mentions a deprecation;
- every page in the table of contents is built, and some page has math;
- the written HTML gives the theme's buttons and the folded cells accessible names that
  contain what they show (_templates/, _ext/accessible_html.py), with no script to patch
  them after load;
- one print shows as one output box (myst-nb merges a cell's stream chunks);
- the cheat sheet's control-flow table is what chapter 6 measured.
The browser test is tests/test_site_pages.py.
"""

import re

import pytest

from tests.book import (
    BUILD,
    NOTEBOOKS,
    ROOT,
    cell_name,
    code_cells,
    executed_notebook,
    tags,
    toc_files,
)

# Every test here shares the one build: pytest-xdist keeps them in one worker.
pytestmark = pytest.mark.xdist_group("site")
HIDDEN_OUTPUT = {"remove-cell", "remove-output"}


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
    for cell in code_cells(executed):
        raised = any(output["output_type"] == "error" for output in cell["outputs"])
        if "raises-exception" in tags(cell):
            assert raised, (
                f"{cell_name(cell)} is tagged raises-exception but did not raise"
            )
        else:
            assert not raised, (
                f"{cell_name(cell)} raised but is not tagged raises-exception"
            )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_no_cell_shows_a_deprecation_warning(built_site, path):
    """A chapter teaches the current API: no output of the built site mentions a
    deprecation."""
    executed = executed_notebook(path)
    for cell in code_cells(executed):
        for output in cell["outputs"]:
            text = output.get("text", "") if output["output_type"] == "stream" else ""
            text = text if isinstance(text, str) else "".join(text)
            assert not re.search(r"(Deprecation|Future)Warning", text), (
                f"{cell_name(cell)}: {text[:500]}"
            )


def test_every_page_in_the_toc_is_built(built_site):
    for entry in toc_files()[1:]:
        assert (built_site / f"{entry}.html").exists(), f"{entry}.html was not built"


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


def pages(built_site):
    return [built_site / f"{entry}.html" for entry in toc_files()[1:]]


def test_buttons_and_folds_are_named_in_the_html(built_site):
    """What the theme and the extensions write, named right in the HTML (WCAG 2.5.3:
    a control's name contains what it shows): the colour-mode button's icons are hidden,
    with no titles; the search field has no label that hides its shortcut; folded cells
    have no label that hides their "Show code cell source"; the bibliography is no list
    of non-items."""
    for html in pages(built_site):
        text = html.read_text()
        name = html.relative_to(built_site)
        switch = re.search(
            r"<button[^>]*theme-switch-button.*?</button>", text, re.DOTALL
        )
        assert switch, f"{name}: no colour-mode button"
        icons = re.findall(r"<i [^>]*>", switch.group(0))
        assert len(icons) == 3, f"{name}: {icons}"
        for icon in icons:
            assert 'aria-hidden="true"' in icon and "title=" not in icon, (
                f"{name}: colour-mode icon {icon}"
            )
        field = re.search(r"<button[^>]*search-button-field[^>]*>", text)
        assert field and "aria-label" not in field.group(0), f"{name}: {field}"
        assert '<summary aria-label="' not in text, f"{name}: a labelled fold"
        assert 'role="list" class="citation-list"' not in text, f"{name}"
    assert not (ROOT / "_static" / "a11y-fixes.js").exists()


def test_one_print_is_one_output_box(built_site):
    """myst-nb writes each stream chunk as its own box unless streams are merged
    (nb_merge_streams): a cell shows at most one stdout box and one stderr box, however
    many chunks its prints came in."""
    chunked = 0
    for path in NOTEBOOKS:
        executed = executed_notebook(path)
        html = (built_site / "chapters" / path.with_suffix(".html").name).read_text()
        boxes = len(re.findall(r'class="output (?:stream|stderr) ', html))
        expected = 0
        for cell in code_cells(executed):
            if HIDDEN_OUTPUT & set(tags(cell)):
                continue
            names = [
                output["name"]
                for output in cell["outputs"]
                if output["output_type"] == "stream"
            ]
            if "remove-stderr" in tags(cell):
                names = [name for name in names if name != "stderr"]
            chunked += len(names) > len(set(names))
            expected += len(set(names))
        assert boxes == expected, f"{path.name}: {boxes} stream boxes, not {expected}"
    assert chunked, "no cell printed in several chunks: the check ran on nothing"
