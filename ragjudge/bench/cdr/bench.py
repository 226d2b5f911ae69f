"""`--bench cdr`: conversational data retrieval (Lee et al., 2025), finding conversations in a haystack; each
conversation scores its best unit. What it runs and what the summary holds: docs/benches/cdr.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from ragjudge.bench.cdr.compare import OtherRun
from ragjudge.bench.cdr.data import CdrInputs, CdrQuery, load_inputs
from ragjudge.bench.cdr.samples import query_sample, row
from ragjudge.bench.cdr.scorers import MetricsScorer
from ragjudge.bench.cdr.solver import RetrievalSolver, SearchFacts
from ragjudge.bench.cdr.summary import CdrRun, summary_parts
from ragjudge.bench.cdr.trec import trec_files
from ragjudge.bench.cdr.truncation import encoders_of
from ragjudge.bench.cdr.units import UnitSpec, parse_unit
from ragjudge.engine.bench import Bench, BenchOptions, Loaded, MetricInfo, SampleResult, Scorer, Solver
from ragjudge.engine.context import RunContext
from ragjudge.engine.summary import Summary
from ragjudge.errors import UsageError
from ragjudge.formats.samples import Sample


class CdrOptions(BenchOptions):
    data: str | None = Field(None, description="The CDR files (corpus.json, queries.json, relevant_docs.json): the "
                             "CDR-Benchmark repository or its test folder (default: $RAGJUDGE_CDR_DATA).")
    pipeline: str = Field("bm25", description="Retrieval pipeline (name or YAML path): bm25, dense (bundled MiniLM), "
                          "hybrid, es_bm25, es_knn, elser, or your own (e.g. litellm embeddings).")
    unit: str = Field("session", description="Retrieval unit: session, message (the paper's turn), exchange, user, "
                      "window:K[:STRIDE] (default 3 and 1: the paper's sliding chunk).")
    categories: str | None = Field(None, description="Query -> task category file (JSON object, or JSONL/CSV/TSV "
                                   "with a category column) for the per-category breakdown (default: a "
                                   "categories.json/.jsonl/.tsv/.csv beside the data, if any).")
    depth: int = Field(20, ge=20, description="Distinct conversations ranked per query: at least 20 (the deepest "
                       "cut-off), at most the number of conversations when more than 20.")
    batch: int = Field(64, ge=1, description="Queries searched per batch, at least 1 (progress and journal "
                       "granularity).")
    compare: str | None = Field(None, description="Another CDR run folder: every metric compared with a paired "
                                "t-test on the queries both ranked.")
    pipeline_dir: list[str] = Field(default_factory=list, description="Extra folders of pipeline specs.")
    index_dir: str | None = Field(None, description="Where indexes (and the unit files they are built from) are "
                                  "kept and reused (default: <cache>/indexes).")

    @field_validator("unit")
    @classmethod
    def _unit(cls, value: str) -> str:
        return parse_unit(value).label


class CdrBench(Bench[CdrOptions, CdrQuery]):
    name = "cdr"
    Options = CdrOptions
    data_help = ("The CDR-Benchmark release (github.com/l-yohai/CDR-Benchmark, cdr_benchmark_data/test_dataset/data/"
                 "test/: corpus.json, queries.json, relevant_docs.json), not downloaded (licences): --data PATH or "
                 "$RAGJUDGE_CDR_DATA. examples/cdr-mini is a small set in the same format.")
    metrics = (
        MetricInfo("hit@*", "the paper's ACC@k: a relevant conversation in the top k (hit rate)"),
        MetricInfo("P@*", "precision: relevant conversations in the top k, divided by k"),
        MetricInfo("R@*", "recall: relevant conversations in the top k, divided by the number relevant"),
        MetricInfo("nDCG@*", "nDCG at k with binary gains"),
        MetricInfo("MRR@*", "1 / rank of the first relevant conversation in the top k"),
        MetricInfo("ingestion_s", "building the index of the units (the paper's ingestion; a reused index keeps "
                   "the time it was built in)", higher_is_better=False, kind="seconds"),
        MetricInfo("inference_s", "searching and ranking every query (the paper's inference), summed over the "
                   "queries", higher_is_better=False, kind="seconds"),
        MetricInfo("units", "retrieval units indexed (-T unit)", higher_is_better=None, kind="count"),
        MetricInfo("truncated_units*", "units longer than the encoder's maximum input: read cut short",
                   higher_is_better=None, kind="count"),
    )
    breakdowns = ("category",)
    unit = "queries"

    def __init__(self, options: CdrOptions, *, label: str | None = None):
        super().__init__(options, label=label)
        from ragjudge.retrieval.pipeline import Pipeline, default_index_dir
        from ragjudge.retrieval.spec import load_pipeline

        o = options
        self.unit_spec: UnitSpec = parse_unit(o.unit)
        spec = load_pipeline(o.pipeline, o.pipeline_dir)
        if spec.query.strategy == "rewrite":
            raise UsageError(f"pipeline {o.pipeline} rewrites queries; CDR queries are searched as written")
        if spec.chunking is not None:
            raise UsageError(f"pipeline {o.pipeline} chunks its corpus; in CDR the unit is the chunking "
                             "(-T unit=...): use a spec without chunking")
        self.index_dir = Path(o.index_dir) if o.index_dir else default_index_dir()
        self.pipeline = Pipeline(spec, extra_dirs=o.pipeline_dir, index_dir=self.index_dir)
        self.other = OtherRun(o.compare) if o.compare else None


    def load(self) -> Loaded[CdrQuery, CdrInputs]:
        """The queries, with the data, its units and the unit file as the run's `ctx.data`."""
        o = self.options
        inputs = load_inputs(o.data, o.categories, self.unit_spec, self.index_dir / "cdr-units",
                             o.depth if "depth" in o.model_fields_set else None)
        if self.other is not None:
            self.other.check_data(inputs.data.sha256)
        return Loaded(list(inputs.data.queries), inputs)

    def solver(self, ctx: RunContext) -> Solver[CdrQuery]:
        inputs: CdrInputs = ctx.data
        return RetrievalSolver(self.pipeline, inputs.table, inputs.units_file, self.options.depth, self.options.batch)

    def scorers(self, ctx: RunContext) -> list[Scorer[CdrQuery]]:
        return [MetricsScorer()]

    def _run(self, ctx: RunContext) -> CdrRun:
        inputs: CdrInputs = ctx.data
        return CdrRun(inputs.data, inputs.table, self.unit_spec, self.pipeline.spec.name,
                      ctx.facts.get("search", SearchFacts()), self.other)

    def summarize(self, results: Sequence[SampleResult[CdrQuery]], ctx: RunContext) -> Summary:
        return self.summary(results, **summary_parts(results, self._run(ctx), self.catalog))

    def sample(self, result: SampleResult[CdrQuery], ctx: RunContext) -> Sample:
        inputs: CdrInputs = ctx.data
        return query_sample(result, inputs.data.corpus, inputs.unit_text, inputs.data.category_file is not None)


    def rows(self, results: Sequence[SampleResult[CdrQuery]], ctx: RunContext) -> list[dict[str, Any]]:
        return [row(r) for r in results]

    def artifacts(self, results: Sequence[SampleResult[CdrQuery]], summary: Summary, ctx: RunContext) -> dict[str, str]:
        """`run.trec` and `qrels.trec` (`ragjudge retrieval-eval run.trec --qrels qrels.trec` scores the same),
        and `categories.tsv` for its `--breakdown-file ... --by category`."""
        return trec_files(results, self.pipeline.spec.name, self.unit_spec)

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        inputs: CdrInputs = ctx.data
        data, search = inputs.data, ctx.facts.get("search")
        return {"data": {"folder": str(data.folder), "sha256": data.sha256,
                         "categories": str(data.category_file) if data.category_file else None},
                "unit": self.unit_spec.label, "units_file": str(inputs.units_file),
                "pipeline": self.pipeline.record(), "truncation": search.truncation if search else None,
                "compare": str(self.other.folder) if self.other else None, "models": self._models()}

    def _models(self) -> dict[str, Any]:
        encoders = [str(encoder.model_name) for encoder, _ in encoders_of(self.pipeline.retriever)]
        return {"encoders": list(dict.fromkeys(encoders))} if encoders else {}

    def out_slug(self) -> list[str]:
        return [Path(self.options.pipeline).stem, self.unit_spec.slug]

    def close(self) -> None:
        self.pipeline.close()
