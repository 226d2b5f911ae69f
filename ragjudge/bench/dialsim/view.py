"""How `ragjudge report` shows DialSim samples: the generic view, plus each answer's verdict as a facet (ambiguous
and wrong both score 0), and the recalled memory always listed with labels and scores, evidence-session items marked
(the generic view would fold items whose ids are the references' into "the reference passages above", but several
items may come from one session, and evidence sessions carry no label).
"""

from __future__ import annotations

from ragjudge.formats.samples import Sample
from ragjudge.report.view import ReportView


class DialSimView(ReportView):
    passage_titles = ("Evidence sessions", "Memory recalled", "from an evidence session")
    fold_references = False

    def facets(self, sample: Sample) -> dict[str, str | list[str]]:
        found = dict(sample.labels)
        strict = sample.scores.get("accuracy")
        if strict is not None and strict.label:
            found["verdict"] = strict.label
        return found
