"""KB refinement's sample-log records. A predicted pair (a predictions file's row): the two articles (`contexts`), the
gold kinds of the pair (`target`; none: not a gold pair), the predicted kind (`output`) and whether it is right. The
baseline's own run has one sample, the KB: its predicted and gold pairs by kind, with the run's P/R/F1."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragjudge.bench.cxm import metrics as M
from ragjudge.bench.cxm.kb_refinement.data import predicted_pair
from ragjudge.bench.cxm.kb_refinement.scorers import Pairs, gold_kinds
from ragjudge.bench.cxm.models import Article
from ragjudge.bench.cxm.samples import error_of, facts
from ragjudge.engine.bench import Record
from ragjudge.formats.samples import Passage, Sample, Score


def _article(article_id: str, articles: dict[str, Article] | None) -> Passage:
    found = (articles or {}).get(article_id)
    return Passage(id=article_id, title=found.title if found else None, text=found.text if found else None)


def pair_sample(sample_id: str, row: Record, gold: Pairs, articles: dict[str, Article] | None) -> Sample:
    kind, pair = predicted_pair(row, None, 0)
    a, b = sorted(pair)
    kinds = gold_kinds(pair, gold)
    return Sample(id=sample_id, input=f"articles {a} and {b}", target=kinds[0] if len(kinds) == 1 else kinds or None,
                  output=kind, contexts=[_article(a, articles), _article(b, articles)],
                  scores={} if row.get("error") else {f"{kind} precision": Score(value=float(kind in kinds))},
                  error=error_of(row), metadata=facts(row, ("threshold", "judge_model", "score")))


def kb_sample(sample_id: str, output: Record, gold: Pairs, kinds: Sequence[str], n_articles: int) -> Sample:
    """The baseline's run over the whole KB (`kinds`: those it predicts)."""
    predicted: dict[str, set[frozenset[str]]] = {}
    for row in output.get("rows") or []:
        predicted.setdefault(str(row["kind"]), set()).add(frozenset(row["pair"]))
    scores: dict[str, Score] = {}
    for kind in kinds:
        if kind not in gold and kind not in predicted:
            continue
        s = M.pair_prf(gold.get(kind, set()), predicted.get(kind, set()))
        scores.update({f"{kind} {name}": Score(value=s[key]) for name, key in
                       (("precision", "precision"), ("recall", "recall"), ("F1", "f1")) if s[key] is not None})

    def count(pairs: Pairs) -> list[str]:
        return [f"{len(pairs.get(kind, set()))} {kind} pairs" for kind in kinds]

    failures: list[Any] = output.get("judge_failures") or []
    return Sample(id=sample_id, input=f"the knowledge base ({n_articles} articles)", target=count(gold),
                  output=None if output.get("error") else "; ".join(count(predicted)), scores=scores,
                  error=error_of(output), metadata={"contradiction judge errors": len(failures)} if failures else {})
