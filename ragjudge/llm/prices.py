"""litellm's prices, read without importing litellm (importing it costs seconds of CPU).

The price map is litellm's own `model_prices_and_context_window_backup.json`, found in its installed package
directory with `importlib.util.find_spec` (which locates a package without running its `__init__`): the very file
litellm reads with `LITELLM_LOCAL_MODEL_COST_MAP=True`, the project's setting. Costs follow litellm's
`generic_cost_per_token` for what an OpenAI chat or embedding answer reports: cached prompt tokens at
`cache_read_input_token_cost` (the input price when the model has none), the others at `input_cost_per_token`,
completion tokens at `output_cost_per_token`. A model without a price costs 0, as with litellm.
"""

from __future__ import annotations

import importlib.util
import json
from functools import cache
from pathlib import Path
from typing import Any

MAP_FILE = "model_prices_and_context_window_backup.json"


@cache
def price_map() -> dict[str, Any]:
    spec = importlib.util.find_spec("litellm")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(folder) / MAP_FILE
        if path.is_file():
            return json.loads(path.read_text(encoding="utf-8"))
    return {}


@cache
def prices(model: str) -> dict[str, Any] | None:
    """The price entry of an OpenAI model (`gpt-4o-mini`, or `openai/gpt-4o-mini`), or None when it has none."""
    table = price_map()
    name = model.removeprefix("openai/")
    entry = table.get(name) or table.get(f"openai/{name}")
    return entry if isinstance(entry, dict) and "input_cost_per_token" in entry else None


def cost(model: str, usage: dict[str, Any] | None) -> float:
    """What an answer's `usage` costs at litellm's price for `model` (0 without a price or usage)."""
    entry = prices(model)
    if entry is None or not usage:
        return 0.0
    prompt = int(usage.get("prompt_tokens") or 0)
    completion = int(usage.get("completion_tokens") or 0)
    details = usage.get("prompt_tokens_details") or {}
    cached = int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0
    input_price = float(entry.get("input_cost_per_token") or 0.0)
    cached_price = entry.get("cache_read_input_token_cost")
    cached_price = input_price if cached_price is None else float(cached_price)
    return ((prompt - cached) * input_price + cached * cached_price
            + completion * float(entry.get("output_cost_per_token") or 0.0))
