"""How `ragjudge report` shows MTRAG samples: the generic view (conversation, reference passages and the passages
the generator saw, answer, reference, every judge with its panel), plus the one thing only MTRAG knows: where its
IDK judge and its reference-based judges disagree."""

from __future__ import annotations

from typing import Any

from ragjudge.bench.mtrag.metrics import IDK_JUDGES
from ragjudge.formats.samples import Sample
from ragjudge.report.view import ReportView

RB_METRICS = ("RB_llm", "RB_agg")
DISAGREE_AT = 0.5


class MtragView(ReportView):
    def metadata(self, sample: Sample) -> dict[str, Any]:
        """The task's own fields as read (its references are shown above), then the run's."""
        record = {k: v for k, v in (sample.metadata.get("record") or {}).items() if k != "targets"}
        return {**record, **{k: v for k, v in sample.metadata.items() if k != "record"}}

    def flags(self, sample: Sample) -> dict[str, bool]:
        """IDK vs RB: the IDK judge says the answer declines, a reference-based judge scores it 0.5 or more."""
        idk = next((s.value for s in sample.scores.values() if s.judge in IDK_JUDGES and s.value is not None), None)
        values = sample.values()
        rb = [values[m] for m in RB_METRICS if m in values]
        if idk is None or not rb:
            return {}
        return {"IDK says declined, RB ≥ 0.5": idk >= 1.0 and max(rb) >= DISAGREE_AT}
