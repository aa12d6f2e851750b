"""The measured rounding of float32 matmul inputs (chapters 4 and 6 derive tolerances
from it).

The source of the copies in the notebooks: edit here, then run `make sync`.
"""

import jax
import jax.numpy as jnp
import numpy as np


def matmul_input_roundoff(size=256):
    """Measured unit roundoff of float32 matmul inputs (2**-24 if unrounded)."""
    values = jax.random.uniform(jax.random.key(0), (size, size), minval=1.0, maxval=2.0)
    moved = float(jnp.max(jnp.abs(values @ jnp.eye(size) - values) / values))
    return 2.0**-24 if moved == 0 else max(2.0 ** np.ceil(np.log2(moved)), 2.0**-24)
