"""Names given to an API function as a list, comma-separated as typed on a command line, or both."""

from __future__ import annotations

from collections.abc import Sequence

from ragjudge.errors import UsageError

Names = Sequence[str] | str | None


def names(values: Names) -> list[str] | None:
    """`"a,b"`, `["a", "b"]` or `["a,b"]` → `["a", "b"]`; None (or no list) → None; only commas → a UsageError."""
    if values is None or (not isinstance(values, str) and not values):
        return None
    out = [v.strip() for value in ([values] if isinstance(values, str) else values) for v in str(value).split(",")
           if v.strip()]
    if not out:
        raise UsageError("an empty list was given")
    return out
