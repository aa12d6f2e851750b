"""pytest plugin: fail a notebook whose kernel uses more CPU time than the book allows;
print times.

Each chapter is written to run in under 60 s on an idle 2-core CI machine. What the
limit enforces is the CPU time the chapter's kernel (and anything it starts) uses: a
busy machine stretches the wall-clock time but hardly the CPU time, so only a chapter
that really got slower crosses the limit. The wall-clock time stays a reported number.

The CPU time is read with resource.getrusage(RUSAGE_CHILDREN) around the run: the kernel
is a child of this process, started and shut down (and waited for) inside the run, so
its user and system time, with that of the processes it waited for, is the difference.

BOOK_NOTEBOOK_LIMIT_S (default 450 CPU seconds) sets the limit: a chapter sized for 60 s
on an idle 2-core machine uses at most 120 CPU seconds there, and CPU time still grows
on a crowded machine (XLA's worker threads spin while they wait for a core). On a
2-core AMD EPYC (`make test-chapter CH=10`, 2026-11-29), chapter 10's TF32-emulated run,
nearly alone, used 106 CPU seconds in 68 s wall-clock, and its main run, beside its
bfloat16 run, 295 CPU seconds in 297 s, within 5 s of the earlier limit of 300, for a
chapter that had not changed. 450 leaves room for that; a chapter that doubles its work
crosses it when it runs beside another, as chapters do in `make test`.
"""

import contextlib
import os
import resource
import time

import pytest
from nbmake.pytest_items import NotebookItem

LIMIT_S = float(os.environ.get("BOOK_NOTEBOOK_LIMIT_S", "450"))
_times: dict[str, tuple[float, float]] = {}  # measured in this process
_table: dict[
    str, tuple[float, float]
] = {}  # reported to this process (xdist: by workers)


def children_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Timing:
    wall = cpu = float("nan")


@contextlib.contextmanager
def measured(nodeid, what=None):
    """Time a notebook run (a kernel started and shut down inside the block), record the
    wall and CPU times for the table, and fail when the CPU time is over LIMIT_S."""
    timing = Timing()
    wall, cpu = time.perf_counter(), children_cpu_seconds()
    yield timing
    timing.wall = time.perf_counter() - wall
    timing.cpu = children_cpu_seconds() - cpu
    _times[nodeid] = (timing.wall, timing.cpu)
    if timing.cpu > LIMIT_S:
        raise AssertionError(
            f"{what or nodeid}: the kernel used {timing.cpu:.1f} s of CPU time "
            f"({timing.wall:.1f} s wall-clock), over the {LIMIT_S:.0f} s limit "
            "(BOOK_NOTEBOOK_LIMIT_S); make the chapter's sizes smaller"
        )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    if not isinstance(item, NotebookItem):
        return (yield)
    with measured(item.nodeid):
        result = yield  # raises if a cell failed
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Send the times with the test's report, so that pytest-xdist's workers pass them
    on."""
    report = yield
    if call.when == "call" and item.nodeid in _times:
        report.user_properties.append(("notebook_times", _times.pop(item.nodeid)))
    return report


def pytest_runtest_logreport(report):
    for name, value in report.user_properties:
        if name == "notebook_times":
            _table[report.nodeid] = tuple(value)


def pytest_terminal_summary(terminalreporter):
    if not _table:
        return
    terminalreporter.section(
        "notebook times: wall-clock (reported) and kernel CPU (limited)"
    )
    terminalreporter.write_line(f"{'wall':>9}  {'CPU':>9}  (limit {LIMIT_S:.0f} CPU s)")
    for nodeid, (wall, cpu) in _table.items():
        terminalreporter.write_line(f"{wall:7.1f} s  {cpu:7.1f} s  {nodeid}")
