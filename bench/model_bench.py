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
"""
import contextlib
import copy
import json
import statistics
import sys
import time
import traceback
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


def capture_failure(name: str, error: Exception) -> str:
    """Why variant name's step was not captured, for the graph row: the error's type and first line. The whole
    traceback goes to stderr, so that a capture that fails is never only a missing number."""
    reason = f"{type(error).__name__}: {(str(error).strip().splitlines() or [''])[0][:200]}"
    print(f"{name} not captured in a CUDA graph:\n"
          + "".join(traceback.format_exception(type(error), error, error.__traceback__)), file=sys.stderr, flush=True)
    return reason


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
                times["eager", name].append(wall_ms(fns[name]))
            if name in graphs:
                times["graph", name].append(wall_ms(graphs[name]))
    rows = []
    for kind in ("eager", "graph"):
        ms = {name: statistics.median(t) for (k, name), t in times.items() if k == kind and t}
        graph = kind == "graph"
        rows.append(dict(step=step, kind=kind, ms=ms, rel_diff=diff, not_captured=dict(failed) if graph else {},
                         note="; ".join(f"{name} not captured: {why}" for name, why in failed.items()) if graph else ""))
    return rows


def table(rows: list) -> str:
    """One line per (step, eager or graph): ms of each variant and aten's time over each tritonmm variant's."""
    def cell(r, name):
        ms = r["ms"].get(name)
        if ms is None:
            return "-"
        return f"{ms:.2f}" if name == "aten" or "aten" not in r["ms"] else f"{ms:.2f} (x{r['ms']['aten'] / ms:.2f})"
    shapes = {"train": f"{TRAIN[0]}x{TRAIN[1]} tokens", "prefill": f"{PREFILL[0]}x{PREFILL[1]} tokens",
              "decode": f"{DECODE[0]} x 1 token after {PAST}"}
    return tabulate([[r["step"], shapes[r["step"]], r["kind"], *(cell(r, name) for name in VARIANTS),
                      " / ".join(f"{d:.1e}" for d in r["rel_diff"].values()), r["note"] or ""] for r in rows],
                    headers=["step", "batch", "run", "aten ms", "swap_linears ms (x aten)", "use_tritonmm ms (x aten)",
                             "rel diff swap / use", "note"], disable_numparse=True)


def run(args, meta: dict) -> int:
    """The preset: builds the model, measures every step, prints the table; model.json and RESULTS.md under
    --out."""
    dtype = (args.dtype or list(DTYPES))[0]
    variants = models(DTYPES[dtype])
    meta = dict(meta, rounds=args.rounds, dtype=dtype, widths=LLAMA3_8B_WIDTHS, layers=LAYERS,
                steps=dict(train=TRAIN, prefill=PREFILL, decode=dict(batch=DECODE[0], past=PAST)))
    progress = Steps(len(STEPS) * (len(VARIANTS) + 1), "model")
    rows = []
    for step in STEPS:
        with phase(f"model: {step}", meta["phases"]):
            rows += measure_step(step, variants, args.rounds, progress)
        variants["aten"][0].zero_grad(set_to_none=True)  # the weights all variants share: the training step's grads
        torch.cuda.empty_cache()  # go, with the step's graphs and activations, before the next step
    text = table(rows)
    print(f"\n{meta['gpu']}, torch {meta['torch']}, triton {meta['triton']}, {meta['date']}; LlamaLike at "
          f"Llama-3-8B widths ({', '.join(f'{k} {v}' for k, v in LLAMA3_8B_WIDTHS.items())}), {LAYERS} layers, "
          f"{dtype}; tritonmm {meta['tritonmm_configs']}; ms per step, wall time of back-to-back steps, medians "
          f"of {args.rounds} interleaved round(s); rel diff: of the loss (train) or logits against aten's\n")
    print(text)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "model.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
        page = report.write_page(out, meta, [("LlamaLike, aten against tritonmm", text, "text")])
        print(f"wrote {out / 'model.json'}\nwrote {page}")
    return 0
