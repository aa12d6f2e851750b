"""pytest plugin: fail a notebook that executes slower than the book allows, and print each time.

Each chapter is written to run in under 60 s on the 2-core CI machine. The limit enforced here,
BOOK_NOTEBOOK_LIMIT_S (default 90 s), leaves room for a loaded machine and the kernel's start.
"""

import os
import time

import pytest
from nbmake.pytest_items import NotebookItem

LIMIT_S = float(os.environ.get("BOOK_NOTEBOOK_LIMIT_S", "90"))
_times: dict[str, float] = {}


def record_time(nodeid, seconds):
    """Add a notebook's execution time to the table printed at the end (other runners use it too)."""
    _times[nodeid] = seconds


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    if not isinstance(item, NotebookItem):
        return (yield)
    start = time.perf_counter()
    result = yield  # raises if a cell failed
    elapsed = time.perf_counter() - start
    record_time(item.nodeid, elapsed)
    if elapsed > LIMIT_S:
        raise AssertionError(
            f"{item.nodeid} executed in {elapsed:.1f} s, over the {LIMIT_S:.0f} s limit "
            "(BOOK_NOTEBOOK_LIMIT_S); make the chapter's sizes smaller"
        )
    return result


def pytest_terminal_summary(terminalreporter):
    if not _times:
        return
    terminalreporter.section("notebook execution times (includes kernel start)")
    for nodeid, seconds in _times.items():
        terminalreporter.write_line(f"{seconds:7.1f} s  {nodeid}")
