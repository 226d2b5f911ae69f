"""A multi-turn retrieval turn as the sample log's record: gold articles as `target_contexts`, the ranking as
`contexts`, the query in metadata, the turn's figures under the summary's names."""

from __future__ import annotations

from collections.abc import Sequence

from ragjudge.bench.cxm.models import RagCase
from ragjudge.bench.cxm.multiturn_retrieval.scorers import PaperProtocol, turn_figures
from ragjudge.bench.cxm.samples import CALL_FACTS, articles, conversation, error_of, facts
from ragjudge.engine.bench import Record
from ragjudge.formats.samples import Sample, Score


def turn_sample(sample_id: str, case: RagCase | None, row: Record, ks: Sequence[int],
                protocol: PaperProtocol) -> Sample:
    ranking = [str(i) for i in row.get("ranking") or []]
    chunks = row.get("chunk_articles")
    scores = {} if case is None or row.get("error") else {
        name: Score(value=v) for name, v in turn_figures(ranking, case.kb_ids, ks, None if chunks is None else
                                                         [str(i) for i in chunks], protocol).items()}
    case_id = case.case_id if case is not None else str(row.get("case_id", sample_id))
    return Sample(id=sample_id, input=conversation(case.messages) if case is not None else case_id,
                  target=case.reference if case is not None else None,
                  target_contexts=articles(case.kb_ids, [1.0] * len(case.kb_ids)) if case is not None else [],
                  contexts=articles(ranking), scores=scores, error=error_of(row),
                  metadata=facts(row, ("query", "query_strategy", "query_raw", "chunk_articles", *CALL_FACTS),
                                 case_id=case_id))
