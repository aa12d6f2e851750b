"""Sharding helpers: chapter 12's collective_ops, which chapter 13 counts with too.

The source of the copies in the notebooks: edit here, then run `make sync`.
"""

import re

import numpy as np


def collective_ops(compiled):
    """The book's helper: (opcode, result bytes) of each collective in compiled HLO."""
    opcodes = "all-reduce|all-gather|reduce-scatter|collective-permute|all-to-all"
    found = []
    for result_type, opcode in re.findall(
        rf"= (.+?) ({opcodes})(?:-start)?\(", compiled.as_text()
    ):
        n_bytes = 0  # a combined collective returns a tuple: add up its arrays
        for dtype, dims in re.findall(r"(\w+)\[([\d,]*)\]", result_type):
            count = int(np.prod([int(d) for d in dims.split(",") if d]))
            # the digits of the dtype are its bits: f32 -> 32, bf16 -> 16; pred -> 8
            bits = int(re.sub(r"\D", "", dtype) or 8)
            n_bytes += count * bits // 8
        found.append((opcode, n_bytes))
    return found
