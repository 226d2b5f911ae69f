"""`EvalResult`: a finished run as Python objects, read back from what the run wrote (`load_run`).

Every result, whether from `evaluate` or from a CLI run folder, is read through the report's loader, so a
DataFrame or a report made in a notebook matches the one made from the same files on the command line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragjudge.engine.summary import Summary

if TYPE_CHECKING:
    import pandas as pd

    from ragjudge.report.load import LoadedRun


@dataclass
class EvalResult:
    """A run's summary (`summary`: what `--format json` prints), its results records (`results`: the lines of
    results.jsonl) and where they are (`path`: the results file)."""

    summary: Summary
    results: list[dict[str, Any]]
    path: Path
    run_info: dict[str, Any] = field(default_factory=dict)
    _loaded: LoadedRun | None = field(default=None, repr=False)
    _keep: Any = field(default=None, repr=False)
    """A temporary folder holding the run's files, removed when the result is garbage-collected."""

    @property
    def bench(self) -> str:
        return self.summary.bench

    def to_pandas(self) -> pd.DataFrame:
        """One row per sample: `sample_id`, the breakdown labels the bench's report view gives (answerability,
        domain, turn, question type... for MTRAG; a label with several values is joined with `, `), then one
        column per metric (a sample's own value; NaN when it has none)."""
        import pandas as pd

        view = self._view()
        rows, labels, metrics = [], {}, {}
        for record in self.results:
            facets = {k: ", ".join(v) if isinstance(v, list) else v for k, v in view.facets(record).items()}
            values = view.metrics(record)
            labels.update(dict.fromkeys(facets))
            metrics.update(dict.fromkeys(values))
            rows.append({"sample_id": view.sample_id(record), **facets, **values})
        columns = ["sample_id", *labels, *(m for m in metrics if m not in labels)]
        return pd.DataFrame(rows, columns=columns)

    def report(self, path: str | Path) -> Path:
        """Write the HTML report of this run (what `ragjudge report RUN --out PATH` writes); returns its path."""
        from ragjudge.report.build import build_report

        return build_report([self.path], path).path

    def _view(self) -> Any:
        if self._loaded is None:
            self._loaded = _load(self.path)
        return self._loaded.view


def _load(path: str | Path) -> LoadedRun:
    from ragjudge.report.load import load_run as load

    return load(path)


def load_run(path: str | Path) -> EvalResult:
    """Read a run: a `ragjudge eval` run folder, or a `ragjudge judge` results file (with its `.summary.json`
    beside it). Anything that is not a run is an `InputError` saying what is missing."""
    loaded = _load(path)
    return EvalResult(summary=loaded.summary, results=loaded.records, path=loaded.path, run_info=loaded.run_info,
                      _loaded=loaded)
