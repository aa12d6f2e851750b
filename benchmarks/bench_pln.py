"""The race of chapter 11: pyPLNmodels' Pln(...).fit() against the book's final `fit`.

Run `make bench` (it builds .venv-bench from requirements-bench.txt), or, where pyPLNmodels,
torch and jax are already installed (e.g. a GPU machine with Python 3.12):

    python benchmarks/bench_pln.py --device cuda --out FILE --append

The book's fit is not copied here: the code cells of chapters/11_pln_faster.ipynb tagged
`pln-fit` are executed, and the record stores a hash of their source
(tests/test_pln_bench_record.py fails when that source changes and the record does not).

For each size (the 116 oaks rows repeated 1, 10, 100, 1000 times) and each fit, every sample
is a fresh Python process that loads the data, then times a first fit (compilation counted for
JAX; torch has none) and warm fits (by default none at x1000, where one pyPLNmodels fit takes
minutes). For JAX, two more fresh processes share a new persistent compilation cache: the
first fills it, the second's first fit is the *cached* time (a user who fits again tomorrow).
A warm JAX fit is also timed stopped at its first iteration at or below the reference's bound
(the record's pyPLNmodels bound at x1, per copy): the time to a matched bound. The two fits
alternate, sample after sample. The record
keeps every sample, the bound each fit reaches evaluated by the book's `profiled_neg_elbo` in
float64 at the parameters it returns, and the iterations.
"""

import argparse
import ast
import datetime
import hashlib
import json
import os
import pathlib
import platform
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
CHAPTER = ROOT / "chapters" / "11_pln_faster.ipynb"
OAKS = ROOT / "chapters" / "data" / "oaks"
DEFAULT_OUT = ROOT / "chapters" / "data" / "pln_bench.json"
FIT_TAG = "pln-fit"
PREAMBLE = (
    "import jax\nimport jax.numpy as jnp\nimport numpy as np\n"
    "from functools import partial\nfrom typing import NamedTuple\n"
)


def fit_source(chapter=CHAPTER):
    """The source of the chapter's code cells tagged pln-fit, joined in order."""
    notebook = json.loads(pathlib.Path(chapter).read_text())
    cells = [
        cell
        for cell in notebook["cells"]
        if cell["cell_type"] == "code" and FIT_TAG in cell["metadata"].get("tags", [])
    ]
    return "\n\n".join(
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in cells
    )


def fit_source_sha256(chapter=CHAPTER):
    """sha256 of the fit's top-level statements' syntax trees, sorted: a change of code
    changes it; reformatting (line breaks, comments, how a long string is split) and
    moving the cells or definitions around the chapter do not."""
    statements = sorted(
        ast.dump(statement, include_attributes=False)
        for statement in ast.parse(fit_source(chapter)).body
    )
    return hashlib.sha256("\n".join(statements).encode()).hexdigest()


def book_namespace():
    namespace = {"__name__": "pln_book"}
    exec(PREAMBLE + fit_source(), namespace)  # noqa: S102 (the chapter is the source)
    return namespace


def oaks(repeats):
    import numpy as np

    def read(name):
        return np.loadtxt(OAKS / name, delimiter=",", skiprows=1)

    counts = np.tile(read("counts.csv"), (repeats, 1))
    log_offsets = np.tile(np.log(read("offsets.csv")), (repeats, 1))
    return counts, log_offsets


def oaks_data64(book, repeats):
    """The book's PLNData of oaks x repeats with an intercept; call under enable_x64."""
    import jax.numpy as jnp

    counts, log_offsets = oaks(repeats)
    return book["PLNData"](
        jnp.asarray(counts), jnp.asarray(log_offsets), jnp.ones((counts.shape[0], 1))
    )


