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

`--torch-compile` (`make bench-compile`, about 12 minutes; torch.compile's CPU backend
builds C++ with the machine's compiler, gcc here) stores a separate entry,
"torch_compile": in one process pinned to one core, pyPLNmodels' steps alone, the same
steps rewritten as one function per step (`torch_steps_runner`), eager and compiled by
PyTorch's own compiler, torch.compile, and the compiled Rprop, in turns; with each
variant's first call (compilation included) and its final bound, so that chapter 11 can
say how much of the compiled steps' factor compiling pyPLNmodels' own formulas wins back.
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
from pln_source import book_namespace, fit_source_sha256, neg_elbo64, oaks, store_entry
from pln_worker import jax_runner, torch_runner


def timed(run):
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


ONE_CORE = ["pyPLNmodels' steps alone, one thread", "Rprop, JAX"]
COMPILED = [
    "pyPLNmodels' steps alone, one thread",
    "pyPLNmodels' steps rewritten, eager",
    "pyPLNmodels' steps rewritten, torch.compile",
    "Rprop, JAX",
]


def mean_and_variance(mean, sqrt_variance):
    """(M, S^2) of a torch fit, as float64 NumPy arrays."""
    mean, sqrt_variance = (
        p.detach().numpy().astype("float64") for p in (mean, sqrt_variance)
    )
    return mean, sqrt_variance**2


def torch_steps_runner(counts, log_offsets, compiled):
    """pyPLNmodels' 400 steps written as one function per step, eager or compiled by
    torch.compile (fullgraph: the step is one program): its bound (profiled_elbo_pln),
    its gradient by torch.func and the Rprop rule of torch.optim.Rprop (the foreach
    rule, with pyPLNmodels' settings: lr 0.01, step sizes 1e-10 to 50) written out.
    Eager, it takes the same steps as `_trainstep` until float32 rounding parts them."""
    import pyPLNmodels
    import torch
    from pyPLNmodels.calculations.elbos import profiled_elbo_pln

    def neg_elbo(params, endog, exog, offsets):
        mean, sqrt_variance = params
        return -profiled_elbo_pln(
            endog=endog,
            exog=exog,
            offsets=offsets,
            latent_mean=mean,
            latent_sqrt_variance=sqrt_variance,
        )

    def step(params, previous, sizes, endog, exog, offsets):
        grads, value = torch.func.grad_and_value(neg_elbo)(params, endog, exog, offsets)
        new = []
        for param, grad, before, size in zip(params, grads, previous, sizes):
            sign = grad * before
            size = torch.where(
                sign > 0,
                (size * 1.2).clamp(max=50),
                torch.where(sign < 0, (size * 0.5).clamp(min=1e-10), size),
            )
            grad = torch.where(sign < 0, torch.zeros_like(grad), grad)
            new.append((param - torch.sign(grad) * size, grad, size))
        return (*(tuple(n[i] for n in new) for i in range(3)), value)

    run_step = torch.compile(step, fullgraph=True) if compiled else step

    def run():
        model = pyPLNmodels.Pln(counts, offsets=log_offsets)
        model._fitting_initialization(0.01, 400)  # fit()'s set-up, as torch_steps
        params = (model._latent_mean.detach(), model._latent_sqrt_variance.detach())
        previous = tuple(torch.zeros_like(p) for p in params)
        sizes = tuple(torch.full_like(p, 0.01) for p in params)
        data = (model._endog, model._exog, model._offsets)
        for _ in range(400):
            params, previous, sizes, _ = run_step(params, previous, sizes, *data)
        return mean_and_variance(*params)

    return run


def threads_at(repeats, rounds, only=None, compiled_steps=False):
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
                return run_torch()
            finally:
                torch.set_num_threads(default_threads)

        return run

    def torch_steps():  # what fit() runs, less its per-step bookkeeping (criterion, logs)
        model = pyPLNmodels.Pln(counts, offsets=log_offsets)
        model._fitting_initialization(0.01, 400)  # fit()'s defaults: lr 0.01, 400 steps
        for _ in range(400):  # the default fit always takes all 400 (chapter 11)
            model._trainstep()
        return mean_and_variance(model._latent_mean, model._latent_sqrt_variance)

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
    if compiled_steps:  # pyPLNmodels' steps as one function per step
        for compiled, how in ((False, "eager"), (True, "torch.compile")):
            run = torch_steps_runner(counts, log_offsets, compiled)
            variants[f"pyPLNmodels' steps rewritten, {how}"] = with_threads(1, run)
    if only:
        variants = {name: variants[name] for name in only}
    load_before = os.getloadavg()[0]
    first_s, bounds = {}, {}
    for name, run in variants.items():  # compilation and first-call costs, untimed
        start = time.perf_counter()
        result = run()
        first_s[name] = time.perf_counter() - start
        if compiled_steps:  # each fit's final bound, in float64 (as the race's)
            bounds[name] = neg_elbo64(rprop, repeats, *result[:2])
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
    size = {
        "repeats": repeats,
        "rows": 116 * repeats,
        "torch_default_threads": default_threads,
        "load_average_1min": [load_before, os.getloadavg()[0]],
        "variants": samples,
    }
    if compiled_steps:
        size.update(first_call_s=first_s, final_neg_elbo=bounds)
    return size


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
    parser.add_argument(
        "--torch-compile",
        action="store_true",
        help="the record's torch_compile entry instead: pyPLNmodels' steps eager and "
        "compiled by torch.compile, and the compiled Rprop, pinned to one core",
    )
    args = parser.parse_args()
    if args.one_core or args.torch_compile:  # before the thread pools start
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    import jax

    jax.config.update("jax_platforms", "cpu")
    started = time.perf_counter()
    if args.torch_compile:
        rounds = parse_sizes(args.rounds).items()
        sizes = [threads_at(r, n, COMPILED, compiled_steps=True) for r, n in rounds]
        entry = {"machine": machine(), "versions": versions(), "sizes": sizes}
        entry["machine"]["cores_unpinned"] = os.cpu_count()  # machine(): the one pinned
        entry["fit_source_sha256"] = fit_source_sha256()
        entry["bench_seconds"] = time.perf_counter() - started
        store_entry(args.out, "torch_compile", entry)
        print(f"wrote {args.out} ({entry['bench_seconds']:.0f} s)")
        return
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
