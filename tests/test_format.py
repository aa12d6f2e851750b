"""Code fits the page: every notebook, and the Python around them (tests/, benchmarks/,
chapters/_shared/, _ext/), ruff-formatted and lint-clean with pyproject.toml's settings;
no notebook code line over 88 columns; checks kept quiet (at most 10% of the
reader-visible code lines of a notebook are checks)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.book import NOTEBOOKS, ROOT, code_cells, load_notebook, source, tags

notebook_params = pytest.mark.parametrize(
    "path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS]
)

LINE_LENGTH = 88  # pyproject.toml's [tool.ruff] line-length (test_line_length_is_ruffs)
MAX_CHECK_SHARE = 0.10
# Cells a reader does not see unfolded: their lines do not count as reader-visible.
HIDDEN = {"hide-input", "remove-input", "remove-cell"}


def ruff():
    found = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which(
        "ruff"
    )
    if not found:
        pytest.skip("ruff is not installed (requirements.txt pins it)")
    return found


def run_ruff(*args):
    return subprocess.run(
        [ruff(), *args], capture_output=True, check=False, text=True, cwd=ROOT
    )


PYTHON = [
    path
    for folder in ("tests", "benchmarks", "chapters/_shared", "_ext")
    for path in sorted((ROOT / folder).glob("*.py"))
]
python_params = pytest.mark.parametrize(
    "path", PYTHON, ids=[p.relative_to(ROOT).as_posix() for p in PYTHON]
)


def test_line_length_is_ruffs():
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert config["tool"]["ruff"]["line-length"] == LINE_LENGTH


def check_format(path):
    done = run_ruff("format", "--check", "--diff", str(path))
    assert done.returncode == 0, (
        f"run `ruff format {path.relative_to(ROOT)}`:\n"
        + done.stdout[-3000:]
        + done.stderr[-1000:]
    )


def check_lint(path):
    done = run_ruff("check", "--output-format", "concise", str(path))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]


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


@notebook_params
def test_code_lines_fit_the_page(path):
    """No line of any code cell (comments and strings too) is longer than 88 columns."""
    long = [
        f"cell {index}: {len(line)} columns: {line[:60]}..."
        for index, cell in enumerate(code_cells(load_notebook(path)))
        for line in source(cell).splitlines()
        if len(line) > LINE_LENGTH
    ]
    assert not long, "\n".join(long)


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
