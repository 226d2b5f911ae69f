"""`--bench mtrag-retrieval`: MTRAG's retrieval tasks for one domain (last turn, rewrite, all questions) through a
pipeline, scored with ranx exactly as `ragjudge retrieval-eval` scores a run, in the paper's Table 3 layout.

Queries are used as the benchmark gives them (its `rewrite` file holds the paper's rewrites), like
`ragjudge retrieve` does for BEIR queries; the pipeline's own query strategy is not applied. The runs are
also written as MTRAG run files (`<queries>.jsonl`), so `ragjudge retrieval-eval` can score them again.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragjudge.engine.bench import Bench, BenchOptions, Record, SampleResult, Solver
from ragjudge.bench.mtrag.retrieval.paper import paper_tables
from ragjudge.engine.summary import Breakdown, Group, Reference, Stat, Summary
from ragjudge.retrieval_eval.breakdowns import Labels, resolve_dimensions
from ragjudge.retrieval_eval.metrics import METRIC_INFOS, label
from ragjudge.errors import InputError, UsageError
from ragjudge.formats.beir import read_queries
from ragjudge.formats.runs import Hit, Qrels, Run, mtrag_run_lines, read_qrels
from ragjudge.formats.files import input_file
from ragjudge.models import normalize_task_id

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext
    from ragjudge.retrieval.pipeline import Pipeline

QueryKind = Literal["lastturn", "rewrite", "questions"]
KIND_NAMES = {"lastturn": "Last Turn", "rewrite": "Query Rewrite", "questions": "All Questions"}
METRICS = [f"{family}@{k}" for family in ("recall", "ndcg") for k in (1, 3, 5, 10)]
"""ranx's names; summaries and results say R@k and nDCG@k (ragjudge.retrieval_eval.metrics.label)."""
SHOWN = ["R@5", "R@10", "nDCG@5", "nDCG@10"]
"""The paper's headline cut-offs, shown in tables; summary.json and results have all of METRICS."""
PRIMARY = ("rewrite", "lastturn", "questions")
"""Whose figures are the summary's top-level metrics when several query files ran: the paper's headline setting
first (every query file's are in the "queries" breakdown)."""


class RetrievalOptions(BenchOptions):
    data: str = Field(description="MTRAG retrieval tasks: a folder with one folder per domain holding "
                      "lastturn/rewrite/questions JSONL and qrels (qrels.tsv or qrels/dev.tsv).")
    domain: str = Field(description="clapnq, cloud, fiqa or govt (the folder name under --data).")
    queries: list[QueryKind] = Field(default_factory=lambda: ["lastturn", "rewrite"],
                                     description="Query files to run: lastturn, rewrite, questions.")
    pipeline: str = Field(description="Retrieval pipeline (name or YAML path).")
    corpus: str | None = Field(None, description="BEIR corpus JSONL of the domain (indexed once, then reused).")
    pipeline_dir: list[str] = Field(default_factory=list, description="Extra folders of pipeline specs.")
    index_dir: str | None = Field(None, description="Where indexes are kept (default: <cache>/indexes).")
    k: int = Field(10, ge=1, description="Passages retrieved per query.")


