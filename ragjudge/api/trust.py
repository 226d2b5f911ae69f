"""How far a judge can be trusted on your run, from Python: which samples to label (`label_sample`), the judge's
agreement with a person's labels and each mean three ways (`agreement_with_labels`), the paired difference of two
runs on the same samples (`paired_difference`). The statistics are `ragjudge.trust`'s; see docs/trust.md."""

from __future__ import annotations

from ragjudge.trust.runs import (LabelSample, agreement_with_labels, judge_values, label_sample, means,
                                 paired_difference, read_label_sample, run_samples)

__all__ = ["LabelSample", "agreement_with_labels", "judge_values", "label_sample", "means", "paired_difference",
           "read_label_sample", "run_samples"]
