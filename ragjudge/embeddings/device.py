"""Where a local model runs: `auto` (the default of every encoder) or one named device.

`auto` is CUDA when torch sees a CUDA GPU, else Apple's MPS, else the CPU — silently: a machine without a GPU
is the ordinary case, not a fault. `cpu`, `cuda`, `cuda:N` and `mps` are taken as given; anything else is one
error naming the accepted values. `check_device` validates without importing torch (option parsing);
`resolve_device` answers the device a model is put on.
"""

from __future__ import annotations

import os
import re
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


def _auto() -> str:
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
