"""python -m bench --preset model: a Llama-like model (bench/model.py's LlamaLike at Llama-3-8B's widths,
two layers, bf16) on aten against tritonmm, both ways tritonmm offers a model:

    swap_linears   tritonmm.nn.swap_linears on a copy that shares the weights: every nn.Linear runs
                   tritonmm.linear
    use_tritonmm   the unchanged model under tritonmm.use_tritonmm(): aten's mm, addmm and bmm, backward
                   products included, run on tritonmm

for three steps: a training step (forward, cross-entropy in float32, backward; no optimizer), a prefill
(forward over a prompt without gradients, the head on the last token only, as serving computes it) and
the decode of one token against a cache of earlier tokens' keys and values. Each is timed eagerly and
replayed from a CUDA graph: milliseconds per step of host wall time over back-to-back steps, the GPU
synchronized at both ends, medians of interleaved rounds. x aten is aten's time over the row's (above 1:
tritonmm faster). tritonmm tunes each new product at its first eager call (TRITONMM_AUTOTUNE=1, the
bench's default), outside the timing: a first run on a machine tunes the model's forward, backward and
decode products, a few seconds each; TRITONMM_AUTOTUNE=0 times the untuned default configs instead.

--compile adds a third row, compiled, for the training step and the prefill (--compile all: decode too): each
variant's step compiled by torch.compile (default mode, fullgraph) and warmed up (its first call compiles),
aten's with tritonmm off, use_tritonmm's inside use_tritonmm() (inductor's graph pass puts tritonmm's operators
in place of aten's products, docs/compile.md), swap_linears' with tritonmm off (its Linear layers call
tritonmm's operators themselves). Timed as the eager rows are, in interleaved rounds; rel diff against aten's
compiled step (the loss, with the gradients' relative difference over every parameter beside it, or the
logits); and the GEMM kernels one profiled call of each ran: cuBLAS / CUTLASS kernels and inductor's GEMM
templates (other) against tritonmm's own (kernel_kind).

Each compiled variant gets a function of its own code object (own_code). Dynamo keeps compiled graphs on
the code object of the function it compiles, and its guards know nothing of the switch, so compiling the
same function under both settings would reuse the first graph without torch._dynamo.reset(); a reset
between the two compiles would drop the first one's graph as well, which the interleaved rounds still
call. Distinct code objects keep both, each compiled under its own setting; fullgraph=True, so that no
part of the model is left to a frame of its own code (model.forward's), which the variants would share.
Inductor's FX graph cache and AOTAutograd's key graphs by tritonmm's pass uuid, so neither hands one
setting's graph to the other. Dynamo is reset before and after each step's compiled row.
"""
import argparse
import contextlib
import copy
import json
import math
import statistics
import sys
import time
import traceback
import types
from pathlib import Path

import torch
import torch.nn.functional as F
from tabulate import tabulate

import tritonmm

from . import report
from .common import rel_err
from .model import LLAMA3_8B_WIDTHS, LlamaLike, make_batch, make_caches
from .progress import Steps, phase

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}  # the first is the default
LAYERS = 2
# (batch, tokens) of each step: training on 4096 tokens; a prefill of the same 4096 (its products share the
# training forward's tuning); decoding one token for 8 sequences after 1024 tokens each.
TRAIN, PREFILL, DECODE, PAST = (2, 2048), (4, 1024), (8, 1), 1024
STEPS = ("train", "prefill", "decode")
VARIANTS = ("aten", "swap_linears", "use_tritonmm")
BUDGET_S = 0.3  # wall time one measurement aims at
# A decode step is host-bound, and the host's speed drifts within one process: shorter measurements in more
# rounds spread that drift evenly over the variants (design.md: decode-rounds).
SHORT_STEPS, SHORT_ROUNDS, SHORT_BUDGET_S = ("decode",), 15, 0.05
# The steps --compile compiles when given alone (a compile of each variant: 10-30 s each at Llama-3-8B's
# widths, the training step's forward and backward the longest); --compile all adds decode.
COMPILE_STEPS = ("train", "prefill")
COMPILE_WARMUP = 3  # calls of each compiled step before its timing: the first compiles (and tunes new products)
# The kernels of tritonmm's own (tritonmm/kernels), by the names Triton gives them.
TRITONMM_KERNELS = ("gemm_kernel", "gemm_tma_kernel", "gemv_kernel", "split_k_reduce_kernel", "copy_kernel",
                    "gluon_gemm_kernel")
