"""The MTRAG family: MTRAG (Katsis et al., TACL 2025) and MTRAG-UN (Rosenthal et al., 2026), generation and retrieval.

`mtrag` (this folder) is extended by `mtrag-un` (`un/`), `mtrag-retrieval` (`retrieval/`) by `mtrag-un-retrieval`
(`un_retrieval/`). Parts have the skeleton's names (bench, data, solver, scorers, summary, samples, paper); a shared
part is under the same name in the bench it extends.
"""
