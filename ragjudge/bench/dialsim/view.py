"""How `ragjudge report` shows DialSim samples: the generic view (the question with its options, the answer, the gold
answer, accuracy and calibrated accuracy, the other fields), plus what only DialSim knows:

- each answer's verdict (correct, wrong, ambiguous, timeout) as a facet to filter the task list by, since an
  ambiguous answer and a wrong one both score 0;
- the memory recalled always listed, each item with the label the agent saw and its retrieval score, the items from
  an evidence session marked (the generic view folds passages whose ids are the references' into "the reference
  passages above"; here several items may come from one session, and the evidence sessions carry no label).
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