# Other products' kernels, by marks in their (lower-cased) names: cuBLAS (nvjet_*, sm90_xmma_gemm_*,
# ampere_*gemm*, gemv2T_kernel, splitKreduce_kernel, cublasLt's), CUTLASS, inductor's GEMM templates
# (triton_tem_*, max-autotune's).
GEMM_MARKS = ("gemm", "gemv", "xmma", "nvjet", "cutlass", "cublas", "splitkreduce", "triton_tem")
# Kernels that carry a GEMM mark without being products of the model's: attention's (flash attention's
# names hold cutlass types, memory-efficient attention is fmha_cutlass*, cuDNN's holds sdpa), and inductor's
# fused pointwise, reduction and foreach kernels, named after the ops they fuse.
NOT_GEMM_MARKS = ("flash", "fmha", "attention", "sdpa", "triton_poi", "triton_red", "triton_per", "triton_for")


def step_rounds(step: str, rounds: int) -> tuple:
    """(rounds, budget_s a measurement) of a step's timing: SHORT_STEPS' at least SHORT_ROUNDS of SHORT_BUDGET_S."""
    return (max(rounds, SHORT_ROUNDS), SHORT_BUDGET_S) if step in SHORT_STEPS else (rounds, BUDGET_S)


def wall_ms(fn, budget_s: float = BUDGET_S) -> float:
    """ms per fn() over back-to-back calls, synchronized at both ends: about budget_s of them (3 to 200
    calls), sized from one timed call."""
    def timed(calls):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        return (time.perf_counter() - start) / calls
    return 1e3 * timed(max(3, min(200, int(budget_s / max(timed(1), 1e-6)))))


def capture(fn):
    """A CUDA graph of one fn(), warmed on a side stream first (three calls, as torch's whole-network capture
    does, so that lazy set-up, the allocator's pools and a training step's .grad tensors settle outside it);
    returns its replay. fn must return nothing that holds an autograd graph (step_fn detaches the loss)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay


def failure(name: str, what: str, error: Exception) -> str:
    """Why variant name's step failed (what: "not captured in a CUDA graph", "not compiled", ...), for its row:
    the error's type and first line. The whole traceback goes to stderr, so that a step that fails is never
    only a missing number."""
    reason = f"{type(error).__name__}: {(str(error).strip().splitlines() or [''])[0][:200]}"
    print(f"{name} {what}:\n"
          + "".join(traceback.format_exception(type(error), error, error.__traceback__)), file=sys.stderr, flush=True)
    return reason


def capture_failure(name: str, error: Exception) -> str:
    """Why variant name's step was not captured, for the graph row (failure)."""
    return failure(name, "not captured in a CUDA graph", error)


def swapped_copy(model: torch.nn.Module) -> torch.nn.Module:
    """A copy of model with its nn.Linear layers swapped for tritonmm's (tritonmm.nn.swap_linears): the modules
    copied, the parameters shared, so the copy costs no weight memory and computes with the same weights."""
    copied = copy.deepcopy(model, memo={id(p): p for p in model.parameters()})
    tritonmm.nn.swap_linears(copied)
    return copied


def models(dtype, widths=LLAMA3_8B_WIDTHS, layers=LAYERS):
    """{variant: (model, context manager factory)}: aten's LlamaLike of those widths and layers, its swapped_copy,
    and the same model under use_tritonmm()."""
    torch.manual_seed(0)
    base = LlamaLike(**widths, layers=layers).cuda().to(dtype)
    return {"aten": (base, contextlib.nullcontext), "swap_linears": (swapped_copy(base), contextlib.nullcontext),
            "use_tritonmm": (base, tritonmm.use_tritonmm)}


