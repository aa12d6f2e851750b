"""Reading a profiler trace (chapters 9, 11 and 15).

The source of the copies in the notebooks: edit here, then run `make sync`.
"""

import gzip
import json
import pathlib


def perfetto_events(trace_dir):
    """The events of the Perfetto trace `jax.profiler.trace` wrote under trace_dir."""
    (trace_file,) = pathlib.Path(trace_dir).rglob("perfetto_trace.json.gz")
    with gzip.open(trace_file) as file:
        trace = json.load(file)
    return trace["traceEvents"] if isinstance(trace, dict) else trace
