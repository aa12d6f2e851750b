"""Helpers copied between notebooks come from one source: chapters/_shared/*.py.

Every copy of a shared helper in chapters/*.ipynb is its source's text (`python
chapters/_shared/sync.py` writes them); each shared helper is used by two or more
notebooks; any other top-level def or class defined in two or more notebooks is a shared
helper or is listed in sync.py's MAY_DIFFER with the reason it differs (and still
differs); no chapter defines a helper under a name a shared helper replaced.
"""

import importlib.util

import pytest

from tests.book import CHAPTERS, NOTEBOOKS, code_cells, load_notebook, source


def load_sync():
    spec = importlib.util.spec_from_file_location(
        "sync", CHAPTERS / "_shared" / "sync.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sync = load_sync()
SHARED = sync.helpers()
# Old names of a shared helper's job: a chapter uses the shared helper instead.
REPLACED_BY = {
    "interleaved_seconds": {
        "median_seconds",
        "median_time",
        "timed",
        "time_it",
        "timeit_median",
        "interleaved_times",
        "alternating_seconds",
    },
    "matmul_input_roundoff": {"matmul_input_rounding"},
}


def all_definitions():
    """{name: {notebook file name: [source texts]}} of every top-level def and class."""
    definitions = {}
    for path in NOTEBOOKS:
        for cell in code_cells(load_notebook(path)):
            text = source(cell)
            for name, start, end in sync.definitions(text):
                copies = definitions.setdefault(name, {}).setdefault(path.name, [])
                copies.append(text[start:end])
    return definitions


def test_every_copy_is_its_source():
    differing = sync.sync(write=False)
    assert not differing, (
        "copies that differ from chapters/_shared (edit the source, then run "
        "`python chapters/_shared/sync.py`):\n"
        + "\n".join(f"{notebook}: {name}" for notebook, name in differing)
    )


@pytest.mark.parametrize("name", sorted(SHARED))
def test_shared_helper_is_shared(name):
    """A helper that one notebook or none uses belongs in that chapter, not in
    _shared."""
    users = sync.usage(SHARED)[name]
    assert len(users) >= 2, f"{name} is used by {users or 'no notebook'}"


def test_copied_definitions_come_from_a_source():
    unshared = [
        f"{name}: {sorted(copies)}"
        for name, copies in sorted(all_definitions().items())
        if len(copies) >= 2 and name not in SHARED and name not in sync.MAY_DIFFER
    ]
    assert not unshared, (
        "defined in several notebooks: move each into chapters/_shared/ (or, if the "
        "copies are different functions on purpose, add the name and the reason to "
        "MAY_DIFFER in chapters/_shared/sync.py):\n" + "\n".join(unshared)
    )


def test_names_allowed_to_differ_still_differ():
    """A MAY_DIFFER entry whose copies became identical (or went away) is removed."""
    definitions = all_definitions()
    for name in sync.MAY_DIFFER:
        assert name not in SHARED, f"{name} is both shared and allowed to differ"
        copies = definitions.get(name, {})
        texts = {text for versions in copies.values() for text in versions}
        assert len(copies) >= 2 and len(texts) > 1, (
            f"{name} no longer differs: drop it from MAY_DIFFER"
        )


@pytest.mark.parametrize("helper", sorted(REPLACED_BY))
def test_no_chapter_redefines_a_shared_helper_under_an_old_name(helper):
    definitions = all_definitions()
    for other in REPLACED_BY[helper]:
        assert other not in definitions, (
            f"{sorted(definitions[other])}: use {helper}, not {other}"
        )


def test_every_notebook_parses():
    """Each code cell is Python (magics aside): the copies above are found by
    parsing."""
    for path in NOTEBOOKS:
        for index, cell in enumerate(code_cells(load_notebook(path))):
            try:
                sync.definitions(source(cell))
            except SyntaxError as error:
                pytest.fail(f"{path.name}, code cell {index}: {error}")
