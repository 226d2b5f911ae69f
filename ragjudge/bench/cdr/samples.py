"""A CDR query as the sample log's record: the analytical query, its relevant conversations (`target_contexts`),
the conversation ranking (`contexts`: id, score, the unit that ranked it), every figure under the summary's names,
and its task category."""

from __future__ import annotations

from ragjudge.bench.cdr.data import CdrQuery
from ragjudge.bench.cdr.metrics import METRICS
from ragjudge.engine.bench import SampleResult
from ragjudge.formats.samples import Passage, Sample, Score


def query_sample(result: SampleResult[CdrQuery]) -> Sample:
    query, output = result.sample, result.output
    scored = result.scores.get("metrics") or {}
    figures = scored.get("metrics") or {}
    scores = {m: Score(value=figures[m]) for m in METRICS if isinstance(figures.get(m), (int, float))}
    if scored.get("error"):
        scores = {m: Score(error=str(scored["error"])) for m in METRICS}
    ranking = [Passage(id=str(r["id"]), score=r.get("score"), metadata={"unit": r["unit"]} if r.get("unit") else {})
               for r in output.get("ranking") or []]
    return Sample(id=query.id, input=query.text, target_contexts=[Passage(id=c, score=1.0) for c in query.relevant],
                  contexts=ranking, scores=scores, labels={"category": query.category} if query.category else {},
                  error=str(output["error"]) if output.get("error") else None,
                  metadata={k: v for k, v in {"units_ranked": output.get("units_ranked"),
                                              "seconds": output.get("seconds"), "listed": query.listed}.items()
                            if v is not None})
