"""Intent prediction: the taxonomies and the labelled conversations."""

from __future__ import annotations

import re
from collections import OrderedDict
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ragjudge.bench.cxm.data import conversation, id_of, new_id, records, text_cell, transcript
from ragjudge.bench.cxm.models import IntentCase, Taxonomy, TaxonomyEntry
from ragjudge.bench.cxm.tables import field, find_file, read_rows, require_file
from ragjudge.errors import InputError

TAXONOMY_SPLITS = (("Taxonomy", "taxonomy_1"), ("Taxonomy", "taxonomy_2"), ("Taxonomy", "taxonomy_3"))


def load_taxonomies(folder: Path) -> dict[str, Taxonomy]:
    """`taxonomy.jsonl` rows {taxonomy, l1, l2?, description?}, or the release's Taxonomy/taxonomy_N files."""
    entries: dict[str, list[TaxonomyEntry]] = OrderedDict()
    where: dict[tuple[str, str], tuple[Path, int]] = {}
    plain = find_file(folder, ("taxonomy.jsonl",), what="intent taxonomy")
    sources: list[tuple[Path, str | None]] = [(plain, None)] if plain else []
    if not sources:
        for config, split in TAXONOMY_SPLITS:
            path = find_file(folder, (), ((config, split),), what="intent taxonomy")
            if path is not None:
                sources.append((path, split))
    if not sources:
        raise InputError("no intent taxonomy found (looked for taxonomy.jsonl, "
                         "Taxonomy/taxonomy_N.jsonl|.parquet|.csv)", file=str(folder))
    for path, split_name in sources:
        for line, row in read_rows(path, "intent taxonomy entries"):
            name = split_name or text_cell(field(row, "taxonomy"), path, line, "taxonomy")
            l1 = field(row, "l1", "L1", "intent")
            if not name or l1 is None:
                raise InputError("a taxonomy row needs taxonomy and l1 (or intent)", file=str(path), line=line)
            l1 = text_cell(l1, path, line, "l1")
            l2 = text_cell(field(row, "l2", "L2"), path, line, "l2")
            description = text_cell(field(row, "description", "Description"), path, line, "description") or ""
            entry = TaxonomyEntry(l1=str(l1).strip(), l2=l2.strip() if l2 else None, description=description)
            key = (str(name).lower(), entry.label)
            if key in where:  # the file and line that repeat it (each release taxonomy is its own file)
                first, first_line = where[key]
                at = f"line {first_line}" if first == path else f"{first}:{first_line}"
                raise InputError(f"taxonomy {key[0]!r} lists {entry.label!r} twice (first at {at})", file=str(path),
                                 line=line, field="l2" if entry.l2 else "l1")
            where[key] = (path, line)
            entries.setdefault(key[0], []).append(entry)
    return {name: Taxonomy(name=name, entries=rows) for name, rows in entries.items()}


def load_intent(folder: Path) -> tuple[list[IntentCase], dict[str, Taxonomy]]:
    taxonomies = load_taxonomies(folder)
    path = require_file(folder, "intent conversations", ("intent.jsonl",), (("Intent_Prediction", "train"),))
    cases = []
    seen: set[str] = set()
    for line, index, row in records(path, "intent conversations"):
        case_id = new_id(seen, id_of(row, ("case_id", "conversation_id", "id"), path, line, index), "case", path, line,
                         "conversation_id")
        gold: dict[str, str] = {}
        intents = row.get("intents")
        if intents is not None and not isinstance(intents, dict):
            raise InputError("intents must be an object {taxonomy: label}", file=str(path), line=line,
                             field="intents")
        if isinstance(intents, dict):
            gold = {str(k).lower(): str(text_cell(v, path, line, "intents")).strip()
                    for k, v in intents.items() if v is not None}
        elif row.get("intent") is not None:
            if len(taxonomies) != 1:
                raise InputError("'intent' is ambiguous with several taxonomies: use intents {taxonomy: label}",
                                 file=str(path), line=line, field="intent")
            gold = {next(iter(taxonomies)): str(text_cell(row["intent"], path, line, "intent")).strip()}
        for key, value in row.items():  # the release: one gold column per taxonomy (Taxonomy_1, ...)
            if re.fullmatch(r"taxonomy_\d+", key, re.IGNORECASE) and value is not None:
                gold[key.lower()] = str(text_cell(value, path, line, key)).strip()
        unknown = [t for t in gold if t not in taxonomies]
        if unknown:
            raise InputError(f"gold intent for unknown taxonomy {unknown[0]!r} (known: {', '.join(taxonomies)})",
                             file=str(path), line=line, field="intents")
        cases.append(IntentCase(case_id=case_id, messages=conversation(row, path, line), gold=gold,
                                transcript=transcript(row)))
    return cases, taxonomies


class IntentSample(BaseModel):
    """One conversation to label with one taxonomy (a conversation is a sample once per taxonomy it has gold for)."""

    model_config = ConfigDict(frozen=True)

    id: str
    taxonomy: str
    case: IntentCase
