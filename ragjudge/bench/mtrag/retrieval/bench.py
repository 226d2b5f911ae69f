"""`--bench mtrag-retrieval`: MTRAG's retrieval tasks for one domain (last turn, rewrite, all questions) through a
pipeline, scored with ranx exactly as `ragjudge retrieval-eval` scores a run, in the paper's Table 3 layout.

Queries are used as the benchmark gives them (its `rewrite` file holds the paper's rewrites), as `ragjudge retrieve`
does for BEIR queries: the pipeline's own query strategy is not applied. Runs are also written as MTRAG run files
(`<queries>.jsonl`) for `retrieval-eval`. MTRAG-UN's retrieval bench (`un_retrieval/`) extends this one.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from ragjudge.bench.mtrag.retrieval import data as retrieval_data
from ragjudge.bench.mtrag.retrieval.data import QUERIES, QueryKind, RetrievalData, RetrievalQuery
from ragjudge.bench.mtrag.retrieval.paper import paper_tables
from ragjudge.bench.mtrag.retrieval.samples import query_sample
from ragjudge.bench.mtrag.retrieval.scorers import METRICS, RankingScorer
from ragjudge.bench.mtrag.retrieval.solver import PipelineSolver
from ragjudge.bench.mtrag.retrieval.summary import SHOWN, evaluate, rows, runs, summary_parts
from ragjudge.engine.bench import Bench, BenchOptions, Loaded, SampleResult, Scorer, Solver
from ragjudge.engine.summary import Reference, Summary
from ragjudge.errors import UsageError
from ragjudge.formats.runs import mtrag_run_lines
from ragjudge.formats.samples import Sample
from ragjudge.retrieval_eval.metrics import METRIC_INFOS

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


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


class MtragRetrievalBench(Bench[RetrievalOptions, RetrievalQuery]):
    name = "mtrag-retrieval"
    Options = RetrievalOptions
    data_help = ("MTRAG's retrieval tasks (IBM/mt-rag-benchmark, mtrag-human/retrieval_tasks/<domain>/) and the "
                 "domain's corpus (corpora/passage_level/<domain>.jsonl.zip, unzipped) for --corpus.")
    metrics = METRIC_INFOS
    breakdowns = (QUERIES, "turn")
    """The query file (last turn / rewrite / questions), and first vs later turn within each."""
    unit = "queries"
    corpus_help = ""
    """Where the domain's corpus comes from, said when --corpus is missing."""
    table_title = "MTRAG retrieval"

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

    def data_folder(self) -> Path:
        folder = Path(self.options.data) / self.options.domain
        if not folder.is_dir():
            raise UsageError(f"no folder {folder}: --data must hold one folder per domain (clapnq, cloud, fiqa, govt)")
        return folder

    def paper_reference(self, reports: dict[str, Summary], data: RetrievalData) -> list[Reference]:
        """The paper's figures printed beside ours (`reports`: query kind -> its retrieval-eval summary)."""
        return paper_tables(self.options.domain, [METRICS.index(m) for m in
                                                  ("recall@5", "recall@10", "ndcg@5", "ndcg@10")], SHOWN)

    def read(self) -> RetrievalData:
        return retrieval_data.load(self.folder, self.options.domain, self.options.queries, self.pipeline.prepare)

    # -- Bench ------------------------------------------------------------------------------------------

    def load(self) -> Loaded[RetrievalQuery, RetrievalData]:
        """The queries, with their qrels and files as the run's `ctx.data`."""
        data = self.read()
        return Loaded(data.queries, data)

    def solver(self, ctx: RunContext) -> Solver[RetrievalQuery]:
        self.pipeline.gateway = ctx.gateway
        return PipelineSolver(self.pipeline, self.options.corpus, self.options.k)

    def scorers(self, ctx: RunContext) -> list[Scorer[RetrievalQuery]]:
        return [RankingScorer()]

    def llm_models(self) -> list[str]:
        return list(self.pipeline.llm_models)

    def summarize(self, results: Sequence[SampleResult[RetrievalQuery]], ctx: RunContext) -> Summary:
        """Each query file scored as `ragjudge retrieval-eval` scores it; the top-level metrics are the primary
        file's (rewrite when it ran), every file's are in the `queries` breakdown, in the paper's Table 3 layout."""
        reports = evaluate(results, ctx.data, self.pipeline.spec.name, self.options.domain)
        return self.summary(results, **summary_parts(reports, domain=self.options.domain,
                                                     pipeline=self.pipeline.spec.name, table_title=self.table_title,
                                                     reference=self.paper_reference(reports, ctx.data)))

    def sample(self, result: SampleResult[RetrievalQuery], ctx: RunContext) -> Sample:
        return query_sample(result, self.options.domain)

    # -- outputs ----------------------------------------------------------------------------------------

    def rows(self, results: Sequence[SampleResult[RetrievalQuery]], ctx: RunContext) -> list[dict[str, Any]]:
        return rows(results, self.options.domain)

    def artifacts(self, results: Sequence[SampleResult[RetrievalQuery]], summary: Summary,
                  ctx: RunContext) -> dict[str, str]:
        """One MTRAG run file per query kind: `ragjudge retrieval-eval <run folder>/rewrite.jsonl --qrels ...`."""
        return {f"{kind}.jsonl": "".join(mtrag_run_lines(run))
                for kind, run in runs(results, ctx.data, self.pipeline.spec.name, self.options.domain).items()}

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        files = ctx.data.files if ctx.data else {}
        return {"pipeline": self.pipeline.record(), "files": {k: str(v) for k, v in files.items()}}

    def out_slug(self) -> list[str]:
        return [self.options.domain, Path(self.options.pipeline).stem]

    def close(self) -> None:
        self.pipeline.close()
