"""The race of chapter 11: pyPLNmodels' Pln(...).fit() against the book's final `fit`.

Run `make bench` (it builds .venv-bench from requirements-bench.txt), or, where pyPLNmodels,
torch and jax are already installed (e.g. a GPU machine with Python 3.12):

    python tests/bench_pln.py --device cuda --out FILE --append

The book's fit is not copied here: the code cells of chapters/11_pln_faster.ipynb tagged
`pln-fit` are executed, and the record stores a hash of their source
(tests/test_pln_bench_record.py fails when that source changes and the record does not).

For each size (the 116 oaks rows repeated 1, 10, 100, 1000 times) and each fit, every sample
is a fresh Python process that loads the data, then times a first fit (compilation counted for
JAX; torch has none) and warm fits (by default none at x1000, where one pyPLNmodels fit takes
minutes). The two fits alternate, sample after sample. The record
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
    """sha256 of the fit's syntax tree: a change of code changes it, reformatting does not
    (line breaks, comments and how a long string is split leave the tree as it is)."""
    tree = ast.dump(ast.parse(fit_source(chapter)), include_attributes=False)
    return hashlib.sha256(tree.encode()).hexdigest()


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


# ---------------------------------------------------------------- worker processes


def worker(tool, repeats, device, warm, params_file):
    """Run in a fresh process: time one first fit and `warm` warm fits; print JSON."""
    import numpy as np

    counts, log_offsets = oaks(repeats)
    if tool == "jax":
        import jax

        if device == "cpu":
            jax.config.update("jax_platforms", "cpu")
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
        _, mean, variance, iterations = run()
        seconds.append(time.perf_counter() - start)
    np.savez(params_file, latent_mean=mean, latent_variance=variance)
    print(
        json.dumps(
            {
                "first_s": seconds[0],
                "warm_s": seconds[1:],
                "iterations": iterations,
                "backend": backend,
            }
        )
    )


def run_worker(tool, repeats, device, warm):
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


def roofline(book, repeats, seconds_per_iteration):
    """FLOPs and bytes of one iteration of the final fit (XLA's cost analysis of one sweep
    and one float64 bound), the machine's float32 matmul rate and memory bandwidth."""
    import jax
    import jax.numpy as jnp

    with jax.enable_x64(True):
        data = oaks_data64(book, repeats)
        data32 = jax.tree.map(lambda leaf: leaf.astype(jnp.float32), data)
        state = book["offset_aware_start"](data32)
        total = {"flops": 0.0, "bytes accessed": 0.0, "transcendentals": 0.0}
        with jax.default_matmul_precision("highest"):
            sweep = jax.jit(book["pln_sweep"]).lower(state, data32).compile()
        state64 = tuple(leaf.astype(jnp.float64) for leaf in state)
        bound = jax.jit(book["profiled_neg_elbo"]).lower(*state64, data, 0.0).compile()
        for compiled in (sweep, bound):
            analysis = compiled.cost_analysis()
            analysis = analysis[0] if isinstance(analysis, list) else analysis
            for key in total:
                total[key] += float(analysis.get(key, 0.0))
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
        "note": "FLOPs and bytes from XLA's cost analysis of one pln_sweep (float32) "
        "and one profiled_neg_elbo (float64); the Anderson combination is "
        "left out; np.spacing-sized work such as exp counts as transcendentals",
    }


def _timed(function, *args):
    import jax

    start = time.perf_counter()
    jax.block_until_ready(function(*args))
    return time.perf_counter() - start


# ---------------------------------------------------------------- the race


def race(device, sizes, samples, warm):
    """Time both fits at each size: samples[size] fresh processes each, warm[size] warm
    fits in each process."""
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
                    run_worker(tool, repeats, device, warm.get(repeats, 0))
                )
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


def iteration_seconds(rows):
    """The largest size, and the book's seconds per iteration there: a warm fit's, or the
    first fit's (compilation included) where no warm fit ran."""
    final = {row["repeats"]: row for row in rows if row["tool"] == "jax"}
    largest = max(final)
    timed = "warm" if final[largest]["warm_s_min"] else "first"
    seconds = final[largest][f"{timed}_s_min"] / final[largest]["iterations"]
    label = "a warm fit" if timed == "warm" else "the first fit, compilation included"
    return largest, seconds, label


def remeasure_roofline(device, out):
    """Measure the roofline point again (FLOPs, bytes, the machine's rates) for the
    record's race on this device, which stays as it was; the run notes the date."""
    record = json.loads(out.read_text())
    (run,) = [run for run in record["runs"] if run["device"] == device]
    assert run["fit_source_sha256"] == fit_source_sha256(), (
        "the fit changed: make bench"
    )
    rows = [row for row in record["rows"] if row["device"] == device]
    largest, seconds_per_iteration, timed = iteration_seconds(rows)
    run["roofline"] = roofline(book_namespace(), largest, seconds_per_iteration)
    run["roofline"]["seconds_per_iteration_from"] = timed
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
    parser.add_argument("--worker", choices=("jax", "pyPLNmodels"))
    parser.add_argument("--rows", type=int)
    parser.add_argument("--params")
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.rows, args.device, int(args.warm), args.params)
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
        remeasure_roofline(args.device, pathlib.Path(args.out))
        return
    started = time.perf_counter()
    rows = race(args.device, sizes, samples, warm)
    largest, seconds_per_iteration, timed = iteration_seconds(rows)
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
        "roofline": roofline(book, largest, seconds_per_iteration),
    }
    run["roofline"]["seconds_per_iteration_from"] = timed
    run["bench_seconds"] = time.perf_counter() - started
    out = pathlib.Path(args.out)
    record = {"runs": [], "rows": []}
    if args.append and out.exists():
        record = json.loads(out.read_text())
        record["runs"] = [r for r in record["runs"] if r["device"] != args.device]
        record["rows"] = [r for r in record["rows"] if r["device"] != args.device]
    record["fit_source_sha256"] = run["fit_source_sha256"]
    record["runs"].append(run)
    record["rows"].extend(rows)
    out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {out} ({run['bench_seconds']:.0f} s)")
    print(json.dumps(run["roofline"], indent=1))


if __name__ == "__main__":
    main()
