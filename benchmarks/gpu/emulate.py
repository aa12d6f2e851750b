"""tests/precision_emulation.py, installed for the GPU's lowering instead of the CPU's:
float32 matmul operands at default precision are rounded to bfloat16 (7 bits) before the
GPU multiplies them, so the GPU computes what a TPU's one bfloat16 pass does."""

import pathlib

SRC = (
    pathlib.Path(__file__).resolve().parents[2] / "tests" / "precision_emulation.py"
).read_text()
OLD = '_mlir._platform_specific_lowerings["cpu"][lax.dot_general_p].rule'
NEW = "(_mlir._platform_specific_lowerings[PLATFORM].get(lax.dot_general_p) or _mlir._lowerings[lax.dot_general_p]).rule"
assert SRC.count(OLD) == 1 and SRC.count('platform="cpu"') == 1
GPU_SRC = SRC.replace(OLD, NEW).replace('platform="cpu"', "platform=PLATFORM")


def cell(mode, platform="cuda"):
    return f"PLATFORM = {platform!r}\n{GPU_SRC}\ninstall({mode!r})\n"
