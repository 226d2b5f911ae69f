"""What MTRAG-UN's retrieval summary adds to `mtrag-retrieval`'s: the task A headline (nDCG@5, then @1, @3, @10, over
the qrels' answerable queries), published task A results beside a run on the release's qrels, the LLM rewrites'
counts (fallbacks reported, never hidden), and a note when no query is labelled standalone (Table 3 needs it)."""

from __future__ import annotations

from collections.abc import Sequence

from ragjudge.bench.mtrag.retrieval.data import KIND_NAMES, RetrievalQuery
from ragjudge.bench.mtrag.un import leaderboard
from ragjudge.engine.bench import SampleResult
from ragjudge.engine.summary import Summary, headline_of
from ragjudge.formats.runs import Qrels
from ragjudge.retrieval.queries import rewrite_warning


TASK_A = ("nDCG@5", ("nDCG@1", "nDCG@3", "nDCG@10"))
"""MTRAGEval task A's ranking figure, and the other cut-offs its task page names."""


def add_to_summary(summary: Summary, results: Sequence[SampleResult[RetrievalQuery]], rewrite_model: str | None,
                   standalone: bool, *, domain: str, qrels: Qrels) -> Summary:
    headline = headline_of(summary.metrics, [TASK_A[0]], summary.unit, also=TASK_A[1])
    if headline is not None:
        kind = KIND_NAMES[summary.details["primary"]]
        summary.headline = headline.model_copy(update={"text": f"{headline.text} ({kind})"})
    verdict = leaderboard.retrieval_comparable(domain, leaderboard.qrels_lines(qrels.judgments, qrels.ids))
    if verdict.task is not None:
        summary.reference.insert(0, leaderboard.retrieval_reference(domain))
    else:
        summary.notes.append(f"the MTRAGEval task A leaderboard is not shown beside this run: {verdict.why}")
    rewrites = [r.output for r in results if r.sample.kind == "rewrite"]
    if rewrites:
        fallbacks = [str(o["rewrite_fallback"]) for o in rewrites if o.get("rewrite_fallback")]
        failed = sum(1 for f in fallbacks if f.startswith("call failed"))
        summary.details["rewrite"] = {"model": rewrite_model, "rewritten": len(rewrites) - len(fallbacks),
                                      "fallback_malformed": len(fallbacks) - failed, "fallback_error": failed}
        warning = rewrite_warning(summary.details["rewrite"])
        if warning:
            summary.warnings.append(warning.removeprefix("warning: "))
    if not standalone:
        summary.notes.append("no standalone / non-standalone breakdown (the paper's Table 3): the MTRAG-UN release "
                             "does not label it; give labels with -T labels=FILE")
    return summary
