"""Model loading one at a time, without transformers' "Loading weights" bars (they clutter our progress output).

A run can load several local models at once from worker threads (RB_alg's token encoder beside answer relevancy's
sentence encoder). transformers' lazily filled module and `torch.onnx.export`'s process-wide state are not safe
for that (seen: "cannot import name 'AutoModel' from 'transformers'", "GLOBALS.in_onnx_export must be True"), so
every load, import of the model libraries included, and every export happens under one process-wide lock."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOADING = threading.RLock()
"""Held while a model library is imported, a model loaded or exported; re-entrant (an export inside a load)."""


@contextmanager
def quiet_model_loading() -> Iterator[None]:
    with _LOADING:
        from transformers.utils import logging as hf_logging

        was_enabled = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()
        try:
            yield
        finally:
            if was_enabled:  # restore: the setting is process-wide and may be someone else's
                hf_logging.enable_progress_bar()
