"""Every chapter, executed with float32 matmuls rounded as a TPU (bfloat16) and an
A100/H100 (TF32) do.

On the CPU, XLA ignores `jax_default_matmul_precision`, so a check tuned to this CPU's
rounding would pass here and fail on a reader's GPU or TPU. Each notebook is executed
once per mode with tests/precision_emulation.py installed in its kernel before the first
cell (see that file for what is rounded), and with DeprecationWarning turned into an
error after the setup cell, so no chapter shows the reader a deprecated call.

A cell whose point is the exact program text (a jaxpr's equations, an HLO string) may
carry the tag `exact-program-text`: the rounding is off while it runs. Its prose says
why; a cell whose claim is numeric must not carry it. The emulation cannot show
everything: a GPU also reorders operations (fusion, rematerialization), so a GPU run
stays the real check.

Run one chapter: `.venv/bin/pytest tests/test_precision_emulation.py -k 04_autodiff`.
"""

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.book import CHAPTERS, NOTEBOOKS, ROOT, tags
from tests.notebook_time_limit import measured

EMULATION = Path(__file__).with_name("precision_emulation.py")
MODES = ["bfloat16", "tensorfloat32"]
EXEMPT_TAG = "exact-program-text"


def code_cell(text):
    cell = nbformat.v4.new_code_cell(text)
    cell.metadata["tags"] = ["book-test-harness"]
    return cell


def emulated_notebook(path, mode):
    """The notebook with the emulation installed first and warnings checked after the
    setup cell."""
    notebook = nbformat.read(path, as_version=4)
    install = f"{EMULATION.read_text()}\ninstall({mode!r})\n"
    cells = [code_cell(install)]
    setup_seen = False
    for cell in notebook.cells:
        exempt = cell.cell_type == "code" and EXEMPT_TAG in tags(cell)
        if exempt:
            cells.append(code_cell("set_enabled(False)"))
        cells.append(cell)
        if exempt:
            cells.append(code_cell("set_enabled(True)"))
        if (
            cell.cell_type == "code"
            and "remove-cell" not in tags(cell)
            and not setup_seen
        ):
            setup_seen = True  # the setup cell has imported everything: from here, no deprecated call
            cells.append(
                code_cell(
                    'import warnings\nwarnings.simplefilter("error", DeprecationWarning)'
                )
            )
    notebook.cells = cells
    return notebook


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_chapter_under_emulated_precision(request, path, mode):
    notebook = emulated_notebook(path, mode)
    client = NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(CHAPTERS)}},
    )
    # limits the kernel's CPU time, reports the wall-clock time (tests/notebook_time_limit.py)
    with measured(request.node.nodeid, f"{path.name} under {mode}"):
        client.execute()  # raises CellExecutionError, with the cell and its traceback, on failure


# The emulation itself must round what it claims to round; if it did nothing, every chapter
# above would pass for the wrong reason.
EMULATION_CHECK = """
import sys
exec(open(sys.argv[1]).read())
install(sys.argv[2])
import jax, jax.numpy as jnp, numpy as np
from jax import lax
rng = np.random.default_rng(0)
a = rng.normal(size=(64, 48)).astype(np.float32)
b = rng.normal(size=(48, 32)).astype(np.float32)
bits = MANTISSA_BITS[sys.argv[2]][None]
rounded = lambda x: np.asarray(lax.reduce_precision(x, exponent_bits=8, mantissa_bits=bits), np.float64)
expected = rounded(a) @ rounded(b)      # rounded operands, exact products and sums
full = a.astype(np.float64) @ b.astype(np.float64)
scale = np.abs(full).max()
def error(x, reference):
    return float(np.abs(np.asarray(x, np.float64) - reference).max() / scale)
for name, product in [("@", jnp.asarray(a) @ b), ("jit", jax.jit(jnp.matmul)(a, b)),
                      ("einsum", jnp.einsum("ij,jk->ik", a, b))]:
    assert error(product, expected) < 1e-5, (name, error(product, expected))
    assert error(product, full) > 2.0 ** -(bits + 3), (name, "not rounded")
grad = jax.grad(lambda x: jnp.sum(x @ b))(a)      # autodiff's own matmul: ones @ b.T
assert error(grad, np.ones((64, 32)) @ rounded(b).T) < 1e-5
with jax.default_matmul_precision("highest"):
    assert error(jnp.asarray(a) @ b, full) < 1e-6
with jax.enable_x64(True):
    a64 = jnp.asarray(a, dtype=jnp.float64)
    assert error(a64 @ b.astype(np.float64), full) < 1e-12
print("ok")
"""


@pytest.mark.parametrize("mode", MODES)
def test_the_emulation_rounds_matmul_operands(mode):
    result = subprocess.run(
        [sys.executable, "-c", EMULATION_CHECK, str(EMULATION), mode],
        capture_output=True,
        check=False,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[
        -3000:
    ]
