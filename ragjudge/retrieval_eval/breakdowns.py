"""Per-query labels and metric means per group: first vs later turn, standalone or not, domain, any label.

Beyond docs/retrieval-eval.md: a `--breakdown-file` (JSONL, CSV or TSV) names the query in `task_id`, `query_id`,
`query-id`, `qid`, `_id` or `id`, and its `enrichments` object (MTRAG task files) is looked into as well.
`standalone` reads `standalone`, `Standalone Type`, `class` or `rewrite_class` (true/yes/standalone and
false/no/non-standalone); `domain` reads `domain` or `Collection` there before the run's `Collection`
(`mt-rag-clapnq-...` -> `clapnq`), then `--domain`. A list-valued label (MTRAG's `Question Type`) puts a query in
each of its groups; a query without a label is in `unknown`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from ragjudge.errors import InputError, UsageError
from ragjudge.formats.files import csv_rows, first_line
from ragjudge.formats.jsonl import missing, read_jsonl
from ragjudge.formats.runs import Run
from ragjudge.models import domain_of, normalize_task_id
from ragjudge.retrieval_eval.metrics import Evaluation

UNKNOWN = "unknown"
BUILTIN = ("turn", "turn_number", "domain", "standalone")
ID_FIELDS = ("task_id", "query_id", "query-id", "qid", "_id", "id")
STANDALONE_FIELDS = ("standalone", "standalone type", "class", "rewrite class")
_STANDALONE = {"standalone", "true", "yes", "1"}
_NON_STANDALONE = {"nonstandalone", "notstandalone", "false", "no", "0"}
Labels = dict[str, dict[str, Any]]


def _norm(name: str) -> str:
    return "".join(c for c in name.lower() if c not in " _-")


def read_labels(path: str | Path) -> Labels:
    """Per-query labels: normalised query id -> {field name: value}."""
    path = Path(path)
    labels: Labels = {}
    first_line: dict[str, int] = {}
    for number, record in _records(path):
        where = {"file": str(path), "line": number}
        id_field = next((f for f in ID_FIELDS if f in record and not _missing(record[f])), None)
        if id_field is None:
            raise InputError(f"no query id (expected one of {', '.join(ID_FIELDS)})", field="task_id", **where)
        key = normalize_task_id(str(record[id_field]))
        if key in first_line:
            raise InputError(f"query {record[id_field]!r} already labelled on line {first_line[key]}",
                             field=id_field, **where)
        first_line[key] = number
        fields = {k: v for k, v in record.items() if k != id_field and not isinstance(v, dict)}
        enrichments = record.get("enrichments")
        if isinstance(enrichments, dict):
            fields.update({k: v for k, v in enrichments.items() if k not in fields and not isinstance(v, dict)})
        labels[key] = fields
    if not labels:
        raise InputError("the labels file has no rows", file=str(path))
    return labels


def _records(path: Path):
    head = first_line(path, "labels file") or ""
    if head.lstrip().startswith("{"):
        yield from read_jsonl(path)
        return
    delimiter = "\t" if "\t" in head or path.suffix.lower() in (".tsv", ".tab") else ","
    for number, row in csv_rows(path, "labels file", delimiter=delimiter, header=True):
        yield number, {k: v for k, v in row.items() if k is not None}


_missing = partial(missing, empty=True)


def _values(value: Any) -> list[str]:
    if _missing(value):
        return []
    items = value if isinstance(value, list) else [value]
    return [str(v).lower() if isinstance(v, bool) else str(v) for v in items if not _missing(v)]


def _field(fields: dict[str, Any] | None, names: Sequence[str]) -> Any:
    if not fields:
        return None
    wanted = {_norm(n) for n in names}
    for name, value in fields.items():
        if _norm(name) in wanted and not _missing(value):
            return value
    return None


def turn_number(key: str) -> int | None:
    """The turn after the last `::` of a normalised MTRAG id, or None for other ids."""
    _, sep, tail = key.rpartition("::")
    return int(tail) if sep and tail.strip().isdigit() else None


def standalone_label(value: Any) -> str:
    if isinstance(value, bool):
        return "standalone" if value else "non-standalone"
    text = _norm(str(value))
    if text in _STANDALONE:
        return "standalone"
    if text in _NON_STANDALONE:
        return "non-standalone"
    return str(value)


def resolve_dimensions(by: str | None, labels: Labels | None) -> list[str]:
    """`--by` -> dimensions; the default is turn and domain, plus standalone when the labels give it."""
    if by is not None:
        dims = [d.strip() for d in by.split(",") if d.strip()]
        return [] if dims == ["none"] else dims
    dims = ["turn", "domain"]
    if labels and any(_field(f, STANDALONE_FIELDS) is not None for f in labels.values()):
        dims.append("standalone")
    return dims


def label_queries(keys: Sequence[str], dims: Sequence[str], *, runs: Sequence[Run], labels: Labels | None,
                  default_domain: str | None = None) -> dict[str, dict[str, list[str]]]:
    """dimension -> query -> its groups (usually one)."""
    out: dict[str, dict[str, list[str]]] = {}
    for dim in dims:
        groups: dict[str, list[str]] = {}
        found = False
        for key in keys:
            values = _query_values(dim, key, runs=runs, labels=labels, default_domain=default_domain)
            found = found or bool(values)
            groups[key] = values or [UNKNOWN]
        if not found and dim == "domain":
            continue  # nothing says which domain (e.g. a TREC run): one "unknown" group would only add noise
        if not found and dim not in ("turn", "turn_number"):
            hint = "standalone, Standalone Type or class" if dim == "standalone" else repr(dim)
            raise UsageError(f"--by {dim}: no evaluated query has a {hint} label"
                             + ("" if labels else "; give them with --breakdown-file"))
        out[dim] = groups
    return out


def _query_values(dim: str, key: str, *, runs: Sequence[Run], labels: Labels | None,
                  default_domain: str | None) -> list[str]:
    fields = labels.get(key) if labels else None
    if dim == "turn":
        n = turn_number(key)
        return [] if n is None else ["first" if n == 1 else "later"]
    if dim == "turn_number":
        n = turn_number(key)
        return [] if n is None else [str(n)]
    if dim == "domain":
        domain = _field(fields, ("domain",))
        if domain is None:
            collection = _field(fields, ("collection",))
            if collection is None:
                collection = next((r.collections[key] for r in runs if key in r.collections), None)
            domain = domain_of(collection) if isinstance(collection, str) else None
        return _values(domain if domain is not None else default_domain)
    if dim == "standalone":
        value = _field(fields, STANDALONE_FIELDS)
        return [] if value is None else [standalone_label(v) for v in _values(value)]
    return _values(_field(fields, (dim,)))


def breakdown(evaluation: Evaluation, groups: dict[str, list[str]], *, dim: str) -> dict[str, dict[str, Any]]:
    """group -> {"n_queries", "metrics"} for one dimension."""
    rows: dict[str, list[int]] = {}
    for i, key in enumerate(evaluation.keys):
        for group in groups[key]:
            rows.setdefault(group, []).append(i)
    return {g: {"n_queries": len(rows[g]), "metrics": evaluation.means(rows[g])}
            for g in sorted(rows, key=lambda g: _group_order(dim, g))}


def _group_order(dim: str, group: str) -> tuple:
    if group == UNKNOWN:
        return (2, 0, "")
    if dim == "turn":
        return (0, 0 if group == "first" else 1, group)
    if dim == "turn_number" and group.isdigit():
        return (0, int(group), "")
    return (1, 0, group)