class RetrievalQuery(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    kind: str
    query_id: str
    text: str


def _find(folder: Path, names: list[str], what: str) -> Path:
    for name in names:
        if (folder / name).exists():  # a folder in a file's place is named as such, not reported missing
            return input_file(folder / name, f"{what} file")
    raise InputError(f"no {what} file ({' or '.join(names)})", file=str(folder))


class PipelineSolver(Solver[RetrievalQuery]):
    """Searches every query once in `prepare` (a batch over one index); cheap to redo, so not journaled."""

    journaled = False

    def __init__(self, pipeline: Pipeline, corpus: str | None, k: int):
        self.pipeline = pipeline
        self.name = pipeline.spec.name
        self.corpus = corpus
        self.k = k
        self.hits: dict[str, list[Hit]] = {}
        self.extra: dict[str, dict[str, Any]] = {}
        """Per query: fields a subclass adds to its output (the query it built, the rewrite's class)."""

    async def queries(self, samples: Sequence[RetrievalQuery], ctx: RunContext) -> list[str]:
        """The texts searched, one per sample: as loaded here; a subclass may build some now (an LLM rewrite)."""
        return [q.text for q in samples]

    async def prepare(self, samples: Sequence[RetrievalQuery], ctx: RunContext) -> None:
        texts = await self.queries(samples, ctx)
        self.pipeline.open(self.corpus, ctx.bars)
        results = self.pipeline.search(texts, self.k)
        for query, passages in zip(samples, results, strict=True):
            self.hits[query.id] = [Hit(doc_id=p.document_id, score=float(p.score or 0.0), text=p.text,
                                       title=p.title) for p in passages]

    def fingerprint(self, sample: RetrievalQuery) -> str:
        return self.name

    async def solve(self, samples: Sequence[RetrievalQuery], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        for q in samples:
            yield q.id, {**self.extra.get(q.id, {}), "contexts": [{"document_id": h.doc_id, "score": h.score, "text": h.text, "title": h.title}
                                      for h in self.hits[q.id]]}


class MtragRetrievalBench(Bench[RetrievalOptions, RetrievalQuery]):
    name = "mtrag-retrieval"
    description = "MTRAG retrieval per domain: last-turn / rewritten / all-question queries through a pipeline."
    Options = RetrievalOptions
    llm = "optional"  # a pipeline may embed through an API
    data_help = ("MTRAG's retrieval tasks (IBM/mt-rag-benchmark, mtrag-human/retrieval_tasks/<domain>/) and the "
                 "domain's corpus (corpora/passage_level/<domain>.jsonl.zip, unzipped) for --corpus.")
    data_source = "IBM/mt-rag-benchmark retrieval tasks and corpora (--data, --corpus)"
    metrics = METRIC_INFOS
    breakdowns = ("queries (last turn / rewrite / questions)", "turn (first vs later)")
    unit = "queries"

    def __init__(self, options: RetrievalOptions, *, label: str | None = None):
        super().__init__(options, label=label)
        from ragjudge.retrieval.pipeline import Pipeline
        from ragjudge.retrieval.spec import load_pipeline

        self.folder = self.data_folder()
        self.pipeline = Pipeline(load_pipeline(options.pipeline, options.pipeline_dir),
                                 extra_dirs=options.pipeline_dir,
                                 index_dir=Path(options.index_dir) if options.index_dir else None)
        if options.corpus is None and not hasattr(self.pipeline.retriever, "attach"):
            raise UsageError(f"pipeline {options.pipeline} ({self.pipeline.retriever.kind}) indexes a corpus: "
                             f"pass --corpus FILE{self.corpus_help}")
        self.qrels: Qrels | None = None
        self.files: dict[str, Path] = {}
        self.labels: Labels | None = None
        """Per-query labels from the data (standalone or not), when it gives them."""

    corpus_help = ""
    """Where the domain's corpus comes from, said when --corpus is missing."""
    table_title = "MTRAG retrieval"

    def data_folder(self) -> Path:
        folder = Path(self.options.data) / self.options.domain
        if not folder.is_dir():
            raise UsageError(f"no folder {folder}: --data must hold one folder per domain (clapnq, cloud, fiqa, govt)")
        return folder

    def dims(self) -> list[str]:
        """The breakdowns of each query file's evaluation: first vs later turn, and standalone when labelled."""
        return ["turn", "standalone"] if "standalone" in resolve_dimensions(None, self.labels) else ["turn"]

    def paper_reference(self, reports: dict[str, Any]) -> list[Reference]:
        """The paper's figures printed beside ours (`reports`: query kind -> its retrieval-eval summary)."""
        return paper_tables(self.options.domain, [METRICS.index(m) for m in
                                                  ("recall@5", "recall@10", "ndcg@5", "ndcg@10")], SHOWN)

    def load(self) -> list[RetrievalQuery]:
        d = self.options.domain
        qrels_path = _find(self.folder, ["qrels.tsv", "qrels/dev.tsv", "qrels/test.tsv"], "qrels")
        self.qrels = read_qrels(qrels_path)
        self.files = {"qrels": qrels_path}
        samples = []
        for kind in dict.fromkeys(self.options.queries):
            path = _find(self.folder, [f"{kind}.jsonl", f"{d}_{kind}.jsonl"], f"{kind} queries")
            self.files[kind] = path
            for query in read_queries(path):
                text = self.pipeline.prepare(query.text)
                if not text:
                    raise InputError(f"query {query.id!r} is empty once speaker tags are removed", file=str(path),
                                     field="text")
                samples.append(RetrievalQuery(id=f"{kind}/{query.id}", kind=kind, query_id=query.id, text=query.text))
        return samples

    def solver(self, ctx: RunContext) -> Solver[RetrievalQuery]:
        self.pipeline.gateway = ctx.gateway
        return PipelineSolver(self.pipeline, self.options.corpus, self.options.k)

    def llm_models(self) -> list[str]:
        return list(self.pipeline.llm_models)

    # -- scoring: one ranx evaluation per query file, as retrieval-eval does it ---------------------

    def runs(self, results: Sequence[SampleResult[RetrievalQuery]]) -> dict[str, Run]:
        runs: dict[str, Run] = {}
        for r in results:
            run = runs.setdefault(r.sample.kind, Run(name=f"{self.pipeline.spec.name}-{r.sample.kind}",
                                                      source=str(self.files.get(r.sample.kind))))
            hits = [Hit(doc_id=c["document_id"], score=float(c["score"]), text=c.get("text"), title=c.get("title"))
                    for c in r.output.get("contexts", [])]
            run.add(r.sample.query_id, hits, collection=f"mt-rag-{self.options.domain}")
        return runs

    def evaluate(self, results: Sequence[SampleResult[RetrievalQuery]]) -> dict[str, Any]:
        from ragjudge.retrieval_eval import evaluate_run

        assert self.qrels is not None
        return {kind: evaluate_run(run, self.qrels, metrics=METRICS, dims=self.dims(), labels=self.labels)
                for kind, run in self.runs(results).items()}

    def summarize(self, results: Sequence[SampleResult[RetrievalQuery]], ctx: RunContext) -> Summary:
        """Each query file scored as `ragjudge retrieval-eval` scores it; the top-level metrics are the primary
        file's (rewrite when it ran), every file's are in the `queries` breakdown, in the paper's Table 3 layout."""
        evaluated = self.evaluate(results)
        reports = {kind: rep.summary for kind, rep in evaluated.items()}
        self._per_query = {kind: {normalize_task_id(row["query_id"]): row for row in rep.per_query()}
                           for kind, rep in evaluated.items()}
        primary = next(k for k in PRIMARY if k in reports)
        by_kind = {KIND_NAMES[kind]: Group(n=rep.n_samples, metrics={
            name: Stat(value=m.value, n=m.n, errors=m.errors) for name, m in rep.metrics.items()})
            for kind, rep in reports.items()}
        by_turn = {f"{KIND_NAMES[kind]}, {group}": stats for kind, rep in reports.items()
                   for group, stats in rep.breakdowns["turn"].groups.items()} if all(
            "turn" in rep.breakdowns for rep in reports.values()) else {}
        breakdowns = {"queries": Breakdown(title=f"{self.table_title}, {self.options.domain} (ours)",
                                           label="queries", groups=by_kind, columns=SHOWN)}
        if by_turn:
            breakdowns["turn"] = Breakdown(title="By turn (ours)", label="queries, turn", groups=by_turn,
                                           columns=["R@5", "nDCG@10"])
        by_standalone = {f"{KIND_NAMES[kind]}, {group}": stats for kind, rep in reports.items()
                         for group, stats in rep.breakdowns["standalone"].groups.items()} if all(
            "standalone" in rep.breakdowns for rep in reports.values()) else {}
        if by_standalone:
            breakdowns["standalone"] = Breakdown(title="Standalone vs non-standalone (ours)",
                                                 label="queries, standalone", groups=by_standalone,
                                                 columns=["R@5", "nDCG@10"])
        metrics = dict(reports[primary].metrics)
        return self.summary(
            results, metrics, breakdowns=breakdowns,
            title=f"{self.pipeline.spec.name} on {self.options.domain}, {KIND_NAMES[primary]}: "
                  f"{reports[primary].n_samples} queries",
            reference=self.paper_reference(reports),
            headline=reports[primary].headline.model_copy(update={
                "text": f"{reports[primary].headline.text} ({KIND_NAMES[primary]})"}) if reports[primary].headline
            else None,
            details={"domain": self.options.domain, "pipeline": self.pipeline.spec.name, "primary": primary,
                     "by_queries": {kind: rep.to_json() for kind, rep in reports.items()}})

    def records(self, results: Sequence[SampleResult[RetrievalQuery]]) -> list[dict[str, Any]]:
        per_query = getattr(self, "_per_query", {})
        out = []
        for r in results:
            scores = per_query.get(r.sample.kind, {}).get(normalize_task_id(r.sample.query_id))
            out.append({"task_id": r.sample.query_id, "queries": r.sample.kind, "query": r.sample.text,
                        "Collection": f"mt-rag-{self.options.domain}", **r.output,
                        "metrics": {label(m): scores[label(m)] for m in METRICS} if scores else None})
        return out

    def rows(self, results: Sequence[SampleResult[RetrievalQuery]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in rec.items() if k not in ("contexts", "metrics")} | (rec["metrics"] or {})
                for rec in self.records(results)]

    def artifacts(self, results: Sequence[SampleResult[RetrievalQuery]], summary: Summary) -> dict[str, str]:
        """One MTRAG run file per query kind: `ragjudge retrieval-eval <run folder>/rewrite.jsonl --qrels ...`."""
        return {f"{kind}.jsonl": "".join(mtrag_run_lines(run)) for kind, run in self.runs(results).items()}

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        return {"pipeline": self.pipeline.record(), "files": {k: str(v) for k, v in self.files.items()}}

    def out_slug(self) -> list[str]:
        return [self.options.domain, Path(self.options.pipeline).stem]

    def close(self) -> None:
        self.pipeline.close()
