"""KB refinement: the gold similar and contradictory article pairs (unordered)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ragjudge.bench.cxm.models import PAIR_KINDS
from ragjudge.bench.cxm.tables import field, find_file, id_list, read_rows
from ragjudge.errors import InputError


def read_pair(value: Any, *, path: Path, line: int, name: str) -> frozenset[str]:
    items = id_list(value, path=path, line=line, name=name)
    if len(items) != 2:
        raise InputError(f"a pair has two article ids, got {len(items)}", file=str(path), line=line, field=name)
    a, b = items
    if a == b:
        raise InputError(f"a pair needs two different articles, got {a!r} twice", file=str(path), line=line,
                         field=name)
    return frozenset((a, b))


def _pair_kind(value: Any, path: Path, line: int) -> str:
    kind = str(value or "").strip().lower()
    kind = {"similarity": "similar", "contradiction": "contradictory", "contradicting": "contradictory"}.get(kind, kind)
    if kind not in PAIR_KINDS:
        raise InputError(f"kind must be one of {', '.join(PAIR_KINDS)}, got {value!r}", file=str(path), line=line,
                         field="kind")
    return kind


def load_pairs(folder: Path) -> dict[str, set[frozenset[str]]]:
    """Gold unordered pairs by kind, from kb_pairs.jsonl or the release's KB_Refinement splits. A file that holds
    no pair is an error naming it (one of the release's two splits may be empty when the other is not)."""
    gold: dict[str, set[frozenset[str]]] = {}
    plain = find_file(folder, ("kb_pairs.jsonl",), what="KB-refinement pairs")
    if plain is not None:
        for line, row in read_rows(plain, "KB-refinement pairs"):
            kind = _pair_kind(row.get("kind"), plain, line)
            pair_value = row.get("pair") if row.get("pair") is not None else [row.get("a"), row.get("b")]
            gold.setdefault(kind, set()).add(read_pair(pair_value, path=plain, line=line, name="pair"))
        return gold
    found = []
    for split, kind in (("similarity_pairs", "similar"), ("contradictory_pairs", "contradictory")):
        path = find_file(folder, (), (("KB_Refinement", split),), what="KB-refinement pairs")
        if path is None:
            continue
        found.append(path)
        for line, row in read_rows(path):
            gold.setdefault(kind, set()).add(read_pair(field(row, "Pairs", "pair"), path=path, line=line, name="Pairs"))
    if not found:
        raise InputError("no KB-refinement pairs found (looked for kb_pairs.jsonl, "
                         "KB_Refinement/similarity_pairs|contradictory_pairs)", file=str(folder))
    if not gold:
        others = f" (nor does {found[1]})" if len(found) > 1 else ""
        raise InputError(f"the file holds no KB-refinement pairs{others}", file=str(found[0]))
    return gold


class WholeKb(BaseModel):
    """A baseline run has one item: the knowledge base."""

    model_config = ConfigDict(frozen=True)

    id: str = "kb"


def predicted_pair(row: dict[str, Any], path: Path | None, line: int) -> tuple[str, frozenset[str]]:
    """A prediction row's (kind, unordered pair): `{"kind", "pair": [a, b]}` (or `a`, `b`); a bad one is one line
    naming the row's file, line and field."""
    kind = str(row.get("kind", "")).strip().lower()
    kind = {"similarity": "similar", "contradiction": "contradictory"}.get(kind, kind)
    if kind not in PAIR_KINDS:
        raise InputError(f"kind must be one of {', '.join(PAIR_KINDS)}", file=str(path) if path else None, line=line,
                         field="kind")
    value = row.get("pair") if row.get("pair") is not None else [row.get("a"), row.get("b")]
    return kind, read_pair(value, path=path or Path("-"), line=line, name="pair")