def as_the_fit_runs():
    """The thread setting the book's `fit` runs its compiled loop under: one OpenBLAS
    thread for jaxlib's CPU LAPACK calls (chapter 11, "Threads that compete"). Timings of
    the compiled loop or step outside `fit` use it too, so they measure what `fit` runs."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1, user_api="blas")


# ---------------------------------------------------------------- worker processes


def worker(tool, repeats, device, warm, params_file, cache_dir=None, target=None):
    """Run in a fresh process: time one first fit and `warm` warm fits; print JSON."""
    import numpy as np

    counts, log_offsets = oaks(repeats)
    extra = {}
    if tool == "jax":
        import jax

        if device == "cpu":
            jax.config.update("jax_platforms", "cpu")
        if cache_dir:
            jax.config.update("jax_compilation_cache_dir", cache_dir)
            jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        book = book_namespace()

        def run():
            result = book["fit"](counts, log_offsets)
            return result, result.latent_mean, result.latent_variance, result.iterations

        backend = jax.default_backend()
    else:
        import pyPLNmodels
        import torch

        torch.manual_seed(0)

        def run():
            model = pyPLNmodels.Pln(counts, offsets=log_offsets)
            steps = [0]
            train_step = model._trainstep

            def counted_step():  # pyPLNmodels keeps no iteration count: count the steps
                steps[0] += 1
                return train_step()

            model._trainstep = counted_step
            model.fit()
            mean = model.latent_mean.detach().cpu().numpy().astype(np.float64)
            sqrt_variance = model.latent_sqrt_variance.detach().cpu().numpy()
            return model, mean, sqrt_variance.astype(np.float64) ** 2, steps[0]

        backend = pyPLNmodels.models.base.DEVICE
    seconds = []
    for _ in range(1 + warm):
        start = time.perf_counter()
        result, mean, variance, iterations = run()
        seconds.append(time.perf_counter() - start)
    if tool == "jax" and target is not None and warm:
        extra = matched_bound_seconds(
            book, result, counts, log_offsets, target * repeats
        )
    np.savez(params_file, latent_mean=mean, latent_variance=variance)
    print(
        json.dumps(
            {
                "first_s": seconds[0],
                "warm_s": seconds[1:],
                "iterations": iterations,
                "backend": backend,
                **extra,
            }
        )
    )


def matched_bound_seconds(book, result, counts, log_offsets, target):
    """Warm seconds of the book's compiled fit stopped at its first iteration at or below
    target (best of 3), and that iteration; {} when the fit never gets there."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    hits = np.nonzero(result.trace <= target)[0]
    if not hits.size:
        return {}
    iterations = int(hits[0])
    with jax.enable_x64(True):
        data = book["PLNData"](
            jnp.asarray(counts),
            jnp.asarray(log_offsets),
            jnp.ones((counts.shape[0], 1)),
        )
        times = []
        with as_the_fit_runs():
            for _ in range(3):
                start = time.perf_counter()
                jax.block_until_ready(
                    book["fit_anderson"](data, book["TOL"], iterations)
                )
                times.append(time.perf_counter() - start)
    return {"to_bound_s": min(times), "to_bound_iterations": iterations}


def run_worker(tool, repeats, device, warm, cache_dir=None, target=None):
    with tempfile.TemporaryDirectory() as folder:
        params_file = os.path.join(folder, "params.npz")
        command = [
            sys.executable,
            __file__,
            "--worker",
            tool,
            "--rows",
            str(repeats),
            "--device",
            device,
            "--warm",
            str(warm),
            "--params",
            params_file,
        ]
        if cache_dir:
            command += ["--cache-dir", cache_dir]
        if target is not None:
            command += ["--target", repr(target)]
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
        import numpy as np

        with np.load(params_file) as params:
            sample["params"] = {key: params[key] for key in params}
        return sample


# ---------------------------------------------------------------- machine and roofline


def machine():
    cpu = platform.processor()
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory_gib = None
    try:
        for line in pathlib.Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                memory_gib = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": len(os.sched_getaffinity(0)),
        "memory_gib": memory_gib,
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


def versions():
    from importlib.metadata import version

    return {
        name: version(name)
        for name in ("jax", "jaxlib", "numpy", "torch", "pyPLNmodels")
    }


