"""`--bench mtrag-un`: MTRAG-UN (the SemEval-2026 MTRAGEval evaluation set) judged the official way.

MTRAG-UN keeps MTRAG's task format and adds UNDERSPECIFIED questions, whose right answer asks the user to
clarify. Its official evaluation runs a clarification judge on every answer (`underspecified_eval`) and
conditions RL_F, RB_llm and RB_agg on it and on the IDK judge over every task (`*_idk_underspecified`,
`ragjudge.judges.conditioning.condition_underspecified`). Everything else is the `mtrag` bench: generation
settings, judges, resumable runs; its breakdowns add the four answerability classes and, where the tasks say,
standalone vs non-standalone questions; the paper's Table 4 and Table 5 are printed beside a run's figures
(`ragjudge.bench.mtrag.un.paper`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import Field

from ragjudge.engine.bench import SampleResult
from ragjudge.bench.mtrag.assemble import CLARIFICATION_METRIC
from ragjudge.bench.mtrag.bench import MtragBench, MtragOptions
from ragjudge.bench.mtrag.un.paper import generation_reference, response_types
from ragjudge.engine.context import RunContext
from ragjudge.engine.summary import Summary
from ragjudge.errors import RagjudgeError
from ragjudge.models import Task

OFFLINE_JUDGES = ["idk_lexical", "underspecified_lexical", "rb_alg"]
LLM_JUDGES = ["rb_alg", "underspecified", "idk", "rl_f", "rb_llm"]
"""The official sequence (run_generation_eval.py): algorithmic metrics, the clarification judge, IDK, RL_F, RB_llm."""
CLARIFICATION_LABEL = "UNDERSPECIFIED"
REFERENCE_BASED = ("RB_agg", "RB_llm", "RL_F")
"""The paper's Table 4 is printed when the run has one of these."""


class MtragUnOptions(MtragOptions):
    data: str | None = Field(None, description="MTRAG-UN tasks, a file or folder in MTRAG format (default: "
                             "$RAGJUDGE_DATA, else the benchmark's mtragun-human generation tasks, downloaded into "
                             "the cache once).")
    judges: list[str] | None = Field(None, description="Judges (default: idk_lexical,underspecified_lexical,rb_alg "
                                     "offline; rb_alg,underspecified,idk,rl_f,rb_llm with --judge-models).")


class MtragUnBench(MtragBench):
    name = "mtrag-un"
    description = ("MTRAG-UN / SemEval-2026 MTRAGEval generation: the clarification judge and the official "
                   "*_idk_underspecified conditioning over every task, with MTRAG's judges and breakdowns.")
    Options = MtragUnOptions
    data_help = ("The MTRAG-UN human generation tasks (IBM/mt-rag-benchmark, mtragun-human/generation_tasks/"
                 "reference.jsonl): downloaded into the cache on first use, or --data PATH / $RAGJUDGE_DATA for a "
                 "local copy.")
    data_source = "IBM/mt-rag-benchmark MTRAG-UN human tasks, downloaded on first use (or --data)"
    offline_judges = OFFLINE_JUDGES
    llm_judges = LLM_JUDGES

    def summarize(self, results: Sequence[SampleResult[Task]], ctx: RunContext) -> Summary:
        summary = super().summarize(results, ctx)
        if any(m in summary.metrics for m in REFERENCE_BASED):
            summary.reference.append(generation_reference(self.options.setting if self.options.gen else None,
                                                          self.judge_models(ctx)))
        if CLARIFICATION_METRIC in summary.metrics:
            answers = [(o.prediction.text, o.metrics.get(CLARIFICATION_METRIC)) for o in self.outcomes(results)
                       if o.task.answerability == CLARIFICATION_LABEL]
            if answers:
                summary.tables.append(response_types(answers))
        if "standalone" not in summary.breakdowns:
            summary.notes.append("no standalone / non-standalone breakdown: these tasks do not say which questions "
                                 "are standalone (the MTRAG-UN release does not label it)")
        return summary


def has_underspecified_tasks(path: str | Path) -> bool:
    """Whether an MTRAG-format file holds a task labelled UNDERSPECIFIED (then it is MTRAG-UN's): `ragjudge judge`
    uses this to pick the bench. A file it cannot read is not MTRAG-UN's here; reading it properly reports why."""
    from ragjudge.formats.jsonl import read_jsonl

    try:
        for _, record in read_jsonl(path):
            label = record.get("answerability", record.get("Answerability"))
            first = label[0] if isinstance(label, list) and label else label
            if isinstance(first, str) and first.strip().upper() == CLARIFICATION_LABEL:
                return True
    except (RagjudgeError, OSError, UnicodeDecodeError):
        return False
    return False
