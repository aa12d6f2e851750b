"""The race of chapter 11: pyPLNmodels' Pln(...).fit() (PyTorch, eager), its algorithm
compiled by JAX (the chapter's `fit_rprop`) and the book's `fit`.

Run `make bench` (it builds .venv-bench from requirements-bench.txt), or, where
pyPLNmodels, torch and jax are installed (e.g. a GPU machine with Python 3.12):

    python benchmarks/bench_pln.py --device cuda --out FILE --append

The fits are not copied here: the code cells of chapters/11_pln_faster.ipynb tagged
`pln-fit` are executed (benchmarks/pln_source.py), and every row stores a hash of their
code (tests/test_pln_bench_record.py fails on a row whose hash is not the chapter's).

For each size (the 116 oaks rows repeated 1, 10, 100, 1000 times) and each tool, every
sample is a fresh process (benchmarks/pln_worker.py) that loads the data, then times a
first fit (compilation counted for JAX) and warm fits (none at x1000, where one
pyPLNmodels fit takes minutes). The tools take turns, sample after sample. For each JAX
fit, two more fresh processes share a new persistent compilation cache: the first fills
it, the second's first fit is the *cached* time. Matched both ways: the book's compiled
fit is timed warm, stopped at its first iteration at or below the reference's final
bound (`to_bound`); pyPLNmodels' bound after every step is recorded with its time, so
its time to the book's final bound is read off (`reference_to_book_s`; its float32 log
shifted to the float64 bound at its end; None when its final float64 bound is above the
book's, since that log moves in steps of an eighth of a nat at 116 rows and can dip below
a bound the fit never reaches: records before 2026-11-27 15:20 UTC hold such dips). Every
bound is evaluated by the book's `concentrated_neg_elbo` in float64 at the parameters
each fit returns.

With `--append`, the device's previous run of the same fits is kept beside the new one
(`earlier` in the record): the race's targets are checked in both
(tests/test_pln_bench_record.py), so one lucky run cannot meet them.
"""

import argparse
import datetime
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np
from pln_roofline import machine, roofline, versions
from pln_source import ROOT, book_namespace, fit_source_sha256, neg_elbo64

DEFAULT_OUT = ROOT / "chapters" / "data" / "pln_bench.json"
WORKER = pathlib.Path(__file__).resolve().parent / "pln_worker.py"
TOOLS = ("pyPLNmodels", "jax-rprop", "jax")


def run_worker(tool, repeats, device, warm, cache_dir=None, to_bound=None):
    with tempfile.TemporaryDirectory() as folder:
        params_file = os.path.join(folder, "params.npz")
        command = [sys.executable, str(WORKER), tool, "--rows", str(repeats)]
        command += ["--device", device, "--warm", str(warm), "--params", params_file]
        if cache_dir:
            command += ["--cache-dir", cache_dir]
        if to_bound is not None:
            command += ["--to-bound", repr(to_bound)]
        env = dict(os.environ)
        if device == "cpu":
            env["CUDA_VISIBLE_DEVICES"] = ""
        done = subprocess.run(
            command, capture_output=True, text=True, env=env, check=False
        )
        if done.returncode:
            sys.stderr.write(done.stderr)
            raise RuntimeError(f"{tool} x{repeats} failed")
        sample = json.loads(done.stdout.strip().splitlines()[-1])
        with np.load(params_file) as params:
            sample["params"] = {key: params[key] for key in params}
        return sample


def race_size(book, repeats, device, n_samples, warm, measure_cached=True):
    """Rows of the three tools at one size."""
    collected = {tool: [] for tool in TOOLS}
    for sample in range(n_samples):
        shift = sample % len(TOOLS)  # each tool goes first in turn
        for tool in TOOLS[shift:] + TOOLS[:shift]:
            print(f"x{repeats} sample {sample + 1}/{n_samples}: {tool}", flush=True)
            collected[tool].append(run_worker(tool, repeats, device, warm))
            if measure_cached and tool != "pyPLNmodels":  # a new cache: fill, read
                with tempfile.TemporaryDirectory() as cache_dir:
                    run_worker(tool, repeats, device, 0, cache_dir)
                    cached = run_worker(tool, repeats, device, 0, cache_dir)
                collected[tool][-1]["cached_s"] = cached["first_s"]
    bounds = {
        tool: neg_elbo64(book, repeats, **results[-1]["params"])
        for tool, results in collected.items()
    }
    if warm:  # the book's warm fit to the reference's bound
        matched = run_worker("jax", repeats, device, 0, to_bound=bounds["pyPLNmodels"])
        collected["jax"][-1].update(
            {k: v for k, v in matched.items() if k.startswith("to_bound")}
        )
    # pyPLNmodels logs its bound in float32, off by more than the two fits' gap:
    # shifted to agree with the float64 bound at its end before it is compared
    reference = collected["pyPLNmodels"][-1]
    shift = bounds["pyPLNmodels"] - reference["bounds"][-1]
    steps = zip(reference["step_end_s"], reference["bounds"])
    reaching = []  # a fit that ends above the book's bound never reaches it: a dip of
    if bounds["pyPLNmodels"] <= bounds["jax"]:  # its float32 log below it is rounding
        reaching = [s for s, bound in steps if bound + shift <= bounds["jax"]]
    rows = []
    for tool, results in collected.items():
        warm_all = [s for r in results for s in r["warm_s"]]
        cached_all = [r["cached_s"] for r in results if "cached_s" in r]
        last = results[-1]
        rows.append(
            {
                "device": device,
                "tool": tool,
                "repeats": repeats,
                "rows": 116 * repeats,
                "fit_source_sha256": fit_source_sha256(),
                "first_s": [r["first_s"] for r in results],
                "warm_s": warm_all,
                "first_s_min": min(r["first_s"] for r in results),
                "warm_s_min": min(warm_all) if warm_all else None,
                "cached_s": cached_all,
                "cached_s_min": min(cached_all) if cached_all else None,
                "to_bound_s_min": last.get("to_bound_s"),
                "to_bound_iterations": last.get("to_bound_iterations"),
                "reference_to_book_s": (reaching[0] if reaching else None)
                if tool == "pyPLNmodels"
                else None,
                "iterations": last["iterations"],
                "neg_elbo": bounds[tool],
                "neg_elbo_per_copy": bounds[tool] / repeats,
            }
        )
        print(
            f"  {tool:12} first {rows[-1]['first_s_min']:8.2f} s  warm "
            f"{rows[-1]['warm_s_min'] or float('nan'):8.2f} s  iterations "
            f"{rows[-1]['iterations']}  -ELBO {bounds[tool]:.2f}",
            flush=True,
        )
    return rows


