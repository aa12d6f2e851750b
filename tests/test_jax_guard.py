"""Guard against a known JAX miscompilation before any version bump.

jax/jaxlib 0.10.2 up to at least 0.12.0.1 on CPU compile the jitted
`jnp.sum(jnp.log(2*a) + jnp.log(3*a))` into `sum(2*log(2a))` once `a` has 4096 or more
elements (eager execution is right, 0.10.1 is right). XLA's CPU pass `dot-library-rewriter`
hands the reduction to a YNNPACK fusion (`__ynn_fusion`) that computes it wrong;
`XLA_FLAGS=--xla_cpu_experimental_ynn_fusion_type=-reduce` avoids it, and so does summing each
log separately. chapters/appendix_compiler_bug.ipynb tells the whole story. The PLN case study
sums logs exactly like this, so a wrong compiler would corrupt its ELBO.

The main leg (requirements.txt, jax 0.10.1) expects every case to pass. The readers' JAX leg
(requirements-newest.txt) runs a JAX no older than the first affected release: there the large
cases are a strict expected failure, so a release that fixes the bug fails the leg as an
unexpected pass. That is the signal to move requirements.txt's pin forward (and
FIRST_FIXED below).

The newest leg also records what an affected JAX computes in chapters/data/compiler_bug_newest.json
(the appendix prints it, since every live output of the pinned leg is right): written when the
file is missing or JAX_GUARD_WRITE_RECORD=1 is set, and otherwise compared with what the installed
JAX computes when it is the JAX that wrote it. On any JAX the recorded numbers are checked against
NumPy: eager right, jitted equal to the miscompiled closed form sum(2 log 2a) from 4096 elements.
"""

import json
import os
import platform
from importlib.metadata import version
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from packaging.version import Version

FIRST_AFFECTED = Version("0.10.2")
KNOWN_AFFECTED = ["0.10.2", "0.11.0", "0.11.1", "0.11.2", "0.12.0", "0.12.0.1"]
FIRST_FIXED = (
    None  # the first release in which the large cases pass; None while none does
)
SMALLEST_AFFECTED_SIZE = 4096

INSTALLED = Version(jax.__version__)
EXPECT_MISCOMPILE = INSTALLED >= FIRST_AFFECTED and (
    FIRST_FIXED is None or INSTALLED < Version(FIRST_FIXED)
)


def sum_of_logs(a):
    return jnp.sum(jnp.log(2 * a) + jnp.log(3 * a))


def case(n):
    marks = []
    if EXPECT_MISCOMPILE and n >= SMALLEST_AFFECTED_SIZE:
        marks.append(
            pytest.mark.xfail(
                strict=True,
                raises=AssertionError,
                reason=(
                    f"jax {jax.__version__} miscompiles the jitted sum of logs on CPU for "
                    f">= {SMALLEST_AFFECTED_SIZE} elements (known affected: "
                    f"{', '.join(KNOWN_AFFECTED)}); an unexpected pass means this release "
                    "fixes it: move requirements.txt's pin forward and set FIRST_FIXED"
                ),
            )
        )
    return pytest.param(n, marks=marks, id=str(n))


@pytest.mark.parametrize("n", [case(n) for n in [1024, 4095, 4096, 8192, 100_000]])
def test_jitted_sum_of_logs_is_right(n):
    a = np.linspace(1.0, 2.0, n, dtype=np.float32)
    expected = np.sum(
        np.log(2 * a.astype(np.float64)) + np.log(3 * a.astype(np.float64))
    )
    miscompiled = np.sum(2 * np.log(2 * a.astype(np.float64)))
    # The test can tell the two apart: the wrong answer is far outside the tolerance.
    assert abs(miscompiled - expected) > 1e-2 * abs(expected)

    jitted = float(jax.jit(sum_of_logs)(jnp.asarray(a)))
    eager = float(sum_of_logs(jnp.asarray(a)))
    np.testing.assert_allclose(eager, expected, rtol=1e-5)
    np.testing.assert_allclose(jitted, expected, rtol=1e-5)


# The same bug beyond `sum`: a max of the same terms, and log1p in place of log (on 0.12.0.1
# at n = 8192, 12.8% and 10.3% off; chapters/appendix_compiler_bug.ipynb has the whole table).
VARIANTS = {
    "max": (
        lambda m, x: m.max(m.log(2 * x) + m.log(3 * x)),
        lambda x: np.max(2 * np.log(2 * x)),
    ),
    "log1p": (
        lambda m, x: m.sum(m.log1p(2 * x) + m.log1p(3 * x)),
        lambda x: np.sum(2 * np.log1p(2 * x)),
    ),
}


@pytest.mark.parametrize("n", [case(n) for n in [1024, 4096, 8192]])
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_jitted_log_variants_are_right(variant, n):
    terms, first_log_twice = VARIANTS[variant]
    a = np.linspace(1.0, 2.0, n, dtype=np.float32)
    expected = terms(np, a.astype(np.float64))
    # The test can tell the right answer from the miscompiled one (the first log twice).
    assert abs(first_log_twice(a.astype(np.float64)) - expected) > 1e-2 * abs(expected)

    jitted = float(jax.jit(lambda x: terms(jnp, x))(jnp.asarray(a)))
    eager = float(terms(jnp, jnp.asarray(a)))
    np.testing.assert_allclose(eager, expected, rtol=1e-5)
    np.testing.assert_allclose(jitted, expected, rtol=1e-5)


