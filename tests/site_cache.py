"""pytest plugin: each notebook nbmake executes successfully goes into the site's
execution cache.

The site build (`jupyter-book build`, execute_notebooks: cache) reuses a notebook's
outputs from `_build/.jupyter_cache` when the cache holds a run of the same code
(jupyter-cache matches the code cells' source and metadata and the kernelspec). nbmake
executes each chapter as the build would (same kernel, the notebook's folder as working
directory, 300 s per cell, errors only in cells tagged `raises-exception`), so its run
is stored there and the build renders it instead of executing the chapter a second time.

Stored only where the site is built: in an environment with jupyter-cache (the main
leg's .venv; .venv-newest has no jupyter-cache, so the newest leg stores nothing). The
stored notebook is the source notebook with the run's outputs and execution counts, so
its hash is the source's. A file lock serialises writers (pytest-xdist runs several at
once).
"""

import contextlib
import fcntl
import importlib.util
import time

import nbformat
import pytest
from nbmake import pytest_items
from nbmake.pytest_items import NotebookItem

from tests.book import BUILD, CHAPTERS, EXECUTION_CACHE

ENABLED = importlib.util.find_spec("jupyter_cache") is not None
_runs = {}  # notebook path -> the executed notebook of its last nbmake run


class RecordingNotebookRun(pytest_items.NotebookRun):
    """nbmake's NotebookRun, keeping the executed notebook for the cache."""

    def execute(self):
        result = super().execute()
        _runs[str(self.filename)] = result
        return result


if ENABLED:
    pytest_items.NotebookRun = RecordingNotebookRun


@contextlib.contextmanager
def cache_lock():
    BUILD.mkdir(exist_ok=True)
    with open(BUILD / ".jupyter_cache.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def store(path, executed, seconds, cache=EXECUTION_CACHE):
    """Cache `executed` (nbmake's run of `path`) as the site build's run of `path`."""
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    notebook = nbformat.read(path, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    runs = [cell for cell in executed.cells if cell.cell_type == "code"]
    if [c.source for c in code] != [c.source for c in runs]:
        return  # the file changed while it ran: leave it to the build
    for cell, run in zip(code, runs):
        cell.outputs = run.outputs
        cell.execution_count = run.execution_count
    if "language_info" in executed.metadata:
        notebook.metadata.language_info = executed.metadata.language_info
    with cache_lock():
        get_cache(str(cache)).cache_notebook_bundle(
            CacheBundleIn(notebook, str(path), data={"execution_seconds": seconds}),
            check_validity=False,
            overwrite=True,
        )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    if not (ENABLED and isinstance(item, NotebookItem)):
        return (yield)
    path = (item.config.rootpath / item.filename).resolve()
    if path.parent != CHAPTERS:
        return (yield)
    start = time.perf_counter()
    result = yield  # raises if a cell failed: nothing is stored
    run = _runs.pop(str(item.config.rootpath / item.filename), None)
    if run is not None and run.error is None:
        store(path, run.nb, time.perf_counter() - start)
    return result
