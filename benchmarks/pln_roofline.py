"""The race's machine, versions and roofline point (bench_pln.py records them)."""

import os
import pathlib
import platform
import time

from pln_source import oaks_data64


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


def roofline(book, repeats, warm_row):
    """FLOPs and bytes of one iteration of the final fit (XLA's cost analysis of one
    compiled fit_step: bound, sweep, rescale, Anderson); the time of an iteration in
    the race (the warm fit of warm_row, the race's row at this size, over its
    iterations) and of that step compiled alone; the machine's float32 matmul rate
    and memory bandwidth, all measured in this process."""
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
        with book["one_blas_thread"]():
            for _ in range(5):  # each step from the previous one's (donated) carry
                start = time.perf_counter()
                carry = jax.block_until_ready(
                    compiled(carry, problem, data, log_factorial_sum)
                )
                step_seconds.append(time.perf_counter() - start)
    seconds_per_iteration = warm_row["warm_s_min"] / warm_row["iterations"]
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
        "seconds_per_iteration_from": "the race's warm fit at these rows over its "
        "iterations (step_seconds: the compiled fit_step alone, 5 warm runs)",
        "note": "FLOPs, bytes and transcendentals (exp, log) from XLA's cost analysis "
        "of one compiled fit_step (the float64 bound, the float32 sweep and rescale, "
        "the Anderson combination)",
    }


def _timed(function, *args):
    import jax

    start = time.perf_counter()
    jax.block_until_ready(function(*args))
    return time.perf_counter() - start
