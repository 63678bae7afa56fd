"""tritonmm.nn.Linear: a drop-in torch.nn.Linear whose forward runs tritonmm.linear."""
import torch

from . import ops, validation


class Linear(torch.nn.Linear):
    """torch.nn.Linear with the product, the bias add and an optional activation in one
    tritonmm kernel. Same parameters and state_dict as torch.nn.Linear (it is one), so
    checkpoints load either way; ``activation`` (None, "relu", "gelu", "gelu_tanh", "silu")
    is fused into the kernel's epilogue."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None, activation=None):
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        self.activation = validation.check_activation(activation)

    def forward(self, x):
        return ops.linear(x, self.weight, self.bias, None if self.activation == "none" else self.activation)

    def extra_repr(self):
        act = f", activation={self.activation!r}" if self.activation != "none" else ""
        return super().extra_repr() + act

    @classmethod
    def from_linear(cls, linear: torch.nn.Linear, activation=None) -> "Linear":
        """A tritonmm Linear sharing ``linear``'s parameters (no copy): training either trains both."""
        if not isinstance(linear, torch.nn.Linear):
            raise TypeError(f"linear must be a torch.nn.Linear, got {type(linear).__name__}")
        new = cls.__new__(cls)
        torch.nn.Module.__init__(new)
        new.in_features, new.out_features = linear.in_features, linear.out_features
        new.weight = linear.weight
        new.register_parameter("bias", linear.bias)
        new.activation = validation.check_activation(activation)
        new.train(linear.training)
        return new


def swap_linears(model: torch.nn.Module) -> int:
    """Replaces every torch.nn.Linear inside ``model`` (in place) by a tritonmm Linear that
    shares its parameters. Returns how many were swapped."""
    swapped = 0
    for name, child in model.named_children():
        if type(child) is torch.nn.Linear:
            setattr(model, name, Linear.from_linear(child))
            swapped += 1
        else:
            swapped += swap_linears(child)
    return swapped
