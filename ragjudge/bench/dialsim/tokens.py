"""Token counts for the `recent` memory's budget: tiktoken's cl100k_base (the GPT-4 family's), read from the
copy litellm ships, so counting works offline. (The official simulator counted with Llama 2's tokenizer.)"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from functools import lru_cache


@lru_cache(maxsize=1)
def token_counter() -> Callable[[str], int]:
    spec = importlib.util.find_spec("litellm")
    if spec is not None and spec.submodule_search_locations:
        bundled = os.path.join(spec.submodule_search_locations[0], "litellm_core_utils", "tokenizers")
        if os.path.isdir(bundled):
            os.environ.setdefault("TIKTOKEN_CACHE_DIR", bundled)
    import tiktoken

    encoding = tiktoken.get_encoding("cl100k_base")
    return lambda text: len(encoding.encode(text, disallowed_special=()))
