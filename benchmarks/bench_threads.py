"""Threads in chapter 11's race: pyPLNmodels with PyTorch's default thread count and with
one thread, pyPLNmodels' own 400 steps without fit()'s bookkeeping (one thread), beside
the compiled Rprop (`fit_rprop`) and the book's `fit` (one OpenBLAS thread each, as
raced), each JAX fit with OpenBLAS's threads as found, and the book's `fit` without
Anderson acceleration (ANDERSON_MEMORY = 0, the plain sweeps).

Run `make bench-threads` on an idle machine. In one process per size, after one untimed
fit of each variant, the variants take turns, round after round (warm fits); each fit's
wall time and the process's CPU time during it are stored in
chapters/data/pln_bench.json under "threads" (the race's rows are left as they are). The
race runs pyPLNmodels at PyTorch's defaults, so its "JAX over eager PyTorch" factor
carries PyTorch's thread count; this measurement tells how much of that factor the
thread count is. The JAX fits with OpenBLAS's threads as found answer chapter 11's own
threads question (what does `fit`'s one OpenBLAS thread buy?) on an idle machine;
pyPLNmodels' steps alone (its `_trainstep`, 400 times, after the set-up `fit()` does)
split the rest of that factor into `fit()`'s own work per step and the steps themselves,
eager against compiled, which a second process pinned to one core times again (the
record's "one_core": both fits on one core, so the second core is out of that factor);
and the plain sweeps split the algorithm's factor into the sweeps and Anderson
acceleration. Each size stores the load average (1 minute) before and after its rounds.
"""

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time

from bench_pln import DEFAULT_OUT, parse_sizes
from pln_roofline import machine, versions
from pln_source import book_namespace, fit_source_sha256, oaks, store_entry
from pln_worker import jax_runner, torch_runner


def timed(run):
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


ONE_CORE = ["pyPLNmodels' steps alone, one thread", "Rprop, JAX"]


def threads_at(repeats, rounds, only=None):
    import pyPLNmodels
    import torch

    counts, log_offsets = oaks(repeats)
    default_threads = torch.get_num_threads()
    torch_fit = torch_runner(counts, log_offsets, [])
    rprop, rprop_fit = jax_runner("jax-rprop", counts, log_offsets, "cpu", None)
    book, book_fit = jax_runner("jax", counts, log_offsets, "cpu", None)
    plain = book_namespace()  # the book's fit without Anderson: a history of one slot
    plain["ANDERSON_MEMORY"] = 0  # read when fit_anderson is traced, at its first call

    def with_threads(count, run_torch=torch_fit):
        def run():
            torch.set_num_threads(count)
            try:
                run_torch()
            finally:
                torch.set_num_threads(default_threads)

        return run

    def torch_steps():  # what fit() runs, less its per-step bookkeeping (criterion, logs)
        model = pyPLNmodels.Pln(counts, offsets=log_offsets)
        model._fitting_initialization(0.01, 400)  # fit()'s defaults: lr 0.01, 400 steps
        for _ in range(400):  # the default fit always takes all 400 (chapter 11)
            model._trainstep()

    def blas_as_found(namespace, fit):
        def run():  # the fit, but its one_blas_thread() does nothing
            one_blas_thread = namespace["one_blas_thread"]
            namespace["one_blas_thread"] = contextlib.nullcontext
            try:
                fit()
            finally:
                namespace["one_blas_thread"] = one_blas_thread

        return run

    variants = {
        "pyPLNmodels, default threads": with_threads(default_threads),
        "pyPLNmodels, one thread": with_threads(1),
        "Rprop, JAX": rprop_fit,
        "book": book_fit,
        "book, OpenBLAS threads as found": blas_as_found(book, book_fit),
        "Rprop, JAX, OpenBLAS threads as found": blas_as_found(rprop, rprop_fit),
        "book, no Anderson": lambda: plain["fit"](counts, log_offsets),
        "pyPLNmodels' steps alone, one thread": with_threads(1, torch_steps),
    }
    if only:
        variants = {name: variants[name] for name in only}
    load_before = os.getloadavg()[0]
    for run in variants.values():  # compilation and first-call costs, untimed
        run()
    samples = {name: {"wall_s": [], "cpu_s": []} for name in variants}
    names = list(variants)
    for turn in range(rounds):
        shift = turn % len(names)  # each variant goes first in turn
        for name in names[shift:] + names[:shift]:
            wall, cpu = timed(variants[name])
            samples[name]["wall_s"].append(wall)
            samples[name]["cpu_s"].append(cpu)
            print(
                f"x{repeats} round {turn + 1}/{rounds} {name}: {wall:.3f} s", flush=True
            )
    return {
        "repeats": repeats,
        "rows": 116 * repeats,
        "torch_default_threads": default_threads,
        "load_average_1min": [load_before, os.getloadavg()[0]],
        "variants": samples,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    parser.add_argument("--rounds", default="1:7,10:5,100:3", help="size:rounds,...")
    parser.add_argument(
        "--one-core",
        action="store_true",
        help="only the steps alone and the compiled Rprop, this process pinned to one "
        "core; print the sizes as JSON (the full run calls it in a fresh process)",
    )
    args = parser.parse_args()
    if args.one_core:  # before JAX and PyTorch start their thread pools
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    import jax

    jax.config.update("jax_platforms", "cpu")
    started = time.perf_counter()
    only = ONE_CORE if args.one_core else None
    sizes = [threads_at(r, n, only) for r, n in parse_sizes(args.rounds).items()]
    if args.one_core:
        print(json.dumps(sizes))
        return
    pinned = subprocess.run(
        [sys.executable, __file__, "--one-core", "--rounds", args.rounds],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    for size, one_core in zip(sizes, json.loads(pinned.stdout.splitlines()[-1])):
        size["one_core"] = {  # the same fits in a process pinned to one core
            key: one_core[key] for key in ("load_average_1min", "variants")
        }
    bench_seconds = time.perf_counter() - started
    store_entry(
        args.out,
        "threads",
        {
            "machine": machine(),
            "versions": versions(),
            "fit_source_sha256": fit_source_sha256(),
            "bench_seconds": bench_seconds,
            "sizes": sizes,
        },
    )
    print(f"wrote {args.out} ({bench_seconds:.0f} s)")


if __name__ == "__main__":
    main()
