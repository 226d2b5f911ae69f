"""The Bench interface: what every benchmark provides so that one engine can run it (walk-through:
docs/extending.md).

Modelled on Inspect AI's Task (dataset + solver + scorer, registered by name, logs as data): `Options` (validated
`-T` keys and common flags, recorded in run.json), `load()` (the samples, validated at the boundary, with what else
the run needs in a `Loaded`: every later hook reads it as `ctx.data`, a bench keeps no run state on `self`),
`solver()`, `scorers()` and `summarize()` (the run's `Summary`, the one result contract).

Outputs and scores are plain dicts so that the engine can journal them (resume) without knowing their
shape; a dict with a non-empty `"error"` is a failure: counted, reported, never reused on resume.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from ragjudge.formats.samples import Sample
from ragjudge.engine.bench_cards import LLMUse, card_of
from ragjudge.engine.summary import (Breakdown, Headline, Metric, MetricCatalog, MetricInfo, Reference, Summary,
                                     Table, headline_of)

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext

__all__ = ["Bench", "BenchOptions", "EachScorer", "EachSolver", "Loaded", "MetricInfo", "Record", "SampleResult",
           "Scorer", "Solver", "default_out", "failed", "fingerprint"]

Record = dict[str, Any]
"""A sample's output or score: JSON-able; `error` set when it failed."""


class BenchOptions(BaseModel):
    """Base of every bench's options. Fields carry `description=` (the help text `ragjudge benches show` prints); their
    names are the `-T` keys, and the common flags (`--data`, `--gen`, `--judges`, `--pipeline`, ...) fill the field of
    the same name, an error for a bench whose options have no such field."""

    model_config = ConfigDict(extra="forbid", frozen=True)


O = TypeVar("O", bound=BenchOptions)
S = TypeVar("S")
D = TypeVar("D")


@dataclass(frozen=True)
class Loaded(Generic[S, D]):
    """What `Bench.load` returns when the run needs more than the samples: `data`, of the bench's own type, reaches
    every later hook as `ctx.data` (a bench instance holds no run state) and is closed after the run when it has a
    `close()`. It iterates over its samples, so a caller that wants the samples only reads it as them."""

    samples: list[S]
    data: D

    def __iter__(self) -> Iterator[S]:
        return iter(self.samples)

    def __len__(self) -> int:
        return len(self.samples)


def fingerprint(*parts: object) -> str:
    """A short stable hash of anything JSON-able: what a journaled output or score was computed from."""
    blob = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def failed(record: Record | None) -> bool:
    return record is None or bool(record.get("error"))


