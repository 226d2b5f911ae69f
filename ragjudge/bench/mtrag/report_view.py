"""How `ragjudge report` shows MTRAG results: the conversation, the passages (reference vs retrieved, marked),
the answer, the reference answer, every judge with its panel, and the paper's breakdowns.

Which passages are references depends on the run's setting (run.json): with `reference` the task's contexts
are its reference passages and the generator saw exactly those; with `reference+rag` each passage carries its
`origin`; with `rag` the contexts are what the generator retrieved and the references are kept in
`ragjudge.reference_contexts`. A results file judged from someone else's predictions (`ragjudge judge`) shows
its contexts as given.
"""

from __future__ import annotations

from typing import Any

from ragjudge.bench.mtrag.assemble import IDK_JUDGES
from ragjudge.models import domain_of, normalize_task_id
from ragjudge.report.view import (
    Block,
    Record,
    ReportView,
    conversation_block,
    judges_block,
    passage_item,
    passages_block,
    text_block,
)

RB_METRICS = ("RB_llm", "RB_agg")
DISAGREE_AT = 0.5


class MtragView(ReportView):
    def sample_id(self, record: Record) -> str | None:
        task_id = record.get("task_id")
        return normalize_task_id(str(task_id)) if task_id is not None else None

    def title(self, record: Record) -> str:
        for turn in reversed(record.get("input") or []):
            if isinstance(turn, dict) and turn.get("speaker") == "user":
                return str(turn.get("text", ""))
        return str(record.get("task_id", ""))

    def facets(self, record: Record) -> dict[str, str | list[str]]:
        turn = record.get("turn")
        out: dict[str, str | list[str]] = {
            "answerability": _first(record.get("answerability")),
            "domain": domain_of(record.get("Collection") or record.get("collection")) or "",
            "turn": "first" if turn == 1 else "later" if isinstance(turn, int) else "",
            "question_type": [str(q) for q in record.get("Question Type") or [] if isinstance(q, str)],
            "multi_turn": _first(record.get("Multi-Turn")),
        }
        return {k: v for k, v in out.items() if v}

    def metrics(self, record: Record) -> dict[str, float]:
        out = {}
        for name, value in (record.get("metrics") or {}).items():
            value = value[0] if isinstance(value, list) and value else value
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                out[name] = float(value)
        return out

    def judges(self, record: Record) -> dict[str, dict[str, Any]]:
        return dict(((record.get("ragjudge") or {}).get("judges") or {}))

    def errors(self, record: Record) -> dict[str, str]:
        return {k: str(v) for k, v in ((record.get("ragjudge") or {}).get("errors") or {}).items()}

    def flags(self, record: Record) -> dict[str, bool]:
        """IDK vs RB: the IDK judge says the answer declines, a reference-based judge scores it 0.5 or more."""
        judges = self.judges(record)
        idk = next((judges[j].get("value") for j in IDK_JUDGES if j in judges), None)
        metrics = self.metrics(record)
        rb = [metrics[m] for m in RB_METRICS if m in metrics]
        if idk is None or not rb:
            return {}
        return {"IDK says declined, RB ≥ 0.5": idk >= 1.0 and max(rb) >= DISAGREE_AT}

    def blocks(self, record: Record) -> list[Block]:
        blocks = self.error_blocks(record)
        turns = [t for t in record.get("input") or [] if isinstance(t, dict)]
        blocks.append(conversation_block(turns, "Conversation", shared=True, current_last_user=True))
        blocks += self.passage_blocks(record)
        prediction = next((p.get("text") for p in record.get("predictions") or [] if isinstance(p, dict)), None)
        blocks.append(text_block("Answer", prediction if isinstance(prediction, str) else "(no prediction)"))
        reference = next((t.get("text") for t in record.get("targets") or [] if isinstance(t, dict)), None)
        if reference:
            blocks.append(text_block("Reference answer", str(reference), shared=True))
        metrics = self.metrics(record)
        if metrics:
            blocks.append({"kind": "metrics", "title": "Metrics", "items": [[k, v] for k, v in metrics.items()]})
        judges = self.judges(record)
        if judges:
            blocks.append(judges_block(judges))
        return blocks

    def passage_blocks(self, record: Record) -> list[Block]:
        contexts = [c for c in record.get("contexts") or [] if isinstance(c, dict)]
        kept = (record.get("ragjudge") or {}).get("reference_contexts")
        setting = self.run_info.get("setting")
        if kept is not None:  # rag: contexts were retrieved; the references were kept aside
            references = [c for c in kept if isinstance(c, dict)]
        elif any("origin" in c for c in contexts):
            references = [c for c in contexts if c.get("origin") == "reference"]
        elif setting == "reference":
            references = contexts
        else:
            return [passages_block([passage_item(c, c.get("origin")) for c in contexts], "Passages",
                                   note="the contexts of the predictions file") if contexts else
                    passages_block([], "Passages", note="no passages")]
        ref_ids = {str(c.get("document_id")) for c in references}
        blocks = [passages_block([passage_item(c, "reference") for c in references], "Reference passages",
                                 shared=True, note=None if references else "none: the task has no reference passage")]
        if setting == "reference" and kept is None:
            note = "the reference passages above" if contexts else "none (unanswerable or conversational turn)"
            shown = []
        else:
            hits = sum(str(c.get("document_id")) in ref_ids for c in contexts)
            note = f"{hits} of {len(contexts)} are reference passages" if contexts else "none"
            shown = [passage_item(c, "retrieved, reference" if str(c.get("document_id")) in ref_ids and
                                  c.get("origin") != "reference" else c.get("origin") or "retrieved")
                     for c in contexts]
        blocks.append(passages_block(shown, "Passages the generator saw", note=note))
        return blocks


def _first(value: Any) -> str:
    if isinstance(value, list):
        value = value[0] if value else None
    return str(value) if isinstance(value, str) else ""
