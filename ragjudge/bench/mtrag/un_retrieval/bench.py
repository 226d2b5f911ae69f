"""`--bench mtrag-un-retrieval`: MTRAG-UN's retrieval tasks (the SemEval-2026 MTRAGEval task A data) for one
domain through a pipeline, scored as `mtrag-retrieval` scores MTRAG's, beside the paper's Table 2 and Table 3.

The release gives only qrels (`retrieval/qrels/<domain>.tsv`): every query id is the task id of a generation task
(`generation/reference.jsonl`), whose conversation the queries are built from with ragjudge's query strategies
(`ragjudge.retrieval.queries`): `lastturn` the last user turn, `questions` every user question so far, `rewrite`
an LLM's standalone rewrite of the last turn (`-T rewrite_model=MODEL`; cached, and a malformed answer falls back
to the last turn, counted). The corpora are MTRAG's four and are not in the release: `--corpus` names the
domain's passage-level corpus. Everything else (solver, ranx scoring, run files, breakdowns) is
`ragjudge.bench.mtrag.retrieval.bench`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from ragjudge.engine.bench import SampleResult, Solver
from ragjudge.bench.mtrag.retrieval.bench import (KIND_NAMES, MtragRetrievalBench, PipelineSolver, QueryKind,
                                            RetrievalOptions, RetrievalQuery, _find)
from ragjudge.bench.mtrag.un.paper import retrieval_reference
from ragjudge.engine.summary import Reference, Summary
from ragjudge.errors import InputError, UsageError
from ragjudge.formats.mtrag import read_tasks
from ragjudge.formats.runs import read_qrels
from ragjudge.models import Task, domain_of
from ragjudge.retrieval.queries import QueryBuilder, all_user_turns, last_turn, rewrite_warning
from ragjudge.retrieval.spec import QuerySpec

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext
    from ragjudge.retrieval.pipeline import Pipeline

DOMAINS = ("clapnq", "cloud", "fiqa", "govt")
CORPUS_HELP = ("MTRAG-UN searches MTRAG's four corpora, which its release does not include: download "
               "corpora/passage_level/<domain>.jsonl.zip from IBM/mt-rag-benchmark (github.com/IBM/mt-rag-benchmark) "
               "and unzip it")
BUILDERS = {"lastturn": last_turn, "questions": all_user_turns, "rewrite": last_turn}
"""The text each query kind loads with; `rewrite` starts from the last turn and is rewritten by the solver."""


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


class ConversationQuery(RetrievalQuery):
    task: Task | None = None
    """rewrite: the conversation the solver rewrites the last turn of."""


class RewritingSolver(PipelineSolver):
    """PipelineSolver whose `rewrite` queries are rewritten by an LLM before the batch search."""

    def __init__(self, pipeline: Pipeline, corpus: str | None, k: int, spec: QuerySpec | None):
        super().__init__(pipeline, corpus, k)
        self.spec = spec
        self.query_summary: dict[str, Any] | None = None

    def fingerprint(self, sample: RetrievalQuery) -> str:
        return f"{self.name}|{self.spec.model if self.spec and sample.kind == 'rewrite' else ''}"

    async def queries(self, samples: Sequence[RetrievalQuery], ctx: RunContext) -> list[str]:
        texts = [q.text for q in samples]
        todo = [i for i, q in enumerate(samples) if q.kind == "rewrite"]
        if todo:
            assert self.spec is not None
            builder = QueryBuilder(self.spec, gateway=ctx.gateway, strip_tags=self.pipeline.spec.strip_speaker_tags)
            tasks = [samples[i].task for i in todo]
            built = await builder.build([t for t in tasks if t is not None])
            for i, query in zip(todo, built, strict=True):
                texts[i] = query.text
                self.extra[samples[i].id] = {"query": query.text, "rewrite_class": query.question_class,
                                             **({"rewrite_fallback": query.fallback} if query.fallback else {})}
            self.query_summary = builder.summary()
        return texts


class MtragUnRetrievalBench(MtragRetrievalBench):
    name = "mtrag-un-retrieval"
    description = ("MTRAG-UN retrieval per domain (MTRAGEval task A data): queries built from the conversations "
                   "(last turn, all questions, LLM rewrite) through a pipeline, beside the paper's Tables 2-3.")
    Options = MtragUnRetrievalOptions
    data_help = ("The MTRAG-UN release (IBM/mt-rag-benchmark, mtragun-human/: generation/reference.jsonl and "
                 f"retrieval/qrels/<domain>.tsv) for --data; for --corpus, {CORPUS_HELP}.")
    data_source = "IBM/mt-rag-benchmark MTRAG-UN qrels and tasks (--data), MTRAG corpora (--corpus)"
    breakdowns = ("queries (last turn / rewrite / questions)", "turn (first vs later)",
                  "standalone (when labelled)")
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
        self._solver: RewritingSolver | None = None

    def data_folder(self) -> Path:
        folder = Path(self.options.data)
        if not folder.is_dir():
            raise UsageError(f"no folder {folder}: --data must be the MTRAG-UN release folder (mtragun-human/, "
                             f"holding generation/reference.jsonl and retrieval/qrels/<domain>.tsv)")
        return folder

    def load(self) -> list[RetrievalQuery]:
        from ragjudge.retrieval_eval.breakdowns import read_labels

        d = self.options.domain
        qrels_path = _find(self.folder / "retrieval" / "qrels", [f"{d}.tsv"], f"{d} qrels")
        tasks_path = _find(self.folder / "generation", ["reference.jsonl"], "generation tasks")
        self.qrels = read_qrels(qrels_path)
        self.files = {"qrels": qrels_path, "tasks": tasks_path}
        tasks = {t.key: t for t in read_tasks(tasks_path)}
        missing = [self.qrels.ids[key] for key in self.qrels.judgments if key not in tasks]
        if missing:
            raise InputError(f"{len(missing)} qrels quer{'y has' if len(missing) == 1 else 'ies have'} no generation "
                             f"task to build the query from (first: {missing[0]!r}); the release's qrels ids are "
                             f"task ids of {tasks_path}", file=str(qrels_path), field="query-id")
        given = read_labels(self.options.labels) if self.options.labels else {}
        if self.options.labels:
            self.files["labels"] = Path(self.options.labels)
        self.labels = {key: {**tasks[key].enrichments, "Collection": tasks[key].collection, **given.get(key, {})}
                       for key in self.qrels.judgments}
        samples: list[RetrievalQuery] = []
        for kind in self.kinds:
            for key in self.qrels.judgments:
                task = tasks[key]
                text = self.pipeline.prepare(BUILDERS[kind](task))
                if not text:
                    raise InputError(f"task {task.task_id!r}: the {kind} query is empty", file=str(tasks_path),
                                     field="input")
                samples.append(ConversationQuery(id=f"{kind}/{task.task_id}", kind=kind, query_id=task.task_id,
                                                 text=text, task=task if kind == "rewrite" else None))
        return samples

    def solver(self, ctx: RunContext) -> Solver[RetrievalQuery]:
        self.pipeline.gateway = ctx.gateway
        self._solver = RewritingSolver(self.pipeline, self.options.corpus, self.options.k, self.rewrite)
        return self._solver

    def llm_models(self) -> list[str]:
        extra = [self.rewrite.model] if self.rewrite and self.rewrite.model and "rewrite" in self.kinds else []
        return list(dict.fromkeys([*self.pipeline.llm_models, *extra]))

    def paper_reference(self, reports: dict[str, Any]) -> list[Reference]:
        return retrieval_reference(self.options.domain, [KIND_NAMES[k] for k in reports], "standalone" in self.dims())

    def summarize(self, results: Sequence[SampleResult[RetrievalQuery]], ctx: RunContext) -> Summary:
        summary = super().summarize(results, ctx)
        rewrites = [r.output for r in results if r.sample.kind == "rewrite"]
        if rewrites:
            fallbacks = [str(o["rewrite_fallback"]) for o in rewrites if o.get("rewrite_fallback")]
            failed = sum(1 for f in fallbacks if f.startswith("call failed"))
            model = self.rewrite.model if self.rewrite else None
            summary.details["rewrite"] = {"model": model, "rewritten": len(rewrites) - len(fallbacks),
                                          "fallback_malformed": len(fallbacks) - failed, "fallback_error": failed}
            warning = rewrite_warning(summary.details["rewrite"])
            if warning:
                summary.warnings.append(warning.removeprefix("warning: "))
        if "standalone" not in self.dims():
            summary.notes.append("no standalone / non-standalone breakdown (the paper's Table 3): the MTRAG-UN release "
                                 "does not label it; give labels with -T labels=FILE")
        return summary

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        return {**super().run_info(ctx), "queries": self.kinds,
                "rewrite_model": self.rewrite.model if self.rewrite and "rewrite" in self.kinds else None}
