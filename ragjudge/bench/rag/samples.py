"""A judged RAG record as the sample log's record: the question (or the conversation), the app's answer and
passages, the reference and its passages, each judge's verdict under its metric's name, the record's labels."""

from __future__ import annotations

from collections.abc import Sequence

from ragjudge.engine.bench import SampleResult
from ragjudge.formats.rag_records import RagRecord
from ragjudge.formats.samples import Message, Sample, Score
from ragjudge.judges import Judge
from ragjudge.models import Passage


def record_sample(result: SampleResult[RagRecord], judges: Sequence[Judge]) -> Sample:
    record = result.sample
    question: str | list[Message] = record.question if len(record.turns) == 1 else \
        [Message(role="assistant" if t.speaker == "agent" else t.speaker, content=t.text) for t in record.turns]
    scores = {j.metric: Score.model_validate(result.scores[j.name]).filed() for j in judges if j.name in result.scores}
    references = _shown(record.reference_contexts) + [Passage(id=i) for i in record.reference_context_ids
                                                      if i not in {p.id for p in record.reference_contexts}]
    return Sample(id=record.id, input=question, target=record.reference, target_contexts=references,
                  output=record.answer, contexts=_shown(record.contexts), scores=scores, labels=dict(record.labels),
                  error=str(result.output["error"]) if result.output.get("error") else None,
                  metadata=dict(record.metadata))


def _shown(passages: Sequence[Passage]) -> list[Passage]:
    """A record's passages as its sample shows them: a passage given by its id alone has no text ("" to the judges)."""
    return [p if p.text else p.model_copy(update={"text": None}) for p in passages]
