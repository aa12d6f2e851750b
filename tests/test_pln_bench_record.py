"""chapters/data/pln_bench.json (written by `make bench`) matches chapter 11's fits.

Every row carries the hash of the chapter's `pln-fit` cells it ran; a row whose hash is
not the chapter's is stale, and `make bench` (on an idle machine) records it again.
"""

import datetime
import json

import pytest

from benchmarks.bench_levels import levels_source_sha256
from benchmarks.pln_source import ROOT, fit_source, fit_source_sha256

RECORD = ROOT / "chapters" / "data" / "pln_bench.json"
SIZES = {1, 10, 100, 1000}
TOOLS = {"jax", "jax-rprop", "pyPLNmodels"}


@pytest.fixture(scope="module")
def record():
    return json.loads(RECORD.read_text())


def cpu_rows(record):
    """The CPU rows recorded with this chapter's fits (stale ones fail a test below)."""
    current = fit_source_sha256()
    return [
        row
        for row in record["rows"]
        if row["device"] == "cpu" and row.get("fit_source_sha256") == current
    ]


def cpu_records(record):
    """Each CPU run of this chapter's fits with its rows: the newest (the one the chapters
    read) and the one `make bench` kept from the run before (record["earlier"])."""
    current = fit_source_sha256()
    pairs = [(run, record["rows"]) for run in record["runs"]]
    pairs += [
        (earlier["run"], earlier["rows"]) for earlier in record.get("earlier", [])
    ]
    return [
        (
            run,
            [
                row
                for row in rows
                if row["device"] == "cpu" and row["fit_source_sha256"] == current
            ],
        )
        for run, rows in pairs
        if run["device"] == "cpu" and run["fit_source_sha256"] == current
    ]


def test_two_separate_cpu_records(record):
    """Issue 31's targets are held in two records taken in separate runs of `make bench`:
    the older one's date (written when its races ended) is before the newer one began."""
    records = cpu_records(record)
    assert len(records) == 2, "run `make bench` twice on an idle machine"
    (newer, newer_rows), (older, older_rows) = records
    when = datetime.datetime.fromisoformat
    newer_began = when(newer["date"]) - datetime.timedelta(
        seconds=newer["bench_seconds"]
    )
    assert when(older["date"]) <= newer_began
    for rows in (newer_rows, older_rows):
        assert {(row["tool"], row["repeats"]) for row in rows} == {
            (tool, size) for tool in TOOLS for size in SIZES
        }


def test_chapter_tags_the_fit_source():
    source = fit_source()
    for name in ("def fit(", "def fit_anderson(", "def fit_rprop(", "TOL ="):
        assert name in source
    assert "def one_blas_thread(" in source  # the thread limit, written once


def test_hash_ignores_docstrings_and_comments(tmp_path):
    notebook = json.loads((ROOT / "chapters" / "11_pln_faster.ipynb").read_text())
    for cell in notebook["cells"]:
        if "pln-fit" in cell["metadata"].get("tags", []):
            text = "".join(cell["source"])
            text = text.replace('"""', '"""Reworded. ', 1) + "\n# a comment\n"
            cell["source"] = text
    changed = tmp_path / "chapter.ipynb"
    changed.write_text(json.dumps(notebook))
    assert fit_source_sha256(changed) == fit_source_sha256()
    assert fit_source(changed) != fit_source()


def test_record_matches_the_chapter_fit_source(record):
    """Changing the code of a pln-fit cell of chapter 11 requires `make bench`."""
    current = fit_source_sha256()
    stale = sorted(
        {
            (row["repeats"], row["tool"])
            for row in record["rows"]
            if row.get("fit_source_sha256") != current
        }
    )
    assert not stale, (
        f"rows recorded with an earlier version of chapter 11's fits (repeats, tool): "
        f"{stale}; run `make bench` on an idle machine"
    )


THREAD_VARIANTS = [
    "pyPLNmodels, default threads",
    "pyPLNmodels, one thread",
    "Rprop, JAX",
    "book",
    "book, OpenBLAS threads as found",
    "Rprop, JAX, OpenBLAS threads as found",
    "book, no Anderson",
    "pyPLNmodels' steps alone, one thread",
]