def roofline(book, repeats):
    """FLOPs and bytes of one iteration of the final fit (XLA's cost analysis of one
    compiled fit_step: bound, sweep, rescale, Anderson), the warm time of that same
    compiled step (no compilation), and the machine's float32 matmul rate and memory
    bandwidth, all measured in this process."""
    import jax
    import jax.numpy as jnp

    with jax.enable_x64(True):
        data = oaks_data64(book, repeats)
        problem, carry, log_factorial_sum = book["fit_start"](data)
        carry = jax.tree.map(jnp.copy, carry)  # distinct buffers, so it can be donated
        with jax.default_matmul_precision("highest"):
            step = jax.jit(book["fit_step"], donate_argnums=0)
            compiled = step.lower(carry, problem, data, log_factorial_sum).compile()
        analysis = compiled.cost_analysis()
        analysis = analysis[0] if isinstance(analysis, list) else analysis
        total = {
            key: float(analysis.get(key, 0.0))
            for key in ("flops", "bytes accessed", "transcendentals")
        }
        carry = compiled(carry, problem, data, log_factorial_sum)  # warm up
        jax.block_until_ready(carry)
        step_seconds = []
        with as_the_fit_runs():
            for _ in range(5):  # each step from the previous one's (donated) carry
                start = time.perf_counter()
                carry = jax.block_until_ready(
                    compiled(carry, problem, data, log_factorial_sum)
                )
                step_seconds.append(time.perf_counter() - start)
    seconds_per_iteration = min(step_seconds)
    size = 2048
    a = jnp.ones((size, size), jnp.float32)
    matmul = jax.jit(lambda a: a @ a)
    jax.block_until_ready(matmul(a))
    best = min(_timed(matmul, a) for _ in range(10))
    matmul_rate = 2 * size**3 / best
    # bandwidth: read and write 256 MiB in place (donated), as the fit's loop reuses its
    # buffers; writing a fresh array each time would measure page faults too (5 against
    # 33 GB/s on the 2-core machine)
    big = jnp.ones((64 * 2**20,), jnp.float32)
    double = jax.jit(lambda x: x * 2, donate_argnums=0)
    big = jax.block_until_ready(double(big))
    best = float("inf")
    for _ in range(10):
        start = time.perf_counter()
        big = jax.block_until_ready(double(big))
        best = min(best, time.perf_counter() - start)
    bandwidth = 2 * big.nbytes / best
    flops_rate = total["flops"] / seconds_per_iteration
    intensity = total["flops"] / total["bytes accessed"]
    return {
        "rows": int(data.counts.shape[0]),
        "flops_per_iteration": total["flops"],
        "bytes_per_iteration": total["bytes accessed"],
        "transcendentals_per_iteration": total["transcendentals"],
        "seconds_per_iteration": seconds_per_iteration,
        "achieved_flops_per_s": flops_rate,
        "matmul_float32_flops_per_s": matmul_rate,
        "memory_bytes_per_s": bandwidth,
        "arithmetic_intensity": intensity,
        "ridge_intensity": matmul_rate / bandwidth,
        "bandwidth_bound_flops_per_s": min(matmul_rate, intensity * bandwidth),
        "bandwidth_probe": "x * 2 of 256 MiB of float32, in place (donated)",
        "step_seconds": step_seconds,
        "seconds_per_iteration_from": "the best of 5 warm runs of the compiled fit_step, "
        "with one OpenBLAS thread, as fit runs it",
        "note": "FLOPs, bytes and transcendentals (exp, log) from XLA's cost analysis "
        "of one compiled fit_step (the float64 bound, the float32 sweep and rescale, "
        "the Anderson combination)",
    }


def _timed(function, *args):
    import jax

    start = time.perf_counter()
    jax.block_until_ready(function(*args))
    return time.perf_counter() - start


# ---------------------------------------------------------------- the race


def race(device, sizes, samples, warm, target=None):
    """Time both fits at each size: samples[size] fresh processes each, warm[size] warm
    fits in each process; for JAX also a fit in a second process with the persistent
    compilation cache, and (given the reference's bound per copy) the time to it."""
    import jax
    import jax.numpy as jnp

    book = book_namespace()
    rows = []
    for repeats in sizes:
        with jax.enable_x64(True):
            data = oaks_data64(book, repeats)
            log_factorial_sum = jnp.sum(book["log_factorial_stirling"](data.counts))
        n_samples = samples.get(repeats, 1)
        collected = {"jax": [], "pyPLNmodels": []}
        for sample in range(n_samples):
            order = (
                ("jax", "pyPLNmodels") if sample % 2 == 0 else ("pyPLNmodels", "jax")
            )
            for tool in order:
                print(f"x{repeats} sample {sample + 1}/{n_samples}: {tool}", flush=True)
                collected[tool].append(
                    run_worker(
                        tool, repeats, device, warm.get(repeats, 0), None, target
                    )
                )
                if tool == "jax":  # a new cache: one process fills it, the next uses it
                    with tempfile.TemporaryDirectory() as cache_dir:
                        run_worker(tool, repeats, device, 0, cache_dir)
                        cached = run_worker(tool, repeats, device, 0, cache_dir)
                    collected[tool][-1]["cached_s"] = cached["first_s"]
        for tool, results in collected.items():
            params = results[-1]["params"]
            with jax.enable_x64(True):
                bound = float(
                    book["profiled_neg_elbo"](
                        jnp.asarray(params["latent_mean"]),
                        jnp.log(jnp.asarray(params["latent_variance"])),
                        data,
                        log_factorial_sum,
                    )
                )
            warm_all = [s for r in results for s in r["warm_s"]]
            cached_all = [r["cached_s"] for r in results if "cached_s" in r]
            to_bound = [r["to_bound_s"] for r in results if "to_bound_s" in r]
            rows.append(
                {
                    "device": device,
                    "tool": tool,
                    "repeats": repeats,
                    "rows": int(data.counts.shape[0]),
                    "backend": results[-1]["backend"],
                    "first_s": [r["first_s"] for r in results],
                    "warm_s": warm_all,
                    "first_s_min": min(r["first_s"] for r in results),
                    "warm_s_min": min(warm_all) if warm_all else None,
                    "cached_s": cached_all,
                    "cached_s_min": min(cached_all) if cached_all else None,
                    "to_bound_s_min": min(to_bound) if to_bound else None,
                    "to_bound_iterations": results[-1].get("to_bound_iterations"),
                    "iterations": results[-1]["iterations"],
                    "neg_elbo": bound,
                    "neg_elbo_per_copy": bound / repeats,
                    "fit_settings": (
                        "Pln(counts, offsets=log_offsets).fit() defaults"
                        if tool == "pyPLNmodels"
                        else "fit(counts, log_offsets)"
                    ),
                }
            )
            print(
                f"  {tool:12} first {rows[-1]['first_s_min']:8.2f} s  warm "
                f"{rows[-1]['warm_s_min'] or float('nan'):8.2f} s  iterations "
                f"{rows[-1]['iterations']}  -ELBO {bound:.2f}",
                flush=True,
            )
    return rows


