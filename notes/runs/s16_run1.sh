#!/usr/bin/env bash
# Session 16, device run 1: 40 shapes drawn with a new seed (3) in bf16, on the code of session 15 (the pointer
# kernel's staging rule, not yet seen on shapes drawn after it): a held-out check of the planner's rules.
# SEED=4 is run 4 (s16_run4.sh).
SEED=${SEED:-3}
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
TRITONMM_CACHE_DIR=/tmp/tc-s16-draw-$SEED timeout 540 python3 -m bench --preset sweep --dtype bf16 --rounds 3 --draw 40 --seed $SEED \
  --out $OUT/draw_bf16 2>$OUT/draw_bf16.err > $OUT/draw_bf16.log; echo "bf16 exit $?"
tail -3 $OUT/draw_bf16.err | cut -c1-300
grep -E "over 40" $OUT/draw_bf16.log
python3 - <<'PY'
import csv, os
p = os.environ.get("OUT", "/tmp/out") + "/draw_bf16/sweep.csv"
rows = sorted(csv.DictReader(open(p)), key=lambda r: float(r["ratio_graph"]))
for r in rows:
    print(f"{r['shape']:>20} {r['layout']} g {float(r['ratio_graph']):.2f} e {float(r['ratio_eager']):.2f} "
          f"tg {float(r['torch_graph_us']):8.2f} {r['config']} {r['note']}")
PY