class Solver(ABC, Generic[S]):
    """The system under test. `prepare` may do batch work that is cheap to redo (retrieval over an index);
    `solve` yields (sample id, output) as each finishes, so the engine journals every output at once."""

    name: str = "solver"
    journaled: bool = True
    """False for solvers whose outputs are already on disk (predictions read from a file)."""

    async def prepare(self, samples: Sequence[S], ctx: RunContext) -> None:
        """Work on all samples before any is solved (e.g. retrieval); not journaled."""

    @abstractmethod
    def fingerprint(self, sample: S) -> str:
        """Everything besides the sample itself that changes its output (model, prompt, passages shown)."""

    @abstractmethod
    def solve(self, samples: Sequence[S], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        """Outputs for `samples` (those not already journaled), in any order."""


class Scorer(ABC, Generic[S]):
    """A judge or metric over (sample, output) pairs; yields (sample id, score) as each finishes."""

    name: str

    @abstractmethod
    def fingerprint(self, sample: S, output: Record) -> str:
        """Everything that changes this score: the scorer's spec and models, and the output judged."""

    @abstractmethod
    def score(self, items: Sequence[tuple[S, Record]], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        """Scores for `items` (those not already journaled), in any order."""

    def unscorable(self, sample: S, output: Record) -> Record:
        """The score recorded when the output itself failed (the scorer is not called)."""
        return {"error": f"no output to score: {output.get('error')}"}


class EachSolver(Solver[S]):
    """A solver that answers each sample on its own: every sample is in flight at once (the LLM gateway's
    limits bound what reaches a provider) and each output is yielded, hence journaled, as soon as it is ready."""

    @abstractmethod
    async def solve_one(self, sample: S, ctx: RunContext) -> Record: ...

    def key(self, sample: S) -> str:
        return str(getattr(sample, "id"))

    async def solve(self, samples: Sequence[S], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        from ragjudge.engine.parallel import each_as_completed

        async for sample, output in each_as_completed(samples, lambda s: self.solve_one(s, ctx)):
            yield self.key(sample), output


class EachScorer(Scorer[S]):
    """A scorer that judges each (sample, output) on its own, all in flight at once (see EachSolver)."""

    @abstractmethod
    async def score_one(self, sample: S, output: Record, ctx: RunContext) -> Record: ...

    def key(self, sample: S) -> str:
        return str(getattr(sample, "id"))

    async def score(self, items: Sequence[tuple[S, Record]], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        from ragjudge.engine.parallel import each_as_completed

        async for (sample, _), score in each_as_completed(items, lambda it: self.score_one(it[0], it[1], ctx)):
            yield self.key(sample), score


@dataclass
class SampleResult(Generic[S]):
    sample: S
    output: Record
    scores: dict[str, Record] = field(default_factory=dict)

    @property
    def errors(self) -> dict[str, str]:
        found = {"solve": str(self.output["error"])} if failed(self.output) else {}
        found.update({name: str(s["error"]) for name, s in self.scores.items() if failed(s)})
        return found


class Bench(ABC, Generic[O, S]):
    """A benchmark. Subclasses set the class attributes and implement load/solver/scorers/summarize."""

    name: ClassVar[str]
    description: ClassVar[str]
    """One line for `ragjudge benches`."""
    Options: ClassVar[type[BenchOptions]]
    llm: ClassVar[LLMUse] = "no"
    """Whether runs call an LLM: never, depending on options, or always."""
    data_help: ClassVar[str] = ""
    """Where the data comes from and how to get it."""
    data_source: ClassVar[str] = ""
    """The same in a few words, for `ragjudge benches` (default: data_help's first sentence)."""
    metrics: ClassVar[Sequence[MetricInfo]] = ()
    """Every metric the summaries may hold: the one source of their direction, kind and description."""
    breakdowns: ClassVar[Sequence[str]] = ()
    unit: ClassVar[str] = "samples"
    """What one sample is called in titles and the headline (tasks, queries, dialogues)."""
    view: ClassVar[str] = ""
    """How `ragjudge report` shows this bench's samples when the generic view is not enough: `module:Class` of a
    `ragjudge.report.view.ReportView` subclass (named, not imported: the engine sits below the report)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A built-in bench takes its description, LLM use and data source from its card (`engine/bench_cards.py`): one
        source for them, which `ragjudge benches` reads without importing any bench."""
        super().__init_subclass__(**kwargs)
        card = card_of(f"{cls.__module__}:{cls.__qualname__}")
        if card is not None:
            cls.description, cls.llm, cls.data_source = card.description, card.llm, card.data

    def __init__(self, options: O, *, label: str | None = None):
        self.options = options
        self.label = label or self.name
        """How the user named the bench (a name, or a data path for `--bench PATH`): used in default paths."""

    # -- the parts every bench provides --------------------------------------------------------------

    @abstractmethod
    def load(self) -> list[S] | Loaded[S, Any]:
        """The samples, validated; bad input raises InputError (file, line, field). What else the run needs goes in
        a `Loaded` beside them (the hooks read it as `ctx.data`), never on `self`."""

    @abstractmethod
    def solver(self, ctx: RunContext) -> Solver[S]: ...

    def scorers(self, ctx: RunContext) -> list[Scorer[S]]:
        return []

    def summarize(self, results: Sequence[SampleResult[S]], ctx: RunContext) -> Summary:
        """The run's summary. By default each scorer's mean `value` as the metric of the scorer's name; override to
        add breakdowns, tables and the paper's figures (build it with `self.summary`)."""
        return self.summary(results, self.mean_metrics(results))

    # -- building the summary -------------------------------------------------------------------------

    @property
    def catalog(self) -> MetricCatalog:
        return MetricCatalog(self.metrics, self.name)

    def mean_metrics(self, results: Sequence[SampleResult[S]]) -> dict[str, Metric]:
        """Per scorer: the mean of its numeric `value` over the samples that have one, and its failures."""
        names = list(dict.fromkeys(name for r in results for name in r.scores))
        metrics = {}
        for name in names:
            values = [float(v) for r in results if isinstance(v := r.scores.get(name, {}).get("value"), (int, float))
                      and not isinstance(v, bool)]
            # a failed output fails its scores too (`Scorer.unscorable`): counted, so that the table's errors are the
            # samples the closing "N sample(s) had errors" line counts
            errors = sum(1 for r in results if name in r.scores and failed(r.scores[name]))
            metrics[name] = self.catalog.metric(name, sum(values) / len(values) if values else None, n=len(values),
                                                errors=errors)
        return metrics

    def summary(self, results: Sequence[SampleResult[S]], metrics: dict[str, Metric], *,
                breakdowns: dict[str, Breakdown] | None = None, tables: Sequence[Table] = (),
                reference: Sequence[Reference] = (), notes: Sequence[str] = (), warnings: Sequence[str] = (),
                headline: Headline | None = None, title: str | None = None, n_errors: int | None = None,
                details: dict[str, Any] | None = None) -> Summary:
        """A Summary with this bench's defaults: the title `NAME: N UNIT`, the samples with errors, and as the
        headline the first declared metric that has a value."""
        if headline is None:
            declared = [name for info in self.metrics for name in metrics if info.matches(name)]
            headline = headline_of(metrics, declared, self.unit)
        return Summary(bench=self.name, title=title or f"{self.name}: {len(results)} {self.unit}", unit=self.unit,
                       n_samples=len(results), n_errors=sum(1 for r in results if r.errors) if n_errors is None
                       else n_errors, metrics=metrics, headline=headline, breakdowns=breakdowns or {},
                       tables=list(tables), reference=list(reference), notes=list(notes), warnings=list(warnings),
                       details=details or {})

    # -- identity and records, with defaults --------------------------------------------------------

    def sample_id(self, sample: S) -> str:
        return str(getattr(sample, "id"))

    def sample_fingerprint(self, sample: S) -> str:
        """A hash of the sample's content: a changed sample is solved again."""
        if isinstance(sample, BaseModel):
            return fingerprint(sample.model_dump(mode="json"))
        return fingerprint(repr(sample))

    def llm_models(self) -> list[str]:
        """Every LLM a run with these options calls (checked before any work; needs a gateway)."""
        return []

    def sample(self, result: SampleResult[S], ctx: RunContext) -> Sample:
        """The result as the sample log's record (samples.jsonl): what the report, the Python API, correlate,
        retrieval-eval and export read. The default reads the sample and the output by convention (see
        `engine.sample_log`); a bench whose samples have a known shape builds it directly."""
        from ragjudge.engine.sample_log import default_sample

        return default_sample(self.sample_id(result.sample), result.sample, result.output, result.scores,
                              self.breakdowns)

    def records(self, results: Sequence[SampleResult[S]], ctx: RunContext) -> list[Record] | None:
        """The lines of results.jsonl in the bench's own record format, when it has one that other tools read
        (MTRAG's official evaluation records, CXMArena's prediction rows); None (the default): no results.jsonl, the
        sample log is the run's record."""
        return None

    def rows(self, results: Sequence[SampleResult[S]], ctx: RunContext) -> list[Record]:
        """The tidy per-sample table (results.csv, results.parquet): flat values only."""
        out = []
        for r in results:
            row: Record = {"id": self.sample_id(r.sample)}
            for name, score in r.scores.items():
                if isinstance(score.get("value"), (int, float)):
                    row[name] = score["value"]
            row["errors"] = "; ".join(f"{k}: {v}" for k, v in r.errors.items()) or None
            out.append(row)
        return out

    def artifacts(self, results: Sequence[SampleResult[S]], summary: Summary, ctx: RunContext) -> dict[str, str]:
        """Extra files for the run folder, name → text (e.g. `run.trec` and `qrels.trec` for retrieval-eval)."""
        return {}

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        """Extra facts for run.json (models, pipeline, data hashes; what the run learnt is in `ctx.facts`)."""
        return {}

    def out_slug(self) -> list[str]:
        """Parts of the default output folder after the bench label: runs/<label>-<part>-<part>."""
        return []

    def close(self) -> None:
        """Release what the bench opened (indexes, models)."""


def default_out(bench: Bench[Any, Any]) -> Path:
    import re

    parts = [bench.label, *bench.out_slug()]
    slug = "-".join(re.sub(r"[^A-Za-z0-9_.]+", "_", str(p)).strip("_") for p in parts if p)
    return Path("runs") / slug
