"""Model loading without transformers' "Loading weights" bars, which clutter our own progress output."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def quiet_model_loading() -> Iterator[None]:
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:  # restore: the setting is process-wide and may be someone else's
            hf_logging.enable_progress_bar()
