"""Execute the book's notebooks with nbclient, several at once, each leg with its own
environment; one JSON line per run in OUT/runs.jsonl, executed notebooks (text outputs
only) in OUT/executed/<leg>/."""

import argparse
import concurrent.futures as cf
import json
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def one(nb, leg, envs, out, cell_timeout, deadline):
    env = dict(os.environ)
    env.update(envs)
    left = deadline - time.time()
    if left < 20:
        return {"nb": nb, "leg": leg, "status": "skipped (time)"}
    code = r"""
import json, os, sys, time, nbformat, nbclient
nb_path, out_path, timeout = sys.argv[1], sys.argv[2], int(sys.argv[3])
nb = nbformat.read(nb_path, as_version=4)
prelude = os.environ.get("NBRUN_PRELUDE")
if prelude:
    cells = [nbformat.v4.new_code_cell(open(prelude).read())]
    for c in nb.cells:
        exempt = c.cell_type == "code" and "exact-program-text" in c.metadata.get("tags", [])
        if exempt:
            cells.append(nbformat.v4.new_code_cell("set_enabled(False)"))
        cells.append(c)
        if exempt:
            cells.append(nbformat.v4.new_code_cell("set_enabled(True)"))
    nb.cells = cells
client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
    resources={"metadata": {"path": "chapters"}})
t = time.time(); err = None
try:
    client.execute()
except Exception as e:  # noqa: BLE001 (reported, not raised)
    err = f"{type(e).__name__}: {e}"[-3000:]
wall = time.time() - t
for c in nb.cells:
    if c.cell_type == "code":
        for o in c.get("outputs", []):
            if "data" in o:
                o["data"] = {k: v for k, v in o["data"].items() if k.startswith("text/")}
nbformat.write(nb, out_path)
print(json.dumps({"wall_s": round(wall, 1), "error": err}))
"""
    dest = out / "executed" / leg
    dest.mkdir(parents=True, exist_ok=True)
    t = time.time()
    try:
        p = subprocess.run(
            [
                sys.executable,
                "-c",
                code,
                nb,
                str(dest / pathlib.Path(nb).name),
                str(cell_timeout),
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=max(10, left - 5),
            check=False,
        )
        try:
            res = json.loads(p.stdout.strip().splitlines()[-1])
        except Exception:  # noqa: BLE001 (no JSON line: the runner broke)
            res = {"error": "runner: " + (p.stderr or p.stdout)[-2000:]}
    except subprocess.TimeoutExpired:
        res = {"error": "killed at the deadline"}
    res.update(
        {
            "nb": nb,
            "leg": leg,
            "total_s": round(time.time() - t, 1),
            "status": "pass" if not res.get("error") else "FAIL",
        }
    )
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--workers", type=int, default=10)
    ap.add_argument("--budget", type=float, default=300)
    ap.add_argument("--cell-timeout", type=int, default=240)
    ap.add_argument("--legs", default="default,bf16")
    ap.add_argument("notebooks", nargs="+")
    a = ap.parse_args()
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    deadline = time.time() + a.budget
    legs = {
        "default": {},
        "bf16": {"JAX_DEFAULT_MATMUL_PRECISION": "bfloat16"},
        "bf16emu": {"NBRUN_PRELUDE": "/tmp/nbrun_prelude_bf16.py"},
    }
    sys.path.insert(0, str(ROOT / "benchmarks" / "gpu"))
    import emulate

    platform = os.environ.get("NBRUN_PLATFORM", "cuda")
    pathlib.Path("/tmp/nbrun_prelude_bf16.py").write_text(
        emulate.cell("bfloat16", platform)
    )
    jobs = [(nb, leg) for nb in a.notebooks for leg in a.legs.split(",")]
    with cf.ThreadPoolExecutor(a.workers) as pool, open(out / "runs.jsonl", "a") as log:
        futs = [
            pool.submit(one, nb, leg, legs[leg], out, a.cell_timeout, deadline)
            for nb, leg in jobs
        ]
        for f in cf.as_completed(futs):
            r = f.result()
            log.write(json.dumps(r) + "\n")
            log.flush()
            print(
                f"{r['status']:5} {r['leg']:8} {r.get('wall_s', '-'):>7} {r['nb']}  {(r.get('error') or '')[:150]!r}",
                flush=True,
            )


if __name__ == "__main__":
    main()
