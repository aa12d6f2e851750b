"""The book's files and the oaks data, shared by several chapters and appendices.

The source of the copies in the notebooks: edit here, then run `make sync`. The book's
repository is named once, as `book_file`'s default: a fork changes it there (and in
_config.yml); tests/test_oaks_download.py fails where the two disagree.
"""

import csv
import io
import pathlib
import urllib.request

import numpy as np


def book_file(path, repository="jax-book/jax-book"):
    """The text of a file of the book's repository (path from its root).

    The local copy when the notebook runs in the repository's chapters/ folder, else (in
    Colab, where the notebook is alone) the file on the repository's main branch.
    """
    local_file = pathlib.Path.cwd().parent / path
    if local_file.exists():
        return local_file.read_text()
    url = f"https://raw.githubusercontent.com/{repository}/main/{path}"
    with urllib.request.urlopen(url) as response:
        return response.read().decode()


def load_oaks():
    """The oaks data: counts (n, p), log offsets (n, p), the p taxa's names, and the
    covariates ({name: the n leaves' values, as text})."""
    tables = {}
    for name in ("counts", "offsets", "covariates"):
        text = book_file(f"chapters/data/oaks/{name}.csv")
        header, *rows = csv.reader(io.StringIO(text))
        tables[name] = header, rows
    taxa, count_rows = tables["counts"]
    counts = np.array(count_rows, dtype=np.float64)
    read_totals = np.array(tables["offsets"][1], dtype=np.float64)
    log_offsets = np.log(read_totals)
    names, covariate_rows = tables["covariates"]
    covariates = {
        name: np.array(column) for name, column in zip(names, zip(*covariate_rows))
    }
    return counts, log_offsets, taxa, covariates
