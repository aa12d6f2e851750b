"""Timing helpers: chapter 1's interleaved_seconds (the one to compare versions with)
and the case study's compile_timed.

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