def remeasure_roofline(device, out, repeats):
    """Measure the roofline point again (FLOPs, bytes, the machine's rates) for the
    record's race on this device, which stays as it was; the run notes the date."""
    record = json.loads(out.read_text())
    (run,) = [run for run in record["runs"] if run["device"] == device]
    assert run["fit_source_sha256"] == fit_source_sha256(), (
        "the fit changed: make bench"
    )
    run["roofline"] = roofline(book_namespace(), repeats)
    run["roofline_date"] = datetime.datetime.now(datetime.UTC).isoformat(
        timespec="seconds"
    )
    out.write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps(run["roofline"], indent=1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    parser.add_argument(
        "--append",
        action="store_true",
        help="keep the record's rows of other devices, replace this device's",
    )
    parser.add_argument("--sizes", default="1,10,100,1000")
    parser.add_argument(
        "--keep-other-sizes",
        action="store_true",
        help="with --append: keep this device's rows of the sizes not run now",
    )
    parser.add_argument(
        "--samples",
        default="1:3,10:3,100:2,1000:1",
        help="fresh processes per size and fit, e.g. 1:3,1000:1",
    )
    parser.add_argument(
        "--warm",
        default="1:2,10:2,100:2,1000:0",
        help="warm fits per process and size (pyPLNmodels takes minutes a fit at x1000)",
    )
    parser.add_argument(
        "--roofline-only",
        action="store_true",
        help="measure the roofline point again for the record's rows of this device",
    )
    parser.add_argument(
        "--roofline-rows",
        type=int,
        default=1000,
        help="the repeats of oaks at which the roofline point is measured",
    )
    parser.add_argument("--worker", choices=("jax", "pyPLNmodels"))
    parser.add_argument("--rows", type=int)
    parser.add_argument("--params")
    parser.add_argument("--cache-dir")
    parser.add_argument("--target", type=float)
    args = parser.parse_args()
    if args.worker:
        worker(
            args.worker,
            args.rows,
            args.device,
            int(args.warm),
            args.params,
            args.cache_dir,
            args.target,
        )
        return
    if args.device == "cpu":
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
        import jax

        jax.config.update("jax_platforms", "cpu")
    sizes = [int(size) for size in args.sizes.split(",")]
    samples, warm = (
        {int(k): int(v) for k, v in (item.split(":") for item in spec.split(","))}
        for spec in (args.samples, args.warm)
    )
    if args.roofline_only:
        remeasure_roofline(args.device, pathlib.Path(args.out), args.roofline_rows)
        return
    started = time.perf_counter()
    out = pathlib.Path(args.out)
    target = None  # the reference's bound per copy, from the record, for matched bounds
    if out.exists():
        for row in json.loads(out.read_text())["rows"]:
            if row["tool"] == "pyPLNmodels" and row["repeats"] == 1:
                target = row["neg_elbo_per_copy"]
    rows = race(args.device, sizes, samples, warm, target)
    book = book_namespace()
    run = {
        "device": args.device,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "versions": versions(),
        "fit_source_sha256": fit_source_sha256(),
        "samples": samples,
        "warm_fits_per_process": warm,
        "bench_seconds": None,
        "roofline": roofline(book, args.roofline_rows),
    }
    run["bench_seconds"] = time.perf_counter() - started
    record = {"runs": [], "rows": []}
    if args.append and out.exists():
        record = json.loads(out.read_text())
        record["runs"] = [r for r in record["runs"] if r["device"] != args.device]
        record["rows"] = [
            r
            for r in record["rows"]
            if r["device"] != args.device
            or (args.keep_other_sizes and r["repeats"] not in sizes)
        ]
    record["fit_source_sha256"] = run["fit_source_sha256"]
    record["runs"].append(run)
    record["rows"].extend(rows)
    out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {out} ({run['bench_seconds']:.0f} s)")
    print(json.dumps(run["roofline"], indent=1))


if __name__ == "__main__":
    main()
