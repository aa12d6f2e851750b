"""Each notebook runs as Colab runs it: alone, in an empty folder.

Colab opens one notebook from GitHub; the rest of the repository is not there. So each
notebook is copied alone into an empty temporary directory and executed there (nbclient,
the main leg's kernel, 300 s per cell, errors only in cells tagged `raises-exception`).
Its downloads from the book's repository, `urllib.request.urlopen` of
`https://raw.githubusercontent.com/<repository>/main/<path>` (the repository is
_config.yml's), are served from this checkout's tracked file at <path>, with no network;
any other URL fails, as an unreachable host does. An IPython startup file in the kernel's
own IPYTHONDIR does the serving. A cell that reads a file from the working directory,
instead of downloading it when the file is not there, fails here first.

The setup cell's Colab branch (`%pip install` under `"google.colab" in sys.modules`) is
not taken here: tests/test_colab_setup.py runs it on the newest-JAX leg.
"""

import os
import shutil
import subprocess

import pytest

from tests.book import NOTEBOOKS, ROOT, cell_name, repository_slug, tags

TIMEOUT_S = 300

STARTUP = """\
# Written by tests/test_colab_files.py: the book's repository served from a checkout.
import email.message
import io
import pathlib
import urllib.error
import urllib.request
import urllib.response

_ROOT = pathlib.Path({root!r})
_PREFIX = {prefix!r}
_TRACKED = {tracked!r}


def _serve_the_book(url, *args, **kwargs):
    address = url if isinstance(url, str) else url.full_url
    if not address.startswith(_PREFIX):
        raise urllib.error.URLError(f"no network in this test: {{address}}")
    name = address[len(_PREFIX) :].split("?")[0]
    if name not in _TRACKED:
        raise urllib.error.HTTPError(
            address, 404, "Not Found", email.message.Message(), None
        )
    body = (_ROOT / name).read_bytes()
    return urllib.response.addinfourl(
        io.BytesIO(body), email.message.Message(), address, 200
    )


urllib.request.urlopen = _serve_the_book
"""


def tracked_files():
    done = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if done.returncode:  # not a git checkout: every file is the repository's
        return sorted(
            p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*") if p.is_file()
        )
    return sorted(name for name in done.stdout.split("\0") if name)


@pytest.fixture(scope="module")
def ipython_dir(tmp_path_factory):
    """An IPYTHONDIR whose startup file serves the repository's raw URLs."""
    folder = tmp_path_factory.mktemp("ipython")
    startup = folder / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-serve-the-book.py").write_text(
        STARTUP.format(
            root=str(ROOT),
            prefix=f"https://raw.githubusercontent.com/{repository_slug()}/main/",
            tracked=set(tracked_files()),
        )
    )
    return folder


def failed_cell(notebook):
    """The first code cell with an error it was not tagged to raise, else the last cell
    that started (the one a timeout stopped)."""
    started = None
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        if cell.get("execution_count") is not None:
            started = cell
        if "raises-exception" in tags(cell):
            continue
        if any(output.output_type == "error" for output in cell.get("outputs", [])):
            return cell
    return started


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_runs_alone_in_an_empty_folder(path, tmp_path, ipython_dir):
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError

    work = tmp_path / "content"  # Colab's working directory holds nothing of the book
    work.mkdir()
    copy = work / path.name
    shutil.copyfile(path, copy)
    notebook = nbformat.read(copy, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=TIMEOUT_S,
        kernel_name="python3",
        resources={"metadata": {"path": str(work)}},
    )
    env = {**os.environ, "IPYTHONDIR": str(ipython_dir)}
    env.pop("PYTHONPATH", None)
    try:
        client.execute(env=env)
    except (CellExecutionError, CellTimeoutError) as error:
        cell = failed_cell(notebook)
        where = cell_name(cell) if cell is not None else "a cell"
        pytest.fail(
            f"{path.name}, {where} fails when the notebook runs alone in an empty folder "
            f"(as in Colab):\n{str(error)[-3000:]}",
            pytrace=False,
        )


def test_the_kernel_serves_the_repository_and_nothing_else(tmp_path, ipython_dir):
    """The startup file serves a tracked file, answers 404 for an untracked one and
    refuses any other host."""
    import nbformat
    from nbclient import NotebookClient

    prefix = f"https://raw.githubusercontent.com/{repository_slug()}/main/"
    code = f"""\
import urllib.error, urllib.request
with urllib.request.urlopen({prefix + "README.md"!r}) as response:
    assert response.read() == open({str(ROOT / "README.md")!r}, "rb").read()
for url, error in [
    ({prefix + "no/such/" + "file.csv"!r}, urllib.error.HTTPError),
    ("https://example.com/", urllib.error.URLError),
]:
    try:
        urllib.request.urlopen(url)
    except error:
        pass
    else:
        raise AssertionError(url)
"""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    client = NotebookClient(
        notebook, timeout=60, resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute(env={**os.environ, "IPYTHONDIR": str(ipython_dir)})
