"""Every name ragjudge takes from ragas, imported here and nowhere else: ragas's metric classes live in private
modules (`ragas.metrics._faithfulness`) that move between releases, so the next ragas release is this file's work.

ragas sends usage telemetry unless RAGAS_DO_NOT_TRACK=true; it is defaulted to true before ragas is imported (an
explicit user setting wins).
"""

from __future__ import annotations

import os

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # before ragas is imported: no telemetry

from ragas.dataset_schema import SingleTurnSample  # noqa: E402
from ragas.embeddings.base import BaseRagasEmbeddings  # noqa: E402
from ragas.llms.base import BaseRagasLLM  # noqa: E402
from ragas.metrics._answer_correctness import (  # noqa: E402
    AnswerCorrectness,
    ClassificationWithReason,
    CorrectnessClassifier,
)
from ragas.metrics._answer_relevance import (  # noqa: E402
    ResponseRelevanceInput,
    ResponseRelevanceOutput,
    ResponseRelevancePrompt,
    ResponseRelevancy,
)
from ragas.metrics._answer_similarity import AnswerSimilarity  # noqa: E402
from ragas.metrics._context_precision import (  # noqa: E402
    ContextPrecisionPrompt,
    LLMContextPrecisionWithoutReference,
    LLMContextPrecisionWithReference,
    Verification,
)
from ragas.metrics._context_recall import (  # noqa: E402
    ContextRecallClassificationPrompt,
    ContextRecallClassifications,
    LLMContextRecall,
)
from ragas.metrics._faithfulness import (  # noqa: E402
    Faithfulness,
    NLIStatementOutput,
    NLIStatementPrompt,
    StatementGeneratorOutput,
    StatementGeneratorPrompt,
)
from ragas.metrics._nv_metrics import ContextRelevance  # noqa: E402
from ragas.metrics.base import SingleTurnMetric  # noqa: E402
from ragas.metrics.utils import fbeta_score  # noqa: E402
from ragas.prompt import PydanticPrompt  # noqa: E402
from ragas.run_config import RunConfig  # noqa: E402
from ragas.utils import camel_to_snake  # noqa: E402

__all__ = [
    "AnswerCorrectness", "AnswerSimilarity", "BaseRagasEmbeddings", "BaseRagasLLM", "ClassificationWithReason",
    "ContextPrecisionPrompt", "ContextRecallClassificationPrompt", "ContextRecallClassifications",
    "ContextRelevance", "CorrectnessClassifier", "Faithfulness", "LLMContextPrecisionWithReference",
    "LLMContextPrecisionWithoutReference", "LLMContextRecall", "NLIStatementOutput", "NLIStatementPrompt",
    "PydanticPrompt", "ResponseRelevanceInput", "ResponseRelevanceOutput", "ResponseRelevancePrompt",
    "ResponseRelevancy", "RunConfig", "SingleTurnMetric", "SingleTurnSample", "StatementGeneratorOutput",
    "StatementGeneratorPrompt", "Verification", "camel_to_snake", "fbeta_score",
]
