"""The paper's figures (paper.json: Table 3, Appendix H and J, §5.3) as `Reference`s beside ours.

A paper cell is shown only beside a run it describes: the same model (`--gen` matched to a paper row), show and
names, multiple choice, the memory strategy of its column (BM25, or OpenAI text-embedding-3-small for the
embedding columns) with the paper's k, the whole simulation with the official share of temporal questions. For
any other run the summary says, in a note, which paper figures exist and why they are not shown.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ragjudge.bench.dialsim.memory import DEFAULT_K
from ragjudge.bench.dialsim.plan import TKG_RATIO
from ragjudge.bench.dialsim.summary import ShowFigures
from ragjudge.engine.summary import Reference

_PAPER = Path(__file__).resolve().parent / "paper.json"
SOURCE = "DialSim (Kim et al., arXiv 2406.13144v6)"
PAPER_EMBEDDING = "text-embedding-3-small"
ITEMS = {"utterance": "utterances", "session": "sessions", "summary": "session summaries", "oracle": "sessions"}


@lru_cache(maxsize=1)
def paper() -> dict[str, Any]:
    return json.loads(_PAPER.read_text(encoding="utf-8"))


def paper_model(gen: str) -> str | None:
    """The paper's row for a `--gen` value: litellm names and Hugging Face ids match by their last part."""
    name = re.sub(r"[_ ]", "-", gen.rsplit("/", 1)[-1].lower())
    aliases = sorted(((a, model) for model, names in paper()["aliases"].items() for a in names),
                     key=lambda pair: -len(pair[0]))
    return next((model for alias, model in aliases if name.startswith(alias)), None)


@dataclass(frozen=True)
class RunConditions:
    """What decides whether a paper figure describes a run."""

    gen: str
    fmt: str
    memory: str
    names: str
    retriever: dict[str, Any] | None = None
    """The retriever of the memory's pipeline spec (`{"name": "bm25", "options": {...}}`), for retrieval memories."""
    k: int | None = None
    context_tokens: int | None = None
    """-T context_tokens as given (None: the model's own window, as the paper's Base LLM)."""
    tkg_ratio: float = TKG_RATIO
    all_questions: bool = True
    """False when the run asked only part of its plan (--limit)."""
    summary_model: str | None = None


def encoder_model(retriever: dict[str, Any] | None) -> str:
    return str(((retriever or {}).get("options") or {}).get("model") or "")


def column(cond: RunConditions) -> tuple[int | None, str]:
    """The index of the paper's column for the run's memory, or (None, why there is none)."""
    if cond.memory == "recent":
        family = None
    elif cond.memory == "oracle":
        return None, "Table 3 has no oracle column (the paper's oracle figures are a chart, Appendix I)"
    elif (cond.retriever or {}).get("name") == "bm25":
        family = "bm25"
    elif PAPER_EMBEDDING in encoder_model(cond.retriever):
        family = "embedding"
    else:
        return None, (f"the paper's embedding columns used OpenAI {PAPER_EMBEDDING}; this run's encoder is "
                      f"{encoder_model(cond.retriever) or (cond.retriever or {}).get('name')}")
    for i, (memory, retriever) in enumerate(paper()["columns"]):
        if memory == cond.memory and retriever == family:
            return i, ""
    return None, f"the paper has no column for memory {cond.memory}"  # pragma: no cover - every memory is listed


def mismatches(cond: RunConditions) -> list[str]:
    """The run's conditions that no paper figure shares (whatever the model and memory)."""
    found = []
    if cond.fmt != "mc":
        found.append(f"the paper's figures are multiple choice (-T format=mc); this run answers {cond.fmt}")
    if not cond.all_questions:
        found.append("this run asks only part of its simulation's questions (--limit)")
    if cond.tkg_ratio != TKG_RATIO:
        found.append(f"the paper draws {TKG_RATIO:.0%} temporal questions; this run -T tkg_ratio={cond.tkg_ratio:g}")
    if cond.memory == "recent" and cond.context_tokens is not None:
        found.append(f"the paper's Base LLM fills the model's whole context window; this run -T context_tokens="
                     f"{cond.context_tokens}")
    default_k = DEFAULT_K.get(cond.memory)
    if default_k is not None and cond.k is not None and cond.k != default_k:
        found.append(f"the paper recalls {default_k} {ITEMS[cond.memory]}; this run -T k={cond.k}")
    return found


