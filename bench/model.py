"""A small GPT-style model in plain torch modules: the model-level example of tritonmm.

The model knows nothing of tritonmm. Its products reach tritonmm either way it offers:

    tritonmm.nn.swap_linears(model)     # its nn.Linear layers become tritonmm Linear layers
    with tritonmm.use_tritonmm():       # aten mm/addmm/bmm, attention's bmm included, run on tritonmm
        loss, grads = loss_and_grads(model, *make_batch(4, 32, 256, "cuda"))

The tests compare its loss and gradients with and without tritonmm (tests/test_nn.py,
tests/ddp_worker.py). Weights are random (torch's default initialisation under the caller's
seed): nothing is downloaded, and agreement, not what the model predicts, is the point.
"""
import torch
import torch.nn.functional as F
from torch import nn


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention written as explicit products, so that its q @ k.T and
    weights @ v reach aten's bmm (scaled_dot_product_attention would hide them in one kernel)."""

    def __init__(self, width: int, heads: int, seq: int):
        super().__init__()
        if width % heads:
            raise ValueError(f"width {width} is not a multiple of heads {heads}")
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        # Not persistent: the mask follows from seq and stays out of the state_dict.
        self.register_buffer("causal", torch.ones(seq, seq, dtype=torch.bool).tril(), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        # (B, T, 3 * C) -> three (B, heads, T, head_dim) tensors
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-2, -1)) * q.shape[-1] ** -0.5
        scores = scores.masked_fill(~self.causal[:T, :T], float("-inf"))
        y = scores.softmax(dim=-1) @ v
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    """Pre-LayerNorm transformer block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, width: int, heads: int, seq: int, mlp_ratio: int):
        super().__init__()
        self.ln1 = nn.LayerNorm(width)
        self.attn = CausalSelfAttention(width, heads, seq)
        self.ln2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(
            nn.Linear(width, mlp_ratio * width),
            nn.GELU(approximate="tanh"),
            nn.Linear(mlp_ratio * width, width),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    """Token and position embeddings, ``layers`` blocks, a final LayerNorm and a linear head.
    It holds 4 * layers + 1 nn.Linear modules; sequences are at most ``seq`` tokens."""

    def __init__(self, vocab=256, width=64, heads=4, layers=2, seq=32, mlp_ratio=4):
        super().__init__()
        self.tok = nn.Embedding(vocab, width)
        self.pos = nn.Embedding(seq, width)
        self.blocks = nn.ModuleList(Block(width, heads, seq, mlp_ratio) for _ in range(layers))
        self.ln_f = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        """Token ids (B, T) -> logits (B, T, vocab)."""
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def make_batch(batch: int, seq: int, vocab: int, device, generator=None):
    """(idx, targets), both (batch, seq) int64 on ``device``, targets being idx shifted by one.
    Drawn on the CPU, so one generator seed gives the same batch on every device."""
    tokens = torch.randint(vocab, (batch, seq + 1), generator=generator)
    return tokens[:, :-1].to(device), tokens[:, 1:].to(device)


def loss_and_grads(model: nn.Module, idx: torch.Tensor, targets: torch.Tensor):
    """One forward, cross-entropy (in float32, whatever the model's dtype) and backward.
    Returns (the loss, detached, and {parameter name: its gradient}); the gradients are
    copies, so a later call on the same model leaves them as they are."""
    model.zero_grad(set_to_none=True)
    logits = model(idx)
    loss = F.cross_entropy(logits.float().flatten(0, 1), targets.flatten())
    loss.backward()
    return loss.detach(), {name: p.grad.detach().clone() for name, p in model.named_parameters()}
