"""Which row of a paper's table a model name is: one of the row's exact names, never a nearby one
(`gemini-2.5-flash-lite` is not Gemini 2.5 Flash). A run that matches no cell gets one note line beginning with
`NONE_SHOWN`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

NONE_SHOWN = "no paper figure is shown: "
"""How the one note line of a run that matches no paper cell begins."""


def paper_row(name: str | None, aliases: Mapping[str, Iterable[str]], rows: Iterable[str] | None = None
              ) -> str | None:
    """The one row among `rows` (default: every row of `aliases`) whose alias list holds `name`, compared without
    case, after any route or organisation before a '/' (`openai/gpt-4o`, `hosted_vllm/Qwen/Qwen2.5-7B-Instruct`);
    None when no row, or more than one, does."""
    if not name:
        return None
    parts = name.strip().lower().split("/")
    candidates = {"/".join(parts[i:]) for i in range(len(parts))}
    found = {row for row in (aliases if rows is None else rows)
             if candidates & {alias.lower() for alias in aliases.get(row, ())}}
    return found.pop() if len(found) == 1 else None
