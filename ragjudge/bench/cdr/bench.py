"""`--bench cdr`: conversational data retrieval (Lee et al., 2025), finding conversations in a haystack.

Each query ("Conversation where the user shifts from skepticism to trust") is searched with a ragjudge
retrieval pipeline over the corpus cut into units (`-T unit=`); each conversation scores its best unit, and
the conversation ranking is scored with the paper's metrics through ranx, beside the paper's 16 models.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from ragjudge.bench.base import Bench, BenchOptions, MetricInfo, SampleResult, Scorer, Solver, failed
from ragjudge.bench.cdr import data as cdr_data
from ragjudge.bench.cdr import display, paper
from ragjudge.bench.cdr.compare import OtherRun, compare
from ragjudge.bench.cdr.data import CdrData, CdrQuery
from ragjudge.bench.cdr.metrics import METRICS, as_qrels, as_run, by_category, means
from ragjudge.bench.cdr.solver import MetricsScorer, RetrievalSolver
from ragjudge.bench.cdr.truncation import describe
from ragjudge.bench.cdr.units import UnitSpec, UnitTable, build_units, parse_unit, split_messages, write_units
from ragjudge.engine.context import RunContext
from ragjudge.engine.render import Table
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
    depth: int = Field(20, ge=20, description="Distinct conversations ranked per query (at least 20, the deepest "
                       "cut-off).")
    batch: int = Field(64, ge=1, description="Queries searched per batch (progress and journal granularity).")
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
    description = ("CDR conversational data retrieval: find conversations for analytical queries (ACC, P, R, nDCG, "
                   "MRR @1/5/10/20), any retrieval pipeline and unit, beside the paper's 16 models.")
    Options = CdrOptions
    llm = "no"
    data_help = ("The CDR-Benchmark release (github.com/l-yohai/CDR-Benchmark, cdr_benchmark_data/test_dataset/data/"
                 "test/: corpus.json, queries.json, relevant_docs.json), not downloaded (licences): --data PATH or "
                 "$RAGJUDGE_CDR_DATA. examples/cdr-mini is a small set in the same format.")
    metrics = (
        MetricInfo("hit_rate@k", "the paper's ACC@k: any relevant conversation in the top k"),
        MetricInfo("precision@k", "relevant conversations in the top k, divided by k"),
        MetricInfo("recall@k", "relevant conversations in the top k, divided by the number relevant"),
        MetricInfo("ndcg@k", "nDCG with binary gains"),
        MetricInfo("mrr@k", "1 / rank of the first relevant conversation in the top k"),
    )
    breakdowns = ("category",)

    def __init__(self, options: CdrOptions, *, label: str | None = None):
        super().__init__(options, label=label)
        from ragjudge.retrieval.pipeline import Pipeline, default_index_dir
        from ragjudge.retrieval.spec import load_pipeline

        o = options
        self.unit: UnitSpec = parse_unit(o.unit)
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
        self.table = build_units(self.data.corpus, self.unit)
        if not self.table.units:
            raise UsageError(f"unit {self.unit.label} gives no unit for any conversation")
        self.units_file = write_units(self.table, self.index_dir / "cdr-units", self.data.sha256["corpus.json"])
        return list(self.data.queries)

    def solver(self, ctx: RunContext) -> Solver[CdrQuery]:
        assert self.table is not None and self.units_file is not None, "load() first"
        self._solver = RetrievalSolver(self.pipeline, self.table, self.units_file, self.options.depth,
                                       self.options.batch)
        return self._solver

    def scorers(self, ctx: RunContext) -> list[Scorer[CdrQuery]]:
        return [MetricsScorer()]

    def summarize(self, results: Sequence[SampleResult[CdrQuery]], ctx: RunContext) -> dict[str, Any]:
        assert self.data is not None and self.table is not None and self._solver is not None
        scored = {r.sample.id: r.scores["metrics"]["metrics"] for r in results if not r.errors}
        overall = means(list(scored.values()))
        summary: dict[str, Any] = {"n_samples": len(results), "n_scored": len(scored),
                                   "errors": sum(1 for r in results if r.errors), "pipeline": self.pipeline.spec.name,
                                   "unit": self.unit.label, "metrics": overall}
        categories = {q.id: q.category for q in self.data.queries}
        if self.data.category_file is not None:
            summary["breakdowns"] = {"category": by_category(scored, categories)}
        summary["timing"] = self._timing(results)
        summary["data"] = self.data.stats
        summary["units"] = self.table.stats()
        summary["truncation"] = self._solver.truncation
        summary["reference"] = self._reference(summary)
        summary["paper_notes"] = list(paper.NOTES)
        if self.other is not None:
            summary["comparison"] = compare(self._run(results), self.other, [r.sample for r in results])
        return summary

    def _timing(self, results: Sequence[SampleResult[CdrQuery]]) -> dict[str, Any]:
        assert self._solver is not None and self._solver.index is not None
        index = self._solver.index
        outputs = [r.output for r in results if not failed(r.output)]
        return {"index_reused": index.reused, "ingestion_s": index.build_seconds,
                "index_open_s": round(index.seconds, 3),
                "inference_s": round(sum(o.get("seconds", 0.0) for o in outputs), 3), "queries": len(outputs),
                "queries_searched_now": self._solver.searched_now,
                "search_s_now": round(self._solver.search_seconds_now, 3)}

    def _label(self) -> str:
        return f"ragjudge {self.pipeline.spec.name} ({self.unit.label})"

    def _reference(self, summary: dict[str, Any]) -> list[dict[str, Any]]:
        ours = {**summary["metrics"], "ingestion_s": summary["timing"]["ingestion_s"],
                "inference_s": summary["timing"]["inference_s"]}
        setting = paper.setting_of(self.unit)
        tables = [paper.setting_table(setting, ours, self._label()) if setting else paper.overview_table()]
        if "breakdowns" in summary:
            tables.append(paper.category_table(summary["breakdowns"]["category"], self._label()))
        return tables

    def _run(self, results: Sequence[SampleResult[CdrQuery]]) -> Run:
        rankings = {r.sample.id: r.output.get("ranking", []) for r in results if not failed(r.output)}
        return as_run(rankings, name=f"{self.pipeline.spec.name}-{self.unit.slug}")

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

    def artifacts(self, results: Sequence[SampleResult[CdrQuery]], summary: dict[str, Any]) -> dict[str, str]:
        """`run.trec` and `qrels.trec` (`ragjudge retrieval-eval run.trec --qrels qrels.trec` scores the same),
        and `categories.tsv` for its `--breakdown-file ... --by category`."""
        run = self._run(results)
        files = {"run.trec": "".join(trec_run_lines(run, tag=run.name)),
                 "qrels.trec": "".join(qrels_lines(as_qrels([r.sample for r in results]), fmt="trec"))}
        if any(r.sample.category for r in results):
            files["categories.tsv"] = "query_id\tcategory\n" + "".join(
                f"{r.sample.id}\t{r.sample.category}\n" for r in results if r.sample.category)
        return files

    def tables(self, summary: dict[str, Any]) -> list[Table]:
        return display.tables(summary)

    def warnings(self, summary: dict[str, Any]) -> list[str]:
        out = [f"warning: {w}" for w in (self.data.warnings if self.data else [])]
        out += [f"note: {describe(t)}" for t in summary.get("truncation", []) if t.get("truncated")]
        return out

    def run_info(self) -> dict[str, Any]:
        data = self.data
        return {"data": {"folder": str(data.folder) if data else None, "sha256": data.sha256 if data else {},
                         "categories": str(data.category_file) if data and data.category_file else None},
                "unit": self.unit.label, "units_file": str(self.units_file) if self.units_file else None,
                "pipeline": self.pipeline.record(),
                "truncation": self._solver.truncation if self._solver else None,
                "compare": str(self.other.folder) if self.other else None}

    def out_slug(self) -> list[str]:
        return [Path(self.options.pipeline).stem, self.unit.slug]

    def close(self) -> None:
        self.pipeline.close()
