"""Score prediction rows (from a run or any system) against a task's gold data: one module per task."""

from ragjudge.bench.cxm.score.classification import score_classification
from ragjudge.bench.cxm.score.common import Rows
from ragjudge.bench.cxm.score.intent import score_intent
from ragjudge.bench.cxm.score.kb import read_predicted_pairs, score_pairs
from ragjudge.bench.cxm.score.quality import score_quality
from ragjudge.bench.cxm.score.retrieval import score_multiturn
from ragjudge.bench.cxm.score.search import score_search
from ragjudge.bench.cxm.score.tools import score_tools

__all__ = ["Rows", "read_predicted_pairs", "score_classification", "score_intent", "score_multiturn", "score_pairs",
           "score_quality", "score_search", "score_tools"]
