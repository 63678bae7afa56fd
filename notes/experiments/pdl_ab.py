"""Experiment (session 25, run 2): programmatic dependent launch (plan.PDL) in graph replay.

Every tiled kernel, split-K's sum and the staging copy can be launched with launch_pdl=True: the kernel waits for
its predecessor in the stream first thing (kernels/tiles.py, after_previous_kernel), so its programs may be
scheduled, and set up, while the kernel before it finishes. Run 1 (split_first_pass.py) showed split-K's second
launch costing about 2.5 us of a split call, and the sweep's graphs run products back to back, as a model's layers
do: each launch's start waits for the last program of the one before.

Hypothesis: with PDL, products of 5-30 us in graph replay (decode, mid-size, staged and split products) run
0.5-1.5 us faster each, the same for long products (within 1%), and results stay right.

Run 2 (each program let the next kernel start right after its wait, first thing): 256^3 0.94 -> 1.10x cuBLAS,
768^3 0.89 -> 0.96, 1023x1025x1027 1.74 -> 1.85, decode +0.3 us; but 3000x3008x3000 (a wave-tail split) 84.8 ->
98.4 us, 2047x2049x2051 54.9 -> 65.0, 1856x1136x1904 (75 programs) 22.5 -> 25.0, 1536^3 17.1 -> 18.1: where a
kernel leaves SMs idle, the next kernel's programs wait there for all its run. Run 3 timed two later hand-overs
against off: once every program has finished its main loop (shipped: 256^3 0.93 -> 1.05, 768^3 0.89 -> 0.92,
1023x1025x1027 1.73 -> 1.80, 77x4099x2049 1.08 -> 1.15; nothing lost past noise), and only as programs end (about
half those gains). Those variants are gone from the kernels; this script now times plan.PDL off against on.

Per shape (bf16, or DTYPE=float16; the sweep's operands and copies, graph replay over copies rotated past the L2,
read-flushed): the tuned config (tuned once, PDL off), captured with PDL off and on; torch.mm; timed interleaved for
ROUNDS rounds; each graph's result checked against float64 after a replay.

    PYTHONPATH=. python3 notes/experiments/pdl_ab.py [MxNxK:layout ...]
    DTYPE=float16 ROUNDS=5 PYTHONPATH=. python3 notes/experiments/pdl_ab.py 1024x14336x4096:NT

Since session 26 the timing loop is settings_ab.py's (plan.PDL off and on as its two variants).

Run 8: the long products whose sweep ratios fell against session 23's sweep (4096^3 NN bf16 1.03 -> 0.99,
8192x4096x14336 1.09 -> 0.99, fp16 1024x14336x4096 0.94 -> 0.85, one operand copy each): PDL off and on interleaved.
"""
import os
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
os.environ.setdefault("VARIANTS", "off:PDL=0;on:PDL=1")
from settings_ab import main  # noqa: E402

SHAPES = [(256, 256, 256, "NN"), (512, 512, 512, "NN"), (768, 768, 768, "NN"), (1024, 1024, 1024, "NN"),
          (1536, 1536, 1536, "NN"), (2048, 2048, 2048, "NN"), (4096, 4096, 4096, "NN"), (16, 4096, 4096, "NT"),
          (12, 5120, 5120, "NT"), (48, 5120, 5120, "NT"), (64, 5120, 5120, "NT"), (64, 4096, 4096, "NT"),
          (128, 4096, 4096, "NT"), (141, 3072, 8192, "NT"), (32, 5120, 13824, "NT"), (1023, 1025, 1027, "NN"),
          (2047, 2049, 2051, "NN"), (77, 4099, 2049, "NT"), (3000, 3008, 3000, "NN"), (1856, 1136, 1904, "NN"),
          (1, 4096, 4096, "NT"), (1, 14336, 4096, "NT")]

if __name__ == "__main__":
    main(SHAPES)
