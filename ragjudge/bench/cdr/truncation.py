"""How many units an encoder cuts short: a dense model reads at most its maximum input length (MiniLM: 256
word pieces) and silently drops the rest, and a CDR conversation averages 464 GPT-4o tokens. The count is
reported with every dense run so that a session-level score is read knowing how much of each session the
model saw. Counts are cached beside the unit file (tokenising ~10^5 units takes seconds, not minutes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragjudge.retrieval.base import Retriever


def encoders_of(retriever: Retriever) -> list[tuple[Any, str]]:
    """(encoder, passage prefix) of every member that embeds passages (dense, Elasticsearch kNN, hybrids)."""
    found: list[tuple[Any, str]] = []
    for member in getattr(retriever, "members", None) or [retriever]:
        if member is not retriever and getattr(member, "members", None):
            found += encoders_of(member)
            continue
        encoder = getattr(member, "encoder", None)
        if encoder is not None:
            found.append((encoder, getattr(member.options, "passage_prefix", "") or ""))
    return found


def truncation(retriever: Retriever, texts: list[str], units_file: Path | None = None) -> list[dict[str, Any]]:
    """Per encoder: its model, maximum input length and how many of `texts` exceed it (None when unknown,
    as for an embeddings API, whose provider truncates or refuses by its own rule)."""
    reports = []
    for encoder, prefix in encoders_of(retriever):
        if not hasattr(encoder, "token_counts"):
            reports.append({"encoder": encoder.model_name, "max_tokens": None, "units": len(texts), "truncated": None,
                            "longest": None})
            continue
        key = f"{encoder.model_name}|{encoder.max_tokens}|{prefix}"
        cache = units_file.with_suffix(".tokens.json") if units_file else None
        cached = _read(cache).get(key) if cache else None
        if cached is None:
            counts = encoder.token_counts([prefix + t for t in texts])
            cached = {"units": len(counts), "truncated": sum(1 for c in counts if c > encoder.max_tokens),
                      "longest": max(counts, default=0),
                      "mean_tokens": round(sum(counts) / len(counts), 1) if counts else 0.0}
            if cache:
                _write(cache, {**_read(cache), key: cached})
        reports.append({"encoder": encoder.model_name, "max_tokens": encoder.max_tokens, **cached})
    return reports


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass  # a cache that cannot be written only costs a recount


def describe(report: dict[str, Any]) -> str:
    if report["max_tokens"] is None:
        return f"{report['encoder']}: input limit unknown (an API truncates or rejects long inputs by its own rule)"
    share = report["truncated"] / report["units"] if report["units"] else 0.0
    return (f"{report['encoder']} reads at most {report['max_tokens']} tokens: {report['truncated']:,} of "
            f"{report['units']:,} units ({share:.0%}) were truncated (longest {report['longest']:,} tokens)")
