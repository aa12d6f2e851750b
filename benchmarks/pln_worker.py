"""One sample of the race, in a fresh process: `python pln_worker.py TOOL ...`.

It times one first fit (compilation counted for JAX; PyTorch has none) and `--warm` warm
fits, saves the parameters of the last one (--params, .npz) and prints one line of JSON.
TOOL: `jax` (the book's fit), `jax-rprop` (pyPLNmodels' algorithm compiled by JAX) or
`pyPLNmodels` (the reference, whose bound after every step is recorded with its time).
With --to-bound T, `jax` also times warm fits stopped at their first iteration at or
below the bound T.
"""

import argparse
import json
import sys
import time

import numpy as np
from pln_source import book_namespace, oaks


def jax_runner(tool, counts, log_offsets, device, cache_dir):
    import jax

    if device == "cpu":
        jax.config.update("jax_platforms", "cpu")
    if cache_dir:  # the persistent cache, every program stored (the fit compiles < 1 s)
        jax.config.update("jax_compilation_cache_dir", cache_dir)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    book = book_namespace()
    if tool == "jax":

        def run():
            result = book["fit"](counts, log_offsets)
            return result.latent_mean, result.latent_variance, result.bounds

        return book, run

    def run():  # Rprop on (M, S), as fit() runs the book's: x64 on, one BLAS thread
        data = book["PLNData"](counts, log_offsets, np.ones((counts.shape[0], 1)))
        with jax.enable_x64(True), book["one_blas_thread"]():
            params, bounds = jax.device_get(book["fit_rprop"](data))
        mean, sqrt_variance = np.asarray(params, np.float64)
        return mean, sqrt_variance**2, bounds

    return book, run


def torch_runner(counts, log_offsets, steps):
    import pyPLNmodels
    import torch

    torch.manual_seed(0)

    def run():
        model = pyPLNmodels.Pln(counts, offsets=log_offsets)
        steps.clear()
        train_step = model._trainstep
        start = time.perf_counter()

        def recorded_step():  # pyPLNmodels keeps no iteration count: count the steps
            elbo = train_step()
            steps.append((time.perf_counter() - start, -float(elbo)))
            return elbo

        model._trainstep = recorded_step
        model.fit()
        mean = model.latent_mean.detach().cpu().numpy().astype(np.float64)
        sqrt_variance = model.latent_sqrt_variance.detach().cpu().numpy()
        return mean, sqrt_variance.astype(np.float64) ** 2, [b for _, b in steps]

    return run


def to_bound_seconds(book, counts, log_offsets, bounds, target):
    """Warm seconds (best of 3) of the book's compiled fit stopped at its first
    iteration at or below target, and that iteration; {} if it never gets there."""
    import jax
    import jax.numpy as jnp

    hits = np.nonzero(np.asarray(bounds) <= target)[0]
    if not hits.size:
        return {}
    iterations = int(hits[0])
    with jax.enable_x64(True), book["one_blas_thread"]():
        data = book["PLNData"](
            jnp.asarray(counts), jnp.asarray(log_offsets), jnp.ones((len(counts), 1))
        )
        times = []
        for _ in range(3):
            start = time.perf_counter()
            jax.block_until_ready(book["fit_anderson"](data, book["TOL"], iterations))
            times.append(time.perf_counter() - start)
    return {"to_bound_s": min(times), "to_bound_iterations": iterations}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tool", choices=("jax", "jax-rprop", "pyPLNmodels"))
    parser.add_argument("--rows", type=int, required=True, help="repeats of oaks")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--warm", type=int, default=0)
    parser.add_argument("--params", required=True)
    parser.add_argument("--cache-dir")
    parser.add_argument("--to-bound", type=float)
    args = parser.parse_args()
    counts, log_offsets = oaks(args.rows)
    steps = []
    if args.tool == "pyPLNmodels":
        book, run = None, torch_runner(counts, log_offsets, steps)
    else:
        book, run = jax_runner(
            args.tool, counts, log_offsets, args.device, args.cache_dir
        )
    seconds = []
    for _ in range(1 + args.warm):
        start = time.perf_counter()
        mean, variance, bounds = run()
        seconds.append(time.perf_counter() - start)
    extra = {}
    if args.to_bound is not None:
        extra = to_bound_seconds(book, counts, log_offsets, bounds, args.to_bound)
    if steps:
        extra["step_end_s"] = [s for s, _ in steps]
    np.savez(args.params, latent_mean=mean, latent_variance=variance)
    sample = {
        "first_s": seconds[0],
        "warm_s": seconds[1:],
        "iterations": len(bounds) - (args.tool == "jax"),
        "bounds": [float(b) for b in bounds],
        **extra,
    }
    print(json.dumps(sample))


if __name__ == "__main__":
    sys.exit(main())
