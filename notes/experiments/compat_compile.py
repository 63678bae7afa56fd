"""Compatibility check (no GPU needed): compiles every kernel of tritonmm/kernels/ for Hopper (sm_90)
with the installed Triton, ahead of time, and prints per kernel OK or the exception.

For each kernel the arguments are built as plan.py builds them for a real launch (CPU tensors stand
in for CUDA ones: only their dtype, strides and address alignment matter), and each argument is
specialized the way JITFunction.run would (pointers and ints on % 16, ints equal to 1 as constexprs,
None as a constexpr, a TensorDescriptor as tensordesc<dtype[block]>). The signature, constexprs and
attrs then go to triton.compiler.ASTSource, and triton.compile(src, target=GPUTarget("cuda", 90, 32),
options=dict(num_warps=..., num_stages=...)) runs the whole pipeline, ptxas included (cubin).
For the tensor-core kernels it reports what the PTX contains: wgmma.mma_async, cp.async (the
pointer kernel's asynchronous copies, with their sizes in bytes: what the VEC_* alignment hints buy),
cp.async.bulk.tensor (TMA), synchronous ld.global by bytes an access, and the shared memory the kernel
asks for; for every kernel, registers and stack (spills) a thread, read from the cubin with cuobjdump.

Cases: gemm_kernel (bf16, 128x128x64, 4 stages, 8 warps) with no hints (16-byte aligned operands) and
with VEC_A=1 / VEC_B=4 (unaligned rows), each with SPLIT_K 1 and 2, and the unaligned operands without
hints as a control; gemm_tma_kernel (bf16 x @ W.T, 128x256x64, 8 warps, 4 stages, C through its descriptor
and through pointers; and tf32x3 PRESPLIT
128x128x32, 3 stages); split_k_reduce_kernel; gemv_kernel (M = 1, x @ W.T); copy_kernel (transposing
copy, a pair of copies, the TF32 split, a padded K-major pair).

ASTSource takes (fn, signature, constexprs, attrs) with the same formats in Triton 3.6.0, 3.7.1,
3.8.0 and 3.9.0 (compiler/compiler.py read in each): signature {name: type}, constexprs
{(index,): value}, attrs {(index,): [["tt.divisibility", 16]]}. The specialization uses
triton._C.libtriton.native_specialize_impl where it exists (all four), else the rules above by hand.

Session 25: every kernel takes PDL (programmatic dependent launch, plan.PDL), compiled with it (PDL=1, the default
here, with launch_pdl) or without (PDL=0); the report says which griddepcontrol instructions the PTX holds.

Run (no GPU needed; TRITON_INTERPRET is removed from this process's environment):
    python3 notes/experiments/compat_compile.py            # the Triton of that python
    /path/to/venv/bin/python notes/experiments/compat_compile.py
    TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas python3 ...  # if Triton's bundled ptxas is missing
Exit status 1 if any kernel failed to compile.
"""
import collections
import os
import re
import sys
import traceback

os.environ.pop("TRITON_INTERPRET", None)  # before triton is imported: compile, do not interpret

import torch  # noqa: E402
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import make_backend  # noqa: E402
from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from tritonmm.kernels.copy import copy_kernel  # noqa: E402
from tritonmm.kernels.gemm import gemm_kernel  # noqa: E402
from tritonmm.kernels.gemm_tma import gemm_tma_kernel  # noqa: E402
from tritonmm.kernels.gemv import gemv_kernel  # noqa: E402
from tritonmm.kernels.split_k import split_k_reduce_kernel  # noqa: E402

