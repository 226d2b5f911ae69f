"""The MTRAG paper's retrieval figures (Katsis et al., TACL 2025), printed beside ours and labelled as the paper's:
Table 3 (the four domains' mean; BM25, BGE-base 1.5, ELSER) and Table 15 (ELSER per domain). The paper used the full
corpora; runs on pooled or other corpora compare like with unlike, which the table titles say.
"""

from __future__ import annotations

from ragjudge.engine.summary import Reference

SOURCE = "MTRAG (Katsis et al., TACL 2025)"

# Recall@1,3,5,10 then nDCG@1,3,5,10.
TABLE_3 = {
    ("BM25", "Last Turn"): (0.08, 0.15, 0.20, 0.27, 0.17, 0.16, 0.18, 0.21),
    ("BM25", "Query Rewrite"): (0.09, 0.18, 0.25, 0.33, 0.20, 0.19, 0.22, 0.25),
    ("BGE-base 1.5", "Last Turn"): (0.13, 0.24, 0.30, 0.38, 0.26, 0.25, 0.27, 0.30),
    ("BGE-base 1.5", "Query Rewrite"): (0.17, 0.30, 0.37, 0.47, 0.34, 0.31, 0.34, 0.38),
    ("Elser", "Last Turn"): (0.18, 0.39, 0.49, 0.58, 0.42, 0.41, 0.45, 0.49),
    ("Elser", "Query Rewrite"): (0.20, 0.43, 0.52, 0.64, 0.46, 0.45, 0.48, 0.54),
}
TABLE_15 = {  # ELSER per domain, (number of queries, figures)
    ("clapnq", "Last Turn"): (208, (0.20, 0.43, 0.53, 0.65, 0.48, 0.46, 0.49, 0.54)),
    ("clapnq", "Query Rewrite"): (208, (0.22, 0.45, 0.56, 0.70, 0.54, 0.50, 0.53, 0.59)),
    ("fiqa", "Last Turn"): (180, (0.15, 0.34, 0.44, 0.55, 0.38, 0.36, 0.40, 0.45)),
    ("fiqa", "Query Rewrite"): (180, (0.18, 0.39, 0.50, 0.63, 0.43, 0.41, 0.46, 0.52)),
    ("govt", "Last Turn"): (203, (0.18, 0.42, 0.50, 0.58, 0.42, 0.44, 0.46, 0.49)),
    ("govt", "Query Rewrite"): (203, (0.21, 0.47, 0.56, 0.67, 0.47, 0.48, 0.51, 0.56)),
    ("cloud", "Last Turn"): (189, (0.19, 0.38, 0.48, 0.56, 0.40, 0.39, 0.42, 0.47)),
    ("cloud", "Query Rewrite"): (189, (0.20, 0.40, 0.47, 0.57, 0.42, 0.41, 0.43, 0.48)),
}


def paper_tables(domain: str, picks: list[int], metric_columns: list[str]) -> list[Reference]:
    """Table 15's ELSER rows for `domain` (when the paper has it) and Table 3, as references; `picks` are the
    positions (in R@1..10, nDCG@1..10 order) of the columns shown."""
    tables = []
    rows = [["Elser", kind, n, *(values[i] for i in picks)] for (d, kind), (n, values) in TABLE_15.items()
            if d == domain]
    if rows:
        tables.append(Reference(
            title=f"Paper, Table 15: ELSER on {domain} (full corpus)", source=f"{SOURCE}, Table 15",
            columns=["retriever", "queries", "n", *metric_columns], rows=rows,
            comparable=f"an ELSER pipeline over the full {domain} corpus (a pooled or other corpus is easier)"))
    tables.append(Reference(
        title="Paper, Table 3: mean of the four domains (full corpora)", source=f"{SOURCE}, Table 3",
        columns=["retriever", "queries", *metric_columns],
        rows=[[model, kind, *(values[i] for i in picks)] for (model, kind), values in TABLE_3.items()],
        comparable="the mean of runs over all four domains, each on its full corpus, with the same retriever"))
    return tables
