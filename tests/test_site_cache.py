"""A run stored by tests/site_cache.py is the one the site build finds: jupyter-cache
matches it to the stored (unexecuted) notebook, as myst-nb does, and merges its outputs
in."""

import copy

import nbformat
import pytest

from tests.book import NOTEBOOKS
from tests.site_cache import store

pytest.importorskip("jupyter_cache", reason="only the main leg builds the site")


def test_a_stored_run_is_found_as_the_build_looks_for_it(tmp_path):
    from jupyter_cache import get_cache

    path = NOTEBOOKS[0]
    run = nbformat.read(path, as_version=4)
    for count, cell in enumerate(c for c in run.cells if c.cell_type == "code"):
        cell.outputs = [
            nbformat.v4.new_output("stream", name="stdout", text=f"{count}\n")
        ]
        cell.execution_count = count + 1
        cell.metadata["execution"] = {
            "iopub.status.busy": "2026-01-01T00:00:00"
        }  # nbmake's
    store(path, run, 1.5, cache=tmp_path)

    unexecuted = nbformat.read(path, as_version=4)
    cache = get_cache(str(tmp_path))
    assert cache.match_cache_notebook(copy.deepcopy(unexecuted)).data == {
        "execution_seconds": 1.5
    }
    _, merged = cache.merge_match_into_notebook(unexecuted)
    code = [c for c in merged.cells if c.cell_type == "code"]
    assert [c.outputs[0]["text"] for c in code] == [f"{i}\n" for i in range(len(code))]
    assert all("execution" not in c.metadata for c in code)
