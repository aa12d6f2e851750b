"""Guard against a known JAX miscompilation before any version bump.

jax/jaxlib 0.10.2 on CPU compile the jitted `jnp.sum(jnp.log(2*a) + jnp.log(3*a))` into
`sum(2*log(2a))` once `a` has 4096 or more elements (eager execution is right, 0.10.1 is right).
The PLN case study sums logs exactly like this, so a wrong compiler would corrupt its ELBO.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest


def sum_of_logs(a):
    return jnp.sum(jnp.log(2 * a) + jnp.log(3 * a))


@pytest.mark.parametrize("n", [1024, 4095, 4096, 8192, 100_000])
def test_jitted_sum_of_logs_is_right(n):
    a = np.linspace(1.0, 2.0, n, dtype=np.float32)
    expected = np.sum(np.log(2 * a.astype(np.float64)) + np.log(3 * a.astype(np.float64)))
    miscompiled = np.sum(2 * np.log(2 * a.astype(np.float64)))
    # The test can tell the two apart: the wrong answer is far outside the tolerance.
    assert abs(miscompiled - expected) > 1e-2 * abs(expected)

    jitted = float(jax.jit(sum_of_logs)(jnp.asarray(a)))
    eager = float(sum_of_logs(jnp.asarray(a)))
    np.testing.assert_allclose(eager, expected, rtol=1e-5)
    np.testing.assert_allclose(jitted, expected, rtol=1e-5)
