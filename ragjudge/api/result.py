"""`EvalResult`: a finished run as Python objects: its summary (the result contract) and its samples (the sample
log's records), read back from a run's files by `load_run` or handed over by `evaluate` directly; either way a
DataFrame or a report made from it shows the same samples through the same view.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragjudge.engine.summary import Summary
from ragjudge.formats.samples import Sample, Score

if TYPE_CHECKING:
    import pandas as pd

    from ragjudge.engine.outputs import OutputPaths
    from ragjudge.engine.runner import RunOutcome
    from ragjudge.llm.usage import ModelUsage


@dataclass
class EvalResult:
    """A run's `summary` (what `--format json` prints), its `samples` (the lines of samples.jsonl, as `Sample`s),
    `run_info` (what run.json holds) and, when it wrote files, where (`path`: its sample log; `files`: all of them)."""

    summary: Summary
    samples: list[Sample]
    path: Path | None = None
    run_info: dict[str, Any] = field(default_factory=dict)
    files: OutputPaths | None = field(default=None, repr=False)
    usage: dict[str, ModelUsage] = field(default_factory=dict, repr=False)
    """LLM usage of this invocation by model (calls, cached, tokens, cost)."""

    @classmethod
    def of(cls, outcome: RunOutcome) -> EvalResult:
        """The engine's outcome of a run, as it is: nothing read back from disk."""
        usage = dict(outcome.gateway.usage.by_model) if outcome.gateway is not None else {}
        return cls(summary=outcome.summary, samples=outcome.samples, run_info=outcome.run_info,
                   path=outcome.paths.samples if outcome.paths is not None else None, files=outcome.paths,
                   usage=usage)

    @property
    def bench(self) -> str:
        return self.summary.bench

    @property
    def exit_code(self) -> int:
        """What the CLI exits with: 0, or 1 when any sample had an error (the summary's n_errors)."""
        return 1 if self.summary.n_errors else 0

    def to_pandas(self) -> pd.DataFrame:
        """One row per sample: `sample_id`, `question`, `answer`, `contexts` (the passages' texts, as RAGAS's
        `retrieved_contexts`), `reference` when the samples have one, the breakdown labels (a label with several values
        joined with `, `), then each metric's value (NaN when none) and `<metric>_reason` (docs/python-api.md)."""
        import pandas as pd

        rows, labels, metrics = [], {}, {}
        with_reference = any(s.target is not None for s in self.samples)
        for s in self.samples:
            facets = {k: ", ".join(v) if isinstance(v, list) else v for k, v in s.labels.items()}
            labels.update(dict.fromkeys(facets))
            metrics.update(dict.fromkeys(s.scores))
            row = {"sample_id": s.id, "question": s.question, "answer": s.output,
                   "contexts": [p.text if p.text is not None else p.id for p in s.contexts]}
            if with_reference:
                row["reference"] = s.reference
            scored: dict[str, Any] = {}
            for name, score in s.scores.items():
                scored[name] = score.value
                scored[reason_column(name)] = no_value_reason(score, s.error)
            rows.append({**row, **facets, **scored})
        base = ["sample_id", "question", "answer", "contexts", *(["reference"] if with_reference else [])]
        shown = [m for m in metrics if m not in labels and m not in base]
        columns = [*base, *(k for k in labels if k not in base),
                   *(c for m in shown for c in (m, reason_column(m)))]
        frame = pd.DataFrame(rows, columns=columns)
        for m in shown:  # a metric no sample has a value for is still a float column of NaN
            frame[m] = frame[m].astype(float)
        return frame

    def report(self, path: str | Path) -> Path:
        """Write the HTML report of this run (what `ragjudge report RUN --out PATH` writes); returns its path."""
        from ragjudge.report.build import build_report
        from ragjudge.report.load import in_memory_run

        run = self.path if self.path is not None else in_memory_run(self.summary, self.samples, self.run_info)
        return build_report([run], path).path


def load_run(path: str | Path) -> EvalResult:
    """Read a run: a `ragjudge eval` run folder, or a `ragjudge judge` results file (with its `.summary.json` and
    `.samples.jsonl` beside it). Anything that is not a run is an `InputError` saying what is missing."""
    from ragjudge.report.load import load_run as load

    loaded = load(path)
    return EvalResult(summary=loaded.summary, samples=loaded.samples, path=loaded.path, run_info=loaded.run_info)


def reason_column(metric: str) -> str:
    """The DataFrame column beside a metric's that says why a sample has no value for it."""
    return f"{metric}_reason"


def no_value_reason(score: Score, sample_error: str | None = None) -> str | None:
    """Why a score has no value: `error: ...` or `not applicable: ...`; None when it has one (or is a label)."""
    if score.value is not None:
        return None
    if score.error:
        return f"error: {score.error}"
    if skipped := score.details.get("skipped"):
        return f"not applicable: {skipped}"
    if sample_error:
        return f"error: {sample_error}"
    return None
