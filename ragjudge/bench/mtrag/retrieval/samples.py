"""A retrieval query as the sample log's record.

- `input`: the conversation up to the query (MTRAG-UN's tasks), else the last user turn as asked (MTRAG's lastturn
  file), else the query as loaded;
- `contexts`: the ranking (id, score, text and title); `target_contexts`: the qrels' relevant passages (the grade in
  `score`);
- `scores`: R@k and nDCG@k under the summary's names (none for a query the qrels do not judge);
- `labels`: the summary's breakdowns (`queries`: Last Turn, Query Rewrite or All Questions; `turn`; `standalone`);
- `metadata`: `query_id` (the task's own id: the sample's id is `<kind>/<query id>`, as a task is a sample once per
  query kind), `query_kind`, `query` (the text searched), a rewrite's `rewrite_class` or `rewrite_fallback`, the
  domain and the MTRAG `collection` (as the run files write it: what `retrieval-eval` and `export --to mtrageval-a`
  read from the sample log).
"""

from __future__ import annotations

from ragjudge.bench.mtrag.retrieval.data import RetrievalQuery, collection_of
from ragjudge.bench.mtrag.retrieval.scorers import METRICS
from ragjudge.engine.bench import SampleResult
from ragjudge.formats.samples import Message, Passage, Sample, Score, messages
from ragjudge.retrieval_eval.metrics import label


def query_sample(result: SampleResult[RetrievalQuery], domain: str) -> Sample:
    query, output = result.sample, result.output
    scored = result.scores.get("ranking") or {}
    figures = scored.get("metrics") or {}
    scores = {name: Score(value=value) for name, value in figures.items()}
    if scored.get("error"):
        scores = {label(m): Score(error=str(scored["error"])) for m in METRICS}
    contexts = [Passage(id=str(c["document_id"]), text=c.get("text"), title=c.get("title"), score=c.get("score"))
                for c in output.get("contexts") or []]
    extra = {k: output[k] for k in ("rewrite_class", "rewrite_fallback") if output.get(k) is not None}
    metadata = {"query_id": query.query_id, "query_kind": query.kind, "query": output.get("query", query.text),
                **extra, "domain": domain, "collection": collection_of(query, domain)}
    if query.task is not None:
        metadata["conversation_id"] = query.task.conversation_id
    if scored.get("unjudged"):
        metadata["unjudged"] = scored["unjudged"]
    return Sample(id=query.id, input=_input(query), target_contexts=[Passage(id=doc, score=grade) for doc, grade
                                                                     in query.relevant.items()],
                  contexts=contexts, scores=scores, labels=dict(query.labels),
                  error=str(output["error"]) if output.get("error") else None, metadata=metadata)


def _input(query: RetrievalQuery) -> str | list[Message]:
    if query.task is not None:
        return messages(t.model_dump() for t in query.task.input)
    return query.question or query.text
