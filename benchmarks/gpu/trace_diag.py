"""What a GPU profiler trace records for a jitted step called six times (chapter 15's lm_step_gaps)."""

import collections
import gzip
import json
import pathlib
import tempfile

import jax
import jax.numpy as jnp


@jax.jit
def step(w, x):
    h = jnp.tanh(x @ w)
    return w - 0.01 * x.T @ h, jnp.sum(h)


w = jnp.ones((256, 256)) * 0.01
x = jnp.ones((128, 256))
w, loss = step(w, x)
float(loss)
with tempfile.TemporaryDirectory() as d:
    with jax.profiler.trace(d, create_perfetto_trace=True):
        for _ in range(6):
            w, loss = step(w, x)
            float(loss)
    (f,) = pathlib.Path(d).rglob("perfetto_trace.json.gz")
    with gzip.open(f) as file:
        trace = json.load(file)
events = trace["traceEvents"] if isinstance(trace, dict) else trace
names = {}
for e in events:
    if e.get("ph") == "M" and e.get("name") in ("process_name", "thread_name"):
        names[
            (
                e["name"],
                e.get("pid"),
                e.get("tid") if e["name"] == "thread_name" else None,
            )
        ] = e["args"].get("name")
ops = [
    e
    for e in events
    if e.get("ph") == "X" and e.get("args", {}).get("hlo_module") == "jit_step"
]
print("matched ops:", len(ops), "per call:", len(ops) / 6)
print("arg keys:", sorted({k for e in ops for k in e["args"]}))
print(
    "run_id values:",
    collections.Counter(e["args"].get("run_id") for e in ops).most_common(8),
)
print(
    "where:",
    collections.Counter(
        (
            names.get(("process_name", e["pid"], None)),
            names.get(("thread_name", e["pid"], e["tid"])),
        )
        for e in ops
    ).most_common(6),
)
print("names:", collections.Counter(e["name"] for e in ops).most_common(8))
for key in ("group_id", "correlation_id", "program_id", "step_num"):
    vals = [e["args"].get(key) for e in ops]
    print(key, len(set(vals)), vals[:8])
