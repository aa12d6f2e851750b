"""Float32 matmul error on this backend: default, highest, and with the bfloat16 emulation."""

import sys

sys.path.insert(0, "benchmarks/gpu")
import emulate
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

rng = np.random.default_rng(0)
a = rng.normal(size=(256, 512)).astype(np.float32)
b = rng.normal(size=(512, 128)).astype(np.float32)
full = a.astype(np.float64) @ b.astype(np.float64)
scale = np.abs(full).max()
err = lambda x, ref: float(np.abs(np.asarray(x, np.float64) - ref).max() / scale)
rounded = lambda x, bits: np.asarray(
    lax.reduce_precision(x, exponent_bits=8, mantissa_bits=bits), np.float64
)
print("backend", jax.default_backend(), jax.devices())
print(
    f"default precision: error {err(jnp.asarray(a) @ b, full):.2e} (vs TF32-rounded operands {err(jnp.asarray(a) @ b, rounded(a, 10) @ rounded(b, 10)):.2e})"
)
with jax.default_matmul_precision("highest"):
    print(f"highest: error {err(jnp.asarray(a) @ b, full):.2e}")
with jax.default_matmul_precision("bfloat16"):
    print(
        f"JAX_DEFAULT_MATMUL_PRECISION=bfloat16: error {err(jnp.asarray(a) @ b, full):.2e}"
    )
platform = sys.argv[1] if len(sys.argv) > 1 else "cuda"
exec(emulate.cell("bfloat16", platform))  # noqa: S102 (the test harness, installed)
expected = rounded(a, 7) @ rounded(b, 7)
for name, product in [("@", jnp.asarray(a) @ b), ("jit", jax.jit(jnp.matmul)(a, b))]:
    print(
        f"emulated bf16 {name}: error vs bf16-rounded operands {err(product, expected):.2e}, vs exact {err(product, full):.2e}"
    )
    assert err(product, expected) < 1e-5 and err(product, full) > 2.0**-10
print("emulation ok")