def keep_previous_run(record, device, sizes):
    """Issue 31's targets hold in two records from separate runs: the device's previous
    run, with its rows, moves to record["earlier"] (replacing the one there) when it ran
    the same fits at no size this run skips; the run before it is dropped."""
    previous = [run for run in record["runs"] if run["device"] == device]
    if not previous or previous[-1]["fit_source_sha256"] != fit_source_sha256():
        return
    if not set(previous[-1]["sizes"]) <= set(sizes):
        return
    rows = [row for row in record["rows"] if row["device"] == device]
    earlier = [e for e in record.get("earlier", []) if e["run"]["device"] != device]
    record["earlier"] = earlier + [{"run": previous[-1], "rows": rows}]


def parse_sizes(spec):
    return {int(k): int(v) for k, v in (item.split(":") for item in spec.split(","))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    parser.add_argument(
        "--append",
        action="store_true",
        help="keep the record's rows of other devices and of the sizes not run now",
    )
    parser.add_argument("--sizes", default="1,10,100,1000")
    parser.add_argument(
        "--cached-sizes",
        default="1,10,100,1000",
        help="the sizes at which the cached first fit is measured (two more processes "
        "per JAX sample)",
    )
    parser.add_argument(
        "--samples",
        default="1:3,10:3,100:2,1000:1",
        help="fresh processes per size and tool, e.g. 1:3,1000:1",
    )
    parser.add_argument(
        "--warm",
        default="1:2,10:2,100:2,1000:0",
        help="warm fits per process and size (a pyPLNmodels fit: minutes at x1000)",
    )
    parser.add_argument(
        "--roofline-rows",
        type=int,
        default=100,
        help="the repeats of oaks at which the roofline point is measured (a size "
        "with warm fits in this run)",
    )
    args = parser.parse_args()
    if args.device == "cpu":
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
        import jax

        jax.config.update("jax_platforms", "cpu")
    sizes = [int(size) for size in args.sizes.split(",")]
    samples, warm = parse_sizes(args.samples), parse_sizes(args.warm)
    started = time.perf_counter()
    book = book_namespace()
    rows = []
    cached_sizes = {int(size) for size in args.cached_sizes.split(",") if size}
    for repeats in sizes:
        rows += race_size(
            book,
            repeats,
            args.device,
            samples.get(repeats, 1),
            warm.get(repeats, 0),
            measure_cached=repeats in cached_sizes,
        )
    run = {
        "device": args.device,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "versions": versions(),
        "fit_source_sha256": fit_source_sha256(),
        "sizes": sizes,
        "samples": samples,
        "warm_fits_per_process": warm,
        "bench_seconds": None,
    }
    if args.device != "cpu":  # the accelerator's name (jax.devices()[0].device_kind)
        import jax

        run["accelerator"] = jax.devices()[0].device_kind
    roofline_row = next(
        (r for r in rows if r["tool"] == "jax" and r["repeats"] == args.roofline_rows),
        None,
    )
    if roofline_row is not None and roofline_row["warm_s_min"]:
        run["roofline"] = roofline(book, args.roofline_rows, roofline_row)
    run["bench_seconds"] = time.perf_counter() - started
    out = pathlib.Path(args.out)
    record = {"runs": [], "rows": []}
    if args.append and out.exists():
        record = json.loads(out.read_text())
        keep_previous_run(record, args.device, sizes)
        record["rows"] = [
            r
            for r in record["rows"]
            if r["device"] != args.device or r["repeats"] not in sizes
        ]
        record["runs"] = [r for r in record["runs"] if r["device"] != args.device]
    for row in record["rows"]:  # records before rows carried their own hash
        row.setdefault("fit_source_sha256", record.get("fit_source_sha256"))
    record.pop("fit_source_sha256", None)
    record["runs"].append(run)
    record["rows"].extend(rows)
    out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {out} ({run['bench_seconds']:.0f} s)")


if __name__ == "__main__":
    main()
