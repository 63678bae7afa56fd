#!/usr/bin/env bash
# Session 11, device run 2: the direct C launch under Triton 3.6's launcher (tensor maps cached by
# address), the leaner relaunch key and new_empty: fast-launch, plan, ops and library tests; the
# launch's pieces again; the host suite (3 rounds); memcheck over the Triton kernels (relaunches included).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s11r2-t timeout 200 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 \
  tests/test_fast_launch.py tests/test_plan.py tests/test_ops.py tests/test_library.py 2>&1 | tee $OUT/pytest.log | tail -2
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -10
TRITONMM_CACHE_DIR=/tmp/tc-s11r2-l timeout 120 python3 notes/experiments/launch_parts.py > $OUT/launch_parts.log 2>&1
echo "launch_parts exit $?"
TRITONMM_CACHE_DIR=/tmp/tc-s11r2-h timeout 150 python3 -m bench.suites host --rounds 3 > $OUT/host.log 2>&1
echo "host exit $?"
TRITONMM_CACHE_DIR=/tmp/tc-s11r2-s timeout 240 compute-sanitizer --tool memcheck --error-exitcode 1 \
  python3 tests/sanitize_triton.py > $OUT/san-triton.log 2>&1
echo "memcheck exit $? $(grep -E 'ERROR SUMMARY|sanitize_triton' $OUT/san-triton.log | tr '\n' ' ')"
grep -E "WRONG" $OUT/san-triton.log | head -5
grep -E "^==|torch.mm|tritonmm.mm|Compiled|CompiledKernel|relaunch" $OUT/launch_parts.log
tail -8 $OUT/host.log