def test_thread_measurement(record):
    """`make bench-threads`: the eight warm variants, in turns, with the current fits."""
    threads = record["threads"]
    assert threads["fit_source_sha256"] == fit_source_sha256(), (
        "the thread measurement ran an earlier version of chapter 11's fits; "
        "run `make bench-threads` on an idle machine"
    )
    assert [size["repeats"] for size in threads["sizes"]] == [1, 10, 100]
    for size in threads["sizes"]:
        assert list(size["variants"]) == THREAD_VARIANTS
        counts = {len(v["wall_s"]) for v in size["variants"].values()}
        counts |= {len(v["cpu_s"]) for v in size["variants"].values()}
        assert len(counts) == 1 and counts.pop() >= 3  # rounds, each variant in each
        assert size["torch_default_threads"] >= 1
        pinned = size["one_core"]["variants"]  # the same fits, pinned to one core
        assert list(pinned) == ["pyPLNmodels' steps alone, one thread", "Rprop, JAX"]
        assert {len(v["wall_s"]) for v in pinned.values()} == {
            len(size["variants"]["book"]["wall_s"])
        }


COMPILED_VARIANTS = [
    "pyPLNmodels' steps alone, one thread",
    "pyPLNmodels' steps rewritten, eager",
    "pyPLNmodels' steps rewritten, torch.compile",
    "Rprop, JAX",
]


def test_torch_compile_measurement(record):
    """`make bench-compile`: pyPLNmodels' steps eager and compiled by torch.compile,
    beside the compiled Rprop, in turns on one core, with the current fits; each fit
    ends at the same bound (so the times are of the same work)."""
    entry = record["torch_compile"]
    assert entry["fit_source_sha256"] == fit_source_sha256(), (
        "the torch.compile measurement ran an earlier version of chapter 11's fits; "
        "run `make bench-compile` on an idle machine"
    )
    assert entry["machine"]["cores"] == 1 < entry["machine"]["cores_unpinned"]
    assert [size["repeats"] for size in entry["sizes"]] == [1, 10, 100]
    for size in entry["sizes"]:
        assert list(size["variants"]) == COMPILED_VARIANTS
        assert list(size["first_call_s"]) == list(size["final_neg_elbo"])
        assert list(size["first_call_s"]) == COMPILED_VARIANTS
        counts = {len(v[key]) for v in size["variants"].values() for key in v}
        assert len(counts) == 1 and counts.pop() >= 3
        bounds = list(size["final_neg_elbo"].values())
        assert max(bounds) - min(bounds) < 1e-6 * min(bounds)


LEVELS = [
    "level 0: Python class",
    "level 1: jitted pieces",
    "level 2: jitted step",
    "level 3: scan under jit",
    "level 4a: NamedTuple",
    "level 4b: pytree class",
]


def test_levels_record(record):
    """`make bench-levels`: chapter 10's six levels, timed in turns on an idle machine, in
    two separate runs, with the chapter's current code."""
    levels = record["levels"]
    assert levels["levels_source_sha256"] == levels_source_sha256(), (
        "the levels record ran an earlier version of chapter 10's code; "
        "run `make bench-levels` on an idle machine"
    )
    assert len(levels["runs"]) >= 2 and levels["rounds"] >= 5
    for run in levels["runs"]:
        assert list(run["versions"]) == LEVELS
        for row in run["versions"].values():
            assert len(row["seconds"]) == levels["rounds"] and min(row["seconds"]) > 0
            assert row["steps_per_call"] in (20, 500)


