"""Chapter 14's Pallas kernels compiled (interpret=False) on this machine's GPU, with the
default compiler and with Triton; checked against XLA's product and timed beside it."""

import functools
import json
import pathlib
import re
import sys
import time
import warnings

import numpy as np

nb = json.loads(pathlib.Path("chapters/14_export_and_kernels.ipynb").read_text())
code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
wanted = [
    "from jax.experimental import pallas as pl",
    "def silu_kernel",
    "bm, bn, bk =",
    "def matmul_kernel",
    "def accumulating_kernel",
]
ns = {}
for key in wanted:
    src = next(c for c in code if key in c)
    src = "\n".join(re.sub(r"^(\s*)%.*", r"\1pass", line) for line in src.splitlines())
    exec(src, ns)  # noqa: S102 (the chapter's own cells)
jax, jnp, pl, pltriton = ns["jax"], ns["jnp"], ns["pl"], ns["pltriton"]
print("JAX", jax.__version__, jax.devices())


def median_seconds(f, *args, n=30):
    jax.block_until_ready(f(*args))
    times = []
    for _ in range(n):
        t = time.perf_counter()
        jax.block_until_ready(f(*args))
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def attempt(name, make):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = make()
            status = "ran"
        except Exception as e:  # noqa: BLE001 (any failure is the finding)
            out, status = (
                None,
                f"{type(e).__name__}: {(str(e).splitlines() or [''])[0][:160]}",
            )
    dep = sorted(
        {
            f"{w.category.__name__}: {str(w.message)[:100]}"
            for w in caught
            if issubclass(w.category, DeprecationWarning)
        }
    )
    print(f"{name:42} {status}" + (f"  [{'; '.join(dep)}]" if dep else ""))
    return out


case = sys.argv[1]
compilers = {"default": None, "triton": pltriton.CompilerParams()}
if case.startswith("silu-"):
    params = compilers[case[5:]]
    x = jnp.linspace(-4.0, 4.0, 16)

    def silu_compiled(x):
        return pl.pallas_call(
            ns["silu_kernel"],
            out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
            interpret=False,
            compiler_params=params,
        )(x)

    y = attempt(
        f"silu (16 values), {case[5:]} compiler", lambda: jax.jit(silu_compiled)(x)
    )
    if y is not None:
        print(
            f"   max |silu - jax.nn.silu| = {float(jnp.max(jnp.abs(y - jax.nn.silu(x)))):.2e}"
        )
elif case.startswith("mm-"):
    # mm-COMPILER-SIZE[-BM-BN]: SIZE 0 is the chapter's 128x256 by 256x256; BM, BN the
    # output block (the chapter's 64 x 128 when left out)
    parts = case.split("-")
    cname, size = parts[1], int(parts[2])
    blocks = {"bm": int(parts[3]), "bn": int(parts[4])} if len(parts) == 5 else {}
    params = compilers[cname]
    m, k, n = (128, 256, 256) if size == 0 else (size, size, size)
    lhs = jax.random.normal(jax.random.key(1), (m, k))
    rhs = jax.random.normal(jax.random.key(2), (k, n))
    kernel = jax.jit(
        functools.partial(
            ns["blocked_matmul"], interpret=False, compiler_params=params, **blocks
        )
    )
    out = attempt(
        f"blocked_matmul {m}x{k}x{n} {blocks or 'bm 64, bn 128'}, {cname} compiler",
        lambda: kernel(lhs, rhs),
    )
    if out is not None:
        exact = np.asarray(lhs, np.float64) @ np.asarray(rhs, np.float64)
        scale = np.abs(exact).max()
        with jax.default_matmul_precision("highest"):
            xla_hi = jax.jit(jnp.matmul)(lhs, rhs)
        xla_def = jax.jit(jnp.matmul)(lhs, rhs)
        rel = lambda a: float(np.abs(np.asarray(a, np.float64) - exact).max() / scale)
        print(
            f"   error vs float64: kernel {rel(out):.1e}, XLA default {rel(xla_def):.1e}, XLA highest {rel(xla_hi):.1e}"
        )
        if size:
            tk = median_seconds(kernel, lhs, rhs)
            tx = median_seconds(jax.jit(jnp.matmul), lhs, rhs)
            with jax.default_matmul_precision("highest"):
                th = median_seconds(jax.jit(jnp.matmul), lhs, rhs)
            fl = 2 * m * k * n
            print(
                f"   median of 30: kernel {tk * 1e3:.3f} ms ({fl / tk / 1e12:.1f} TFLOP/s), XLA default {tx * 1e3:.3f} ms ({fl / tx / 1e12:.1f}), XLA highest {th * 1e3:.3f} ms ({fl / th / 1e12:.1f})"
            )
elif case == "tpu":
    lhs = jax.random.normal(jax.random.key(1), (128, 256))
    rhs = jax.random.normal(jax.random.key(2), (256, 256))
    attempt(
        "tpu_matmul (TPU compiler params), compiled",
        lambda: jax.jit(functools.partial(ns["tpu_matmul"], interpret=False))(lhs, rhs),
    )