@pytest.mark.parametrize("n", [4096, 100_000])
def test_one_log_per_sum_is_right(n):
    """The rewrite that avoids it: one log per sum is right on the pinned and the affected JAX."""
    a = np.linspace(1.0, 2.0, n, dtype=np.float32)
    expected = np.sum(
        np.log(2 * a.astype(np.float64)) + np.log(3 * a.astype(np.float64))
    )
    jitted = float(
        jax.jit(lambda a: jnp.sum(jnp.log(2 * a)) + jnp.sum(jnp.log(3 * a)))(a)
    )
    np.testing.assert_allclose(jitted, expected, rtol=1e-5)


RECORD = (
    Path(__file__).resolve().parent.parent
    / "chapters"
    / "data"
    / "compiler_bug_newest.json"
)
RECORD_SIZES = [1024, 4095, 4096, 8192, 100_000]


def _stirling_two_logs(counts):  # the PLN case study's old form: two logs of the counts
    safe = counts + (counts == 0)
    return 0.5 * jnp.log(2 * jnp.pi * safe) + safe * jnp.log(safe / jnp.e)


def _stirling_one_log(counts):  # the form chapters 10 and 11 use now
    safe = counts + (counts == 0)
    log_safe = jnp.log(safe)
    return 0.5 * (np.log(2 * np.pi) + log_safe) + safe * (log_safe - 1)


STIRLING_FORMS = {"two_logs": _stirling_two_logs, "one_log": _stirling_one_log}


def record_of_this_jax():
    """The jitted and eager sum of logs at each size, and the max/log1p variants at 8192."""
    sums = {}
    for n in RECORD_SIZES:
        a = jnp.asarray(np.linspace(1.0, 2.0, n, dtype=np.float32))
        sums[str(n)] = {
            "jitted": float(jax.jit(sum_of_logs)(a)),
            "eager": float(sum_of_logs(a)),
        }
    a = jnp.asarray(np.linspace(1.0, 2.0, 8192, dtype=np.float32))
    variants = {
        name: {
            "jitted": float(jax.jit(lambda x, t=terms: t(jnp, x))(a)),
            "eager": float(terms(jnp, a)),
        }
        for name, (terms, _) in VARIANTS.items()
    }
    counts = jnp.asarray(np.arange(8192, dtype=np.float32) % 50)
    stirling = {
        name: float(jax.jit(lambda c, f=form: jnp.sum(f(c)))(counts))
        for name, form in STIRLING_FORMS.items()
    }
    return {
        "jax": jax.__version__,
        "jaxlib": version("jaxlib"),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "backend": jax.default_backend(),
        "sum_of_logs": sums,
        "variants_8192": variants,
        "stirling_8192_jitted": stirling,
    }


def test_newest_record():
    """The record of an affected JAX exists, is what that JAX computes, and is the known bug."""
    if EXPECT_MISCOMPILE and (
        not RECORD.exists() or os.environ.get("JAX_GUARD_WRITE_RECORD") == "1"
    ):
        RECORD.write_text(json.dumps(record_of_this_jax(), indent=1) + "\n")
    record = json.loads(RECORD.read_text())
    # On any JAX: the recorded numbers are the bug, checked against NumPy.
    assert Version(record["jax"]) >= FIRST_AFFECTED
    for n, values in record["sum_of_logs"].items():
        a64 = np.linspace(1.0, 2.0, int(n), dtype=np.float32).astype(np.float64)
        right = np.sum(np.log(2 * a64) + np.log(3 * a64))
        first_log_twice = np.sum(2 * np.log(2 * a64))
        np.testing.assert_allclose(values["eager"], right, rtol=1e-5)
        wanted = first_log_twice if int(n) >= SMALLEST_AFFECTED_SIZE else right
        np.testing.assert_allclose(values["jitted"], wanted, rtol=1e-5)
    a64 = np.linspace(1.0, 2.0, 8192, dtype=np.float32).astype(np.float64)
    for name, values in record["variants_8192"].items():
        terms, first_log_twice = VARIANTS[name]
        np.testing.assert_allclose(values["eager"], terms(np, a64), rtol=1e-5)
        np.testing.assert_allclose(values["jitted"], first_log_twice(a64), rtol=1e-5)
    safe = np.maximum(np.arange(8192) % 50, 1).astype(np.float64)
    stirling64 = np.sum(0.5 * np.log(2 * np.pi * safe) + safe * (np.log(safe) - 1))
    np.testing.assert_allclose(
        record["stirling_8192_jitted"]["one_log"], stirling64, rtol=1e-5
    )
    assert record["stirling_8192_jitted"]["two_logs"] > 1.5 * stirling64
    # On the JAX that wrote it: the record is what this JAX computes now.
    if record["jax"] == jax.__version__ and record["machine"] == platform.machine():
        now = record_of_this_jax()
        np.testing.assert_allclose(
            list(now["stirling_8192_jitted"].values()),
            list(record["stirling_8192_jitted"].values()),
            rtol=1e-6,
        )
        for key in ("sum_of_logs", "variants_8192"):
            for name, values in record[key].items():
                for mode in ("jitted", "eager"):
                    np.testing.assert_allclose(
                        now[key][name][mode], values[mode], rtol=1e-6, err_msg=name
                    )
    elif EXPECT_MISCOMPILE:
        pytest.skip(
            f"the record is from jax {record['jax']}, this is {jax.__version__}: "
            "rerun with JAX_GUARD_WRITE_RECORD=1 to record this one"
        )
