"""A sentence model's transformer run by PyTorch with mean pooling on the device: the pipeline's `Forward`.

On a CUDA GPU the batch goes up from pinned memory and the vectors come back into pinned memory without blocking
(a CUDA event marks them ready), so `launch` returns while the GPU computes; `fetch` waits for that event only.
`tf32` runs float32 matmuls on the tensor cores (10-bit mantissas, float32 sums): on an H200 the model alone went
from 7,244 to 17,458 passages/s (issue 44), where fp16 and bf16 were slower still than fp32 and changed the top-10.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ragjudge.embeddings.pipeline import TokenBatch


def tf32_available(device: str) -> bool:
    """Whether float32 matmuls on `device` can run in TF32: a CUDA GPU of compute capability 8.0 (Ampere) or newer."""
    if not device.startswith("cuda"):
        return False
    import torch

    return torch.cuda.is_available() and torch.cuda.get_device_capability(device)[0] >= 8


@contextmanager
def matmul_tf32(enabled: bool) -> Iterator[None]:
    """float32 matmuls in TF32 inside the block only (PyTorch's switch is process-wide: other models keep fp32)."""
    if not enabled:
        yield
        return
    import torch

    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high")
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(before)


def host_copy(array: np.ndarray, *, pinned: bool) -> Any:
    """A new torch tensor (in page-locked memory if `pinned`, which a CUDA GPU copies from without blocking) holding
    `array`, copied by numpy: torch's own copy splits a large batch over its thread pool, whose waiting threads
    spin on the cores the tokenizer runs on (at batch 256 on 2 cores, 25 us of CPU a text: issue 44)."""
    import torch

    tensor = torch.empty(array.shape, dtype=torch.from_numpy(array[:0]).dtype, pin_memory=pinned)
    np.copyto(tensor.numpy(), array)
    return tensor


class TorchMeanPooling:
    """`transformer` (a Hugging Face model on `device`) followed by sentence-transformers' mean pooling and, if
    asked, L2 normalisation; vectors float32 whatever the model computes in."""

    def __init__(self, transformer: Any, device: str, *, normalize: bool, tf32: bool = False):
        self.transformer = transformer
        self.device = device
        self.normalize = normalize
        self.tf32 = tf32
        self.cuda = device.startswith("cuda")

    def _to_device(self, array: np.ndarray) -> Any:
        import torch

        if self.cuda:
            return host_copy(array, pinned=True).to(self.device, non_blocking=True)
        return torch.from_numpy(array).to(self.device)

    def launch(self, batch: TokenBatch) -> tuple[Any, Any]:
        import torch

        ids, mask = self._to_device(batch.ids), self._to_device(batch.mask)
        with torch.inference_mode(), matmul_tf32(self.tf32):
            hidden = self.transformer(input_ids=ids, attention_mask=mask)[0].float()
            weights = mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
            if self.normalize:
                pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
            if not self.cuda:
                return pooled.cpu(), None
            host = torch.empty(pooled.shape, dtype=torch.float32, pin_memory=True)
            host.copy_(pooled, non_blocking=True)
            ready = torch.cuda.Event()
            ready.record()
            return host, ready

    def fetch(self, handle: tuple[Any, Any]) -> np.ndarray:
        host, ready = handle
        if ready is not None:
            ready.synchronize()
        return host.numpy()
