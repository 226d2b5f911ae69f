"""Shape runs into the data the page's script reads: one list of tasks over all runs, per-run metric columns,
and each task's detail blocks, with every long text stored once.

Why: a full MTRAG run repeats each turn and passage in every later turn of its conversation (and in every compared
run); storing each text once as `{"$": index}` keeps an 842-task, three-run report a few megabytes, and metric
columns let the script filter and sort thousands of tasks without walking their details.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ragjudge.errors import InputError
from ragjudge.report.judges import spread
from ragjudge.report.load import LoadedRun

MIN_INTERNED = 40
"""Strings at least this long are stored once in the text table."""
MAX_FACET_VALUES = 30


@dataclass
class RunSamples:
    """One run's samples as its view reads them, in file order."""

    ids: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    facets: list[dict[str, str | list[str]]] = field(default_factory=list)
    metrics: list[dict[str, float]] = field(default_factory=list)
    judges: list[dict[str, dict[str, Any]]] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)
    flags: list[dict[str, bool]] = field(default_factory=list)
    blocks: list[list[dict[str, Any]]] = field(default_factory=list)

    def values(self) -> dict[str, dict[str, float]]:
        return dict(zip(self.ids, self.metrics, strict=True))


def read_samples(run: LoadedRun) -> RunSamples:
    """Each sample as its bench's view reads it; a sample the view cannot read is an input error naming its line
    (samples are validated when loaded: this is the last guard against a bench view's assumptions, never an
    internal error)."""
    out = RunSamples()
    seen: dict[str, int] = {}
    view = run.view
    for n, sample in enumerate(run.samples):
        try:
            sid = view.sample_id(sample) or f"#{n + 1}"
            row = (view.title(sample), view.facets(sample),
                   {k: v for k, v in view.metrics(sample).items() if math.isfinite(v)}, view.judges(sample),
                   view.errors(sample), view.flags(sample), view.blocks(sample))
        except (AttributeError, TypeError, KeyError, ValueError, IndexError) as exc:
            line = run.lines[n] if n < len(run.lines) else None
            raise InputError(f"the {run.bench} view cannot read this sample ({type(exc).__name__}: {exc})",
                             file=str(run.path), line=line) from None
        seen[sid] = seen.get(sid, 0) + 1
        if seen[sid] > 1:  # ids that repeat (one query under two query kinds) stay apart, in file order
            sid = f"{sid} #{seen[sid]}"
        out.ids.append(sid)
        for column, value in zip((out.titles, out.facets, out.metrics, out.judges, out.errors, out.flags,
                                  out.blocks), row, strict=True):
            column.append(value)
    return out


class TextTable:
    """Long strings stored once; `walk` replaces each by {"$": index}."""

    def __init__(self) -> None:
        self._index: dict[str, int] = {}

    @property
    def items(self) -> list[str]:
        return list(self._index)  # in the order first seen, each at its index

    def ref(self, text: str) -> str | dict[str, int]:
        return text if len(text) < MIN_INTERNED else {"$": self._index.setdefault(text, len(self._index))}

    def walk(self, value: Any) -> Any:
        kind = type(value)
        if kind is str:
            return value if len(value) < MIN_INTERNED else self.ref(value)
        if kind is dict:
            return {k: self.walk(v) for k, v in value.items()}
        if kind is list:
            return [self.walk(v) for v in value]
        if kind is float:
            return round(value, 4) if math.isfinite(value) else None
        return value


def _round(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return round(value, 4)


def page_data(runs: list[LoadedRun], samples: list[RunSamples], metrics: list[str], headline: list[str],
              directions: dict[str, bool | None]) -> dict[str, Any]:
    """Everything the task list and the task detail need, for every run."""
    texts = TextTable()
    where: dict[str, tuple[int, int]] = {}  # sample id → (run, position) of its first appearance
    for r, s in enumerate(samples):
        for pos, sid in enumerate(s.ids):
            where.setdefault(sid, (r, pos))
    ids = list(where)
    rows = [{sid: pos for pos, sid in enumerate(s.ids)} for s in samples]

    facet_values: dict[str, dict[str, None]] = {}  # name → its values, in the order first seen
    for sid in ids:
        r, pos = where[sid]
        for name, value in samples[r].facets[pos].items():
            facet_values.setdefault(name, {}).update(dict.fromkeys(value if isinstance(value, list) else [value]))
    kept = [n for n, vals in facet_values.items() if is_categorical(len(vals), len(ids))]
    facets = []
    for name in kept:
        values = sorted(facet_values[name], key=_natural)
        code = {v: k for k, v in enumerate(values)}
        facets.append({"name": name, "values": values, "codes": [
            None if (value := samples[r].facets[pos].get(name)) is None else [code[v] for v in value]
            if isinstance(value, list) else code[value] for r, pos in where.values()]})

    flag_names = list(dict.fromkeys(f for s in samples for flags in s.flags for f in flags))

    shared_raw = [[b for b in samples[r].blocks[pos] if b.get("shared")] for r, pos in where.values()]
    shared = [texts.walk(blocks) for blocks in shared_raw]
    out_runs = []
    for r, (run, s) in enumerate(zip(runs, samples, strict=True)):
        index = rows[r]
        present = [index.get(sid) for sid in ids]
        detail = []
        for k, pos in enumerate(present):  # a shared block is shown once, from the shared list, unless it differs
            first_run = where[ids[k]][0] == r
            detail.append(None if pos is None else [
                {**texts.walk(b), "shared": False} if b.get("shared") else texts.walk(b) for b in s.blocks[pos]
                if not (b.get("shared") and (first_run or b in shared_raw[k]))])
        out_runs.append({
            "label": run.label, "bench": run.bench,
            "values": [[None if pos is None else _round(s.metrics[pos].get(m)) for pos in present] for m in metrics],
            "errors": [None if pos is None else len(s.errors[pos]) for pos in present],
            "spread": [None if pos is None else _round(spread(s.judges[pos])) for pos in present],
            "flags": [[None if pos is None or f not in s.flags[pos] else int(s.flags[pos][f]) for pos in present]
                      for f in flag_names],
            "detail": detail,
        })
    return {
        "ids": ids,
        "titles": [texts.ref(_one_line(samples[r].titles[pos])) for r, pos in where.values()],
        "facets": facets,
        "metrics": [{"name": m, "dir": directions.get(m, True), "headline": m in headline} for m in metrics],
        "flags": flag_names,
        "runs": out_runs,
        "shared": shared,
        "T": texts.items,
    }


def is_categorical(distinct: int, n: int, limit: int = MAX_FACET_VALUES) -> bool:
    """A field worth filtering or grouping by: 2 to `limit` values, each used twice on average (not an id)."""
    return 2 <= distinct <= limit and distinct * 2 <= n


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _natural(value: str) -> tuple[int, float | str]:
    try:
        return (0, float(value))
    except ValueError:
        return (1, value.lower())
