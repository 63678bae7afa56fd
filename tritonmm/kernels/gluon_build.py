"""The Gluon kernels built without a GPU, and what ptxas made of them: for tests/test_gluon.py (the kernels compile
for sm_90a on any machine with Triton >= 3.8) and bench/gluon_check.py (shared memory, registers, spills beside the
timings). The kernels and their launchers are gluon_gemm.py's and gluon_tf32x3.py's."""
import torch
import triton

from .gluon_gemm import _MISSING, DEFAULT_SCHEDULE, _blocks, _constexprs, gluon_gemm_kernel


def compile_sm90(dtype: str = "bf16", b_kmajor: bool = False, schedule: str = DEFAULT_SCHEDULE, batched: bool = False):
    """Compiles the kernel for sm_90a without a GPU (ptxas included) and returns Triton's CompiledKernel: .asm
    holds the ptx and the cubin, .metadata the shared memory. TRITON_INTERPRET must be unset in this process.
    dtype "tf32x3": gluon_tf32x3.py's kernel (float32 on split operands; b_kmajor, schedule and batched do not
    apply)."""
    if _MISSING is not None:  # before the layouts, which need Gluon
        raise RuntimeError(_MISSING)
    if dtype == "tf32x3":
        from . import gluon_tf32x3
        return _compile(gluon_tf32x3.gluon_tf32x3_kernel, "fp32", gluon_tf32x3.blocks(), *gluon_tf32x3.constexprs())
    torch_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
    return _compile(gluon_gemm_kernel, dtype, _blocks(schedule, b_kmajor, torch_dtype),
                    *_constexprs(schedule, b_kmajor, batched))


def _compile(kernel, dtype: str, blocks: dict, constexprs: dict, options: dict):
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource
    # A descriptor's type is spelled as the launcher spells it when it specializes (TensorDescriptor.__mangle__).
    sig = {f"{name}_desc": f"tensordesc<{dtype}[{','.join(map(str, block))}],{layout!r}>"
           for name, (block, layout) in blocks.items()}
    ints = ("M", "N", "K", "Z", "a_rows", "b_rows") if "BATCHED" in constexprs else ("M", "N", "K")
    sig.update({name: "i32" for name in ints}, **{name: "constexpr" for name in constexprs})
    src = GluonASTSource(fn=kernel, signature=sig, constexprs=constexprs)
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options=options)


def resources(kernel) -> dict:
    """What ptxas made of a compile_sm90 kernel, for the tests and the device check: shared memory, registers a
    thread at launch (maxnreg), the per-partition budgets setmaxnreg moves to, and spills (ptxas -v, run again on
    the kernel's PTX with the options Triton passes)."""
    import re
    import subprocess
    import tempfile
    from triton.backends.nvidia.compiler import get_ptxas
    with tempfile.NamedTemporaryFile("w", suffix=".ptx") as ptx:
        ptx.write(kernel.asm["ptx"])
        ptx.flush()
        log = subprocess.run([get_ptxas(90).path, "-v", "--regAllocOptLevel=2", "--gpu-name=sm_90a", ptx.name, "-o",
                              "/dev/null"], check=True, capture_output=True, text=True).stderr
    number = lambda pattern: int(re.search(pattern, log).group(1))  # noqa: E731
    return {"shared": kernel.metadata.shared, "registers": number(r"Used (\d+) registers"),
            "setmaxnreg": sorted({int(r) for r in re.findall(r"setmaxnreg\.\w+\.sync\.aligned\.u32\s+(\d+)",
                                                               kernel.asm["ptx"])}),
            "spill_stores": number(r"(\d+) bytes spill stores"), "spill_loads": number(r"(\d+) bytes spill loads"),
            "stack": number(r"(\d+) bytes stack frame")}
