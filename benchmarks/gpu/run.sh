#!/bin/bash
# The book's check on a lent GPU, in one call (CONTRIBUTING.md, "On a GPU"): the race of
# chapter 11 alone on the machine, chapter 14's Pallas kernels compiled, the profiler trace
# that chapter 15 reads, then every chapter at the default precision and under the
# bfloat16 emulation installed for the GPU, several at once.
#   usage (repository root): bash benchmarks/gpu/run.sh OUT TOTAL_SECONDS [PYTHON]
# Packages the machine lacks travel as wheels in .whl/ (the device tool's README).
set -u
OUTD=$1; TOTAL=$2; PY=${3:-python3}
T0=$(date +%s)
left() { echo $(( TOTAL - ($(date +%s) - T0) )); }
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
if [ -d .whl ]; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl > $OUTD/setup.log 2>&1 || { echo PIP FAILED; tail -20 $OUTD/setup.log; }
  export PYTHONPATH=/tmp/site
fi
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; nproc
  $PY -c "import jax, torch, numpy; print('jax', jax.__version__, jax.devices(), 'torch', torch.__version__, 'numpy', numpy.__version__)"
} >> $OUTD/setup.log 2>&1
tail -3 $OUTD/setup.log
PLAT=$($PY -c "import jax; print({'gpu': 'cuda'}.get(jax.default_backend(), jax.default_backend()))")
DEV=$([ "$PLAT" = cuda ] && echo cuda || echo cpu)
{ timeout 60 $PY benchmarks/gpu/check_emulation.py $PLAT
  timeout 40 $PY benchmarks/gpu/trace_diag.py
  for c in silu-default silu-triton mm-default-0 mm-triton-0 tpu; do
    timeout 60 $PY benchmarks/gpu/pallas_check.py $c || echo "$c: exit $?"
  done; } 2>&1 | grep -v "Warning\|^program\|^\[-\|^backend\|^devices\|^shape\|^grid\|^largest" > $OUTD/checks.log
cat $OUTD/checks.log
# the race, size by size (each size appends its rows), alone on the machine
RACE_END=$(( $(date +%s) + ${RACE_S:-240} ))
for size in ${RACE_SIZES:-1 10 100 1000}; do
  budget=$(( RACE_END - $(date +%s) ))
  [ $budget -lt 15 ] && { echo "race: no time for x$size"; break; }
  timeout $budget $PY benchmarks/bench_pln.py --device $DEV --out $OUTD/pln_bench_$DEV.json \
    --append --sizes $size --samples 1:1,10:1,100:1,1000:1 --warm 1:3,10:3,100:2,1000:2 \
    --cached-sizes 1 --roofline-rows 0 >> $OUTD/race.log 2>&1 || echo "race x$size: exit $?"
done
grep "first\|wrote" $OUTD/race.log
NB=${NOTEBOOKS:-"10_pln 11_pln_faster 15_transformer 13_training_at_scale 12_parallel 09_tools 14_export_and_kernels 08_optax 06_control_flow 05_jit 04_autodiff appendix_pln_derived appendix_compiler_bug 02_random 07_pytrees 03_vmap appendix_numerics appendix_migration 01_numpy"}
paths=$(for n in $NB; do echo chapters/$n.ipynb; done)
NBRUN_PLATFORM=$PLAT $PY benchmarks/gpu/nbrun.py --out $OUTD --workers ${WORKERS:-12} \
  --budget $(( $(left) - 25 )) --cell-timeout 240 --legs default,bf16emu $paths > $OUTD/notebooks.log 2>&1
tar czf $OUTD/executed.tgz -C $OUTD executed && rm -rf $OUTD/executed
sort -k2,2 -k4 $OUTD/notebooks.log | cut -c1-230
echo "done in $(( $(date +%s) - T0 )) s"
