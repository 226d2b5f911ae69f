"""The seven CXMArena benches, by class (the registry's entry points)."""

from ragjudge.bench.cxm.classification import AnswerClassificationBench
from ragjudge.bench.cxm.intent import IntentBench
from ragjudge.bench.cxm.kb import KbRefinementBench
from ragjudge.bench.cxm.multiturn import MultiTurnRetrievalBench
from ragjudge.bench.cxm.quality import QualityBench
from ragjudge.bench.cxm.search import ArticleSearchBench
from ragjudge.bench.cxm.tools import ToolCallsBench

BY_TASK = {b.task: b for b in (IntentBench, QualityBench, ToolCallsBench, AnswerClassificationBench,
                               KbRefinementBench, ArticleSearchBench, MultiTurnRetrievalBench)}

__all__ = ["AnswerClassificationBench", "ArticleSearchBench", "BY_TASK", "IntentBench", "KbRefinementBench",
           "MultiTurnRetrievalBench", "QualityBench", "ToolCallsBench"]
