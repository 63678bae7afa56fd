#!/usr/bin/env bash
# Session 4, device run 1: GPU suite, tf32x3 probe, targeted sweep rows, host times.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=$OUT/tuning-cache
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, torch.cuda.get_device_name())"
echo "== pytest -n 8"
timeout 330 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 --ignore=tests/test_cuda_reference.py --deselect tests/test_bench.py::test_registry_has_every_level 2>&1 | tee $OUT/pytest.log | tail -25
echo "== tf32x3 probe"
timeout 60 python3 notes/experiments/tf32x3_special.py 2>&1 | tee $OUT/tf32x3.log
echo "== sweep subset bf16"
timeout 150 python3 - <<'PY' 2>&1 | tee $OUT/sweep_subset.log
from bench import sweep, report
shapes = [(1,4096,4096,"NT"),(16,4096,4096,"NT"),(64,4096,4096,"NT"),(1,4096,14336,"NT"),(64,4096,14336,"NT"),
          (1,14336,4096,"NT"),(3000,3001,2999,"NN"),(1023,1025,1027,"NN"),(4095,4097,1531,"NN"),(77,4099,2049,"NT"),
          (2047,2049,2051,"NN"),(3000,3008,3000,"NN"),(2048,2048,1000,"NN"),(768,768,768,"NN"),(1536,1536,1536,"NN"),
          (4096,4096,4096,"NN")]
rows = sweep.measure("bf16", shapes, rounds=1)
print(report.sweep_table(rows)); print("\n".join(sweep.summarize(rows)))
PY
echo "== host"
timeout 60 python3 -m bench.suites host --rounds 3 2>&1 | tail -8
