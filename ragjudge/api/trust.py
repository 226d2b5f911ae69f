"""How far a judge can be trusted on your run, from Python: `label_sample`, `agreement_with_labels` (with each mean
three ways) and `paired_difference`, over `ragjudge.trust`'s statistics; see docs/trust.md."""

from __future__ import annotations

from ragjudge.trust.runs import (LabelSample, agreement_with_labels, judge_values, label_sample, means,
                                 paired_difference, read_label_sample, run_samples)

__all__ = ["LabelSample", "agreement_with_labels", "judge_values", "label_sample", "means", "paired_difference",
           "read_label_sample", "run_samples"]
