"""The case study's data, model and record, shared by chapters 10 and 11.

The source of the copies in the notebooks: edit here, then run `make sync`. OAKS_DIR,
OAKS_URL and BENCH_URL are each chapter's own constants (where the data and the race's
record are read from), defined in the cell before the helper.
"""

import csv
import io
import json
import pathlib
import urllib.request
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np


def read_oaks_csv(name):
    """Header and rows of one oaks file.

    The local copy, else (in Colab) the book's repository.
    """
    local_file = OAKS_DIR / name
    if local_file.exists():
        text = local_file.read_text()
    else:
        with urllib.request.urlopen(f"{OAKS_URL}/{name}") as response:
            text = response.read().decode()
    header, *rows = csv.reader(io.StringIO(text))
    return header, rows


class PLNData(NamedTuple):
    counts: jax.Array
    log_offsets: jax.Array
    covariates: jax.Array


def log_factorial_stirling(counts):
    """Stirling's approximation of log(y!), with 0 replaced by 1, as in pyPLNmodels; \
one log of the counts."""
    safe = counts + (counts == 0)
    log_safe = jnp.log(safe)
    return 0.5 * (np.log(2 * np.pi) + log_safe) + safe * (log_safe - 1)


def neg_elbo(params, omega, data):
    """-J(B, Omega, M, S): params holds B, M and S (the square root of the \
variational variance)."""
    n, p = data.counts.shape
    latent = data.log_offsets + params["M"]
    variance = params["S"] ** 2
    residuals = params["M"] - data.covariates @ params["B"]
    per_cell = (
        data.counts * latent
        - jnp.exp(latent + variance / 2)
        + 0.5 * jnp.log(variance)
        - log_factorial_stirling(data.counts)
    )
    _, logdet_omega = jnp.linalg.slogdet(omega)
    trace = jnp.trace(
        (residuals.T @ residuals + jnp.diag(variance.sum(axis=0))) @ omega
    )
    return -(jnp.sum(per_cell) + n / 2 * logdet_omega - trace / 2 + n * p / 2)


def read_bench_record():
    """The race's record (make bench).

    The local copy, else (in Colab) the book's repository.
    """
    local_file = pathlib.Path("data/pln_bench.json")
    if local_file.exists():
        return json.loads(local_file.read_text())
    with urllib.request.urlopen(BENCH_URL) as response:
        return json.loads(response.read().decode())