def step_fn(step: str, model, inputs):
    """fn() running one step of model on inputs (make_inputs), returning what the step computes: the loss, or
    the logits."""
    if step == "train":
        idx, targets = inputs

        def train():
            # Grads to None first, as torch's whole-network capture does before capturing: backward then
            # allocates them (from the graph's private pool when captured), and a replay refills them in place.
            model.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(idx).float().flatten(0, 1), targets.flatten())
            loss.backward()
            # Detached, so that nothing the step returns keeps its autograd graph alive: a live graph keeps
            # each parameter's AccumulateGrad node, which the next backward reuses on the stream that made it.
            # The eager call's (default stream) reused on capture's stream syncs with the default stream and
            # breaks the capture, for every variant, as they share the parameters.
            return loss.detach()
        return train

    @torch.no_grad()
    def infer():
        return model(inputs[0], caches=inputs[1], last_only=step == "prefill")
    return infer


def make_inputs(step: str, model, vocab: int) -> tuple:
    """The step's inputs: (tokens, targets) for training, (tokens, None) for a prefill, (one token per
    sequence, caches of PAST tokens) for decoding; drawn from one seed."""
    gen = torch.Generator().manual_seed(1)
    if step == "train":
        return make_batch(*TRAIN, vocab, "cuda", gen)
    if step == "prefill":
        return make_batch(*PREFILL, vocab, "cuda", gen)[0], None
    return make_batch(*DECODE, vocab, "cuda", gen)[0], make_caches(model, DECODE[0], PAST, gen)


def measure_step(step: str, variants: dict, rounds: int, progress) -> list:
    """Two rows (eager, graph) for one step: {variant: ms}, the other variants' rel diff against aten's result;
    the graph row's not_captured holds {variant: why} for each variant whose capture failed (its note says
    the same, the table shows it, stderr has the traceback)."""
    aten_model = variants["aten"][0]
    inputs = make_inputs(step, aten_model, aten_model.head.out_features)
    rounds, budget = step_rounds(step, rounds)
    fns, results, graphs, failed = {}, {}, {}, {}
    for name, (model, context) in variants.items():
        progress.step(f"{step}: {name}, eager warm-up (tunes new products) and graph capture")
        fns[name] = step_fn(step, model, inputs)
        with context():
            results[name] = fns[name]().detach().float().clone()  # also tunes what tritonmm has not met
            try:
                graphs[name] = capture(fns[name])
            except Exception as e:  # the eager row stands without it; the graph row says why
                failed[name] = capture_failure(name, e)
    diff = {name: rel_err(results[name], results["aten"].double()) for name in variants if name != "aten"}
    times = {(kind, name): [] for kind in ("eager", "graph") for name in variants}
    progress.step(f"{step}: {rounds} interleaved round(s)")
    for _ in range(rounds):
        for name, (model, context) in variants.items():
            with context():
                times["eager", name].append(wall_ms(fns[name], budget))
            if name in graphs:
                times["graph", name].append(wall_ms(graphs[name], budget))
    rows = []
    for kind in ("eager", "graph"):
        ms = {name: statistics.median(t) for (k, name), t in times.items() if k == kind and t}
        graph = kind == "graph"
        rows.append(dict(step=step, kind=kind, ms=ms, rel_diff=diff, not_captured=dict(failed) if graph else {},
                         note="; ".join(f"{name} not captured: {why}" for name, why in failed.items()) if graph else ""))
    return rows


def compile_steps(text: str) -> str:
    """--compile's value (argparse's type): steps of STEPS, comma-separated, or "all"; returns them in STEPS'
    order, comma-joined ("train,prefill")."""
    names = list(STEPS) if text.strip() == "all" else [t.strip() for t in text.split(",") if t.strip()]
    unknown = [n for n in names if n not in STEPS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"takes steps of {', '.join(STEPS)}, comma-separated, or all; got {text!r}")
    return ",".join(step for step in STEPS if step in names)


