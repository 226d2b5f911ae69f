"""The retrieval benches' scorer: each query's R@k and nDCG@k (k = 1, 3, 5, 10), through ranx as `ragjudge
retrieval-eval` computes them (`ragjudge.retrieval_eval.metrics.evaluate`), one ranx call per query file for every
query it is given. A query the qrels do not judge gets no figure (retrieval-eval leaves it out too)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

from ragjudge.bench.mtrag.retrieval.data import RetrievalQuery
from ragjudge.bench.mtrag.retrieval.solver import ranking
from ragjudge.engine.bench import Record, Scorer, fingerprint
from ragjudge.formats.runs import Qrels, Run
from ragjudge.models import normalize_task_id
from ragjudge.retrieval_eval.metrics import evaluate, label

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext

METRICS = [f"{family}@{k}" for family in ("recall", "ndcg") for k in (1, 3, 5, 10)]
"""ranx's names; summaries and samples say R@k and nDCG@k (ragjudge.retrieval_eval.metrics.label)."""
HEADLINE = "nDCG@10"
"""A query's `value`: the summary's headline metric (retrieval-eval's first choice)."""
UNJUDGED = "the qrels judge no passage of this query relevant: no figure (retrieval-eval leaves it out too)"


def per_query(items: Sequence[tuple[RetrievalQuery, Record]]) -> dict[str, dict[str, float]]:
    """Sample id -> its figures under the summary's names, for every judged query among `items`."""
    figures: dict[str, dict[str, float]] = {}
    for kind in dict.fromkeys(q.kind for q, _ in items):
        judged = [(q, out) for q, out in items if q.kind == kind and q.relevant]
        if not judged:
            continue
        run, qrels = Run(name=kind), Qrels()
        for q, out in judged:
            key = normalize_task_id(q.query_id)
            run.add(q.query_id, ranking(out))
            qrels.judgments[key], qrels.ids[key] = dict(q.relevant), q.query_id
        evaluation = evaluate(run, qrels, METRICS, [normalize_task_id(q.query_id) for q, _ in judged])
        for i, (q, _) in enumerate(judged):
            figures[q.id] = {label(m): v for m, v in evaluation.query_scores(i).items()}
    return figures


class RankingScorer(Scorer[RetrievalQuery]):
    name = "ranking"

    def fingerprint(self, sample: RetrievalQuery, output: Record) -> str:
        return fingerprint(METRICS, [(h.doc_id, h.score) for h in ranking(output)])

    async def score(self, items: Sequence[tuple[RetrievalQuery, Record]], ctx: RunContext
                    ) -> AsyncIterator[tuple[str, Record]]:
        figures = per_query(items)
        for query, _ in items:
            found = figures.get(query.id)
            yield query.id, {"value": found[HEADLINE], "metrics": found} if found else {"unjudged": UNJUDGED}
