"""The Colab branch of `book_file`, which reads the oaks data, run against a local server.

In Colab a chapter is alone in its directory, with no checkout of the book around it:
`book_file` then downloads each file from the book's repository on
raw.githubusercontent.com. This test executes the cell that defines `book_file` (and
`load_oaks`) in an empty directory, with `urllib.request.urlopen` rewriting
`https://raw.githubusercontent.com/` to a server on 127.0.0.1 that serves this checkout
under `<org>/<repo>/main/`, the repository _config.yml names: a chapter (or
chapters/_shared/oaks.py) that names another repository gets a 404. The data must equal
the local files', and so must the race's record where a chapter reads it.
"""

import csv
import functools
import http.server
import io
import json
import os
import pathlib
import threading
import urllib.request

import numpy as np
import pytest

from tests.book import (
    CHAPTERS,
    NOTEBOOKS,
    ROOT,
    code_cells,
    load_notebook,
    repository_slug,
    source,
)

RAW = "https://raw.githubusercontent.com/"
DATA = CHAPTERS / "data" / "oaks"
FILES = ["counts.csv", "offsets.csv", "covariates.csv"]
BENCH_RECORD = "chapters/data/pln_bench.json"
# The notebooks whose cell defines `book_file` and `load_oaks` together (chapters 15 and the
# compiler-bug appendix use `book_file` alone, in a cell that also reads their own files;
# chapters/_shared/sync.py keeps every copy of `book_file` identical to the one tested here).
READERS = [
    path
    for path in NOTEBOOKS
    if any(
        "def book_file" in source(cell) and "def load_oaks" in source(cell)
        for cell in code_cells(load_notebook(path))
    )
]


class Repository(http.server.SimpleHTTPRequestHandler):
    """Serves ROOT under /<org>/<repo>/main/, as raw.githubusercontent.com serves the
    branch."""

    prefix = ""

    def translate_path(self, path):
        if not path.startswith(self.prefix):
            return str(ROOT / "no-such-repository")  # a 404
        return super().translate_path("/" + path[len(self.prefix) :])

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    handler = functools.partial(Repository, directory=str(ROOT))
    Repository.prefix = f"/{repository_slug()}/main/"
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def local_table(name):
    header, *rows = csv.reader(io.StringIO((DATA / name).read_text()))
    return header, rows


def test_some_chapter_reads_the_oaks_data():
    assert any(p.name == "10_pln.ipynb" for p in READERS), [p.name for p in READERS]


@pytest.mark.parametrize("path", READERS, ids=[p.name for p in READERS])
def test_download_branch_reads_the_repository_files(
    path, server, tmp_path, monkeypatch
):
    (cell,) = [
        c for c in code_cells(load_notebook(path)) if "def load_oaks" in source(c)
    ]
    namespace = {
        "csv": csv,
        "io": io,
        "np": np,
        "os": os,
        "pathlib": pathlib,
        "urllib": urllib,
    }
    code = compile(source(cell), f"{path.name}: book_file's cell", "exec")
    exec(code, namespace)  # noqa: S102 (the notebook's own cell, run as in the notebook)

    requested = []
    real_urlopen = urllib.request.urlopen

    def urlopen(url, *args, **kwargs):
        assert url.startswith(RAW), f"{path.name} downloads from {url}, not {RAW}"
        requested.append(url)
        return real_urlopen(server + url[len(RAW) :], *args, timeout=30)

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    notebook_dir = tmp_path / "content"  # as in Colab: no checkout around the notebook
    notebook_dir.mkdir()
    monkeypatch.chdir(notebook_dir)

    counts, log_offsets, taxa, covariates = namespace["load_oaks"]()
    header, rows = local_table("counts.csv")
    assert taxa == header
    np.testing.assert_array_equal(counts, np.array(rows, dtype=np.float64))
    _, rows = local_table("offsets.csv")
    np.testing.assert_array_equal(log_offsets, np.log(np.array(rows, dtype=np.float64)))
    header, rows = local_table("covariates.csv")
    assert list(covariates) == header
    assert [list(row) for row in zip(*covariates.values())] == rows
    assert len(requested) == len(FILES)

    record = json.loads(namespace["book_file"](BENCH_RECORD))
    assert record == json.loads((ROOT / BENCH_RECORD).read_text())
    assert all(f"/{repository_slug()}/main/chapters/data/" in url for url in requested)


@pytest.mark.parametrize("path", READERS, ids=[p.name for p in READERS])
def test_checkout_branch_reads_the_local_files(path, monkeypatch):
    """Run where the tests and the site build run a chapter (chapters/), `book_file`
    reads the checkout's files and downloads nothing."""
    (cell,) = [
        c for c in code_cells(load_notebook(path)) if "def load_oaks" in source(c)
    ]
    namespace = {"csv": csv, "io": io, "np": np, "os": os, "pathlib": pathlib}
    namespace["urllib"] = urllib
    exec(compile(source(cell), path.name, "exec"), namespace)  # noqa: S102

    def urlopen(url, *args, **kwargs):
        raise AssertionError(f"{path.name} downloads {url} inside the checkout")

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    monkeypatch.chdir(CHAPTERS)
    counts, _, taxa, _ = namespace["load_oaks"]()
    assert counts.shape == (116, len(taxa)) == (116, 114)