def differences(cond: RunConditions) -> str:
    """What still differs from the paper when the conditions match, said with `comparable`."""
    notes = ["questions drawn by ragjudge's seeded plan (the official simulator is unseeded)"]
    if (cond.retriever or {}).get("name") == "bm25":
        notes.append("ragjudge's BM25 (bm25s: Lucene scoring, English stemming) where the official simulator uses "
                     "rank-bm25")
    if cond.memory == "summary":
        notes.append(f"sessions summarised by {cond.summary_model or cond.gen} with the official prompt (the paper "
                     "does not name its summariser)")
    return "; ".join(notes)


def _pct(value: float | None) -> float | None:
    return None if value is None else round(100 * value, 2)


def paper_references(cond: RunConditions, shows: dict[str, ShowFigures]) -> tuple[list[Reference], list[str]]:
    """(references, notes): for each show we ran that the paper reports with this model and these names, the
    paper's cell for the run's memory strategy beside our accuracy (%), when the run's conditions are the
    paper's; otherwise a note saying which figures exist and why they are not shown."""
    model = paper_model(cond.gen)
    data = paper()
    if model is None:
        return [], [f"the paper reports no figures for {cond.gen}"]
    general = mismatches(cond)
    col, no_column = column(cond)
    references: list[Reference] = []
    notes: list[str] = []
    matched = False
    for table in data["tables"]:
        show = table["show"]
        if show not in shows or table["names"] != cond.names or model not in table["rows"]:
            continue
        matched = True
        why = general + ([no_column] if col is None and no_column else [])
        if why:
            notes.append(f"the paper's {table['title']} reports {model} on {show} ({cond.names} names), not under "
                             f"this run's conditions, so it is not shown: {'; '.join(why)}")
            continue
        assert col is not None
        cell = table["rows"][model][col]
        ours = shows[show]
        label = data["column_labels"][col]
        k_text = "" if cond.memory == "recent" else f" (k={cond.k})"
        references.append(Reference(
            title=f"DialSim paper, {table['title']}: {model}, {label} (accuracy %)", source=f"{SOURCE}, {table['title']}",
            unit="percent", columns=["show", "paper %", "paper std", "ours %", "ours std", "questions"],
            rows=[[show, cell[0], cell[1] if len(cell) > 1 else None, _pct(ours.accuracy), _pct(ours.std), ours.n]],
            notes=[n for n in (data["note"] if table["title"].startswith("Appendix H") else "",
                               f"paper: mean (std) over its runs; ours: mean (std) over this run's seeds ({ours.seeds})")
                   if n],
            comparable=(f"runs of {model} on the {show} multiple-choice questions with {cond.names} names and memory "
                        f"{label}{k_text} over the whole simulation, as this run is; still different: "
                        f"{differences(cond)}")))
    if not matched:
        notes.append(f"the paper reports {model} only for shows/names other than these ({cond.names} names)")
    references += _error_analysis(cond, model, shows, general)
    return references, notes


def _error_analysis(cond: RunConditions, model: str, shows: dict[str, ShowFigures],
                    general: list[str]) -> list[Reference]:
    """§5.3's accuracy by question kind (Gemini 2.5 Flash on Friends, Base LLM and oracle), beside ours."""
    analysis = paper()["error_analysis"]
    show = analysis["show"]
    if model != analysis["model"] or show not in shows or cond.names != analysis["names"] \
            or cond.memory not in analysis["rows"] or general:
        return []
    ours = shows[show].groups
    return [Reference(
        title=f"{analysis['title']}, memory {cond.memory} (accuracy %)", source=f"{SOURCE}, §5.3",
        unit="percent", columns=["questions", "paper %", "ours %"],
        rows=[[kind, value, _pct(ours.get(kind))] for kind, value in analysis["rows"][cond.memory].items()],
        notes=["ours: over all of this run's questions of each kind on friends (seeds pooled)"],
        comparable=(f"runs of {model} on the friends multiple-choice questions with generic names and memory "
                    f"{cond.memory} ({'the evidence sessions' if cond.memory == 'oracle' else 'Base LLM'}) over the "
                    f"whole simulation, as this run is; still different: {differences(cond)}"))]