def own_code(fn, name: str):
    """fn as a new function whose code object is its own (a copy of fn's, named name): dynamo keeps compiled
    graphs on the code object, so each such function compiles, and keeps, its own graphs.

    Why this and not torch._dynamo.reset() between the variants: dynamo's cache of compiled frames lives on
    the code object (PEP 523's co_extra slot, torch 2.0 onwards, 2.11 to 2.14 included), and the callable
    torch.compile returns holds no graph of its own, only the frame hook; reset() empties every code object's
    cache, so the variants compiled before it would compile again at their next call: in the timed rounds,
    their compile timed as a step. code.replace gives a new code object with an empty co_extra, so each
    variant's first call compiles under its own setting and its later calls find that graph, whatever was
    compiled between (its guards see the model, the inputs and grad mode, not tritonmm's switch, which is
    why aten's and use_tritonmm's steps, the same model on the same inputs, must not share a code object).
    On torch 2.11 aten's and use_tritonmm's steps each compiled a graph of their own (the run where
    swap_linears failed to trace), on 2.14 all three did; tests/test_bench.py's test_model_compiled_row
    counts them, each with the switch as it was at its compile."""
    code = fn.__code__.replace(co_name=name, **({"co_qualname": name} if hasattr(fn.__code__, "co_qualname") else {}))
    return types.FunctionType(code, fn.__globals__, name, fn.__defaults__, fn.__closure__)


def compiled_step_fn(step: str, model, inputs, name: str, backend: str = "inductor"):
    """step_fn's step with the model's part compiled by torch.compile (default mode, fullgraph=True, backend),
    in a function of its own code object (own_code, named name): training compiles the forward and the
    cross-entropy (AOTAutograd compiles their backward with them) and calls backward on the loss; prefill and
    decode compile the forward, called without gradients. Nothing compiles before the first call, which
    compiles under the tritonmm setting in force then."""
    if step == "train":
        idx, targets = inputs

        def loss_of(idx, targets):
            return F.cross_entropy(model(idx).float().flatten(0, 1), targets.flatten())
        compiled = torch.compile(own_code(loss_of, name), backend=backend, fullgraph=True)

        def train():
            model.zero_grad(set_to_none=True)  # as step_fn's training step
            loss = compiled(idx, targets)
            loss.backward()
            return loss.detach()
        return train
    last_only = step == "prefill"

    def forward(idx, caches):
        return model(idx, caches=caches, last_only=last_only)
    compiled = torch.compile(own_code(forward, name), backend=backend, fullgraph=True)

    @torch.no_grad()
    def infer():
        return compiled(*inputs)
    return infer


def grad_rel_diff(model, reference: list) -> float:
    """||g - r|| / ||r|| over every parameter's gradient g of model at once (Frobenius), against reference (the
    gradients r, in model.parameters() order); inf where one has a gradient the other lacks, or it is not
    finite."""
    num = den = 0.0
    for p, r in zip(model.parameters(), reference):
        if (p.grad is None) != (r is None):
            return float("inf")
        if r is not None:
            num += torch.linalg.vector_norm(p.grad.float() - r.float(), dtype=torch.float64).item() ** 2
            den += torch.linalg.vector_norm(r.float(), dtype=torch.float64).item() ** 2
    diff = math.sqrt(num) / max(math.sqrt(den), 1e-300)
    return diff if math.isfinite(diff) else float("inf")


def kernel_kind(name: str) -> str | None:
    """What a device kernel's name says it is: "tritonmm" (one of tritonmm's kernels), "gemm" (another
    library's product: cuBLAS, CUTLASS, inductor's GEMM templates) or None (anything else: attention,
    inductor's fused pointwise and reduction kernels, aten's elementwise ones)."""
    if name.startswith(TRITONMM_KERNELS):
        return "tritonmm"
    low = name.lower()
    if any(mark in low for mark in NOT_GEMM_MARKS):
        return None
    return "gemm" if any(mark in low for mark in GEMM_MARKS) else None


