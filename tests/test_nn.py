"""tritonmm.nn.Linear and swap_linears against torch.nn.Linear, and the model-level example
(bench/model.py's TinyGPT) with and without tritonmm, on one GPU and under DDP on two."""
import copy
import os
import pathlib
import subprocess
import sys
from unittest import mock

import pytest
import torch
import torch.nn.functional as F

import tritonmm
from bench.model import TinyGPT, loss_and_grads, make_batch
from tritonmm import planner
from tritonmm.nn import Linear, swap_linears

REPO = pathlib.Path(__file__).resolve().parents[1]
ACTIVATIONS = [None, "relu", "gelu", "gelu_tanh", "silu"]
TORCH_ACTIVATION = {
    None: lambda y: y,
    "relu": F.relu,
    "gelu": F.gelu,
    "gelu_tanh": lambda y: F.gelu(y, approximate="tanh"),
    "silu": F.silu,
}
# Small enough for Triton's interpreter: 9 linear layers, a few dozen launches a step.
SMALL = dict(vocab=64, width=32, heads=4, layers=2, seq=8)


def rel(out: torch.Tensor, ref: torch.Tensor) -> float:
    """Relative Frobenius error of out against ref, in float64."""
    return ((out.double() - ref.double()).norm() / ref.double().norm().clamp_min(1e-300)).item()


def pair(in_features, out_features, bias, activation=None, device="cpu"):
    """A torch.nn.Linear and a tritonmm Linear holding equal (not shared) parameters."""
    ref = torch.nn.Linear(in_features, out_features, bias=bias, device=device)
    ours = Linear(in_features, out_features, bias=bias, device=device, activation=activation)
    ours.load_state_dict(ref.state_dict())
    return ref, ours


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
@pytest.mark.parametrize("lead", [(5,), (2, 3)], ids=["2d", "3d"])
def test_forward_matches_torch_linear(lead, bias, activation, device):
    """Odd feature counts (33 -> 17) and leading dims; under no_grad the activation is fused."""
    ref, ours = pair(33, 17, bias, activation, device)
    x = torch.randn(*lead, 33, device=device)
    with torch.no_grad():
        out = ours(x)
        expected = TORCH_ACTIVATION[activation](ref(x))
    assert out.shape == (*lead, 17)
    assert rel(out, expected) < 1e-5


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_gradients_match_torch_linear(activation, device):
    ref, ours = pair(33, 17, True, activation, device)
    x = torch.randn(2, 3, 33, device=device)
    x_ref, x_ours = x.clone().requires_grad_(), x.clone().requires_grad_()
    grad_out = torch.randn(2, 3, 17, device=device)
    TORCH_ACTIVATION[activation](ref(x_ref)).backward(grad_out)
    ours(x_ours).backward(grad_out)
    assert rel(x_ours.grad, x_ref.grad) < 1e-5
    assert rel(ours.weight.grad, ref.weight.grad) < 1e-5
    assert rel(ours.bias.grad, ref.bias.grad) < 1e-5


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
def test_state_dict_round_trips_both_ways(bias, device):
    """A tritonmm Linear is a torch.nn.Linear: the same keys, loadable strictly either way."""
    ref = torch.nn.Linear(12, 7, bias=bias, device=device)
    ours = Linear(12, 7, bias=bias, device=device, activation="relu")
    assert ours.state_dict().keys() == ref.state_dict().keys()
    ours.load_state_dict(ref.state_dict())
    back = torch.nn.Linear(12, 7, bias=bias, device=device)
    back.load_state_dict(ours.state_dict())
    for name, p in ref.state_dict().items():
        assert torch.equal(ours.state_dict()[name], p) and torch.equal(back.state_dict()[name], p)


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_from_linear_shares_parameters_and_mode(training, bias, device):
    linear = torch.nn.Linear(9, 5, bias=bias, device=device).train(training)
    ours = Linear.from_linear(linear, activation="silu")
    assert ours.training == training
    assert ours.weight is linear.weight and ours.bias is linear.bias  # bias: both None without one
    with torch.no_grad():
        linear.weight.add_(1.0)  # an update through either module shows in the other
        assert torch.equal(ours.weight, linear.weight)
        ours.weight.mul_(0.5)
        assert torch.equal(linear.weight, ours.weight)
        x = torch.randn(4, 9, device=device)
        assert rel(ours(x), F.silu(linear(x))) < 1e-5