def test_record_fields(record):
    cpu_runs = [run for run in record["runs"] if run["device"] == "cpu"]
    assert (
        len(cpu_runs) == 1 and cpu_runs[0]["fit_source_sha256"] == fit_source_sha256()
    )
    run = cpu_runs[0]
    assert run["machine"]["cpu"] and run["machine"]["cores"] >= 1
    assert run["machine"]["memory_gib"] > 0
    assert set(run["versions"]) == {"jax", "jaxlib", "numpy", "torch", "pyPLNmodels"}
    assert run["versions"]["pyPLNmodels"] == "1.0.10"
    assert run["date"][:2] == "20"
    rows = cpu_rows(record)
    sizes = {row["repeats"] for row in rows}
    # chapter 11 reads the reference's row at x1; `make bench` records every size
    assert 1 in sizes and sizes <= SIZES
    assert {(row["tool"], row["repeats"]) for row in rows} == {
        (tool, size) for tool in TOOLS for size in sizes
    }
    for row in rows:
        assert row["rows"] == 116 * row["repeats"]
        assert row["first_s_min"] > 0 and row["first_s_min"] == min(row["first_s"])
        assert row["warm_s_min"] is None or row["warm_s_min"] == min(row["warm_s"])
        assert row["neg_elbo"] > 0 and row["iterations"] > 0
        if row["tool"] != "pyPLNmodels":
            assert row["cached_s_min"] == min(row["cached_s"])
    roofline = run.get("roofline")
    if roofline:
        for key in (
            "flops_per_iteration",
            "seconds_per_iteration",
            "memory_bytes_per_s",
        ):
            assert roofline[key] > 0


def test_bound_scales_with_repeats(record):
    """Repeating the rows k times multiplies the optimal bound by k: per copy, each
    fit's bound is the same at every size up to its own convergence (1e-4 relative)."""
    for tool in TOOLS:
        per_copy = [
            row["neg_elbo_per_copy"] for row in cpu_rows(record) if row["tool"] == tool
        ]
        if per_copy:
            assert max(per_copy) / min(per_copy) - 1 < 1e-4


def test_book_reaches_the_reference_bound(record):
    rows = {(row["tool"], row["repeats"]): row for row in cpu_rows(record)}
    for (tool, repeats), row in rows.items():
        if tool == "jax":
            assert row["neg_elbo"] <= rows["pyPLNmodels", repeats]["neg_elbo"]


def test_rprop_in_jax_is_the_reference_algorithm(record):
    """The same 400 Rprop steps from the same start, in float32 both: the two final
    bounds agree to 1e-5 relative (float32 steps taken in a different order)."""
    rows = {(row["tool"], row["repeats"]): row for row in cpu_rows(record)}
    for (tool, repeats), row in rows.items():
        if tool == "jax-rprop":
            reference = rows["pyPLNmodels", repeats]
            assert row["iterations"] == reference["iterations"] == 400
            assert abs(row["neg_elbo"] / reference["neg_elbo"] - 1) < 1e-5


# Issue 31's targets, compile counted: the book's first fit (a fresh process) at most
# this fraction of pyPLNmodels' (both measured in one `make bench` run), in each of the
# two records.
TARGETS = {1: 0.7, 10: 0.45, 100: 0.2, 1000: 0.1}
# Targets the record misses, each with its measured ratio (a strict xfail).
MISSED: dict[int, str] = {
    1: "x1: 0.720 and 0.731 of pyPLNmodels' first fit (target 0.7)",
    10: "x10: 0.502 and 0.486 (target 0.45)",
    100: "x100: 0.202 and 0.202 (target 0.2)",
}  # make bench, 2026-11-27, 12:48 and 13:10 UTC (Intel Xeon, 2 cores)


@pytest.mark.parametrize(
    "repeats",
    [
        pytest.param(size, marks=pytest.mark.xfail(strict=True, reason=MISSED[size]))
        if size in MISSED
        else size
        for size in sorted(TARGETS)
    ],
)
def test_performance_target(record, repeats):
    """A strict xfail marks a target the record misses: a record that meets it fails the
    xfail, and MISSED must lose that size."""
    ratios = {}
    for run, rows in cpu_records(record):
        tools = {row["tool"]: row for row in rows if row["repeats"] == repeats}
        if tools:
            ratios[run["date"]] = (
                tools["jax"]["first_s_min"] / tools["pyPLNmodels"]["first_s_min"]
            )
    if not ratios:
        pytest.skip(f"x{repeats}: no row of this chapter's fits (make bench)")
    assert max(ratios.values()) <= TARGETS[repeats], (
        f"x{repeats}: the book's first fit took {ratios} of pyPLNmodels' time "
        f"(run: ratio), target {TARGETS[repeats]:.3f} in each"
    )
