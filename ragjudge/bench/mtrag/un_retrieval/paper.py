"""MTRAG-UN's retrieval figures (Rosenthal et al., 2026, arXiv 2602.23184), beside a run's own: Table 2 (the mean of
six domains, answerable and partial questions) and Table 3 (ELSER by standalone question).
"""

from __future__ import annotations

from collections.abc import Sequence

from ragjudge.bench.mtrag.un.paper import PAPER
from ragjudge.engine.summary import Reference

TABLE2_COLUMNS = ["retriever", "queries", "R@5", "R@10", "nDCG@5", "nDCG@10"]
TABLE2 = [
    ["BM25", "Last Turn", 0.29, 0.38, 0.27, 0.31],
    ["BM25", "Query Rewrite", 0.36, 0.47, 0.34, 0.39],
    ["BGE-base 1.5", "Last Turn", 0.25, 0.32, 0.23, 0.26],
    ["BGE-base 1.5", "Query Rewrite", 0.38, 0.49, 0.35, 0.40],
    ["Granite R2", "Last Turn", 0.29, 0.38, 0.28, 0.32],
    ["Granite R2", "Query Rewrite", 0.40, 0.51, 0.37, 0.42],
    ["Elser", "Last Turn", 0.40, 0.49, 0.36, 0.40],
    ["Elser", "Query Rewrite", 0.49, 0.60, 0.45, 0.51],
]
TABLE3_COLUMNS = ["standalone", "n", "R@5 Last Turn", "R@5 Query Rewrite"]
TABLE3 = [["non-standalone", 214, 0.39, 0.52], ["standalone", 254, 0.40, 0.46]]
RETRIEVAL_NOTE = ("the paper: 468 answerable and partially answerable questions of six domains (Banking and Telco are "
                  "not released: the public qrels hold 332 queries of four), each domain on its full corpus, figures "
                  "macro-averaged over the domains; Query Rewrite by GPT-OSS 20B with MTRAG's rewrite prompt")


def retrieval_reference(domain: str, kinds: Sequence[str], standalone: bool) -> list[Reference]:
    """Table 2 (and Table 3 when our queries are labelled standalone or not), for a run over `domain` with the
    query kinds `kinds` (Last Turn, Query Rewrite, All Questions)."""
    shown = [k for k in ("Last Turn", "Query Rewrite") if k in kinds]
    tables = [Reference(
        title="Retrieval, the paper's Table 2: mean of six domains (full corpora)", source=f"{PAPER}, Table 2",
        columns=TABLE2_COLUMNS, rows=[r for r in TABLE2 if r[1] in shown] or TABLE2,
        comparable="the same retriever and query kind (Last Turn; Query Rewrite by a comparable rewriter), each "
                   "domain on its full corpus, averaged over the domains: one domain, or a pooled corpus, is not",
        notes=[RETRIEVAL_NOTE, f"this run: {domain} only ({', '.join(kinds)})"])]
    if standalone:
        tables.append(Reference(
            title="Retrieval by standalone question, the paper's Table 3: ELSER R@5", source=f"{PAPER}, Table 3",
            columns=TABLE3_COLUMNS, rows=TABLE3,
            comparable="an ELSER pipeline over the full corpora of every domain, with human standalone labels",
            notes=[RETRIEVAL_NOTE]))
    return tables
