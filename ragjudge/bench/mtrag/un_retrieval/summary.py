"""What MTRAG-UN's retrieval summary adds to `mtrag-retrieval`'s: how the LLM rewrites went (rewritten, fallen back
on a malformed answer or a failed call: reported, never hidden), and a note when no query is labelled standalone
or not (the paper's Table 3 needs it)."""

from __future__ import annotations

from collections.abc import Sequence

from ragjudge.bench.mtrag.retrieval.data import RetrievalQuery
from ragjudge.engine.bench import SampleResult
from ragjudge.engine.summary import Summary
from ragjudge.retrieval.queries import rewrite_warning


def add_to_summary(summary: Summary, results: Sequence[SampleResult[RetrievalQuery]], rewrite_model: str | None,
                   standalone: bool) -> Summary:
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
