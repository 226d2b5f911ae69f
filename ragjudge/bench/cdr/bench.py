"""`--bench cdr`: conversational data retrieval (Lee et al., 2025), finding conversations in a haystack.

Each query ("Conversation where the user shifts from skepticism to trust") is searched with a ragjudge
retrieval pipeline over the corpus cut into units (`-T unit=`); each conversation scores its best unit, and
the conversation ranking is scored with the paper's metrics through ranx, beside the paper's 16 models.

The summary (the result contract): `hit@k`, `P@k`, `R@k`, `nDCG@k`, `MRR@k` at k = 1, 5, 10, 20 (ragjudge's
retrieval vocabulary; the paper's ACC@k is `hit@k`), each a mean over the queries that were ranked (`n`) with
the queries that failed (`errors`); the paper's times as `ingestion_s` and `inference_s` (seconds), the units
indexed and the units an encoder truncated as counts; the per-category figures as the `category` breakdown;
the paper's Tables 9-12 (or 3) as `reference`; the data beside Table 2, the category shares and a comparison
with another run as tables; everything else (timing parts, data statistics, truncation per encoder, the
comparison's tests) in `details`. The headline is nDCG@10, the paper's main figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from ragjudge.engine.bench import Bench, BenchOptions, MetricInfo, SampleResult, Scorer, Solver, failed
from ragjudge.bench.cdr import data as cdr_data
from ragjudge.bench.cdr import display, paper
from ragjudge.bench.cdr.compare import OtherRun, compare
from ragjudge.bench.cdr.data import CdrData, CdrQuery
from ragjudge.bench.cdr.metrics import HEADLINE, METRICS, as_qrels, as_run, by_category, means
from ragjudge.bench.cdr.solver import MetricsScorer, RetrievalSolver
from ragjudge.bench.cdr.truncation import describe, encoders_of
from ragjudge.bench.cdr.units import UnitSpec, UnitTable, build_units, parse_unit, split_messages, write_units
from ragjudge.engine.context import RunContext
from ragjudge.engine.summary import Breakdown, Group, Metric, Reference, Summary, Table, headline_of, stat
from ragjudge.errors import UsageError
from ragjudge.formats.runs import Run, qrels_lines, trec_run_lines


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
    description = ("CDR conversational data retrieval: find conversations for analytical queries (hit (the paper's "
                   "ACC), P, R, nDCG, MRR @1/5/10/20), any retrieval pipeline and unit, beside the paper's 16 models.")
    Options = CdrOptions
    llm = "no"
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
    CATEGORY_COLUMNS = ("nDCG@10", "R@10", "P@10")
    """What the category breakdown shows (Table 12's columns); summary.json has every metric."""

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
        self.data: CdrData | None = None
        self.table: UnitTable | None = None
        self.units_file: Path | None = None
        self._solver: RetrievalSolver | None = None

    # -- Bench ------------------------------------------------------------------------------------------

    def load(self) -> list[CdrQuery]:
        self.data = cdr_data.load(cdr_data.locate(self.options.data), self.options.categories)
        if self.other is not None:
            self.other.check_data(self.data.sha256)
        messages = [len(split_messages(text)[0]) for text in self.data.corpus.values()]
        self.data.stats["messages_per_conversation"] = round(sum(messages) / len(messages), 2)
        conversations = len(self.data.corpus)
        if "depth" in self.options.model_fields_set and self.options.depth > max(20, conversations):
            raise UsageError(f"-T depth must be between 20 and {max(20, conversations)} (corpus.json has "
                             f"{conversations:,} conversations), got {self.options.depth}")
        self.table = build_units(self.data.corpus, self.unit_spec)
        if not self.table.units:
            raise UsageError(f"unit {self.unit_spec.label} gives no unit for any conversation")
        self.units_file = write_units(self.table, self.index_dir / "cdr-units", self.data.sha256["corpus.json"])
        return list(self.data.queries)

    def solver(self, ctx: RunContext) -> Solver[CdrQuery]:
        assert self.table is not None and self.units_file is not None, "load() first"
        self._solver = RetrievalSolver(self.pipeline, self.table, self.units_file, self.options.depth,
                                       self.options.batch)
        return self._solver

    def scorers(self, ctx: RunContext) -> list[Scorer[CdrQuery]]:
        return [MetricsScorer()]

    def summarize(self, results: Sequence[SampleResult[CdrQuery]], ctx: RunContext) -> Summary:
        assert self.data is not None and self.table is not None and self._solver is not None
        scored = {r.sample.id: r.scores["metrics"]["metrics"] for r in results if not r.errors}
        failures = len(results) - len(scored)
        overall = means(list(scored.values()))
        catalog = self.catalog
        metrics: dict[str, Metric] = {m: catalog.metric(m, overall[m], n=len(scored), errors=failures)
                                      for m in METRICS}
        timing = self._timing(results)
        metrics["ingestion_s"] = catalog.metric("ingestion_s", timing["ingestion_s"],
                                                index_reused=timing["index_reused"])
        metrics["inference_s"] = catalog.metric("inference_s", timing["inference_s"], n=timing["queries"])
        units = self.table.stats()
        metrics["units"] = catalog.metric("units", units["units"], unit=units["unit"])
        truncation = self._solver.truncation
        known = [t for t in truncation if t["max_tokens"] is not None]
        for t in known:  # one encoder (the usual case): `truncated_units`; several: one count each
            name = "truncated_units" if len(known) == 1 else f"truncated_units[{t['encoder']}]"
            metrics[name] = catalog.metric(name, t["truncated"], n=t["units"], encoder=t["encoder"],
                                           max_tokens=t["max_tokens"], longest=t["longest"])

        breakdowns: dict[str, Breakdown] = {}
        tables: list[Table] = [display.facts(self.data.stats, units)]
        if self.data.category_file is not None:
            categories = {q.id: q.category for q in self.data.queries}
            groups = by_category(scored, categories)
            breakdowns["category"] = Breakdown(
                title="By task category", label="category", columns=list(self.CATEGORY_COLUMNS),
                groups={g: Group(n=v["n"], metrics={m: stat(v[m], n=v["n"]) for m in METRICS})
                        for g, v in groups.items()},
                note="queries without a category form the group 'unknown'" if "unknown" in groups else "")
            tables.append(display.category_shares({g: v["n"] for g, v in groups.items()}))
        details: dict[str, Any] = {"pipeline": self.pipeline.spec.name, "unit": self.unit_spec.label,
                                   "timing": timing, "data": self.data.stats, "units": units,
                                   "truncation": truncation,
                                   "paper": paper.full_tables(paper.setting_of(self.unit_spec),
                                                              self.data.category_file is not None)}
        if self.other is not None:
            details["comparison"] = compare(self._run(results), self.other, [r.sample for r in results])
            tables.append(display.comparison(details["comparison"]))
        notes = list(paper.NOTES)
        if timing["index_reused"]:
            notes.insert(0, "the index was reused: ingestion_s is the time it took to build it")
        warnings = [f"warning: {w}" for w in self.data.warnings]
        warnings += [f"note: {describe(t)}" for t in truncation if t.get("truncated")]
        return self.summary(
            results, metrics, breakdowns=breakdowns, tables=tables, reference=self._reference(), notes=notes,
            warnings=warnings, details=details,
            title=f"cdr: {len(results)} queries, pipeline {self.pipeline.spec.name}, unit {self.unit_spec.label}",
            headline=headline_of(metrics, (HEADLINE,), self.unit, also=("R@10", "P@10")))

    def _timing(self, results: Sequence[SampleResult[CdrQuery]]) -> dict[str, Any]:
        assert self._solver is not None and self._solver.index is not None
        index = self._solver.index
        outputs = [r.output for r in results if not failed(r.output)]
        return {"index_reused": index.reused, "ingestion_s": index.build_seconds,
                "index_open_s": round(index.seconds, 3),
                "inference_s": round(sum(o.get("seconds", 0.0) for o in outputs), 3), "queries": len(outputs),
                "queries_searched_now": self._solver.searched_now,
                "search_s_now": round(self._solver.search_seconds_now, 3)}

    def _reference(self) -> list[Reference]:
        """The paper's table for the setting this unit reproduces (Table 3 for other units), and Table 12 when
        queries have categories."""
        assert self.data is not None
        setting = paper.setting_of(self.unit_spec)
        tables = [paper.setting_table(setting) if setting else paper.overview_table()]
        if self.data.category_file is not None:
            tables.append(paper.category_table())
        return tables

    def _run(self, results: Sequence[SampleResult[CdrQuery]]) -> Run:
        rankings = {r.sample.id: r.output.get("ranking", []) for r in results if not failed(r.output)}
        return as_run(rankings, name=f"{self.pipeline.spec.name}-{self.unit_spec.slug}")

    # -- outputs ----------------------------------------------------------------------------------------

    def records(self, results: Sequence[SampleResult[CdrQuery]]) -> list[dict[str, Any]]:
        return [{"id": r.sample.id, "query": r.sample.text, "category": r.sample.category,
                 "relevant": r.sample.relevant, "output": r.output, "scores": r.scores} for r in results]

    def rows(self, results: Sequence[SampleResult[CdrQuery]]) -> list[dict[str, Any]]:
        rows = []
        for r in results:
            ranking = r.output.get("ranking") or []
            row: dict[str, Any] = {"id": r.sample.id, "category": r.sample.category,
                                   "n_relevant": len(r.sample.relevant), "n_listed": r.sample.listed,
                                   "top_conversation": ranking[0]["id"] if ranking else None}
            scores = (r.scores.get("metrics") or {}).get("metrics") or {}
            row.update({m: scores.get(m) for m in METRICS})
            row["errors"] = "; ".join(f"{k}: {v}" for k, v in r.errors.items()) or None
            rows.append(row)
        return rows

    def artifacts(self, results: Sequence[SampleResult[CdrQuery]], summary: Summary) -> dict[str, str]:
        """`run.trec` and `qrels.trec` (`ragjudge retrieval-eval run.trec --qrels qrels.trec` scores the same),
        and `categories.tsv` for its `--breakdown-file ... --by category`."""
        run = self._run(results)
        files = {"run.trec": "".join(trec_run_lines(run, tag=run.name)),
                 "qrels.trec": "".join(qrels_lines(as_qrels([r.sample for r in results]), fmt="trec"))}
        if any(r.sample.category for r in results):
            files["categories.tsv"] = "query_id\tcategory\n" + "".join(
                f"{r.sample.id}\t{r.sample.category}\n" for r in results if r.sample.category)
        return files

    def run_info(self) -> dict[str, Any]:
        data = self.data
        return {"data": {"folder": str(data.folder) if data else None, "sha256": data.sha256 if data else {},
                         "categories": str(data.category_file) if data and data.category_file else None},
                "unit": self.unit_spec.label, "units_file": str(self.units_file) if self.units_file else None,
                "pipeline": self.pipeline.record(),
                "truncation": self._solver.truncation if self._solver else None,
                "compare": str(self.other.folder) if self.other else None,
                "models": self._models()}

    def _models(self) -> dict[str, Any]:
        encoders = [str(encoder.model_name) for encoder, _ in encoders_of(self.pipeline.retriever)]
        return {"encoders": list(dict.fromkeys(encoders))} if encoders else {}

    def out_slug(self) -> list[str]:
        return [Path(self.options.pipeline).stem, self.unit_spec.slug]

    def close(self) -> None:
        self.pipeline.close()
