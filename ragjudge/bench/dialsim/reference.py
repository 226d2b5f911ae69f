"""The paper's figures (paper.json: Table 3, Appendix H and J, §5.3), printed beside ours when a run matches."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

_PAPER = Path(__file__).resolve().parent / "paper.json"


@lru_cache(maxsize=1)
def paper() -> dict[str, Any]:
    return json.loads(_PAPER.read_text(encoding="utf-8"))


def paper_model(gen: str) -> str | None:
    """The paper's row for a `--gen` value: litellm names and Hugging Face ids match by their last part."""
    name = re.sub(r"[_ ]", "-", gen.rsplit("/", 1)[-1].lower())
    aliases = sorted(((a, model) for model, names in paper()["aliases"].items() for a in names),
                     key=lambda pair: -len(pair[0]))
    return next((model for alias, model in aliases if name.startswith(alias)), None)


def column(memory: str, retriever_kind: str | None) -> int | None:
    family = None if memory == "recent" else ("bm25" if retriever_kind == "bm25" else "embedding")
    for i, (m, r) in enumerate(paper()["columns"]):
        if m == memory and r == family:
            return i
    return None


def _fmt(cell: list[float]) -> str:
    return f"{cell[0]:.2f}" + (f" ({cell[1]:.2f})" if len(cell) > 1 else "")


def reference_tables(gen: str, memory: str, retriever_kind: str | None, names: str,
                     ours: dict[str, float | None]) -> tuple[list[dict[str, Any]], list[str]]:
    """(tables, notes): for each show we ran that the paper reports with these names, the model's row with
    our accuracy (%) in the column of our memory strategy."""
    model = paper_model(gen)
    data = paper()
    if model is None:
        return [], [f"the paper reports no figures for {gen}"]
    col = column(memory, retriever_kind)
    tables, notes = [], []
    for table in data["tables"]:
        show = table["show"]
        if show not in ours or table["names"] != names or model not in table["rows"]:
            continue
        rows = []
        for i, (label, cell) in enumerate(zip(data["column_labels"], table["rows"][model], strict=True)):
            mine = ours[show]
            rows.append([label, _fmt(cell), None if i != col or mine is None else round(100 * mine, 2)])
        tables.append({"title": f"DialSim paper, {table['title']}: {model} (accuracy %, mean (std))",
                       "columns": ["memory", "paper", "ours"], "rows": rows,
                       "notes": [data["note"]] if retriever_kind not in (None, "bm25") else []})
    if not tables:
        notes.append(f"the paper reports {model} only for shows/names other than these ({names} names)")
    analysis = data["error_analysis"]
    if model == analysis["model"] and analysis["show"] in ours and names == analysis["names"] \
            and memory in analysis["rows"]:
        tables.append({"title": analysis["title"] + f", memory {memory}", "columns": ["questions", "paper %"],
                       "rows": [[k, v] for k, v in analysis["rows"][memory].items()]})
    return tables, notes
