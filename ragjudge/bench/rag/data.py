"""The records a `rag` run judges: read under ragjudge's, RAGAS's or DeepEval's field names
(`ragjudge.formats.rag_records`)."""

from __future__ import annotations

from pathlib import Path

from ragjudge.formats.rag_records import RagRecord, read_rag_records


def load_records(path: str | Path) -> list[RagRecord]:
    return read_rag_records(path)
