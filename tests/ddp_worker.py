"""One DistributedDataParallel training step of bench/model.py's TinyGPT, aten against tritonmm.

Run by tests/test_nn.py::test_multigpu_ddp_step_matches_aten, with the repository on
PYTHONPATH:

    python -m torch.distributed.run --standalone --nproc-per-node 2 tests/ddp_worker.py

Each rank drives one GPU over NCCL. Every rank builds the same model from one seed and
draws its own batch, so DDP's gradient all-reduce averages different gradients. The step
runs twice from the same initial weights: once on aten, once on tritonmm (swap_linears for
the linear layers, use_tritonmm() for attention's bmm). float32 runs IEEE, so the two must
agree to float32 rounding: loss within 1e-4 and every parameter's all-reduced gradient
within 1e-3, relative. Rank 0 prints ``DDP_OK ...``; a failed check fails every rank, and
torchrun then exits non-zero.
"""
import copy
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

import tritonmm
from bench.model import TinyGPT, loss_and_grads, make_batch

LOSS_BOUND, GRAD_BOUND = 1e-4, 1e-3


def rel(out: torch.Tensor, ref: torch.Tensor) -> float:
    return ((out.double() - ref.double()).norm() / ref.double().norm().clamp_min(1e-300)).item()


def global_max(value: float, device) -> float:
    """The largest of every rank's value, known on every rank."""
    t = torch.tensor(value, dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def main() -> None:
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    dist.init_process_group("nccl", device_id=device)
    torch.backends.cuda.matmul.fp32_precision = "ieee"
    try:
        torch.manual_seed(0)
        model = TinyGPT().to(device)
        batch = make_batch(4, 32, 256, device, torch.Generator().manual_seed(1000 + dist.get_rank()))

        aten = DistributedDataParallel(copy.deepcopy(model), device_ids=[local_rank])
        loss, grads = loss_and_grads(aten, *batch)

        swapped = copy.deepcopy(model)
        tritonmm.nn.swap_linears(swapped)
        ours = DistributedDataParallel(swapped, device_ids=[local_rank])
        with tritonmm.use_tritonmm():
            our_loss, our_grads = loss_and_grads(ours, *batch)

        loss_diff = global_max(rel(our_loss, loss), device)
        grad_rel = global_max(max(rel(our_grads[name], grad) for name, grad in grads.items()), device)
        assert loss_diff < LOSS_BOUND and grad_rel < GRAD_BOUND, (
            f"tritonmm disagrees with aten: loss rel {loss_diff:.3e} (bound {LOSS_BOUND}), "
            f"grad rel {grad_rel:.3e} (bound {GRAD_BOUND})")
        if dist.get_rank() == 0:
            print(f"DDP_OK max_loss_diff={loss_diff:.3e} max_grad_rel={grad_rel:.3e}", flush=True)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
