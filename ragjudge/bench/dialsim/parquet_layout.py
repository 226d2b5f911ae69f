"""The Hugging Face copy of LongDialQA (`jiho283/dialsim-{show}`, parquet) read into the nested layout.

One row per session with `Episode`, `Session`, `Date`, `Script` and `{hard_qs|easy_qs}_{type}_{questions|options|
answers|idxes}`; `idxes` are the questions' ids (list index or key), so oracle files placed beside it are joined too.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ragjudge.errors import InputError
from ragjudge.formats.files import open_binary

_FAMILY = re.compile(r"^(hard_qs|easy_qs)_(.+)_(questions|options|answers|idxes)$")


def parquet_to_nested(path: Path) -> dict[str, dict[str, dict[str, Any]]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = [path] if path.is_file() else sorted(path.rglob("*.parquet"))
    nested: dict[str, dict[str, dict[str, Any]]] = {}
    for file in files:
        with open_binary(file, "parquet file") as fh:
            try:
                rows = pq.read_table(fh).to_pylist()
            except (pa.ArrowException, OSError, ValueError) as exc:
                reason = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
                raise InputError(f"cannot read parquet: {reason}", file=str(file)) from None
        for number, row in enumerate(rows, start=1):
            missing = [c for c in ("Episode", "Session", "Date", "Script") if c not in row]
            if missing:
                raise InputError(f"not the DialSim parquet layout: no column {missing[0]}", file=str(file),
                                 field=missing[0])
            session: dict[str, Any] = {"date": row["Date"], "script": row["Script"], "hard_q": {}, "easy_q": {}}
            families: dict[tuple[str, str], dict[str, Any]] = {}
            for column, value in row.items():
                match = _FAMILY.match(column)
                if match:
                    families.setdefault((match.group(1), match.group(2)), {})[match.group(3)] = value
            for (bank, qtype), parts in families.items():
                session["hard_q" if bank == "hard_qs" else "easy_q"][qtype] = _family(parts, file, number, bank,
                                                                                    qtype)
            nested.setdefault(str(row["Episode"]), {})[str(row["Session"])] = session
    return nested


def _family(parts: dict[str, Any], file: Path, row: int, bank: str, qtype: str) -> dict[str, Any]:
    questions, options, answers = (parts.get(k) or [] for k in ("questions", "options", "answers"))
    ids = parts.get("idxes") or list(range(len(questions)))
    if not (len(questions) == len(options) == len(answers) == len(ids)):
        raise InputError(f"{bank}_{qtype}: questions, options, answers and idxes differ in length", file=str(file),
                         line=row, field=f"{bank}_{qtype}_questions")
    return {str(i): {"questions": q, "options": o, "answer": a}
            for i, q, o, a in zip(ids, questions, options, answers, strict=True)}


def nested_to_hf_rows(nested: dict[str, Any]) -> list[dict[str, Any]]:
    """The Hugging Face layout of nested data (every row has every column, as there): what tests write to
    check both layouts read alike."""
    families = sorted({(prefix, str(t)) for scenes in nested.values() for session in scenes.values()
                       for bank, prefix in (("hard_q", "hard_qs"), ("easy_q", "easy_qs"))
                       for t in (session.get(bank) or {})})
    rows = []
    for episode, scenes in nested.items():
        for scene, session in scenes.items():
            row: dict[str, Any] = {"Episode": str(episode), "Session": int(scene), "Date": session["date"],
                                   "Script": session["script"]}
            for prefix, qtype in families:
                bucket = (session.get("hard_q" if prefix == "hard_qs" else "easy_q") or {}).get(qtype) or []
                items = list(enumerate(bucket)) if isinstance(bucket, list) else list(bucket.items())
                row[f"{prefix}_{qtype}_questions"] = [q["questions"] for _, q in items]
                row[f"{prefix}_{qtype}_options"] = [q["options"] for _, q in items]
                row[f"{prefix}_{qtype}_answers"] = [q["answer"] for _, q in items]
                row[f"{prefix}_{qtype}_idxes"] = [int(i) for i, _ in items]
            rows.append(row)
    return rows
