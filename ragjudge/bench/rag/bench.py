"""`--bench rag` (what `ragjudge.evaluate(rows)` and `ragjudge judge rows.csv` run): your own RAG app's records
(fields and formats: docs/your-rag-app.md) judged by any judge spec, each figure broken down by the records' labels."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import Field

from ragjudge.bench.rag.data import absent, check_fields, no_answer
from ragjudge.bench.rag.samples import record_sample
from ragjudge.bench.rag.solver import RecordedAnswers
from ragjudge.bench.rag.summary import breakdowns, catalog, metrics
from ragjudge.engine.bench import Bench, BenchOptions, SampleResult, Scorer, Solver
from ragjudge.engine.context import RunContext
from ragjudge.engine.judge_scorer import JudgeScorer
from ragjudge.engine.summary import MetricCatalog, Summary, headline_of
from ragjudge.formats.rag_records import RagRecord, read_rag_records, records_stem
from ragjudge.formats.samples import Sample
from ragjudge.judges import Judge, JudgeContext, JudgeRegistry, judge_runtime, judges_models, require_judge_models
from ragjudge.judges.criterion import CriterionOption

OFFLINE_JUDGES = ("rb_alg",)
"""Without a judge model: what needs none (RB_alg: BERTScore and ROUGE-L against the reference)."""
LLM_JUDGES = ("faithfulness", "answer_relevancy", "context_precision", "context_recall", "answer_correctness")
"""With judge models: RAGAS's metrics, those the records have the fields for."""


class RagOptions(BenchOptions):
    data: str = Field(description="The records: a JSONL, JSON, CSV, TSV or Parquet file (also .gz) of question (or "
                      "messages), answer, contexts, reference (ragjudge's, RAGAS's or DeepEval's field names).")
    judges: list[str] | None = Field(None, description="Judges (default: rb_alg offline; faithfulness, "
                                     "answer_relevancy, context_precision, context_recall, answer_correctness with "
                                     "--judge-models, those the records have the fields for).")
    judge_models: list[str] = Field(default_factory=list, description="litellm judge models; a panel judge takes "
                                    "the median of all, other LLM judges use the first.")
    judge_dir: list[str] = Field(default_factory=list, description="Extra folders of judge specs.")
    bertscore_model: str | None = Field(None, description="RB_alg's BERTScore model: auto, bundled, or a name/path.")
    min_panel: int | None = Field(None, ge=1, description="Panel members that must answer for a panel score "
                                  "(default: a majority).")
    criteria: list[CriterionOption] = Field(default_factory=list, description="Criteria in one line, judged "
                                            "G-Eval's way (--criterion NAME=\"criterion\", repeatable): each a "
                                            "judge and a metric of that name, added to the judges (the default "
                                            "ones, or those named).")


class RagBench(Bench[RagOptions, RagRecord]):
    name = "rag"
    Options = RagOptions
    unit = "records"
    data_help = ("Your own records: a JSONL, JSON, CSV, TSV or Parquet file, also gzip-compressed (`-T data=` or "
                 "--data), with question (or messages), answer, contexts and reference, under ragjudge's, RAGAS's or "
                 "DeepEval's names; see docs/your-rag-app.md.")
    metrics: ClassVar[Sequence[Any]] = ()

    def __init__(self, options: RagOptions, *, label: str | None = None, records: Sequence[RagRecord] | None = None):
        """`records`: records already read (`ragjudge.evaluate(rows)`), judged as they are; `data` then only names
        them in errors."""
        super().__init__(options, label=label)
        self.given = list(records) if records is not None else None
        self.registry = JudgeRegistry(options.judge_dir)
        for criterion in options.criteria:
            self.registry.add(criterion.spec())
        # RB_alg on a record without passages: not applicable here, 0 only under MTRAG's protocol (its benches)
        self.judges: list[Judge] = self.registry.build_many(self._judge_names(),
                                                            {"bertscore_model": options.bertscore_model,
                                                             "no_passages": "not_applicable"})
        require_judge_models(self.judges, options.judge_models, OFFLINE_JUDGES)

    def _judge_names(self) -> list[str]:
        """The judges named (else the defaults), then each criterion: a criterion adds to them, never replaces."""
        o = self.options
        named = list(o.judges) if o.judges is not None else \
            [n for n in (LLM_JUDGES if o.judge_models else OFFLINE_JUDGES) if n in self.registry.specs]
        return [*named, *(c.name for c in o.criteria if c.name not in named)]

    @property
    def catalog(self) -> MetricCatalog:
        return catalog(self.judges, self.name)

    def load(self) -> list[RagRecord]:
        records = self.given if self.given is not None else read_rag_records(self.options.data)
        check_fields(records, self.options.data, self.needed_fields(records))
        return records

    def needed_fields(self, records: list[RagRecord]) -> dict[str, list[str]]:
        """The fields no record has that a judge cannot do without (`reference`, `contexts`), each with its judges:
        for a judge the user named; for default judges only when none of them could judge anything."""
        named = set(self.options.judges or []) | {c.name for c in self.options.criteria}
        missing = {j.name: absent(records, j.requires) for j in self.judges}
        hopeless = all(missing.values())
        needs: dict[str, list[str]] = {}
        for judge, field in missing.items():
            if field is not None and (judge in named or hopeless):
                needs.setdefault(field, []).append(judge)
        return needs

    def sample_id(self, sample: RagRecord) -> str:
        return sample.key

    def llm_models(self) -> list[str]:
        return list(self.options.judge_models) if any(j.needs_llm for j in self.judges) else []

    def solver(self, ctx: RunContext) -> Solver[RagRecord]:
        return RecordedAnswers()

    def scorers(self, ctx: RunContext) -> list[Scorer[RagRecord]]:
        judge_ctx = JudgeContext.of_run(ctx, self.options.judge_models, self.options.min_panel)
        return [JudgeScorer(judge, judge_ctx, item_of=lambda record, output: record.item(), skipped=no_answer)
                for judge in self.judges]

    def summarize(self, results: Sequence[SampleResult[RagRecord]], ctx: RunContext) -> Summary:
        found = metrics(results, self.judges, self.catalog)  # every judge's figure on the headline line, in order
        return self.summary(results, found, breakdowns=breakdowns(results, self.judges),
                            headline=headline_of(found, list(found), self.unit, also=list(found)))

    def sample(self, result: SampleResult[RagRecord], ctx: RunContext) -> Sample:
        return record_sample(result, self.judges)

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        judges = judges_models(self.judges, self.options.judge_models)
        return {"judges": judges, "models": {"judges": judges}, **judge_runtime(self.judges)}

    def out_slug(self) -> list[str]:
        return [records_stem(self.options.data)]