def device_kernels(fn) -> list:
    """The names of the device kernels one fn() runs, one per launch (torch.profiler); none on a CPU."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities) as profile:
        fn()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
    return [e.name for e in profile.events() if e.device_type == torch.autograd.DeviceType.CUDA]


def gemm_kernels(names: list) -> dict:
    """{other: launches of other libraries' GEMM kernels, tritonmm: launches of tritonmm's, other_names: the
    other GEMM kernels' names (sorted, each once)} among names (kernel_kind)."""
    kinds = [kernel_kind(n) for n in names]
    return dict(other=kinds.count("gemm"), tritonmm=kinds.count("tritonmm"),
                other_names=sorted({n for n, k in zip(names, kinds) if k == "gemm"}))


def measure_compiled(step: str, variants: dict, rounds: int, progress, backend: str = "inductor") -> dict:
    """The compiled row of one step: each variant's step compiled (compiled_step_fn, under its own context,
    tritonmm's switch for use_tritonmm) and warmed up, then {variant: ms} of interleaved rounds; rel_diff
    against aten's compiled result (the loss or the logits) and, for training, grad_diff: the gradients'
    (grad_rel_diff); kernels: {variant: [other GEMM launches, tritonmm launches]} of one profiled call
    (gemm_kernels; other_gemms names the other ones); first_call_s: seconds of each variant's first call (the
    compile, and tritonmm's tuning of products it has not met). A variant that does not compile (or profile) is in
    not_compiled (not_profiled) with why; its note says so, and stderr has the traceback."""
    aten_model = variants["aten"][0]
    inputs = make_inputs(step, aten_model, aten_model.head.out_features)
    rounds, budget = step_rounds(step, rounds)
    torch._dynamo.reset()  # nothing compiled earlier in the process is reused (see the module's docstring)
    fns, results, failed, grad_diff, reference, first_s = {}, {}, {}, {}, None, {}
    for name, (model, context) in variants.items():
        progress.step(f"{step}: {name}, torch.compile and {COMPILE_WARMUP} warm-up calls (the first compiles)")
        try:
            with context():
                fn = compiled_step_fn(step, model, inputs, f"{step}_{name}", backend)
                start = time.perf_counter()
                for i in range(COMPILE_WARMUP):
                    out = fn()
                    if i == 0:
                        if torch.cuda.is_available():
                            torch.cuda.synchronize()
                        first_s[name] = round(time.perf_counter() - start, 1)
                results[name] = out.detach().float().clone()
        except Exception as e:  # the other variants' numbers stand without it; the row says why
            failed[name] = failure(name, f"not compiled ({step})", e)
            continue
        fns[name] = fn
        if step == "train":  # the gradients the variant's warm-up left, against aten's compiled ones
            if name == "aten":
                reference = [None if p.grad is None else p.grad.detach().clone() for p in model.parameters()]
            elif reference is not None:
                grad_diff[name] = grad_rel_diff(model, reference)
    del reference
    diff = {name: rel_err(out, results["aten"]) for name, out in results.items() if name != "aten"} \
        if "aten" in results else {}
    times = {name: [] for name in fns}
    progress.step(f"{step}: compiled, {rounds} interleaved round(s)")
    for _ in range(rounds):
        for name, fn in fns.items():
            with variants[name][1]():
                times[name].append(wall_ms(fn, budget))
    progress.step(f"{step}: compiled, the GEMM kernels of one profiled call of each variant")
    kernels, other_gemms, unprofiled = {}, {}, {}
    for name, fn in fns.items():
        try:
            with variants[name][1]():
                counts = gemm_kernels(device_kernels(fn))
        except Exception as e:
            unprofiled[name] = failure(name, f"not profiled ({step}, compiled)", e)
            continue
        kernels[name] = [counts["other"], counts["tritonmm"]]
        other_gemms[name] = counts["other_names"]
        if name != "aten" and counts["other"]:
            print(f"{name}'s compiled {step} ran {counts['other']} other GEMM kernel(s): "
                  + ", ".join(n[:120] for n in counts["other_names"]), file=sys.stderr, flush=True)
    fns.clear()
    torch._dynamo.reset()  # the compiled graphs go with the step
    note = "; ".join([f"{name} not compiled: {why}" for name, why in failed.items()]
                     + [f"{name} not profiled: {why}" for name, why in unprofiled.items()])
    return dict(step=step, kind="compiled", ms={name: statistics.median(t) for name, t in times.items() if t},
                rel_diff=diff, grad_diff=grad_diff, kernels=kernels, other_gemms=other_gemms, first_call_s=first_s,
                not_compiled=failed, not_profiled=unprofiled, note=note)


def table(rows: list) -> str:
    """One line per (step, eager, graph or compiled): ms of each variant and aten's time over each tritonmm
    variant's, the variants' rel diff against aten's; where a compiled row is among rows, two more columns: the
    gradients' rel diff (compiled training) and the GEMM kernels each variant ran (other libraries' / tritonmm's
    launches in one profiled call)."""
    def cell(r, name):
        ms = r["ms"].get(name)
        if ms is None:
            return "-"
        return f"{ms:.2f}" if name == "aten" or "aten" not in r["ms"] else f"{ms:.2f} (x{r['ms']['aten'] / ms:.2f})"

    def diffs(values):
        return " / ".join(f"{values[name]:.1e}" if name in values else "-" for name in VARIANTS[1:]) if values else ""

    def kernels(r):
        counts = r.get("kernels")
        if counts is None:
            return ""
        return " | ".join(f"{counts[name][0]}/{counts[name][1]}" if name in counts else "-" for name in VARIANTS)
    shapes = {"train": f"{TRAIN[0]}x{TRAIN[1]} tokens", "prefill": f"{PREFILL[0]}x{PREFILL[1]} tokens",
              "decode": f"{DECODE[0]} x 1 token after {PAST}"}
    compiled = any(r["kind"] == "compiled" for r in rows)
    headers = ["step", "batch", "run", "aten ms", "swap_linears ms (x aten)", "use_tritonmm ms (x aten)",
               "rel diff swap / use"]
    if compiled:
        headers += ["grad rel diff swap / use", "GEMM kernels other/tritonmm: aten | swap | use"]
    lines = []
    for r in rows:
        line = [r["step"], shapes[r["step"]], r["kind"], *(cell(r, name) for name in VARIANTS), diffs(r["rel_diff"])]
        if compiled:
            line += [diffs(r.get("grad_diff") or {}), kernels(r)]
        lines.append(line + [r["note"] or ""])
    return tabulate(lines, headers=headers + ["note"], disable_numparse=True)


def run(args, meta: dict) -> int:
    """The preset: builds the model, measures every step, prints the table; model.json and RESULTS.md under
    --out."""
    dtype = (args.dtype or list(DTYPES))[0]
    variants = models(DTYPES[dtype])
    compiled = tuple(args.compile.split(",")) if getattr(args, "compile", None) else ()  # --compile's steps
    meta = dict(meta, rounds=args.rounds, dtype=dtype, widths=LLAMA3_8B_WIDTHS, layers=LAYERS, compiled=compiled,
                steps=dict(train=TRAIN, prefill=PREFILL, decode=dict(batch=DECODE[0], past=PAST)))
    progress = Steps(len(STEPS) * (len(VARIANTS) + 1) + len(compiled) * (len(VARIANTS) + 2), "model")
    rows = []
    for step in STEPS:
        with phase(f"model: {step}", meta["phases"]):
            rows += measure_step(step, variants, args.rounds, progress)
        variants["aten"][0].zero_grad(set_to_none=True)  # the weights all variants share: the training step's grads
        torch.cuda.empty_cache()  # go, with the step's graphs and activations, before the next step
        if step in compiled:
            with phase(f"model: {step}, compiled", meta["phases"]):
                rows.append(measure_compiled(step, variants, args.rounds, progress))
            variants["aten"][0].zero_grad(set_to_none=True)
            torch.cuda.empty_cache()
    text = table(rows)
    print(f"\n{meta['gpu']}, torch {meta['torch']}, triton {meta['triton']}, {meta['date']}; LlamaLike at "
          f"Llama-3-8B widths ({', '.join(f'{k} {v}' for k, v in LLAMA3_8B_WIDTHS.items())}), {LAYERS} layers, "
          f"{dtype}; tritonmm {meta['tritonmm_configs']}; native dispatch {meta.get('native_dispatch', '?')}; "
          f"ms per step, wall time of back-to-back steps, medians "
          f"of {args.rounds} interleaved round(s) ({', '.join(SHORT_STEPS)}: at least {SHORT_ROUNDS} of "
          f"{SHORT_BUDGET_S} s); rel diff: of the loss (train) or logits against aten's"
          + ("; compiled: torch.compile (default mode, fullgraph) of each variant's step, rel diffs against aten's "
             "compiled step, grad rel diff over every parameter's gradient, GEMM kernels: launches of cuBLAS, "
             "CUTLASS and inductor GEMM kernels / of tritonmm's in one profiled call" if compiled else "") + "\n")
    print(text)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "model.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
        page = report.write_page(out, meta, [("LlamaLike, aten against tritonmm", text, "text")])
        print(f"wrote {out / 'model.json'}\nwrote {page}")
    return 0
