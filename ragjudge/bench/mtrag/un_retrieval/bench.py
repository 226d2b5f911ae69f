"""`--bench mtrag-un-retrieval`: MTRAG-UN's retrieval tasks (SemEval-2026 MTRAGEval task A data) for one domain
through a pipeline, scored as `mtrag-retrieval` scores MTRAG's, beside the paper's Tables 2 and 3.

The release gives only qrels: every query id is a generation task's id, whose conversation the queries are built from
with `ragjudge.retrieval.queries` (`lastturn`, `questions`, or an LLM `rewrite`, cached, a malformed answer falling
back to the last turn, counted). The corpora (MTRAG's) come by `--corpus` (docs/benches/mtrag-un.md). Only data,
solver, summary and paper are its own; the rest is `ragjudge.bench.mtrag.retrieval`'s.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from ragjudge.bench.mtrag.retrieval.bench import MtragRetrievalBench, RetrievalOptions
from ragjudge.bench.mtrag.retrieval.data import KIND_NAMES, QUERIES, QueryKind, RetrievalData
from ragjudge.bench.mtrag.un_retrieval import data as un_data
from ragjudge.bench.mtrag.un_retrieval.data import DOMAINS
from ragjudge.bench.mtrag.un_retrieval.paper import retrieval_reference
from ragjudge.bench.mtrag.un_retrieval.solver import RewritingSolver
from ragjudge.bench.mtrag.un_retrieval.summary import add_to_summary
from ragjudge.engine.bench import SampleResult, Solver
from ragjudge.engine.summary import Reference, Summary
from ragjudge.errors import UsageError
from ragjudge.models import domain_of
from ragjudge.retrieval.spec import QuerySpec

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ragjudge.bench.mtrag.retrieval.data import RetrievalQuery
    from ragjudge.engine.context import RunContext

CORPUS_HELP = ("MTRAG-UN searches MTRAG's four corpora, which its release does not include: download "
               "corpora/passage_level/<domain>.jsonl.zip from IBM/mt-rag-benchmark (github.com/IBM/mt-rag-benchmark) "
               "and unzip it")


class MtragUnRetrievalOptions(RetrievalOptions):
    data: str = Field(description="The MTRAG-UN release folder (mtragun-human/): generation/reference.jsonl and "
                      "retrieval/qrels/<domain>.tsv.")
    domain: str = Field(description="clapnq, cloud (ibmcloud), fiqa or govt: the qrels file under retrieval/qrels/.")
    queries: list[QueryKind] | None = Field(None, description="Queries built from each task's conversation: lastturn, "
                                            "questions, rewrite (default: lastturn, and rewrite with rewrite_model).")
    rewrite_model: str | None = Field(None, description="The LLM that rewrites the last turn into a standalone query "
                                      "(default: the pipeline's query.model when its strategy is rewrite).")
    labels: str | None = Field(None, description="Per-query labels (JSONL/CSV/TSV with task_id and standalone, as "
                               "retrieval-eval's --breakdown-file) for the standalone breakdown and Table 3; labels "
                               "in the tasks themselves are read too.")


class MtragUnRetrievalBench(MtragRetrievalBench):
    name = "mtrag-un-retrieval"
    Options = MtragUnRetrievalOptions
    data_help = ("The MTRAG-UN release (IBM/mt-rag-benchmark, mtragun-human/: generation/reference.jsonl and "
                 f"retrieval/qrels/<domain>.tsv) for --data; for --corpus, {CORPUS_HELP}.")
    breakdowns = (QUERIES, "turn", "standalone")
    """The query kind, first vs later turn within each, and standalone or not (when labelled)."""
    corpus_help = f" ({CORPUS_HELP})"
    table_title = "MTRAG-UN retrieval"

    def __init__(self, options: MtragUnRetrievalOptions, *, label: str | None = None):
        domain = domain_of(options.domain.strip().lower()) or ""
        if domain not in DOMAINS:
            raise UsageError(f"-T domain={options.domain}: MTRAG-UN's released retrieval domains are "
                             f"{', '.join(DOMAINS)} (Banking and Telco are not released yet)")
        options = options.model_copy(update={"domain": domain})
        super().__init__(options, label=label)
        spec = self.pipeline.spec.query
        model = options.rewrite_model or (spec.model if spec.strategy == "rewrite" else None)
        self.rewrite = QuerySpec(strategy="rewrite", model=model, params=spec.params if spec.strategy == "rewrite"
                                 else {}) if model else None
        self.kinds: list[str] = list(dict.fromkeys(options.queries or (["lastturn", "rewrite"] if model
                                                                        else ["lastturn"])))
        if "rewrite" in self.kinds and model is None:
            raise UsageError("rewrite queries need an LLM: -T rewrite_model=MODEL (the paper's rewrites are GPT-OSS "
                             "20B's), or a pipeline whose query strategy is rewrite")

    def data_folder(self) -> Path:
        folder = Path(self.options.data)
        if not folder.is_dir():
            raise UsageError(f"no folder {folder}: --data must be the MTRAG-UN release folder (mtragun-human/, "
                             f"holding generation/reference.jsonl and retrieval/qrels/<domain>.tsv)")
        return folder

    def read(self) -> RetrievalData:
        return un_data.load(self.folder, self.options.domain, self.kinds, self.pipeline.prepare, self.options.labels)

    def solver(self, ctx: RunContext) -> Solver[RetrievalQuery]:
        self.pipeline.gateway = ctx.gateway
        return RewritingSolver(self.pipeline, self.options.corpus, self.options.k, self.rewrite)

    def llm_models(self) -> list[str]:
        extra = [self.rewrite.model] if self.rewrite and self.rewrite.model and "rewrite" in self.kinds else []
        return list(dict.fromkeys([*self.pipeline.llm_models, *extra]))

    def paper_reference(self, reports: dict[str, Summary], data: RetrievalData) -> list[Reference]:
        return retrieval_reference(self.options.domain, [KIND_NAMES[k] for k in reports], "standalone" in data.dims)

    def summarize(self, results: Sequence[SampleResult[RetrievalQuery]], ctx: RunContext) -> Summary:
        data = ctx.data
        return add_to_summary(super().summarize(results, ctx), results, self.rewrite.model if self.rewrite else None,
                              "standalone" in data.dims, domain=self.options.domain, qrels=data.qrels)

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        return {**super().run_info(ctx), "queries": self.kinds,
                "rewrite_model": self.rewrite.model if self.rewrite and "rewrite" in self.kinds else None}
