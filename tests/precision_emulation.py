"""Round float32 matmul operands on the CPU the way GPUs and TPUs do at JAX's default
precision.

XLA's CPU backend computes every float32 matmul in full float32 and ignores
`jax_default_matmul_precision`. An A100 or H100 rounds the operands to TF32 (10 explicit
mantissa bits) and a TPU to bfloat16 (7 bits) in one pass, accumulating in float32. A
check that passes on the CPU can therefore fail on a reader's accelerator.
`install(mode)` re-registers the CPU lowering of `dot_general` (the primitive behind
`@`, `jnp.dot`, `einsum` and the matmuls that autodiff writes) so that float32 operands
first go through `lax.reduce_precision`:

| precision in force                       | bfloat16 mode  | tensorfloat32 mode |
|------------------------------------------|----------------|--------------------|
| default (`None`, `"default"`)            | 7 bits         | 10 bits            |
| `"high"` (TPU: 3 bf16 passes; GPU: TF32) | 10 bits        | 10 bits            |
| `"highest"`, an explicit algorithm       | not rounded    | not rounded        |

This file is executed in the notebook's kernel, before the chapter's first cell, by
tests/test_precision_emulation.py. It only uses JAX's internals because it is a test
harness; the chapters never see it.
"""

import functools

import jax
import numpy as np
from jax import lax
from jax._src.interpreters import mlir as _mlir

MANTISSA_BITS = {
    "bfloat16": {None: 7, "high": 10},
    "tensorfloat32": {None: 10, "high": 10},
}
_state = {"mode": None, "enabled": True}


def _level(precision):
    """None (default), 'high', or 'exact' for a dot_general's canonical precision
    parameter."""
    if precision is None:
        return None
    if isinstance(precision, tuple) and all(
        isinstance(p, lax.Precision) for p in precision
    ):
        finest = max(precision, key=lambda p: p.value)
        return {lax.Precision.DEFAULT: None, lax.Precision.HIGH: "high"}.get(
            finest, "exact"
        )
    return "exact"  # a DotAlgorithm or preset states its own arithmetic


def _round_operand(ctx, index, value, bits):
    aval = ctx.avals_in[index]
    if aval.dtype != np.float32:
        return value
    rounding = functools.partial(
        lax.reduce_precision, exponent_bits=8, mantissa_bits=bits
    )
    sub_ctx = ctx.replace(primitive=None, avals_in=[aval], avals_out=[aval])
    (rounded,) = _mlir.lower_fun(rounding, multiple_results=False)(sub_ctx, value)
    return rounded


def install(mode, platform="cpu"):
    """Make every float32 dot_general lowered for `platform` from now on round its
    operands. The tests use the CPU; benchmarks/gpu/ installs it for "cuda", where the
    GPU's own TF32 rounding of the already-rounded operands is exact."""
    if mode not in MANTISSA_BITS:
        raise ValueError(f"mode must be one of {sorted(MANTISSA_BITS)}, not {mode!r}")
    if _state["mode"] is None:
        # the platform's own rule (the CPU has one), else the generic rule (a GPU)
        rules = _mlir._platform_specific_lowerings[platform]
        original = (
            rules.get(lax.dot_general_p) or _mlir._lowerings[lax.dot_general_p]
        ).rule

        def emulated_dot_general(ctx, lhs, rhs, *, precision, **params):
            level = _level(precision)
            if _state["enabled"] and level != "exact":
                bits = MANTISSA_BITS[_state["mode"]][level]
                lhs = _round_operand(ctx, 0, lhs, bits)
                rhs = _round_operand(ctx, 1, rhs, bits)
            return original(ctx, lhs, rhs, precision=precision, **params)

        _mlir.register_lowering(
            lax.dot_general_p, emulated_dot_general, platform=platform
        )
    _state["mode"] = mode
    jax.clear_caches()


def set_enabled(enabled):
    """Switch the rounding off (for a cell about exact program text) and on again."""
    _state["enabled"] = bool(enabled)
    jax.clear_caches()  # programs compiled under the other setting must not be reused