VERSION = tuple(int(p) for p in re.findall(r"\d+", triton.__version__)[:2])
TARGET = GPUTarget("cuda", 90, 32)
BACKEND = make_backend(TARGET)
if not os.environ.get("TRITON_PTXAS_PATH") and not os.path.exists(
        os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")) and \
        os.path.exists("/usr/local/cuda/bin/ptxas"):
    os.environ["TRITON_PTXAS_PATH"] = "/usr/local/cuda/bin/ptxas"

try:  # the JIT's own specialization (runtime/jit.py: specialize_impl), in Triton 3.6-3.9
    from triton._C.libtriton import native_specialize_impl
except ImportError:
    native_specialize_impl = None


PDL = os.environ.get("PDL", "1") == "1"

def _by_hand(value):
    """(type, key) as JITFunction's binder gives them, for the argument kinds these kernels take."""
    if value is None:
        return "constexpr", None
    if isinstance(value, bool):
        return "u1", None
    if isinstance(value, int):
        if value == 1:
            return "constexpr", 1
        return ("i32" if -2 ** 31 <= value < 2 ** 31 else "i64"), ("D" if value % 16 == 0 else "")
    if isinstance(value, TensorDescriptor):
        return f"tensordesc<{str(value.base.dtype)[6:].replace('bfloat16', 'bf16').replace('float', 'fp')}" \
               f"{list(value.block_shape)}>", None
    if isinstance(value, torch.Tensor):
        names = {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32"}
        return "*" + names[value.dtype], ("D" if value.data_ptr() % 16 == 0 else "")
    raise TypeError(f"no rule for {type(value)}")


def specialize(value):
    if native_specialize_impl is not None:
        ty, key = native_specialize_impl(BACKEND, value, False, True, True)[:2]
        return ty, key
    return _by_hand(value)


def source(fn, args: dict):
    """ASTSource for fn with every argument (constexprs included) by name, as a launch passes them."""
    signature, constexprs, attrs = {}, {}, {}
    for i, param in enumerate(fn.params):
        value = args[param.name]
        if param.is_constexpr:
            signature[param.name], constexprs[(i,)] = "constexpr", value
            continue
        ty, key = specialize(value)
        signature[param.name] = ty
        if ty == "constexpr":
            constexprs[(i,)] = key
        elif isinstance(key, str):
            parsed = BACKEND.parse_attr(key)
            if parsed:
                attrs[(i,)] = parsed
    # The formats ASTSource takes are the same in 3.6-3.9 (module docstring); a later Triton may differ.
    if VERSION > (3, 9):
        print(f"  note: Triton {triton.__version__} is newer than the versions this script was read against")
    return triton.compiler.ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)


def resources(kernel) -> str:
    """Registers and spills a thread, from the cubin (cuobjdump --dump-resource-usage; '' where it cannot run)."""
    import subprocess
    import tempfile
    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    if not os.path.exists(tool):
        tool = "/usr/local/cuda/bin/cuobjdump"
    try:
        with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
            f.write(kernel.asm["cubin"])
            f.flush()
            out = subprocess.run([tool, "--dump-resource-usage", f.name], capture_output=True, text=True,
                                 timeout=60).stdout
        regs = re.search(r"REG:(\d+)", out)
        spill = re.search(r"STACK:(\d+)", out)
        return f", regs {regs.group(1)}, stack {spill.group(1)}" if regs and spill else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def ptx_summary(kernel) -> str:
    ptx = kernel.asm["ptx"]
    sizes = collections.Counter(re.findall(r"cp\.async\.c[ag]\.shared\.global(?:\.\w+)* \[[^\]]*\], \[[^\]]*\], "
                                           r"(0x[0-9a-f]+|\d+)", ptx))
    loads = collections.Counter()  # synchronous global loads by bytes an access
    for vec, bits in re.findall(r"ld\.global(?:\.[a-z0-9]+)*?(?:\.v(\d))?\.[bfsu](\d+) ", ptx):
        loads[int(vec or 1) * int(bits) // 8] += 1
    return (f"wgmma {len(re.findall(r'wgmma.mma_async', ptx))}, "
            f"cp.async {sum(sizes.values())} {dict((int(k, 0), v) for k, v in sorted(sizes.items()))}, "
            f"ld.global {dict(sorted(loads.items()))}, "
            f"cp.async.bulk.tensor {len(re.findall(r'cp.async.bulk.tensor', ptx))}, "
            f"mma.sync {len(re.findall(r'mma.sync', ptx))}, shared {kernel.metadata.shared} B")


def gemm_case(aligned: bool, split: int, hints: bool = True):
    """gemm_kernel's first (or only) launch, as plan.Product.steps makes it. Aligned: 4096^3 bf16, no hint.
    Unaligned: 150 x 5940 x 3241 bf16, A's rows 3241 elements apart (VEC_A=1), B's and C's 5940 (VEC_B=4);
    hints=False: the same operands without them (VEC 0, DIV 1), the control that shows what the hints change."""
    M, N, K = (4096, 4096, 4096) if aligned else (150, 5940, 3241)
    a = torch.empty(M, K, dtype=torch.bfloat16)
    b = torch.empty(K, N, dtype=torch.bfloat16)
    c = torch.empty(M, N, dtype=torch.bfloat16) if split == 1 else torch.empty(split, M, N, dtype=torch.float32)
    a3, b3 = (t.as_strided((1, *t.shape), (0, *t.stride())) for t in (a, b))
    c3 = c.as_strided((1, M, N), (0, N, 1)) if split == 1 else c
    vec = dict(VEC_A=0, VEC_B=0, VEC_C=0, DIV_M=1, DIV_N=1, DIV_K=1) if aligned or not hints else \
        dict(VEC_A=1, VEC_B=4, VEC_C=4, DIV_M=2, DIV_N=4, DIV_K=1)  # C or split-K's fp32 workspace: rows of 5940
    args = dict(a_ptr=a3, b_ptr=b3, c_ptr=c3, bias_ptr=None, scale_a_ptr=None, scale_b_ptr=None, M=M, N=N, K=K,
                stride_az=a3.stride(0), stride_am=a3.stride(1), stride_ak=a3.stride(2),
                stride_bz=b3.stride(0), stride_bk=b3.stride(1), stride_bn=b3.stride(2),
                stride_cz=c3.stride(0), stride_cm=c3.stride(1), stride_cn=c3.stride(2),
                stride_bias_m=0, stride_bias_n=0,
                BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, BIAS="none", ACTIVATION="none",
                SCALE_A="none", SCALE_B="none", INPUT_PRECISION="tf32", UPCAST=False, SPLIT_K=split, PDL=PDL, **vec)
    return gemm_kernel, args, dict(num_warps=8, num_stages=4, launch_pdl=PDL)


def tma_case(presplit: bool, c_desc: bool = True):
    """gemm_tma_kernel as plan.Product._tma_args / fit_descriptors launch it: bf16 x @ W.T (B a transposed
    view: B_TRANS) at 4096^3, 128x256x64, C through its descriptor or (c_desc false: rows of 4097 elements,
    as an odd N leaves them) through pointers; or tf32x3 on split operands (PRESPLIT), 128x128x32."""
    M = N = K = 4096
    if presplit:
        BM, BN, BK, stages = 128, 128, 32, 3
        a = torch.empty(2 * M, K, dtype=torch.float32)  # high parts, then remainders
        bt = torch.empty(2 * N, K, dtype=torch.float32)
        c = torch.empty(M, N, dtype=torch.float32)
        precision = "tf32"
    else:
        BM, BN, BK, stages = 128, 256, 64, 4
        a = torch.empty(M, K, dtype=torch.bfloat16)
        bt = torch.empty(N, K, dtype=torch.bfloat16)  # W (N, K): B = W.T
        c = torch.empty(M, N, dtype=torch.bfloat16)
        precision = "tf32"
    if not c_desc:
        c = torch.empty(M, N + 1, dtype=c.dtype)[:, :N]
    descs = [TensorDescriptor.from_tensor(t, [16, 16]) for t in (a, bt, c)[:2 + c_desc]]
    descs[0].block_shape, descs[1].block_shape = [BM, BK], [BN, BK]
    if c_desc:
        descs[2].block_shape = [BM, BN // 2]
    args = dict(a_desc=descs[0], b_desc=descs[1], c=descs[2] if c_desc else c, bias_ptr=None, scale_a_ptr=None,
                scale_b_ptr=None, M=M, N=N, K=K, stride_bias_m=0, stride_bias_n=0, stride_cm=c.stride(0),
                stride_cn=c.stride(1), C_DESC=c_desc,
                BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=8, A_TRANS=False, B_TRANS=True, BIAS="none",
                ACTIVATION="none", SCALE_A="none", SCALE_B="none", INPUT_PRECISION=precision, UPCAST=False,
                NUM_SMS=132, PRESPLIT=presplit, SPLIT_K=1, SHIFT=True, PDL=PDL)
    return gemm_tma_kernel, args, dict(num_warps=8, num_stages=stages, launch_pdl=PDL)


def split_k_case():
    M, N, split = 64, 4096, 2
    ws = torch.empty(split, M, N, dtype=torch.float32)
    c = torch.empty(M, N, dtype=torch.bfloat16)
    args = dict(ws_ptr=ws, c_ptr=c, bias_ptr=None, scale_a_ptr=None, scale_b_ptr=None, M=M, N=N,
                stride_cm=c.stride(0), stride_cn=c.stride(1), stride_bias_m=0, stride_bias_n=0,
                SPLIT_K=split, BLOCK_M=32, BLOCK_N=128, BIAS="none", ACTIVATION="none", SCALE_A="none",
                SCALE_B="none", PDL=PDL)
    return split_k_reduce_kernel, args, dict(num_warps=4, num_stages=3, launch_pdl=PDL)


def gemv_case():
    """One row: x (1, 4096) @ W.T with W (14336, 4096), bias row and silu; config 8x512, 1 stage, 4 warps."""
    M, N, K = 1, 14336, 4096
    a, w, c = torch.empty(M, K, dtype=torch.bfloat16), torch.empty(N, K, dtype=torch.bfloat16), \
        torch.empty(M, N, dtype=torch.bfloat16)
    b = w.T
    bias = torch.empty(N, dtype=torch.bfloat16)
    a3, b3, c3 = (t.as_strided((1, *t.shape), (0, *t.stride())) for t in (a, b, c))
    args = dict(a_ptr=a3, b_ptr=b3, c_ptr=c3, bias_ptr=bias, scale_a_ptr=None, scale_b_ptr=None, M=M, N=N, K=K,
                stride_az=0, stride_am=a3.stride(1), stride_ak=a3.stride(2), stride_bz=0, stride_bk=b3.stride(1),
                stride_bn=b3.stride(2), stride_cz=0, stride_cm=c3.stride(1), stride_cn=c3.stride(2),
                stride_bias_m=0, stride_bias_n=1, BLOCK_N=8, BLOCK_K=512, BIAS="row", ACTIVATION="silu",
                SCALE_A="none", SCALE_B="none", PDL=PDL)
    return gemv_kernel, args, dict(num_warps=4, num_stages=1, launch_pdl=PDL)


def copy_case(kind: str):
    """copy_kernel as plan.copy launches it (BLOCK 64, default 4 warps and 3 stages): 'transpose' (a
    column-major bf16 (3000, 3001) into aligned rows), 'pair' (two plain copies into aligned rows), 'split'
    (float32 TF32 split: high parts and remainders), 'padded' (the pointer kernel's staging: a pair of K-major
    copies of 333x138x2569 x @ W.T into buffers with K padded to 2576, plan._padded_a_copy / _padded_b_copy)."""
    R, C = (333, 2569) if kind == "padded" else (3000, 3001)
    dtype = torch.float32 if kind == "split" else torch.bfloat16
    x = torch.empty(C, R, dtype=dtype).T if kind == "transpose" else torch.empty(R, C, dtype=dtype)
    pad = (C + 15) // 16 * 16
    y = torch.empty(R, pad, dtype=dtype)[:, :pad if kind == "padded" else C]
    lo = torch.empty(R, pad, dtype=dtype)[:, :C] if kind == "split" else None
    x2, y2 = x, y
    if kind == "pair":
        x2, y2 = torch.empty(C, R, dtype=dtype), torch.empty(C, (R + 15) // 16 * 16, dtype=dtype)[:, :R]
    elif kind == "padded":  # B = W.T, W (138, 2569) rows 2 bytes apart, into (138, 2576) rows, transposed
        x2, y2 = torch.empty(138, C, dtype=dtype).T, torch.empty(138, pad, dtype=dtype).T
    args = dict(x_ptr=x, y_ptr=y, lo_ptr=lo, x2_ptr=x2, y2_ptr=y2, R=R, C=C, RY=y.shape[0], CY=y.shape[1],
                stride_xr=x.stride(0), stride_xc=x.stride(1), stride_yr=y.stride(0), stride_yc=y.stride(1),
                R2=x2.shape[0], C2=x2.shape[1], RY2=y2.shape[0], CY2=y2.shape[1],
                stride_x2r=x2.stride(0), stride_x2c=x2.stride(1), stride_y2r=y2.stride(0), stride_y2c=y2.stride(1),
                BLOCK=64, SPLIT_TF32=kind == "split", PAIR=kind in ("pair", "padded"), PAD=kind == "padded", PDL=PDL)
    return copy_kernel, args, dict(num_warps=4, num_stages=3, launch_pdl=PDL)


CASES = [
    ("gemm_kernel VEC 0 (aligned), SPLIT_K 1", lambda: gemm_case(True, 1), True),
    ("gemm_kernel VEC 0 (aligned), SPLIT_K 2", lambda: gemm_case(True, 2), True),
    ("gemm_kernel VEC_A=1 VEC_B=4, SPLIT_K 1", lambda: gemm_case(False, 1), True),
    ("gemm_kernel VEC_A=1 VEC_B=4, SPLIT_K 2", lambda: gemm_case(False, 2), True),
    ("gemm_kernel unaligned, no hints (control)", lambda: gemm_case(False, 1, hints=False), True),
    ("gemm_tma_kernel bf16 B_TRANS", lambda: tma_case(False), True),
    ("gemm_tma_kernel bf16 B_TRANS, C through pointers", lambda: tma_case(False, c_desc=False), True),
    ("gemm_tma_kernel fp32 PRESPLIT", lambda: tma_case(True), True),
    ("split_k_reduce_kernel SPLIT_K 2", split_k_case, False),
    ("gemv_kernel M=1 bias+silu", gemv_case, False),
    ("copy_kernel transpose", lambda: copy_case("transpose"), False),
    ("copy_kernel pair", lambda: copy_case("pair"), False),
    ("copy_kernel TF32 split", lambda: copy_case("split"), False),
    ("copy_kernel padded pair", lambda: copy_case("padded"), False),
]


def main() -> int:
    print(f"triton {triton.__version__} ({os.path.dirname(triton.__file__)}), torch {torch.__version__}, "
          f"target {TARGET}, specialization {'native_specialize_impl' if native_specialize_impl else 'by hand'}")
    failed = 0
    for name, make, gemm in CASES:
        try:
            fn, args, options = make()
            if native_specialize_impl is not None:  # the hand rules, checked against the JIT's own
                for p in fn.params:
                    if not p.is_constexpr:
                        want, got = specialize(args[p.name]), _by_hand(args[p.name])
                        if want[0] != got[0] or (isinstance(want[1], str) and want[1] != got[1]):
                            print(f"  note: {p.name}: JIT {want}, by hand {got}")
            kernel = triton.compile(source(fn, args), target=TARGET, options=options)
            gdc = [w for w in ("griddepcontrol.wait", "griddepcontrol.launch_dependents") if w in kernel.asm["ptx"]]
            print(f"OK    {name}" + (f": {ptx_summary(kernel)}" if gemm else f": shared {kernel.metadata.shared} B")
                  + resources(kernel) + f"; PDL {PDL}: {', '.join(gdc) or 'no griddepcontrol'}")
        except Exception as e:  # noqa: BLE001 - every kernel is reported, whatever it raised
            failed += 1
            print(f"ERROR {name}: {type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}")
            traceback.print_exc(limit=-3, file=sys.stdout)
    print(f"{len(CASES) - failed} of {len(CASES)} compiled")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
