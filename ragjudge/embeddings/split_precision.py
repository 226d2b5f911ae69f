"""`bf16x3`: a float32 model's linear layers as three bfloat16 products summed in float32, on a GPU's tensor cores.

Each float32 operand is split into a bfloat16 head and a bfloat16 tail (`x = hi + lo`, `lo` ~ 2^-8 of `hi`), and
`x @ w` becomes `hi @ w_hi + hi @ w_lo + lo @ w_hi` (the `lo @ w_lo` term is below float32's noise here): about 16
mantissa bits where TF32 keeps 10, at the speed of bf16 matmuls, since the three products are one matmul over
three times the inner dimension with float32 accumulation and output. Activations, attention, layer norms and
pooling stay float32. Measured on an H200 (issue 44): TF32 changed the top-10 of 9-11 of 208 queries against the
CPU's float32, this none beyond float32's own one. The split is three copies into one buffer (a cast, a copy, a
subtraction written as bfloat16), made once for the query, key and value layers, which read the same input.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any

import torch
from torch import nn

from ragjudge.embeddings.torch_pooling import matmul_tf32


def split_into(rows: torch.Tensor) -> torch.Tensor:
    """`[hi, hi, lo]` side by side, bfloat16, for float32 `rows` (n x k): `hi + lo` equals `rows` to about 2^-16 of
    its size; the matmul with `[w_hi; w_lo; w_hi]` stacked is then the three products summed."""
    k = rows.shape[1]
    left = torch.empty(rows.shape[0], 3 * k, dtype=torch.bfloat16, device=rows.device)
    hi = left[:, :k]
    hi.copy_(rows)  # rounded to nearest
    left[:, k : 2 * k].copy_(hi)
    torch.sub(rows, hi, out=left[:, 2 * k :])  # computed in float32, rounded once
    return left


@functools.lru_cache(maxsize=None)
def matmul_kinds(device: str) -> tuple[bool, bool]:
    """(bfloat16 inputs give a float32 product directly, and with the bias added in the same call): PyTorch's
    `mm` / `addmm` with `out_dtype` (CUDA only, PyTorch 2.8 or so on; found by trying them once per device)."""
    if torch.device(device).type != "cuda":
        return False, False
    found = []
    for call in (lambda a: torch.mm(a, a, out_dtype=torch.float32),
                 lambda a: torch.addmm(torch.zeros(2, device=device), a, a, out_dtype=torch.float32)):
        try:
            found.append(call(torch.zeros(2, 2, dtype=torch.bfloat16, device=device)).dtype == torch.float32)
        except Exception:  # noqa: BLE001 - a probe: whatever an older PyTorch raises means "not here"
            found.append(False)
    return found[0], found[1]


def runs_fast(device: str) -> bool:
    """Whether bf16x3 runs as one bf16 matmul per layer on `device` (what was measured faster than fp32): `auto`
    takes it only there, since the float32 fallback was never measured on a GPU."""
    return matmul_kinds(device)[0]


class LastSplit:
    """The last input split and its split (a one-entry cache shared by a model's layers: the query, key and value
    layers read the same tensor). The input is held by a weak reference, so a freed one never matches a new one; the
    entry is one tuple, read and replaced whole, so two threads running the model at once only split more often."""

    def __init__(self) -> None:
        self._last: tuple[weakref.ref[torch.Tensor], int | None, torch.Tensor] | None = None

    def get(self, x: torch.Tensor) -> torch.Tensor:
        version = _version(x)
        last = self._last
        if last is not None and last[0]() is x and last[1] == version:
            return last[2]
        left = split_into(x.reshape(-1, x.shape[-1]).float())
        self._last = (weakref.ref(x), version, left)
        return left


def _version(x: torch.Tensor) -> int | None:
    """The tensor's in-place change count; None for an inference tensor (it keeps none: changing one in place
    between two layers that read it would go unseen, which a transformer's forward pass does not do)."""
    try:
        return int(x._version)
    except RuntimeError:
        return None


class Bf16x3Linear(nn.Module):
    """`nn.Linear` computed as split products (module docstring); the weight is split once, here."""

    def __init__(self, linear: nn.Linear, kinds: tuple[bool, bool], splits: LastSplit):
        super().__init__()
        weight = linear.weight.detach().float().t().contiguous()
        hi = weight.to(torch.bfloat16)
        lo = (weight - hi.float()).to(torch.bfloat16)
        self.fused, self.with_bias = kinds
        """One bf16 matmul with float32 output (CUDA), the bias added in it where PyTorch can; else the same
        products as a float32 matmul (exact: a bf16 value has 8 significant bits, so it is exact in TF32 too, which a
        CUDA GPU then uses for it)."""
        stacked = torch.cat([hi, lo, hi])  # pairs with [x_hi, x_hi, x_lo]
        self.register_buffer("stacked", (stacked if self.fused else stacked.float()).contiguous())
        self.register_buffer("bias", None if linear.bias is None else linear.bias.detach().float())
        self.out_features = linear.out_features
        self.splits = splits

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        left = self.splits.get(x)
        if self.fused and self.with_bias and self.bias is not None:
            out = torch.addmm(self.bias, left, self.stacked, out_dtype=torch.float32)
        else:
            if self.fused:
                out = torch.mm(left, self.stacked, out_dtype=torch.float32)
            elif left.is_cuda:
                with matmul_tf32(True):
                    out = left.float() @ self.stacked
            else:
                out = left.float() @ self.stacked
            if self.bias is not None:
                out += self.bias
        return out.reshape(*x.shape[:-1], self.out_features)


def use_bf16x3(model: Any, device: str) -> int:
    """Replace every `nn.Linear` in `model` by a `Bf16x3Linear` on `device`; answers how many were replaced."""
    kinds = matmul_kinds(str(device))
    splits = LastSplit()
    targets = [(parent, name, child) for parent in model.modules() for name, child in parent.named_children()
               if isinstance(child, nn.Linear)]
    for parent, name, child in targets:
        setattr(parent, name, Bf16x3Linear(child, kinds, splits).to(device))
    return len(targets)
