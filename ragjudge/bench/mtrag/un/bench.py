"""`--bench mtrag-un`: MTRAG-UN (the SemEval-2026 MTRAGEval evaluation set) judged the official way.

MTRAG-UN adds UNDERSPECIFIED questions (the right answer asks to clarify); its official evaluation runs a
clarification judge on every answer and conditions RL_F, RB_llm and RB_agg on it and IDK over every task
(`*_idk_underspecified`, `judges.conditioning.condition_underspecified`). Everything else is the `mtrag` bench's;
its own parts: `un/paper.py` and `un/summary.py` (Tables 4 and 5), `un/task_score.py` (the MTRAGEval task score, the
headline when all three are conditioned), `un/leaderboard.py` (published task B / C results beside a comparable run).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from ragjudge.bench.mtrag.bench import MtragBench, MtragOptions
from ragjudge.bench.mtrag.metrics import METRIC_INFOS
from ragjudge.bench.mtrag.un.data import has_underspecified_tasks
from ragjudge.bench.mtrag.un.summary import add_to_summary, answer_type
from ragjudge.bench.mtrag.un.task_score import SCORE_INFO
from ragjudge.engine.bench import SampleResult
from ragjudge.engine.context import RunContext
from ragjudge.engine.summary import Summary
from ragjudge.formats.samples import Sample
from ragjudge.judges import judges_models
from ragjudge.models import Task

__all__ = ["MtragUnBench", "MtragUnOptions", "has_underspecified_tasks"]

OFFLINE_JUDGES = ["idk_lexical", "underspecified_lexical", "rb_alg"]
LLM_JUDGES = ["rb_alg", "underspecified", "idk", "rl_f", "rb_llm"]
"""The official sequence (run_generation_eval.py): algorithmic metrics, the clarification judge, IDK, RL_F, RB_llm."""


class MtragUnOptions(MtragOptions):
    data: str | None = Field(None, description="MTRAG-UN tasks, a file or folder in MTRAG format (default: "
                             "$RAGJUDGE_DATA, else the benchmark's mtragun-human generation tasks, downloaded into "
                             "the cache once).")
    judges: list[str] | None = Field(None, description="Judges (default: idk_lexical,underspecified_lexical,rb_alg "
                                     "offline; rb_alg,underspecified,idk,rl_f,rb_llm with --judge-models).")


class MtragUnBench(MtragBench):
    name = "mtrag-un"
    Options = MtragUnOptions
    data_help = ("The MTRAG-UN human generation tasks (IBM/mt-rag-benchmark, mtragun-human/generation_tasks/"
                 "reference.jsonl): downloaded into the cache on first use, or --data PATH / $RAGJUDGE_DATA for a "
                 "local copy.")
    offline_judges = OFFLINE_JUDGES
    llm_judges = LLM_JUDGES
    metrics = (SCORE_INFO, *METRIC_INFOS)

    def summarize(self, results: Sequence[SampleResult[Task]], ctx: RunContext) -> Summary:
        return add_to_summary(super().summarize(results, ctx), self.outcomes(results), self.setting,
                              judges_models(self.judges, self.options.judge_models))

    def sample(self, result: SampleResult[Task], ctx: RunContext) -> Sample:
        """MTRAG's, with how an answer to an UNDERSPECIFIED task asks (`metadata.response_type`, Table 5's types)."""
        sample = super().sample(result, ctx)
        kind = answer_type(self.outcome(result))
        return sample if kind is None else sample.model_copy(update={"metadata": {**sample.metadata,
                                                                                   "response_type": kind}})
