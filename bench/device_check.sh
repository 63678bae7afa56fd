#!/usr/bin/env bash
# One device call that builds, tests and measures everything; short tables printed last.
#   usage (on the GPU machine, repo root): bash bench/device_check.sh STAGE...
#   stages: tests (build, pytest, sanitizers), pytest (pytest alone), multigpu (the tests that need two
#   GPUs), suites (bench.suites: host, compile, linear, model, fp8), tuning, quick | full (bench), targets,
#   llm, sweep (bf16, fp16 and fp8: three calls' worth; SWEEP_DTYPES picks), fp8 (the --dtype fp8 table),
#   traffic (ncu), scaling (the tiling claims)
# A device command may run 10 minutes: run tests in one call, the rest in another.
# Logs and results go under $OUT (default /tmp/tritonmm-out).
set -o pipefail
OUT=${OUT:-/tmp/tritonmm-out}
mkdir -p "$OUT"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=$OUT/tuning-cache
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, torch.cuda.get_device_name())"
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader

stage() { [[ " $STAGES " == *" $1 "* ]]; }
STAGES="$*"
if stage tests; then
echo "== build the CUDA ladder"
/usr/bin/time -f "build %es" python3 -c "from cuda_reference.build import load; load()" 2>&1 | tail -2
python3 -c "import time, torch; t = time.time(); from cuda_reference.build import load; load(); print(f'cached load in a new process: {time.time() - t:.2f}s (after importing torch)')"

echo "== pytest (GPU)"
python3 -m pytest -q -p no:cacheprovider -p no:warnings 2>&1 | tee "$OUT/pytest.log" | tail -4

echo "== compute-sanitizer over the ladder"
for tool in memcheck racecheck; do
  compute-sanitizer --tool $tool --error-exitcode 1 python3 -m cuda_reference.sanitize > "$OUT/sanitize-$tool.log" 2>&1
  echo "$tool: exit $? ; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|wrong results' "$OUT/sanitize-$tool.log" | tr '\n' ' ')"
done

fi
if stage pytest; then
echo "== pytest (GPU)"
# pytest-xdist: the suite is bound by Triton's compiles on the CPU, which 8 workers share out.
python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 2>&1 | tee "$OUT/pytest.log" | tail -15
fi
if stage multigpu; then
echo "== pytest: multi-GPU, model-level and override tests"
nvidia-smi -L
python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 4 tests/test_device.py tests/test_nn.py tests/test_override.py \
  tests/test_fast_launch.py tests/test_library.py tests/test_plan.py \
  2>&1 | tee "$OUT/pytest-multigpu.log" | tail -15
fi
if stage suites; then
SUITES=${SUITES:-host compile linear model fp8}
echo "== bench.suites: $SUITES"
python3 -m bench.suites $SUITES 2>"$OUT/suites.err" | tee "$OUT/suites.log"
tail -3 "$OUT/suites.err"
fi
if stage tuning; then
echo "== tuning: cold bf16 4096^3 with empty caches, then a warm process"
rm -rf "$TRITONMM_CACHE_DIR"
TRITON_CACHE_DIR=$(mktemp -d) /usr/bin/time -f "cold tune wall %es" \
  python3 -m tritonmm.tune --shape 4096x4096x4096 --dtype bf16 2>&1 | tee "$OUT/tune-cold.log" | grep -E "wall|kept|^\*|^ +\*" | head -5
grep -E "^\s*\*" "$OUT/tune-cold.log" | head -1
python3 - <<'PY' 2>&1 | tee "$OUT/tune-warm.log"
import torch, tritonmm
from tritonmm import timing
a, b = torch.randn(4096, 4096, device="cuda").bfloat16(), torch.randn(4096, 4096, device="cuda").bfloat16()
out = torch.empty(4096, 4096, device="cuda", dtype=torch.bfloat16)
tritonmm.matmul(a, b, out=out)
calls = timing.calls
ms = timing.median_ms(lambda: tritonmm.matmul(a, b, out=out))
print(f"warm process: {calls} benchmark calls before timing; cached config runs at {timing.tflops(4096, 4096, 4096, ms):.0f} TFLOP/s")
PY

fi
if stage sweep; then
  echo "== sweep (46 shapes a dtype; fp8: 45, all as x @ W.T)"
  for dt in ${SWEEP_DTYPES:-bf16 fp16 fp8}; do
    python3 -m bench --preset sweep --dtype $dt --out "$OUT/sweep_$dt" 2>"$OUT/sweep_$dt.err" | tee "$OUT/sweep_$dt.log" | tail -3
  done
fi
if stage traffic; then
  echo "== traffic under ncu"; ncu --version | tail -1
  python3 -c "from cuda_reference.build import load; load()"  # build outside the profiler
  python3 -m bench --traffic --out "$OUT/traffic" 2>"$OUT/traffic.err" | tee "$OUT/traffic.log" | tail -45
fi
if stage scaling; then
  echo "== the tiling claims (reads \$OUT/traffic/traffic.json for claim 1)"
  python3 -m bench --preset scaling --out "$OUT/traffic" 2>"$OUT/scaling.err" | tee "$OUT/scaling.log" | tail -30
fi
if stage full; then
  echo "== bench (full)"
  python3 -m bench --out "$OUT/results" 2>"$OUT/bench.err" | tee "$OUT/bench.log"
fi
if stage quick; then
  echo "== bench --quick"
  /usr/bin/time -f "bench --quick wall %es" python3 -m bench --quick --out "$OUT/results" 2>"$OUT/bench.err" \
    | tee "$OUT/bench.log"
  tail -1 "$OUT/bench.err"
fi
if stage targets; then
echo "== issue 2 targets: autotuned tritonmm vs torch.mm, median of 3 interleaved rounds"
python3 -m bench --shape 4096x4096x4096 --shape 8192x8192x8192 --dtype bf16 --dtype fp16 --dtype tf32 --dtype fp32 \
  --impl torch.mm --impl "tritonmm (autotuned)" --rounds 3 2>>"$OUT/bench.err" | tee "$OUT/targets.log"
fi
if stage fp8; then
echo "== fp8: tritonmm.scaled_mm vs torch._scaled_mm, squares and LLM shapes, median of 3 interleaved rounds"
python3 -m bench --dtype fp8 --shape 4096x4096x4096 --shape 8192x8192x8192 --preset llm --rounds 3 \
  --out "$OUT/fp8" 2>>"$OUT/bench.err" | tee "$OUT/fp8.log"
fi
if stage llm; then
echo "== LLM shapes, bf16: autotuned tritonmm vs torch.mm, median of 3 interleaved rounds"
python3 -m bench --preset llm --dtype bf16 --impl torch.mm --impl "tritonmm (autotuned)" --rounds 3 \
  2>>"$OUT/bench.err" | tee "$OUT/llm.log"
fi
