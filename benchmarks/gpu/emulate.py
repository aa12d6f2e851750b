"""tests/precision_emulation.py, installed for the GPU's lowering instead of the CPU's:
float32 matmul operands at default precision are rounded to bfloat16 (7 bits) before the
GPU multiplies them, so the GPU computes what a TPU's one bfloat16 pass does."""

import pathlib

SRC = (
    pathlib.Path(__file__).resolve().parents[2] / "tests" / "precision_emulation.py"
).read_text()


def cell(mode, platform="cuda"):
    """Source that installs the emulation for `platform` (a notebook's first cell)."""
    return f"{SRC}\ninstall({mode!r}, platform={platform!r})\n"
