"""Models in plain torch modules, the model-level examples of tritonmm: a small GPT (TinyGPT) and a
Llama-like decoder (LlamaLike: RMSNorm, grouped-query attention, a SwiGLU MLP; LLAMA3_8B_WIDTHS gives
Llama-3-8B's widths, bench/model_bench.py times it).

The models know nothing of tritonmm. Their products reach tritonmm either way it offers:

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

# Llama-3-8B's widths (its 32000-token vocabulary is Llama-2's and Mistral-7B's; Llama-3's is 128256), for
# LlamaLike(**LLAMA3_8B_WIDTHS, layers=...): q and o 4096x4096, k and v 1024x4096 (8 KV heads of 128),
# gate and up 14336x4096, down 4096x14336, the head 32000x4096.
LLAMA3_8B_WIDTHS = dict(vocab=32000, width=4096, heads=32, kv_heads=8, hidden=14336)


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


class RMSNorm(nn.Module):
    """x / rms(x) * weight, the mean square taken in float32 whatever x's dtype (as Llama's)."""

    def __init__(self, width: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps)
        return (x.float() * scale).to(x.dtype) * self.weight


class GroupedQueryAttention(nn.Module):
    """Causal attention with fewer key/value heads than query heads (each KV head serves heads // kv_heads
    query heads), bias-free projections, through scaled_dot_product_attention as Llama-style models run it:
    its products stay inside the attention kernel, so the projections are the products tritonmm gets. No
    rotary embedding: it holds no product, and every implementation timed would pay for it alike."""

    def __init__(self, width: int, heads: int, kv_heads: int):
        super().__init__()
        if width % heads or heads % kv_heads:
            raise ValueError(f"width {width}, heads {heads} and kv_heads {kv_heads} must divide evenly")
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, width // heads
        self.q = nn.Linear(width, width, bias=False)
        self.k = nn.Linear(width, kv_heads * self.head_dim, bias=False)
        self.v = nn.Linear(width, kv_heads * self.head_dim, bias=False)
        self.o = nn.Linear(width, width, bias=False)

    def forward(self, x: torch.Tensor, cache=None) -> torch.Tensor:
        """x (B, T, width). cache: (keys, values), each (B, kv_heads, past, head_dim), that the T new tokens
        attend to besides themselves (decoding: T is one token, past the context); None for a causal pass
        over x alone."""
        B, T, C = x.shape
        q = self.q(x).view(B, T, self.heads, self.head_dim).transpose(1, 2)
        k, v = (proj(x).view(B, T, self.kv_heads, self.head_dim).transpose(1, 2) for proj in (self.k, self.v))
        if cache is not None:
            k, v = torch.cat((cache[0], k), dim=2), torch.cat((cache[1], v), dim=2)
        # With a cache the new tokens see all of it: causal masking only over x alone (one token needs none).
        y = F.scaled_dot_product_attention(q, k, v, is_causal=cache is None, enable_gqa=True)
        return self.o(y.transpose(1, 2).reshape(B, T, C))


class SwiGLU(nn.Module):
    """down(silu(gate(x)) * up(x)): Llama's MLP, bias-free."""

    def __init__(self, width: int, hidden: int):
        super().__init__()
        self.gate = nn.Linear(width, hidden, bias=False)
        self.up = nn.Linear(width, hidden, bias=False)
        self.down = nn.Linear(hidden, width, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.gate(x)) * self.up(x))


class LlamaBlock(nn.Module):
    """Pre-RMSNorm block: x + attention(norm(x)), then x + mlp(norm(x))."""

    def __init__(self, width: int, heads: int, kv_heads: int, hidden: int):
        super().__init__()
        self.norm1, self.norm2 = RMSNorm(width), RMSNorm(width)
        self.attn = GroupedQueryAttention(width, heads, kv_heads)
        self.mlp = SwiGLU(width, hidden)

    def forward(self, x: torch.Tensor, cache=None) -> torch.Tensor:
        x = x + self.attn(self.norm1(x), cache)
        return x + self.mlp(self.norm2(x))


class LlamaLike(nn.Module):
    """Token embeddings, ``layers`` LlamaBlocks, a final RMSNorm and a bias-free head: a Llama-style decoder
    (no rotary embedding; see GroupedQueryAttention). It holds 7 * layers + 1 nn.Linear modules."""

    def __init__(self, vocab=256, width=64, heads=4, kv_heads=2, hidden=172, layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, width)
        self.blocks = nn.ModuleList(LlamaBlock(width, heads, kv_heads, hidden) for _ in range(layers))
        self.norm = RMSNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)

    def forward(self, idx: torch.Tensor, caches=None, last_only: bool = False) -> torch.Tensor:
        """Token ids (B, T) -> logits (B, T, vocab), or (B, 1, vocab) for the last token only (last_only: what
        serving a prompt needs). caches: one (keys, values) per block (make_caches), or None."""
        x = self.tok(idx)
        for block, cache in zip(self.blocks, caches or [None] * len(self.blocks)):
            x = block(x, cache)
        if last_only:
            x = x[:, -1:]
        return self.head(self.norm(x))


def make_caches(model: LlamaLike, batch: int, past: int, generator=None) -> list:
    """A random (keys, values) cache of ``past`` tokens for each block of model, on its device and in its
    dtype: what decoding one token after a prompt of that length reads."""
    param = model.head.weight
    attn = model.blocks[0].attn
    shape = (batch, attn.kv_heads, past, attn.head_dim)
    return [tuple(torch.randn(shape, generator=generator).to(param.device, param.dtype) for _ in range(2))
            for _ in model.blocks]


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
