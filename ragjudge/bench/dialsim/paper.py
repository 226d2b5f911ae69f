"""The paper's figures (paper.json: Table 3, Appendix H and J, §5.3) as `Reference`s beside ours: a cell only beside
a run under its conditions, else one note line saying why (the conditions: docs/benches/dialsim.md, Reproducing the
paper's tables).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ragjudge.bench.dialsim.memory import DEFAULT_K
from ragjudge.bench.dialsim.plan import TKG_RATIO
from ragjudge.bench.dialsim.summary import ShowFigures
from ragjudge.engine.paper_rows import NONE_SHOWN, paper_row
from ragjudge.engine.summary import Reference

_PAPER = Path(__file__).resolve().parent / "paper.json"
SOURCE = "DialSim (Kim et al., arXiv 2406.13144v6)"
PAPER_EMBEDDING = "text-embedding-3-small"
ITEMS = {"utterance": "utterances", "session": "sessions", "summary": "session summaries", "oracle": "sessions"}
TABLE3_HELP = (
    "The paper's Table 3 (Friends, generic names, multiple choice scored by rule, no time limit, 70% temporal "
    "questions, the whole simulation), e.g. its GPT-4o-mini BM25 Session Entire cell: `ragjudge eval --bench dialsim "
    "--data FOLDER --gen openai/gpt-4o-mini -T shows=friends -T memory=session -T retriever=bm25 -T seeds=0,1,2` "
    "with FOLDER holding friends_dialsim.pickle and both oracle pickles (without them the plan cannot apply the "
    "evidence-date rule and no paper cell is shown). Other columns: -T memory=recent (Base LLM), utterance or "
    "summary; the Embedding columns: -T retriever=SPEC.yaml with `retriever: {name: dense, options: {encoder: "
    "litellm, model: openai/text-embedding-3-small}}`. Keep -T format=mc, k, tkg_ratio and names at their defaults "
    "and add no --limit or -T time_limit: the cell is printed beside the run only then. Appendix H: "
    "-T shows=bigbang or theoffice; Appendix J: -T names=original or swapped.")
"""How to reproduce a Table 3 cell (`ragjudge benches show dialsim`)."""


@lru_cache(maxsize=1)
def paper() -> dict[str, Any]:
    return json.loads(_PAPER.read_text(encoding="utf-8"))


def paper_model(gen: str) -> str | None:
    """The paper's row for a `--gen` value: one of the row's exact names in paper.json's alias table (a litellm
    route such as `openai/` or `hosted_vllm/` may precede it). Never a prefix or a nearby name."""
    return paper_row(gen, paper()["aliases"])


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
    judge: str = "rule"
    """Who scored the answers: `rule` (multiple choice), `lexical` or the LLM judge's model."""
    time_limit: float | None = None
    """-T time_limit (None: answers may take as long as they take, as in the paper)."""
    evidence_rule: bool = True
    """Whether the plan skipped questions whose evidence session had not happened yet (needs the oracle dates)."""


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
    """The run's conditions that no paper figure shares (whatever the model and memory): paper.json's
    `conditions` (answer format, judge, time limit, temporal share), the whole simulation, the context, k."""
    paper_cond = paper()["conditions"]
    found = []
    if cond.fmt != paper_cond["format"]:
        found.append(f"the paper's figures are multiple choice (-T format={paper_cond['format']}); this run answers "
                     f"{cond.fmt}")
    if cond.judge != paper_cond["judge"]:
        found.append(f"the paper's answers are scored by rule (the option letter); this run's are judged by "
                     f"{cond.judge}")
    if cond.time_limit != paper_cond["time_limit"]:
        found.append(f"the paper sets no time limit; this run abandons answers after -T time_limit="
                     f"{cond.time_limit:g} s")
    if not cond.all_questions:
        found.append("this run asks only part of its simulation's questions (--limit)")
    if not cond.evidence_rule:
        found.append("without the oracle evidence dates this run's plan could not skip questions whose evidence "
                     "session has not happened yet, as the official simulator does")
    if cond.tkg_ratio != paper_cond["tkg_ratio"]:
        found.append(f"the paper draws {paper_cond['tkg_ratio']:.0%} temporal questions; this run -T tkg_ratio="
                     f"{cond.tkg_ratio:g}")
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
    paper's cell for the run's memory strategy beside our accuracy (%), when the run's conditions are the cell's.
    When no cell is shown, exactly one note line saying why (`no paper figure is shown: ...`)."""
    model = paper_model(cond.gen)
    data = paper()
    if model is None:
        return [], [f"{NONE_SHOWN}the paper reports no figures for {cond.gen} (models are matched by exact name, "
                    f"paper.json's alias table)"]
    tables = [t for t in data["tables"] if t["show"] in shows and t["names"] == cond.names and model in t["rows"]]
    general = mismatches(cond)
    col, no_column = column(cond)
    why = general + ([no_column] if col is None and no_column else [])
    references: list[Reference] = []
    notes: list[str] = []
    if not tables:
        notes.append(f"{NONE_SHOWN}the paper reports {model} only for shows/names other than these "
                     f"({', '.join(sorted(shows))}; {cond.names} names)")
    elif why:
        where = ", ".join(f"{t['title']} ({t['show']})" for t in tables)
        notes.append(f"{NONE_SHOWN}the paper reports {model} with {cond.names} names in {where}, not under this "
                     f"run's conditions: {'; '.join(why)}")
    for table in tables if not why else []:
        assert col is not None
        show = table["show"]
        cell = table["rows"][model][col]
        ours = shows[show]
        label = data["column_labels"][col]
        k_text = "" if cond.memory == "recent" else f" (k={cond.k})"
        references.append(Reference(
            title=f"DialSim paper, {table['title']}: {model}, {label} (accuracy %)", source=f"{SOURCE}, {table['title']}",
            unit="percent", columns=["show", "paper %", "paper std", "ours %", "ours std", "questions"],
            rows=[[show, cell[0], cell[1] if len(cell) > 1 else None, _pct(ours.accuracy), _pct(ours.std), ours.n]],
            notes=[n for n in (data["note"] if table["title"].startswith("Appendix H") else "",
                               f"paper: mean (std) over its runs; ours: mean (std) over this run's seeds ({ours.seeds}), "
                               f"failed answers counted wrong as in the paper")
                   if n],
            comparable=(f"runs of {model} on the {show} multiple-choice questions scored by rule, with no time limit, "
                        f"{cond.names} names and memory {label}{k_text} over the whole simulation, as this run is; "
                        f"still different: {differences(cond)}")))
    analysis = _error_analysis(cond, model, shows, general)
    if analysis and notes and not references and not general:  # the oracle: no Table 3 column, but §5.3 has it
        notes = [notes[0].removeprefix(NONE_SHOWN)]
    return references + analysis, notes


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
        comparable=(f"runs of {model} on the friends multiple-choice questions scored by rule, with no time limit, "
                    f"generic names and memory "
                    f"{cond.memory} ({'the evidence sessions' if cond.memory == 'oracle' else 'Base LLM'}) over the "
                    f"whole simulation, as this run is; still different: {differences(cond)}"))]
