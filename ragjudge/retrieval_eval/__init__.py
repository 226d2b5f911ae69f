"""Retrieval evaluation: Recall, nDCG, Precision, MRR, MAP and hit rate at k through ranx, over the queries that
have qrels, with per-query scores, breakdowns (turn, standalone, domain, any label) and a paired test."""

from ragjudge.retrieval_eval.breakdowns import label_queries, read_labels, resolve_dimensions
from ragjudge.retrieval_eval.metrics import (DEFAULT_CUTOFFS, FAMILIES, Evaluation, QuerySelection, evaluate,
                                             parse_cutoffs, parse_metrics, select_queries)
from ragjudge.retrieval_eval.report import RetrievalReport, evaluate_run
from ragjudge.retrieval_eval.significance import TEST_NAME, paired_test

__all__ = [
    "DEFAULT_CUTOFFS", "FAMILIES", "TEST_NAME", "Evaluation", "QuerySelection", "RetrievalReport", "evaluate",
    "evaluate_run", "label_queries", "paired_test", "parse_cutoffs", "parse_metrics", "read_labels",
    "resolve_dimensions", "select_queries",
]
