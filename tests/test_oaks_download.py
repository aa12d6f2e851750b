"""The Colab branch that downloads the oaks data, run against a local HTTP server.

In Colab a chapter has no chapters/data/ next to it: `read_oaks_csv` then downloads each
file from the book's repository on raw.githubusercontent.com. This test executes the
cell that defines `read_oaks_csv` with `OAKS_DIR` pointing to an empty directory and
`urllib.request.urlopen` rewriting `https://raw.githubusercontent.com/` to a server on
127.0.0.1 that serves this checkout under `<org>/<repo>/main/`, the repository
_config.yml names: a chapter that names another repository gets a 404. The rows must
equal the local files'.
"""

import csv
import functools
import http.server
import io
import threading
import urllib.request

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
READERS = [
    path
    for path in NOTEBOOKS
    if any(
        "def read_oaks_csv" in source(cell) for cell in code_cells(load_notebook(path))
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


def test_some_chapter_reads_the_oaks_data():
    assert any(p.name == "10_pln.ipynb" for p in READERS), [p.name for p in READERS]


@pytest.mark.parametrize("path", READERS, ids=[p.name for p in READERS])
def test_download_branch_reads_the_repository_files(
    path, server, tmp_path, monkeypatch
):
    (cell,) = [
        c for c in code_cells(load_notebook(path)) if "def read_oaks_csv" in source(c)
    ]
    import os
    import pathlib

    namespace = {"csv": csv, "io": io, "os": os, "pathlib": pathlib, "urllib": urllib}
    code = compile(source(cell), f"{path.name}: read_oaks_csv's cell", "exec")
    exec(code, namespace)  # noqa: S102 (the notebook's own cell, run as in the notebook)
    namespace["OAKS_DIR"] = tmp_path  # empty: as in Colab, no local copy

    requested = []
    real_urlopen = urllib.request.urlopen

    def urlopen(url, *args, **kwargs):
        assert url.startswith(RAW), f"{path.name} downloads from {url}, not {RAW}"
        requested.append(url)
        return real_urlopen(server + url[len(RAW) :], *args, timeout=30)

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    for name in FILES:
        header, rows = namespace["read_oaks_csv"](name)
        local_header, *local_rows = csv.reader(io.StringIO((DATA / name).read_text()))
        assert (header, rows) == (local_header, local_rows), (
            f"{name} differs from the local copy"
        )
    assert len(requested) == len(FILES)
    assert all(
        f"/{repository_slug()}/main/chapters/data/oaks/" in url for url in requested
    )
