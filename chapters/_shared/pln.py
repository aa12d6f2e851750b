"""The case study's model, shared by chapters 10 and 11 and the PLN appendix.

The source of the copies in the notebooks: edit here, then run `make sync`. The data and
the race's record are read with oaks.py's `book_file` and `load_oaks`.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np


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


def offset_aware_start(data):
    """M = log(Y + 1) - o and log S^2 = -log(Y + 1): every rate exp(o + M) \
at its observed count plus one."""
    return jnp.log(data.counts + 1) - data.log_offsets, -jnp.log(data.counts + 1)
