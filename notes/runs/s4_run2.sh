#!/usr/bin/env bash
# Session 4, device run 2: ladder build, GPU suite, sanitizers (new rungs, Triton kernels), staged-eager probe,
# 16-bit tables at 4096^3 with the tensor-core rungs, tf32x3 targets.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=$OUT/tuning-cache
echo "== build"; /usr/bin/time -f "build %es" python3 -c "from cuda_reference.build import load; load()" 2>&1 | tail -3
echo "== pytest -n 8"
timeout 300 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 2>&1 | tee $OUT/pytest.log | tail -12
echo "== sanitizers"
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 python3 -m cuda_reference.sanitize wmma mma_sync cp_async > $OUT/san-ladder-$tool.log 2>&1
  echo "ladder16 $tool exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|wrong results' $OUT/san-ladder-$tool.log | tr '\n' ' ')"
done
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 1 python3 tests/sanitize_triton.py > $OUT/san-triton-memcheck.log 2>&1
echo "triton memcheck exit $? $(grep -E 'ERROR SUMMARY|sanitize_triton' $OUT/san-triton-memcheck.log | tr '\n' ' ')"
echo "== staged eager"; timeout 60 python3 notes/experiments/staged_eager.py 2>&1 | tail -22
echo "== 16-bit and tf32x3 tables"
timeout 150 python3 -m bench --shape 4096x4096x4096 --dtype bf16 --dtype fp16 --rounds 1 2>$OUT/bench16.err | tee $OUT/bench16.log | tail -30
timeout 100 python3 -m bench --shape 4096x4096x4096 --shape 8192x8192x8192 --dtype tf32x3 --rounds 3 2>$OUT/x3.err | tee $OUT/x3.log | tail -14
