"""Where a local model runs: `auto` (the default of every encoder) or one named device.

`auto` is CUDA when torch sees a CUDA GPU, else Apple's MPS, else the CPU — silently: a machine without a GPU
is the ordinary case, not a fault. `cpu`, `cuda`, `cuda:N` and `mps` are taken as given; anything else is one
error naming the accepted values. `check_device` validates without importing torch (option parsing);
`resolve_device` answers the device a model is put on. On Linux a machine with none of the device files a GPU
driver makes (NVIDIA's, ROCm's, WSL's) is answered `cpu` without importing torch: 1-2.5 s of start-up that a model
on ONNX Runtime never needs (issue 44).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator

from ragjudge.errors import UsageError

AUTO = "auto"
_NAMED = re.compile(r"cpu|mps|cuda(:\d+)?")
ACCEPTED = "auto, cpu, cuda, cuda:N or mps"


def check_device(requested: str) -> str:
    """`requested`, stripped and lower-cased, if it is a device option; else UsageError (a ValueError for pydantic
    would be re-worded: this one is the message)."""
    value = str(requested).strip().lower()
    if value != AUTO and not _NAMED.fullmatch(value):
        raise UsageError(f"device: {requested!r} is not one of {ACCEPTED}")
    return value


def _checked(value: str) -> str:
    try:
        return check_device(value)
    except UsageError as exc:
        raise ValueError(str(exc)) from None


Device = Annotated[str, AfterValidator(_checked)]
"""A spec's `device` option: validated when the spec is read, resolved when a model loads."""


GPU_DEVICE_FILES = ("nvidiactl", "nvidia0", "kfd", "dxg")
"""What the NVIDIA, ROCm and WSL drivers create under /dev: without one torch cannot see a GPU on Linux."""


def no_gpu_here(dev: Path = Path("/dev")) -> bool:
    """True when this is Linux, torch is not loaded yet, and no GPU driver's device file is in `dev`."""
    return sys.platform.startswith("linux") and "torch" not in sys.modules and \
        not any((dev / name).exists() for name in GPU_DEVICE_FILES)


def _auto() -> str:
    if no_gpu_here():
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return "mps"
    return "cpu"


def resolve_device(requested: str = AUTO) -> str:
    """The torch device for `requested`: `auto` → `cuda`, else `mps`, else `cpu`; a named device as given."""
    value = check_device(requested)
    return _auto() if value == AUTO else value


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def use_cores(threads: int | None = None) -> None:
    """Torch intra-op threads: `threads`, else one per core this process may use (OMP_NUM_THREADS, if set, wins)."""
    import torch

    if threads is None:
        if "OMP_NUM_THREADS" in os.environ:
            return
        threads = available_cores()
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
