"""Chapter 11's fits as the race runs them: the code cells tagged `pln-fit`, executed.

The record (chapters/data/pln_bench.json) stores `fit_source_sha256()` with every row;
tests/test_pln_bench_record.py fails on a row whose hash is not the chapter's.
"""

import ast
import datetime
import hashlib
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
CHAPTER = ROOT / "chapters" / "11_pln_faster.ipynb"
OAKS = ROOT / "chapters" / "data" / "oaks"
FIT_TAG = "pln-fit"
PREAMBLE = (
    "import jax\nimport jax.numpy as jnp\nimport numpy as np\n"
    "from functools import partial\nfrom typing import NamedTuple\n"
)


def fit_source(chapter=CHAPTER):
    """The source of the chapter's code cells tagged pln-fit, joined in order."""
    notebook = json.loads(pathlib.Path(chapter).read_text())
    return "\n\n".join(
        "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        for cell in notebook["cells"]
        if cell["cell_type"] == "code" and FIT_TAG in cell["metadata"].get("tags", [])
    )


def _without_docstrings(tree):
    for node in ast.walk(tree):
        if isinstance(
            node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        ):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                node.body = body[1:] or [ast.Pass()]
    return tree


def fit_source_sha256(chapter=CHAPTER):
    """sha256 of the fit's top-level statements, parsed and written back out by `ast`
    (docstrings removed), sorted: a change of code changes it; comments, docstrings,
    formatting and the order of the cells and definitions do not. `ast.unparse`, not
    `ast.dump`, whose output differs between Python versions (3.11 and 3.12): a GPU
    machine's Python 3.12 gives the hash of the CPU record's Python 3.11."""
    tree = _without_docstrings(ast.parse(fit_source(chapter)))
    statements = sorted(ast.unparse(statement) for statement in tree.body)
    return hashlib.sha256("\n".join(statements).encode()).hexdigest()


def book_namespace():
    """The chapter's pln-fit cells, executed: fit, fit_rprop, ..."""
    namespace = {"__name__": "pln_book"}
    exec(PREAMBLE + fit_source(), namespace)  # noqa: S102 (the chapter is the source)
    return namespace


def oaks(repeats):
    """Counts and log offsets of the oaks data, the 116 rows repeated."""
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


def neg_elbo64(book, repeats, latent_mean, latent_variance):
    """The bound at (M, S^2): the book's concentrated_neg_elbo, in float64."""
    import jax
    import jax.numpy as jnp

    with jax.enable_x64(True):
        data = oaks_data64(book, repeats)
        log_factorial_sum = jnp.sum(book["log_factorial_stirling"](data.counts))
        return float(
            book["concentrated_neg_elbo"](
                jnp.asarray(latent_mean, jnp.float64),
                jnp.log(jnp.asarray(latent_variance, jnp.float64)),
                data,
                log_factorial_sum,
            )
        )


def store_entry(out, key, entry):
    """Write `entry`, dated now, as record[key] of the JSON record at `out` (its other
    keys kept): how `make bench-threads` and `make bench-levels` add their measurements
    to chapters/data/pln_bench.json."""
    path = pathlib.Path(out)
    record = json.loads(path.read_text())
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    record[key] = {"date": now, **entry}
    path.write_text(json.dumps(record, indent=1) + "\n")
