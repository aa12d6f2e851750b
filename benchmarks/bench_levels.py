"""Chapter 10's levels timed on an idle machine: the "levels" entry of pln_bench.json.

Chapter 10 times its levels (the Python class, the jitted pieces, the jitted step, the fit
under `lax.scan`, the two pytree versions) in its own run. Under `make test` that run
shares two cores with other notebooks, and one disturbed round makes a spread that hides
every gap but level 0's. This script runs the chapter's code up to its levels table in a
fresh kernel, RUNS times (separate processes), and each time times every level's compiled
fit in turns, ROUNDS rounds, as the chapter's table does. Chapter 10 prints the record
beside its own table and states the ladder that every recorded run shows.

    make bench-levels   (idle machine, about 2 minutes)

The record keeps `levels_source_sha256()`, a hash of the chapter's code that defines and
runs the levels; tests/test_pln_bench_record.py fails when that code has changed since.
"""

import argparse
import ast
import hashlib
import json
import os
import pathlib
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
CHAPTER = ROOT / "chapters" / "10_pln.ipynb"
RECORD = ROOT / "chapters" / "data" / "pln_bench.json"
# The code cells before this label define, run and record every level, except those of the
# bugs section (from BUGS_LABEL to LEVELS_LABEL), which reproduce the published bugs beside
# their fixes and define nothing the levels use: the hash leaves them out.
END_LABEL = "(pln-same-trajectory)="
BUGS_LABEL, LEVELS_LABEL = "(pln-bugs)=", "(pln-levels)="
MARKER = "LEVELS-RECORD:"

TIMING_CELL = """
import json as _json
_seconds = interleaved_seconds(
    {version: result["call"] for version, result in results.items()}, repeats=ROUNDS
)
print("MARKER" + _json.dumps({
    version: {
        "steps_per_call": results[version]["steps_per_call"],
        "compile_s": results[version]["compile_s"],
        "seconds": times,
    }
    for version, times in _seconds.items()
}))
"""


def _source(cell):
    text = (
        "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    )
    lines = []
    for line in text.split("\n"):  # IPython magics and shell lines are not Python
        stripped = line.lstrip()
        lines.append("pass" if stripped.startswith(("%", "!")) else line)
    return "\n".join(lines)


def levels_cells(chapter=CHAPTER):
    """The chapter's cells before END_LABEL (markdown included, for the kernel's run)."""
    notebook = json.loads(pathlib.Path(chapter).read_text())
    cells = []
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown" and END_LABEL in "".join(cell["source"]):
            return cells
        cells.append(cell)
    raise ValueError(f"{chapter} has no {END_LABEL}")


def levels_source_sha256(chapter=CHAPTER):
    """sha256 of the code before END_LABEL (the bugs section left out), parsed and written
    back out by `ast`, in order: a change of code changes it; comments and formatting do not
    (docstrings do)."""
    cells = levels_cells(chapter)
    code, in_bugs = [], False
    for cell in cells:
        text = _source(cell)
        if cell["cell_type"] == "markdown":
            in_bugs = (in_bugs or BUGS_LABEL in text) and LEVELS_LABEL not in text
        elif not in_bugs:
            code.append(ast.unparse(ast.parse(text)))
    return hashlib.sha256("\n".join(code).encode()).hexdigest()


def one_run(rounds, timeout):
    import nbclient
    import nbformat

    cells = levels_cells()
    notebook = nbformat.read(CHAPTER, as_version=4)  # sources as strings
    notebook.cells = notebook.cells[: len(cells)]
    notebook.cells.append(
        nbformat.v4.new_code_cell(
            TIMING_CELL.replace("ROUNDS", str(rounds)).replace("MARKER", MARKER)
        )
    )
    client = nbclient.NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(CHAPTER.parent)}},
    )
    client.execute()
    for output in notebook.cells[-1].outputs:
        for line in output.get("text", "").splitlines():
            if line.startswith(MARKER):
                return json.loads(line[len(MARKER) :])
    raise RuntimeError("the timing cell printed no record")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(RECORD))
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--timeout", type=int, default=600)
    args = parser.parse_args()
    import jax
    from pln_source import store_entry  # run as a script, from benchmarks/

    started = time.perf_counter()
    source_sha256 = levels_source_sha256()
    load = [os.getloadavg()[0]]
    runs = []
    for run in range(args.runs):
        runs.append({"versions": one_run(args.rounds, args.timeout)})
        load.append(os.getloadavg()[0])
        for version, row in runs[-1]["versions"].items():
            fastest = min(row["seconds"]) / row["steps_per_call"]
            spread = max(row["seconds"]) / min(row["seconds"])
            print(
                f"run {run + 1}: {version:26} {fastest * 1e3:7.3f} ms/step {spread:.2f}x"
            )
    if levels_source_sha256() != source_sha256:
        raise SystemExit("chapter 10's levels changed during the run; run again")
    bench_seconds = time.perf_counter() - started
    store_entry(
        args.out,
        "levels",
        {
            "cores": os.cpu_count(),
            "jax": jax.__version__,
            "levels_source_sha256": source_sha256,
            "rounds": args.rounds,
            "load_average_1min": load,
            "bench_seconds": bench_seconds,
            "runs": runs,
        },
    )
    print(f"wrote {args.out} ({bench_seconds:.0f} s; load {load})")


if __name__ == "__main__":
    main()
