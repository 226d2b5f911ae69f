"""`assert_mean`: a gate on a metric's mean that knows its uncertainty (docs/trust.md). It passes when the lower
bound of the mean's interval is at least `at_least`: PPI++'s with labels (valid whatever the judge's errors), else
the judge-only bootstrap interval, and the message says that it measures how sure the judge's own mean is, not how
close it is to what people would say.

PYTEST_DONT_REWRITE
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragjudge.trust.intervals import Interval


def _samples(run: Any) -> tuple[list[Any], str]:
    from ragjudge.api.trust import run_samples

    if hasattr(run, "samples") and hasattr(run, "summary"):  # an EvalResult (ragjudge.evaluate, load_run)
        return list(run.samples), "the run"
    if isinstance(run, (str, Path)):
        return run_samples(run), str(run)
    raise TypeError(f"assert_mean: run must be an EvalResult or a run folder / results file, got "
                    f"{type(run).__name__}")


def assert_mean(metric: str, at_least: float, *, run: Any, confidence: float = 0.95,
                labels: str | Path | None = None) -> Interval:
    """Fail unless the lower bound of `metric`'s mean interval over `run`'s samples is at least `at_least`; the
    message gives the interval and how it was made. Returns the interval."""
    __tracebackhide__ = True
    from ragjudge.api.trust import judge_values, means
    from ragjudge.trust.labels import by_metric, read_labels

    samples, where = _samples(run)
    judge = judge_values(samples, metric)
    if not judge:
        raise AssertionError(f"assert_mean: no sample of {where} has a {metric} score")
    if labels is not None:
        labelled = by_metric(read_labels(labels)).get(metric, {})
        if len(set(labelled) & set(judge)) < 2:
            raise AssertionError(f"assert_mean: {labels} labels {len(set(labelled) & set(judge))} of the samples "
                                 f"scored on {metric}; PPI++ needs at least 2")
        found = means(judge, labelled, confidence=confidence)
        interval = found["ppi++"] or found["labels only"]
        basis = "with your labels"
    else:
        interval = means(judge, {}, confidence=confidence)["judge only"]
        basis = ("judge only, no labels: how sure the judge's own mean is, not how close it is to people's; "
                 "pass labels= for an interval that is")
    if interval is None:
        raise AssertionError(f"assert_mean: {metric} has {len(judge)} score(s): too few for an interval")
    if interval.low < at_least:
        raise AssertionError(f"assert_mean: {metric} mean {interval.text()}: the lower bound {interval.low:.3f} is "
                             f"below {at_least:g} ({basis})")
    return interval
