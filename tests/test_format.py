"""Code fits the page: every notebook, and the Python around them (tests/, benchmarks/,
chapters/_shared/, _ext/), ruff-formatted and lint-clean with pyproject.toml's settings
(which select E501: no notebook or shared-helper line over 88 columns); checks kept
quiet (at most 10% of the reader-visible code lines of a notebook are checks).

ruff runs once over every file (`ruff format --check --diff`, `ruff check`); each
file's test reports its part, a notebook's by cell id (`make fix` formats and fixes).
"""

import json
import re
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from tests.book import (
    NOTEBOOKS,
    ROOT,
    cell_name,
    code_cells,
    load_notebook,
    source,
    tags,
)

notebook_params = pytest.mark.parametrize(
    "path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS]
)

MAX_CHECK_SHARE = 0.10
# Cells a reader does not see unfolded: their lines do not count as reader-visible.
HIDDEN = {"hide-input", "remove-input", "remove-cell"}

PYTHON = [
    path
    for folder in ("tests", "benchmarks", "chapters/_shared", "_ext")
    for path in sorted((ROOT / folder).glob("*.py"))
]
python_params = pytest.mark.parametrize(
    "path", PYTHON, ids=[p.relative_to(ROOT).as_posix() for p in PYTHON]
)
FILES = [*NOTEBOOKS, *PYTHON]


def ruff():
    found = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which(
        "ruff"
    )
    if not found:
        pytest.skip("ruff is not installed (requirements.txt pins it)")
    return found


def run_ruff(*args):
    return subprocess.run(
        [ruff(), *args, *map(str, FILES)],
        capture_output=True,
        check=False,
        text=True,
        cwd=ROOT,
    )


def cell_ids(path):
    """{ruff's cell number (1-based over all cells): 'cell <id>'}."""
    cells = load_notebook(path)["cells"]
    return {index + 1: cell_name(cell) for index, cell in enumerate(cells)}


@cache
def format_diffs():
    """{path: the diff `ruff format` would apply}, a notebook's per changed cell."""
    done = run_ruff("format", "--check", "--diff")
    diffs, current = {}, None
    for line in done.stdout.splitlines(keepends=True):
        header = re.match(r"--- (.+?)(?::cell (\d+))?\n$", line)
        if header:
            current = (ROOT / header.group(1)).resolve()
            diffs.setdefault(current, [])
        if current is not None:
            diffs[current].append(line)
    return {path: "".join(lines) for path, lines in diffs.items()}, done.stderr


def readable_diff(path, diff):
    """The notebook's diff with only the cells that change, each named by its id."""
    if path.suffix != ".ipynb":
        return diff
    names = cell_ids(path)
    chunks = re.split(r"(?m)^(?=--- )", diff)
    kept = []
    for chunk in chunks:
        if "\n@@" not in chunk:
            continue  # ruff's header for a cell that does not change
        chunk = re.sub(
            r":cell (\d+)$",
            lambda m: f" {names.get(int(m.group(1)), 'cell ' + m.group(1))}",
            chunk,
            flags=re.MULTILINE,
        )
        kept.append(chunk)
    return "".join(kept)


@cache
def lint_findings():
    """{path: ['<place>: <code> <message>']} from one `ruff check` of every file."""
    done = run_ruff("check", "--output-format", "json")
    findings = {}
    for item in json.loads(done.stdout or "[]"):
        path = Path(item["filename"]).resolve()
        place = f"line {item['location']['row']}"
        if item.get("cell") is not None:
            place = f"{cell_ids(path).get(item['cell'], 'cell ?')}, {place}"
        findings.setdefault(path, []).append(
            f"{place}: {item['code']} {item['message']}"
        )
    return findings


def check_format(path):
    diffs, errors = format_diffs()
    diff = diffs.get(path.resolve())
    assert diff is None, (
        f"run `make fix` (or `ruff format {path.relative_to(ROOT)}`):\n"
        + readable_diff(path, diff)[:6000]
        + errors[-1000:]
    )


def check_lint(path):
    found = lint_findings().get(path.resolve(), [])
    assert not found, (
        "run `make fix` (ruff check --fix), then fix the rest by hand:\n"
        + "\n".join(found)
    )


@notebook_params
def test_ruff_format(path):
    check_format(path)


@python_params
def test_python_ruff_format(path):
    check_format(path)


@python_params
def test_python_ruff_check(path):
    check_lint(path)


@notebook_params
def test_ruff_check(path):
    check_lint(path)


def test_format_failures_name_the_cell_and_show_the_diff(tmp_path):
    """A badly formatted notebook cell is reported by its id, with ruff's diff."""
    notebook = load_notebook(NOTEBOOKS[0])
    cell = code_cells(notebook)[-1]
    cell["source"] = "x  =  1\n"
    copy = tmp_path / NOTEBOOKS[0].name
    copy.write_text(json.dumps(notebook))
    done = subprocess.run(
        [ruff(), "format", "--check", "--diff", "--no-cache", str(copy)],
        capture_output=True,
        check=False,
        text=True,
        cwd=tmp_path,
    )
    shown = readable_diff(copy, done.stdout)
    assert f"{copy.name} {cell_name(cell)}" in shown
    assert "-x  =  1" in shown and "+x = 1" in shown
    assert shown.count("\n--- ") + shown.startswith("--- ") == 1


def check_share(notebook):
    """(reader-visible code lines, check lines): non-blank lines of cells not tagged
    hide-input, remove-input or remove-cell, and those that start with assert or
    np.testing."""
    visible = checks = 0
    for cell in code_cells(notebook):
        if HIDDEN & set(tags(cell)):
            continue
        for line in source(cell).splitlines():
            stripped = line.strip()
            if not stripped:
                continue
            visible += 1
            checks += stripped.startswith(("assert", "np.testing."))
    return visible, checks


@notebook_params
def test_checks_stay_quiet(path):
    """Checks that are not the lesson go in folded (hide-input) cells: ≤ 10% of visible
    lines."""
    visible, checks = check_share(load_notebook(path))
    assert checks <= MAX_CHECK_SHARE * visible, (
        f"{checks} of {visible} reader-visible code lines are checks "
        f"({checks / max(visible, 1):.1%}); move checks into a hide-input cell after the section"
    )


# Chapter 11's length budget (issue 31: the case study read in 45 minutes): its
# reader-visible code lines, and the longest reader-visible cell.
CASE_STUDY = "11_pln_faster.ipynb"
MAX_VISIBLE_LINES, MAX_CELL_LINES = 350, 30


def test_case_study_stays_short():
    notebook = load_notebook(ROOT / "chapters" / CASE_STUDY)
    long_cells = []
    for cell in code_cells(notebook):
        if HIDDEN & set(tags(cell)):
            continue
        lines = [line for line in source(cell).splitlines() if line.strip()]
        if len(lines) > MAX_CELL_LINES:
            long_cells.append(f"{cell_name(cell)}: {len(lines)} lines")
    assert not long_cells, (
        f"reader-visible cells over {MAX_CELL_LINES} lines: {long_cells}"
    )
    visible, _ = check_share(notebook)
    assert visible <= MAX_VISIBLE_LINES, (
        f"{visible} reader-visible code lines (limit {MAX_VISIBLE_LINES})"
    )
