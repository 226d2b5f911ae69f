"""Import litellm once, offline-safe: without this it fetches a price map from the internet at import."""

from __future__ import annotations

import os
import warnings
from functools import cache
from typing import Any


@cache
def litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm as _litellm

    _litellm.suppress_debug_info = True
    _litellm.drop_params = True  # providers that lack e.g. `seed` get the call without it instead of failing
    quiet_dropped_requests()
    return _litellm


def quiet_dropped_requests() -> None:
    """litellm's async calls build the provider's request coroutine in a worker thread (run_in_executor) and
    await it only when the thread returns: acompletion/aembedding, and for `--batch` the files and batches calls
    (litellm 1.106: `aretrieve_batch` in litellm/batches/main.py, `afile_content` in litellm/files/main.py, and
    their create/list siblings). When a run stops while such a call is in that step (a full disk, Ctrl-C, a
    stopped batch run), asyncio cancels the waiting side and the thread's coroutine is dropped before it sends
    anything: Python then warns "coroutine 'OpenAIChatCompletion.acompletion' was never awaited" (or
    'OpenAIBatchesAPI.aretrieve_batch', 'OpenAIFilesAPI.afile_content'...), noise after an error that was
    already reported. Idempotent (an identical filter replaces itself); the CLI calls it at every start."""
    warnings.filterwarnings("ignore", category=RuntimeWarning,
                            message=r"coroutine '\w+\.(acompletion|aembedding|async_completion|async_embedding"
                                    r"|acreate_file|afile_content|acreate_batch|aretrieve_batch|alist_batches"
                                    r"|acancel_batch)' was never awaited")
