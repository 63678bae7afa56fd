#!/usr/bin/env bash
# One device call for the ladder's Hopper steps 13-15 (TMA, warp specialization, persistent
# clusters), on an H100 (compute capability 9.0), from the repository root:
#     bash cuda_reference/check_hopper_steps.sh
# 1. builds the ladder (every step, as cuda_reference.matmul loads it);
# 2. a smoke run of each new step in its own process under a timeout (a barrier bug hangs
#    rather than fails: a hung step is reported and left out of what follows);
# 3. pytest: every tensor-core step against float64 on odd and aligned shapes, steps 13-15
#    bit for bit against step 12, step 15 on capped grids, the refusals;
# 4. compute-sanitizer memcheck and racecheck over steps 13-15 on small shapes;
# 5. times steps 12-15 against torch.mm at 4096^3 and 8192^3 in bf16 and fp16 (CUDA events,
#    medians of interleaved rounds after warm-up, operands rotated through copies past the L2),
#    and prints the table last.
# Logs go under $OUT (default /tmp/hopper-steps). About 3 minutes on an H100, most of it the build.
set -o pipefail
OUT=${OUT:-/tmp/hopper-steps}
mkdir -p "$OUT"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
NEW="tma warp_specialized persistent"
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(), torch.cuda.get_device_capability())"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader

echo "== 1. build"
timeout 240 /usr/bin/time -f "build %es" python3 -c "from cuda_reference.build import load; print(sorted(load().names()))" \
  > "$OUT/build.log" 2>&1
rc=$?; tail -3 "$OUT/build.log"
if [ $rc -ne 0 ]; then grep -m 20 -E "error|Error" "$OUT/build.log"; echo "BUILD FAILED (exit $rc)"; exit 1; fi

echo "== 2. smoke: each new step alone, 30 s each"
GOOD=""
for k in $NEW; do
  timeout 30 python3 - "$k" > "$OUT/smoke-$k.log" 2>&1 <<'PY'
import sys, torch, cuda_reference
k = sys.argv[1]
for M, N, K in ((1, 8, 8), (130, 264, 520), (300, 136, 72), (2200, 2056, 24)):
    for dt in (torch.bfloat16, torch.float16):
        a, b = torch.randn(M, K, device="cuda").to(dt), torch.randn(K, N, device="cuda").to(dt)
        out = cuda_reference.matmul(a, b, k)
        torch.cuda.synchronize()
        ref = a.double() @ b.double()
        err = ((out.double() - ref).norm() / ref.norm()).item()
        same = torch.equal(out, cuda_reference.matmul(a, b, "wgmma"))
        print(f"{k} {str(dt)[6:]} {M}x{N}x{K}: rel err {err:.1e}, equal to step 12: {same}", flush=True)
        assert err < 1e-2, err
PY
  rc=$?
  if [ $rc -eq 0 ]; then GOOD="$GOOD $k"; echo "$k: ok ($(tail -1 "$OUT/smoke-$k.log"))";
  else echo "$k: FAILED (exit $rc$([ $rc -eq 124 ] && echo ', timed out: hung?'))"; tail -4 "$OUT/smoke-$k.log"; fi
done
GOOD=${GOOD# }
echo "steps that passed the smoke run: ${GOOD:-none}"

echo "== 3. pytest tests/test_cuda_reference.py: the GPU tests of the tensor-core steps"
SEL="tensor_core or wgmma or tma or persistent or warp_specialized"
for k in $NEW; do [[ " $GOOD " == *" $k "* ]] || SEL="($SEL) and not $k"; done
timeout 150 python3 -m pytest -q -p no:cacheprovider -p no:warnings tests/test_cuda_reference.py -m gpu -k "$SEL" \
  > "$OUT/pytest.log" 2>&1
echo "pytest exit $? : $(tail -1 "$OUT/pytest.log")"
grep -E "^(FAILED|ERROR)" "$OUT/pytest.log" | head -20

echo "== 4. compute-sanitizer over:${GOOD:- nothing}"
if [ -n "$GOOD" ]; then
  for tool in memcheck racecheck; do
    timeout 100 compute-sanitizer --tool $tool --error-exitcode 1 python3 -m cuda_reference.sanitize $GOOD \
      > "$OUT/sanitize-$tool.log" 2>&1
    echo "$tool: exit $? ; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|wrong results' "$OUT/sanitize-$tool.log" | tr '\n' ' ')"
    grep -m 6 -E "Invalid|Race|Hazard|error" "$OUT/sanitize-$tool.log"
  done
fi

echo "== 5. timing"
KERNELS="wgmma $GOOD" timeout 150 python3 - <<'PY' 2>&1 | tee "$OUT/timing.log"
import os, statistics, torch, cuda_reference

kernels = os.environ["KERNELS"].split()
l2 = torch.cuda.get_device_properties(0).L2_cache_size
rows = []
for n in (4096, 8192):
    for dt in (torch.bfloat16, torch.float16):
        pair = 2 * n * n * 2  # bytes of one (a, b)
        copies = max(2, -(-2 * l2 // pair))  # one pass over the copies reads twice the L2
        ops = [(torch.randn(n, n, device="cuda").to(dt), torch.randn(n, n, device="cuda").to(dt)) for _ in range(copies)]
        out = torch.empty(n, n, device="cuda", dtype=dt)
        fns = {"torch.mm": lambda a, b: torch.mm(a, b, out=out)}
        for k in kernels:
            fns[k] = lambda a, b, k=k: cuda_reference.matmul(a, b, k, out=out)
        a0, b0 = ops[0]
        ref = a0.double() @ b0.double()
        err = {}
        for name, fn in fns.items():  # warm-up (build, opt-in, occupancy query) and the error
            for a, b in ops:
                fn(a, b)
            fn(a0, b0)
            err[name] = ((out.double() - ref).norm() / ref.norm()).item()
        del ref
        iters = 20 if n == 4096 else 6
        times = {name: [] for name in fns}
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for _ in range(7):  # rounds, each timing every implementation in turn
            for name, fn in fns.items():
                start.record()
                for i in range(iters):
                    fn(*ops[i % copies])
                end.record()
                end.synchronize()
                times[name].append(start.elapsed_time(end) / iters)
        base = statistics.median(times["torch.mm"])
        for name in fns:
            ms = statistics.median(times[name])
            rows.append((f"{str(dt)[6:]} {n}^3", name, ms, 2 * n ** 3 / ms / 1e9, base / ms, err[name]))
        print(f"{str(dt)[6:]} {n}^3 timed ({copies} operand copies)", flush=True)
print()
print(f"{'dtype, shape':<17}{'kernel':<18}{'ms':>9}{'TFLOP/s':>9}{'x torch.mm':>12}{'rel err':>10}")
for r in rows:
    print(f"{r[0]:<17}{r[1]:<18}{r[2]:>9.3f}{r[3]:>9.1f}{r[4]:>12.2f}{r[5]:>10.1e}")
PY