def test_swap_linears_keeps_the_model_loss_and_grads(device):
    """The example model, unchanged but for swap_linears: every nn.Linear becomes a tritonmm
    Linear over the same parameters, and loss and gradients agree (fp32 IEEE on the CPU)."""
    torch.manual_seed(0)
    model = TinyGPT(**SMALL).to(device)
    swapped = copy.deepcopy(model)
    linears = sum(type(m) is torch.nn.Linear for m in model.modules())
    assert linears == 4 * SMALL["layers"] + 1
    params = list(swapped.parameters())
    assert swap_linears(swapped) == linears
    assert not any(type(m) is torch.nn.Linear for m in swapped.modules())
    assert sum(isinstance(m, Linear) for m in swapped.modules()) == linears
    assert all(p is q for p, q in zip(swapped.parameters(), params))
    assert swap_linears(swapped) == 0  # tritonmm Linear layers are not swapped again

    batch = make_batch(2, SMALL["seq"], SMALL["vocab"], device, torch.Generator().manual_seed(0))
    loss, grads = loss_and_grads(model, *batch)
    with mock.patch.object(planner, "product", wraps=planner.product) as product:
        swapped_loss, swapped_grads = loss_and_grads(swapped, *batch)
    assert product.call_count >= 3 * linears  # forward, and dx and dW of each layer
    assert rel(swapped_loss, loss) < 1e-4
    assert swapped_grads.keys() == grads.keys()
    for name, grad in grads.items():
        assert rel(swapped_grads[name], grad) < 1e-4, name


def test_bad_arguments():
    with pytest.raises(TypeError, match="torch.nn.Linear"):
        Linear.from_linear(torch.nn.Conv1d(4, 4, 1))
    with pytest.raises(ValueError, match="activation"):
        Linear(4, 4, activation="tanh")
    with pytest.raises(ValueError, match="activation"):
        Linear.from_linear(torch.nn.Linear(4, 4), activation="tanh")
    with pytest.raises(ValueError, match="activation"):
        tritonmm.linear(torch.randn(2, 4), torch.randn(3, 4), activation="tanh")


# (loss bound, per-parameter gradient bound), relative to plain aten on the same GPU.
MODEL_BOUNDS = {torch.bfloat16: (2e-2, 5e-2), torch.float32: (1e-4, 1e-4)}


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", list(MODEL_BOUNDS), ids=str)
def test_gpu_model_example_matches_aten(dtype, monkeypatch):
    """TinyGPT on one GPU three ways from the same weights and batch: plain aten, inside
    use_tritonmm() (every aten product on tritonmm, attention's bmm included) and after
    swap_linears. float32 runs IEEE, so it is held to float32 rounding."""
    monkeypatch.setattr(torch.backends.cuda.matmul, "fp32_precision", "ieee")
    torch.manual_seed(0)
    model = TinyGPT().to("cuda", dtype)
    batch = make_batch(4, 32, 256, "cuda", torch.Generator().manual_seed(0))
    loss, grads = loss_and_grads(model, *batch)

    runs = {}
    with mock.patch.object(planner, "product", wraps=planner.product) as product:
        with tritonmm.use_tritonmm():
            runs["use_tritonmm"] = loss_and_grads(model, *batch)
        assert product.call_count > 0
        swapped = copy.deepcopy(model)
        swap_linears(swapped)
        before = product.call_count
        runs["swap_linears"] = loss_and_grads(swapped, *batch)
        assert product.call_count > before

    loss_bound, grad_bound = MODEL_BOUNDS[dtype]
    for how, (run_loss, run_grads) in runs.items():
        assert rel(run_loss, loss) < loss_bound, how
        for name, grad in grads.items():
            assert rel(run_grads[name], grad) < grad_bound, (how, name)


@pytest.mark.gpu
@pytest.mark.multigpu
def test_multigpu_ddp_step_matches_aten():
    """One DistributedDataParallel step of TinyGPT on two GPUs, aten against tritonmm
    (tests/ddp_worker.py, under torchrun): NCCL's all-reduce of tritonmm's gradients."""
    if torch.cuda.device_count() < 2:
        pytest.skip("needs 2 CUDA GPUs")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        # NVLink multicast (NVLS) stays off on these machines.
        "NCCL_NVLS_ENABLE": "0",
        "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    }
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
           str(REPO / "tests" / "ddp_worker.py")]
    out = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "DDP_OK" in out.stdout, out.stdout[-3000:]
