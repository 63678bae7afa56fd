"""Why describe declines the TMA kernel's launches on this Triton: each check of native._launch / _tensor_map."""
import inspect, torch, triton, tritonmm
from tritonmm import native, relaunch, thresholds
print("triton", triton.__version__)
with thresholds.override(gluon_min_macs=float("inf"), gluon_wide_min_macs=float("inf")):
    a, b = torch.randn(1030, 2048, device="cuda").bfloat16(), torch.randn(2048, 1536, device="cuda").bfloat16()
    tritonmm.mm(a, b); tritonmm.mm(a, b)
    e = relaunch.cached(relaunch.key(a, b, None, None, "none", "native"))
    print("entry", e is not None, "stage", None if e is None else e.stage, "offsets", None if e is None else e.offsets)
    c = e.launches[0]
    print("direct", c.direct is not None, "maps", len(c.maps), "tensors", c.tensors, "metadata", c.metadata, "flags", c.flags)
    sig = c.kernel.src.signature
    print("signature", list(sig.values())[:4], "len", len(sig), "args", 6 + len(c.rest))
    print("meta", c.maps_meta)
    d = c.descriptors[0]
    print("desc", type(d), {k: v for k, v in vars(d).items() if k != "base"})
    ty = list(sig.values())[0]
    for mod in ("triton.backends.driver", "triton.backends.nvidia.driver"):
        try:
            m = __import__(mod, fromlist=["x"]); f = getattr(m, "expand_signature", None)
            print(mod, "expand_signature", f and inspect.signature(f))
        except Exception as x:
            print(mod, "import error", x)
    print("_expanded", native._expanded(ty, c.maps_meta[0]))
    print("_tensor_map", native._tensor_map(ty, d, c.maps_meta[0]))
    print("_launch", native._launch(c, (native.A, native.B, native.OUT, native.BIAS, native.NULL_POINTER, native.NULL_POINTER)) is not None)
