"""Import litellm once, offline-safe: without this it fetches a price map from the internet at import."""

from __future__ import annotations

import os
from functools import cache
from typing import Any


@cache
def litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm as _litellm

    _litellm.suppress_debug_info = True
    _litellm.drop_params = True  # providers that lack e.g. `seed` get the call without it instead of failing
    return _litellm
