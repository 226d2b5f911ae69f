"""The MTRAG family: MTRAG (Katsis et al., TACL 2025) and MTRAG-UN (Rosenthal et al., 2026), generation and retrieval.

- `mtrag` (this folder): generation, judged; its parts are shared with `mtrag-un` (`un/`: its bench, summary
  additions and paper figures);
- `mtrag-retrieval` (`retrieval/`): MTRAG's query files through a pipeline, scored as `retrieval-eval` scores a run;
  its parts are shared with `mtrag-un-retrieval` (`un_retrieval/`: its data, solver, summary additions and paper
  figures).
Each bench's parts have the skeleton's names (bench, data, solver, scorers, summary, samples, paper); a part a bench
shares is found under the same name in the bench it extends.
"""
