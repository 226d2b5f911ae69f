"""A retrieval query as the sample log's record (docs/benches/mtrag.md, Retrieval).

`input` is the conversation up to the query (MTRAG-UN's tasks), else the last user turn as asked (MTRAG's lastturn
file), else the query as loaded. The sample's id is `<kind>/<query id>` (a task is a sample once per query kind);
`metadata` carries the domain and MTRAG `collection` as the run files write them: what `retrieval-eval` and
`export --to mtrageval-a` read from the sample log. A query the qrels do not judge has no scores.
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
