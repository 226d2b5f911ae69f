"""A dialogue's result as the sample log's record and a row of results.csv (docs/benches/sentence-retrieval.md,
Outputs). The reply actually written (the data's `target`) is never read, so never shown. The whole-run figures come
from `evaluation.dialogue_figures` (`evaluation.py` says why), None when the dialogue was not scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragjudge.bench.sentence_retrieval.data import Dialogue
from ragjudge.bench.sentence_retrieval.evaluation import DIALOGUE_METRICS
from ragjudge.bench.sentence_retrieval.metrics import METRICS
from ragjudge.engine.bench import Record, SampleResult, failed
from ragjudge.formats.samples import Message, Passage, Sample, Score


def system_metric(metric: str, system: str) -> str:
    """`MAP[bm25_rerank]`: a system's figure, as the summary's `system` breakdown groups it."""
    return f"{metric}[{system}]"


def dialogue_sample(result: SampleResult[Dialogue], systems: Sequence[str], figures: dict[str, Any] | None) -> Sample:
    """`systems`: every system compared, in --pipeline order; `figures`: the dialogue's over the whole run."""
    d, output = result.sample, result.output
    scores: dict[str, Score] = {}
    metadata: dict[str, Any] = {"subreddit": d.subreddit, "title": d.title}
    contexts: list[Passage] = []
    if figures is not None:
        best = figures["best"]
        tested = figures["systems"][best]["tested"]
        if tested is not None:
            scores.update({m: Score(value=tested[dm], details={"system": best})
                           for m, dm in zip(METRICS, DIALOGUE_METRICS, strict=True)})
        orders = {name: picked_order(result.scores[name], figures["systems"][name]["pick"]) for name in systems}
        contexts = [Passage(id=d.candidates[i].id, title=d.candidates[i].title or None, text=d.candidates[i].body,
                            metadata={"initial_rank": i + 1}) for i in orders[best]]
        metadata.update(best_system=best, picks={n: figures["systems"][n]["pick"] for n in systems},
                        test_halves=figures["test_halves"],
                        rankings={n: [d.candidates[i].id for i in order] for n, order in orders.items() if n != best})
    for name in systems:
        score = result.scores.get(name)
        if failed(output) or score is None:
            continue
        if failed(score):
            scores[system_metric("MAP", name)] = Score(error=str(score["error"]))
        elif figures is not None and (tested := figures["systems"][name]["tested"]) is not None:
            scores.update({system_metric(m, name): Score(value=tested[dm])
                           for m, dm in zip(METRICS, DIALOGUE_METRICS, strict=True)})
    if not failed(output):
        metadata["queries"] = output.get("queries")
        if "rewrite" in output:
            metadata["rewrite"] = output["rewrite"]
    relevant = [Passage(id=c.id, title=c.title or None, text=c.body, score=1.0) for c in d.candidates if c.label == 1]
    return Sample(id=d.id, input=[Message(role=t.author_id or "user", content=t.body) for t in d.context],
                  target_contexts=relevant, contexts=contexts, scores=scores,
                  labels={"type": d.type, "system": list(systems)},
                  error=str(output["error"]) if failed(output) else None, metadata=metadata)


def picked_order(score: Record, pick: str) -> list[int]:
    """A system's ranking (candidate positions, best first) at the setting `pick`."""
    return [int(i) for i in score["rankings"][score["settings"].index(pick)]]


def row(result: SampleResult[Dialogue], systems: Sequence[str], figures: dict[str, Any] | None) -> dict[str, Any]:
    """The dialogue's line of results.csv: its type, relevant candidates, and every system's figures over the test
    halves (`<system> AP`, `<system> nDCG@5`, `<system> RR`)."""
    d = result.sample
    out: dict[str, Any] = {"id": d.id, "type": d.type, "n_relevant": d.n_relevant,
                           "first_relevant": d.labels.index(1) + 1}
    for name in systems:
        tested = figures["systems"][name]["tested"] if figures is not None else None
        if tested is not None:
            out.update({f"{name} {k}": v for k, v in tested.items()})
    out["errors"] = "; ".join(f"{k}: {v}" for k, v in result.errors.items()) or None
    return out
