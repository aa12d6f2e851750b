"""Timing helpers: chapter 1's interleaved_seconds (the one to compare versions with),
the case study's compile_timed, and its spread rule (chapter 10 defines it; chapter 11
reads its records with it).

The source of the copies in the notebooks: edit here, then run `make sync`.
"""

import time

import jax


def interleaved_seconds(variants, repeats=7):
    """Wall times of each variant (name -> (function, args)), run in turns."""
    seconds = {name: [] for name in variants}
    for _ in range(repeats):
        for name, (function, args) in variants.items():
            start = time.perf_counter()
            jax.block_until_ready(function(*args))
            seconds[name].append(time.perf_counter() - start)
    return seconds


def compile_timed(jitted, *args, **kwargs):
    """Compile ahead of time.

    Return the compiled function and the seconds the compilation took.
    """
    start = time.perf_counter()
    compiled = jitted.lower(*args, **kwargs).compile()
    return compiled, time.perf_counter() - start


def spread(times):
    return max(times) / min(times)


def spread_rule(a, b):
    """min(a) / min(b) for two lists of times, and the spread rule on it: whether the
    gap exceeds the larger of their spreads (None for a single sample)."""
    ratio = min(a) / min(b)
    if min(len(a), len(b)) == 1:
        return ratio, None
    return ratio, max(ratio, 1 / ratio) > max(spread(a), spread(b))
